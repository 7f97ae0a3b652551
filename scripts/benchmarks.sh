#!/usr/bin/env bash
# Regenerates the per-width table of BENCHMARKS.md and docs/bench/width-sweep.*
# (JSON report, CSV, SVG plot): one child process per width, so each width's
# peak memory is its own. Extra arguments go to `zkstep bench`
# (e.g. --msm gpu, --widths 16,32). Takes about 20 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p zkstep-cli --bin zkstep
mkdir -p docs/bench
./target/release/zkstep bench --widths 16,32,64,128,256,512 --batch 32 --layers 1 \
  --json docs/bench/width-sweep.json --csv docs/bench/width-sweep.csv \
  --plot docs/bench/width-sweep.svg --markdown BENCHMARKS.md --force "$@"
