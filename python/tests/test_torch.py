"""PyTorch adapters: specs from models, checkpoints from state, the Recorder.

Skipped without PyTorch, except in CI (ZKSTEP_REQUIRE_TORCH=1), where a
missing torch is a failure.
"""

import json
import os

import numpy as np
import pytest

import zkstep

if os.environ.get("ZKSTEP_REQUIRE_TORCH") == "1":
    import torch
else:
    torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import zkstep.torch as zt  # noqa: E402


def demo_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1)).double()


def moons(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    return x, (x[:, :1] * x[:, 1:] > 0).astype(np.float64)


def test_the_spec_of_a_torch_model_is_the_toml_one():
    m = demo_model()
    spec = zt.spec_from_torch(m, nn.MSELoss(), torch.optim.SGD(m.parameters(), lr=0.1), batch_size=8)
    assert spec == zkstep.Spec.demo()
    c = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    adam = zt.spec_from_torch(c, nn.CrossEntropyLoss(), torch.optim.AdamW(c.parameters(), lr=1e-3), 4)
    assert adam.optimizer == "adamw" and adam.loss == "cross_entropy"
    toml = adam.to_toml()
    assert "weight_decay" in toml and 'kind = "adamw"' in toml


@pytest.mark.parametrize(
    "model, opt, match",
    [
        (nn.Sequential(nn.Linear(2, 4), nn.Dropout(), nn.Linear(4, 1)), None, "Dropout"),
        (nn.Sequential(nn.Linear(2, 4, bias=False)), None, "no bias"),
        (nn.Linear(2, 4), None, "Sequential"),
        (None, lambda p: torch.optim.RMSprop(p), "RMSprop"),
        (None, lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True), "Nesterov"),
        (None, lambda p: torch.optim.Adam(p, amsgrad=True), "AMSGrad"),
    ],
)
def test_what_zkstep_cannot_prove_is_refused_by_name(model, opt, match):
    model = model if model is not None else demo_model()
    opt = (opt or (lambda p: torch.optim.SGD(p, lr=0.1)))(model.parameters())
    with pytest.raises(zkstep.ZkstepError, match=match):
        zt.spec_from_torch(model, "mse", opt, 8)


def test_checkpoints_from_torch_carry_the_optimizer_state():
    m = demo_model()
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    spec = zt.spec_from_torch(m, "mse", opt, 8)
    x, y = moons(8, 1)
    nn.functional.mse_loss(m(torch.from_numpy(x)), torch.from_numpy(y)).backward()
    opt.step()
    ck, report = zt.checkpoint_from_torch(spec, m, opt)
    assert ck.step == 1  # Adam's step count
    arrays = zkstep.checkpoint_to_numpy(ck, real=True)
    exp_avg = opt.state[m[0].weight]["exp_avg"].numpy()
    assert np.abs(arrays["l1.mw"] - exp_avg).max() < 1e-17
    assert np.abs(arrays["l1.w"] - m[0].weight.detach().numpy()).max() <= 0.5e-9 + 1e-15


def blobs(n, seed):
    """The example's data: three Gaussian blobs in 4 dimensions, labels 0..2."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(3, 4))
    y = rng.integers(0, 3, size=n)
    return centres[y] + rng.normal(scale=0.7, size=(n, 4)), y


def record(m, opt, loss, run, steps, seed, data=moons):
    """`steps` training steps of batch 8, recorded (strict) into `run`."""
    x, y = data(8 * steps, seed)
    f = nn.functional.mse_loss if _is_mse(loss) else nn.functional.cross_entropy
    with zt.Recorder(m, opt, loss, str(run), batch_size=8, strict=True) as rec:
        for t in range(steps):
            xb, yb = torch.from_numpy(x[8 * t : 8 * t + 8]), torch.from_numpy(y[8 * t : 8 * t + 8])
            rec.batch(xb, yb)
            opt.zero_grad()
            f(m(xb), yb).backward()
            opt.step()
    return rec


def _is_mse(loss):
    return loss == "mse" or isinstance(loss, nn.MSELoss)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    run = tmp_path_factory.mktemp("runs") / "sgd"
    m = demo_model()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    return run, record(m, opt, nn.MSELoss(), run, 3, seed=2)


def test_a_recorded_run_proves_and_verifies(recorded):
    run, rec = recorded
    manifest = json.loads((run / "run.json").read_text())
    assert [e["step"] for e in manifest["steps"]] == [0, 1, 2]
    spec = zkstep.Spec.load(str(run / "spec.toml"))
    assert spec == rec.spec == zkstep.Spec.demo()
    keys = zkstep.Keys.keygen(spec)
    vk = keys.verifying_key()
    for e in manifest["steps"]:
        before = zkstep.Checkpoint.load(spec, str(run / e["before"]))
        after = zkstep.Checkpoint.load(spec, str(run / e["after"]))
        batch = zkstep.Batch.load(spec, str(run / e["batch"]))
        proof = zkstep.prove(keys, before, after, batch)
        st = zkstep.verify(vk, proof, before=before, after=after, batch=batch)
        # the proof names the checkpoints by their KZG points, run.json by their chains
        assert (st["c_before"], st["c_after"], st["c_batch"]) == (vk.commitment(before), vk.commitment(after), e["c_batch"])
        assert (e["c_before"], e["c_after"]) == (before.commitment(), after.commitment())
    # a tampered θ_{t+1} from the run is rejected against the last proof
    fixed = zkstep.checkpoint_to_numpy(after)
    fixed["l1.b"][0] -= 1
    tampered, _ = zkstep.checkpoint_from_numpy(spec, fixed, step=after.step)
    with pytest.raises(zkstep.VerifyError):
        zkstep.verify(vk, proof, before=before, after=tampered, batch=batch)


def test_the_model_is_kept_at_the_proven_values(recorded):
    run, rec = recorded
    last = zkstep.Checkpoint.load(rec.spec, str(run / "ckpt_3.safetensors"))
    w = zkstep.checkpoint_to_numpy(last, real=True)["l3.w"]
    assert np.array_equal(rec.model[4].weight.detach().numpy(), w)


@pytest.mark.parametrize("make_opt", [lambda p: torch.optim.SGD(p, lr=0.1), lambda p: torch.optim.Adam(p, lr=1e-2)])
def test_the_drift_stays_within_the_tolerance_over_twenty_steps(tmp_path, make_opt):
    # the example's classifier (examples/python/train_and_prove.py), float64
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)).double()
    opt = make_opt(m.parameters())
    rec = record(m, opt, nn.CrossEntropyLoss(), tmp_path / "run", 20, seed=1, data=blobs)
    assert len(rec.drifts) == 20 and all(d.ok for d in rec.drifts)
    # float64: held to docs/SEMANTICS.md §5's element-wise bound, not a tolerance
    assert sum(d.bound_ratio is not None for d in rec.drifts) >= 15
    assert all(d.bound_ratio <= 1.0 for d in rec.drifts if d.bound_ratio is not None)
    # the drift is measured, not assumed: each step's PyTorch update differs
    # from the fixed-point one by more than nothing and far less than a step
    assert 0 < max(d.max_units for d in rec.drifts) <= 16
    assert "step" in rec.drift_table()


def test_a_step_without_its_batch_is_refused(tmp_path):
    m = demo_model()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    with zt.Recorder(m, opt, "mse", str(tmp_path / "run"), batch_size=8) as rec:
        nn.functional.mse_loss(m(torch.zeros(8, 2, dtype=torch.float64)), torch.zeros(8, 1, dtype=torch.float64)).backward()
        with pytest.raises(zkstep.ZkstepError, match="rec.batch"):
            opt.step()
    assert len(rec.drifts) == 0


def zkstep_binary():
    """The `zkstep` CLI: $ZKSTEP_BIN (CI sets it), else one built in this checkout."""
    if os.environ.get("ZKSTEP_BIN"):
        return os.environ["ZKSTEP_BIN"]
    root = os.path.join(os.path.dirname(__file__), "..", "..", "target")
    for profile in ("release", "debug"):
        p = os.path.join(root, profile, "zkstep")
        if os.path.exists(p):
            return p
    return None


def test_the_cli_proves_and_verifies_a_recorded_run_unchanged(recorded, tmp_path):
    import shutil
    import subprocess

    cli = zkstep_binary()
    if cli is None:
        pytest.skip("no zkstep binary: set ZKSTEP_BIN or build zkstep-cli")
    run, _ = recorded
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    keys = tmp_path / "keys"
    cmd = lambda *a: subprocess.run([cli, *a], capture_output=True, text=True, timeout=600)
    r = cmd("keygen", "--spec", str(copy / "spec.toml"), "--out", str(keys))
    assert r.returncode == 0, r.stderr
    r = cmd("prove-run", "--run", str(copy), "--keys", str(keys))
    assert r.returncode == 0, r.stderr
    r = cmd("verify-run", "--run", str(copy), "--vk", str(keys / "verifying.key"), "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    # and a proof the CLI made reads and verifies in Python
    spec = zkstep.Spec.load(str(copy / "spec.toml"))
    proof = zkstep.Proof.load(str(copy / "proof_2.zkstep"))
    vk = zkstep.VerifyingKey.load(str(keys / "verifying.key"))
    after = zkstep.Checkpoint.load(spec, str(copy / "ckpt_3.safetensors"))
    assert zkstep.verify(vk, proof, after=after)["step"] == 2


def test_a_torch_step_other_than_the_spec_is_caught_by_the_bound(tmp_path):
    # the spec declares lr = 0.1; PyTorch steps with 0.1·(1 + 10⁻⁵)
    m = demo_model()
    spec = zt.spec_from_torch(m, "mse", torch.optim.SGD(m.parameters(), lr=0.1), 8)
    opt = torch.optim.SGD(m.parameters(), lr=0.1 * (1 + 1e-5))
    x, y = moons(8, 4)
    with zt.Recorder(m, opt, "mse", str(tmp_path / "run"), batch_size=8, spec=spec, strict=True) as rec:
        rec.batch(x, y)
        nn.functional.mse_loss(m(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        with pytest.raises(zt.DriftError, match="bound"):
            opt.step()


def test_the_torch_docstring_examples_run():
    import doctest

    failed, tried = doctest.testmod(zt, extraglobs={"nn": nn, "torch": torch}, raise_on_error=False)
    assert tried > 0 and failed == 0
