#!/usr/bin/env bash
# The one script for a lent GPU machine (no Rust there): run from the
# repository root with the binaries built here by
#   eval "$(scripts/install-cuda-build.sh)"
#   cargo build --release --target-dir target-cuda -p zkstep-cli --features cuda
#   cargo build --release --target-dir target-cuda -p zkstep-msm --features cuda --example msm_check
# and carried as target-cuda/release/{zkstep,examples/msm_check}.
# Writes everything under $OUT (or ./device-out).
set -uo pipefail
out=${OUT:-device-out}
mkdir -p "$out"
bin=target-cuda/release
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc; free -g; } > "$out/machine.txt" 2>&1
# 1. GPU = CPU and timings, 2^16 … 2^24 points
timeout 240 "$bin/examples/msm_check" 16 24 > "$out/msm_check.jsonl" 2> "$out/msm_check.err"
echo "msm_check exit $?" >> "$out/msm_check.err"
# 2. the same width sweep with the GPU and with the CPU
for m in gpu cpu; do
  timeout 150 "$bin/zkstep" bench --widths 16,32,64 --batch 32 --msm $m \
    --json "$out/bench-$m.json" --force > "$out/bench-$m.txt" 2>&1
  echo "bench $m exit $?" >> "$out/bench-$m.txt"
done
