"""Train a small classifier in PyTorch, record it with zkstep, prove two steps
and verify them, then print how far PyTorch's updates were from the proven ones.

    pip install ./python torch        # from the repository root
    python examples/python/train_and_prove.py [--steps 20] [--out runs/classifier]

The model is float64 so that PyTorch's own rounding does not hide the
fixed-point step's (docs/SEMANTICS.md §5); a float32 model records and proves
the same way, with a looser drift tolerance.
"""

import argparse
import logging
import shutil
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

import zkstep
import zkstep.torch as zt


def blobs(n, seed):
    """Three Gaussian blobs in 4 dimensions, labels 0..2."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(3, 4))
    y = rng.integers(0, 3, size=n)
    return centres[y] + rng.normal(scale=0.7, size=(n, 4)), y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20, help="training steps to record")
    ap.add_argument("--out", default="runs/classifier", help="run directory (replaced)")
    ap.add_argument("--prove", type=int, default=2, help="steps to prove and verify")
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    out = Path(a.out)
    if out.exists():
        shutil.rmtree(out)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)).double()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    batch = 8
    x, y = blobs(batch * a.steps, seed=1)
    with zt.Recorder(model, opt, nn.CrossEntropyLoss(), str(out), batch_size=batch) as rec:
        for t in range(a.steps):
            xb = torch.from_numpy(x[t * batch : (t + 1) * batch])
            yb = torch.from_numpy(y[t * batch : (t + 1) * batch])
            rec.batch(xb, yb)
            opt.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
    print(f"recorded {a.steps} steps into {out} ({rec.spec})")

    t0 = time.time()
    keys = zkstep.Keys.keygen(rec.spec)
    print(f"keys: {keys.folds} folds a step, {time.time() - t0:.1f} s")
    vk = keys.verifying_key()
    for t in range(min(a.prove, a.steps)):
        before = zkstep.Checkpoint.load(rec.spec, str(out / f"ckpt_{t}.safetensors"))
        after = zkstep.Checkpoint.load(rec.spec, str(out / f"ckpt_{t + 1}.safetensors"))
        b = zkstep.Batch.load(rec.spec, str(out / f"batch_{t}.safetensors"))
        t0 = time.time()
        proof = zkstep.prove(keys, before, after, b, progress=True)
        proof.save(str(out / f"proof_{t}.zkstep"), force=True)
        dt = time.time() - t0
        st = zkstep.verify(vk, proof, before=before, after=after, batch=b)
        print(f"step {t}: proved in {dt:.1f} s ({len(proof)} bytes), verified: c_after {st['c_after'][:18]}…")
    print()
    print(rec.drift_table())


if __name__ == "__main__":
    main()
