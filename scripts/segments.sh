#!/usr/bin/env bash
# Segment cost against k (BENCHMARKS.md, "Segments"): the demo run
# (`zkstep demo --out-dir`, 60 steps, its keys), then one segment proof of
# the last k steps for each k, each verified 5 times by the standalone
# verifier against the user's files (the median is reported). Writes
# docs/bench/segments.json and prints a Markdown table. Usage:
#   scripts/segments.sh [DIR] [K ...]      (default: a temporary DIR; 1 2 4 8)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p zkstep-cli -p zkstep-verifier
dir="${1:-$(mktemp -d)}"; shift || true
ks=("${@:-1 2 4 8}"); ks=(${ks[@]})
zk=./target/release/zkstep; zv=./target/release/zkstep-verify
mkdir -p "$dir"
if [ ! -f "$dir/run.json" ]; then
  "$zk" demo --out-dir "$dir" --force --json > "$dir/demo.json"
fi
last=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['steps'][-1]['step'])" "$dir/run.json")
rows=()
for k in "${ks[@]}"; do
  t=$((last + 1 - k))
  f="$dir/segment_${t}_${k}.zkstep"; rm -f "$f"
  /usr/bin/time -f '%M %e' -o "$dir/time_$k" "$zk" prove-segment --run "$dir" \
      --keys "$dir/keys" --from "$t" --steps "$k" --msm cpu --json > "$dir/seg_$k.json"
  batches=()
  for s in $(seq "$t" "$last"); do batches+=(--batch "$dir/batch_$s.safetensors"); done
  ms=()
  for _ in 1 2 3 4 5; do
    ms+=("$("$zv" --vk "$dir/keys/verifying.key" --proof "$f" --spec "$dir/spec.toml" \
        --before "$dir/ckpt_$t.safetensors" --after "$dir/ckpt_$((last + 1)).safetensors" \
        "${batches[@]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["verify_ms"])')")
  done
  rows+=("$(python3 - "$k" "$dir/seg_$k.json" "$dir/time_$k" "${ms[@]}" <<'PY'
import json, sys
k, rep, tm, ms = int(sys.argv[1]), json.load(open(sys.argv[2]))["proofs"][0], open(sys.argv[3]).read().split(), sorted(map(float, sys.argv[4:]))
print(json.dumps({"k": k, "folds": rep["folds"], "bytes": rep["bytes"], "witness_s": rep["witness_s"],
  "fold_s": rep["fold_s"], "compress_s": rep["compress_s"], "wall_s": float(tm[1]),
  "peak_rss_mb": int(tm[0]) / 1024, "verify_ms_median": ms[len(ms) // 2]}))
PY
)")
done
mkdir -p docs/bench
printf '%s\n' "${rows[@]}" | python3 <(cat <<'PY'
import json, os, sys, platform
rows = [json.loads(l) for l in sys.stdin if l.strip()]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
json.dump({"spec": "demo (2-16-16-1, batch 8, SGD)", "machine": f"{cpu}, {os.cpu_count()} logical cores",
           "segments": rows}, open("docs/bench/segments.json", "w"), indent=1)
print("| k | folds | proof (B) | witness (s) | folding (s) | folding per step (s) | compression (s) | whole command (s) | per step (s) | peak RSS (MB) | verify (ms, median of 5) |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    k = r["k"]
    print(f"| {k} | {r['folds']} | {r['bytes']} | {r['witness_s']:.1f} | {r['fold_s']:.1f} | {r['fold_s'] / k:.1f} | "
          f"{r['compress_s']:.1f} | {r['wall_s']:.1f} | {r['wall_s'] / k:.1f} | {r['peak_rss_mb']:.0f} | {r['verify_ms_median']:.1f} |")
PY
)
