#!/usr/bin/env bash
# Per-width proof costs, one process per point (so peak RSS is per point).
# Usage: scripts/width_sweep.sh "16 32 64 128" "8 32" [FOLD_BUDGET] > sweep.jsonl
# Each line: one JSON object from examples/width_sweep.rs plus peak_rss_mb.
set -euo pipefail
cd "$(dirname "$0")/.."
widths=${1:-"16 32 64 128"}
batches=${2:-"8 32"}
budget=${3:-131072}
cargo build --release -p zkstep-examples --example width_sweep >&2
tmp=$(mktemp -d)
for b in $batches; do
  for w in $widths; do
    echo "width $w batch $b …" >&2
    /usr/bin/time -f "%M" -o "$tmp/rss" ./target/release/examples/width_sweep "$w" "$b" "$budget" > "$tmp/pt.json"
    python3 -c "import json,sys; d=json.load(open('$tmp/pt.json')); d['peak_rss_mb']=int(open('$tmp/rss').read().split()[-1])/1024; print(json.dumps(d))"
  done
done
rm -rf "$tmp"
