#!/usr/bin/env bash
# A federated round of 4 nodes of the demo spec, end to end (README,
# "Federated rounds"). The previous global model is the demo run's last
# checkpoint; each node trains 2 steps from it on its own data and proves
# them (`prove-run`); the aggregator merges the nodes' last checkpoints by
# reputation (`zkstep merge`), makes merge keys once (`keygen --merge 4`)
# and proves the merge (`prove-merge`); the standalone verifier checks the
# merge proof against the round file and the global model, and
# `verify-round` checks the whole round directory (DIR: round.toml, keys/,
# merge.zkstep, node0 … node3; τ = 1.5, so a node that moved farther from the
# previous model is zeroed). Usage: scripts/merge_round.sh [DIR]
# (default: a temporary DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p zkstep-cli -p zkstep-verifier
dir="${1:-$(mktemp -d)}"
zk=./target/release/zkstep; zv=./target/release/zkstep-verify
mkdir -p "$dir"
# the spec and the previous global model: 10 steps of the demo
"$zk" demo --out-dir "$dir/demo" --steps 10 --no-prove --force > /dev/null
spec="$dir/demo/spec.toml"
last() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['steps'][-1]['step'] + 1)" "$1/run.json"; }
cp "$dir/demo/ckpt_$(last "$dir/demo").safetensors" "$dir/global_0.safetensors"
# each node's data: 64 points of its own two-moons-like sample (float64 safetensors X [64, 2], Y [64, 1])
python3 - "$dir" <<'PY'
import json, math, random, struct, sys
for node in range(4):
    rng = random.Random(100 + node)
    xs, ys = [], []
    for k in range(64):
        t = rng.uniform(0, math.pi)
        upper = k % 2 == 0
        x = (math.cos(t), math.sin(t)) if upper else (1 - math.cos(t), 0.5 - math.sin(t))
        xs += [x[0] + rng.gauss(0, 0.1), x[1] + rng.gauss(0, 0.1)]
        ys.append(1.0 if upper else 0.0)
    blobs = [struct.pack(f"<{len(xs)}d", *xs), struct.pack(f"<{len(ys)}d", *ys)]
    head = {"X": {"dtype": "F64", "shape": [64, 2], "data_offsets": [0, len(blobs[0])]},
            "Y": {"dtype": "F64", "shape": [64, 1], "data_offsets": [len(blobs[0]), len(blobs[0]) + len(blobs[1])]}}
    h = json.dumps(head).encode()
    h += b" " * (-len(h) % 8)
    with open(f"{sys.argv[1]}/data{node}.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
PY
"$zk" keygen --spec "$spec" --out "$dir/keys" --force
round="$dir/round.toml"
printf 'tau = 1.5\nprevious = "global_0.safetensors"\n' > "$round"
for node in 0 1 2 3; do
  "$zk" train --spec "$spec" --ckpt "$dir/global_0.safetensors" --data "$dir/data$node.safetensors" \
      --steps 2 --seed "$node" --out-dir "$dir/node$node" --force > /dev/null
  "$zk" prove-run --run "$dir/node$node" --keys "$dir/keys" > /dev/null
  printf '[[nodes]]\ncheckpoint = "node%s/ckpt_%s.safetensors"\nreputation = %s\n' \
      "$node" "$(last "$dir/node$node")" "$((node + 1))" >> "$round"
done
"$zk" merge --spec "$spec" --round "$round" --out "$dir/global_1.safetensors" --force
"$zk" keygen --spec "$spec" --out "$dir/keys" --merge 4 --force
"$zk" prove-merge --spec "$spec" --keys "$dir/keys" --round "$round" \
    --global "$dir/global_1.safetensors" --out "$dir/merge.zkstep" --force
"$zv" --vk "$dir/keys/merge_verifying.key" --proof "$dir/merge.zkstep" \
    --spec "$spec" --round "$round" --global "$dir/global_1.safetensors"
"$zk" verify-round "$dir"
echo "round in $dir"
