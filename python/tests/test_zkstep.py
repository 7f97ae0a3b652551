"""The Python package against the files, checks and proofs of the Rust crates."""

import json
import os
import shutil

import numpy as np
import pytest

import zkstep

SPEC = zkstep.Spec.demo()


def demo_batch(step, seed=0, salt=None):
    x = np.random.default_rng(seed).normal(size=(SPEC.batch_size, 2))
    return zkstep.batch_from_numpy(SPEC, x, np.tanh(x[:, :1]), step=step, salt=salt)


@pytest.fixture(scope="module")
def step0():
    before = zkstep.Checkpoint.init(SPEC, seed=3)
    batch = demo_batch(0)
    after, loss = before.train_step(batch)
    return before, batch, after


@pytest.fixture(scope="module")
def keys():
    return zkstep.Keys.keygen(SPEC)


@pytest.fixture(scope="module")
def proven(keys, step0):
    before, batch, after = step0
    seen = []
    proof = zkstep.prove(keys, before, after, batch, progress=lambda s, d, n: seen.append((s, d, n)))
    return proof, seen


def test_spec_round_trips_through_toml_and_files(tmp_path):
    again = zkstep.Spec.from_toml(SPEC.to_toml())
    assert again == SPEC and again.digest == SPEC.digest
    p = tmp_path / "spec.toml"
    SPEC.save(str(p))
    assert zkstep.Spec.load(str(p)) == SPEC
    assert SPEC.widths == [2, 16, 16, 1] and SPEC.loss == "mse" and SPEC.optimizer == "sgd"
    assert SPEC.num_params == 2 * 16 + 16 + 16 * 16 + 16 + 16 + 1


def test_a_bad_spec_names_the_key_and_the_file(tmp_path):
    with pytest.raises(zkstep.ZkstepError, match="batch_size"):
        zkstep.Spec.from_toml(SPEC.to_toml().replace("batch_size = 8", "batch_size = 0"))
    p = tmp_path / "bad.toml"
    p.write_text("this is not toml [")
    with pytest.raises(zkstep.ZkstepError, match="bad.toml"):
        zkstep.Spec.load(str(p))


def test_checkpoint_files_round_trip_and_are_never_overwritten(tmp_path, step0):
    before, _, _ = step0
    p = tmp_path / "ck.safetensors"
    before.save(str(p))
    again = zkstep.Checkpoint.load(SPEC, str(p))
    assert again == before and again.commitment() == before.commitment()
    original = p.read_bytes()
    with pytest.raises(zkstep.ZkstepError, match="exists"):
        zkstep.Checkpoint.init(SPEC, seed=9).save(str(p))
    assert p.read_bytes() == original
    zkstep.Checkpoint.init(SPEC, seed=9).save(str(p), force=True)
    assert p.read_bytes() != original


def test_a_truncated_or_foreign_file_raises_with_its_name(tmp_path, step0):
    before, batch, _ = step0
    p = tmp_path / "ck.safetensors"
    before.save(str(p))
    cut = tmp_path / "truncated.safetensors"
    cut.write_bytes(p.read_bytes()[:100])
    with pytest.raises(zkstep.ZkstepError, match="truncated.safetensors"):
        zkstep.Checkpoint.load(SPEC, str(cut))
    b = tmp_path / "batch.safetensors"
    batch.save(str(b))
    with pytest.raises(zkstep.ZkstepError, match="batch.safetensors"):
        zkstep.Checkpoint.load(SPEC, str(b))
    with pytest.raises(zkstep.ZkstepError, match="missing.safetensors"):
        zkstep.Checkpoint.load(SPEC, str(tmp_path / "missing.safetensors"))


def test_numpy_import_quantises_like_the_cli_and_round_trips(step0):
    before, _, _ = step0
    real = zkstep.checkpoint_to_numpy(before, real=True)
    again, report = zkstep.checkpoint_from_numpy(SPEC, real)
    assert again == before
    assert report["count"] == SPEC.num_params and report["max_abs_err"] <= 0.5e-9 + 1e-15
    fixed = zkstep.checkpoint_to_numpy(before)
    assert all(a.dtype == np.int64 for a in fixed.values())
    assert zkstep.checkpoint_from_numpy(SPEC, fixed)[0] == before


def test_a_wrong_tensor_is_named_with_its_shape():
    arrays = zkstep.checkpoint_to_numpy(zkstep.Checkpoint.init(SPEC), real=True)
    arrays["l2.w"] = np.zeros((16, 3))
    with pytest.raises(zkstep.ZkstepError, match=r"l2\.w.*\[16, 3\]"):
        zkstep.checkpoint_from_numpy(SPEC, arrays, label="my arrays")
    arrays = zkstep.checkpoint_to_numpy(zkstep.Checkpoint.init(SPEC), real=True)
    arrays["l1.b"][3] = 1e12
    with pytest.raises(zkstep.ZkstepError, match=r"my arrays.*l1\.b.*index 3"):
        zkstep.checkpoint_from_numpy(SPEC, arrays, label="my arrays")


def test_batches_keep_their_salt_and_step(tmp_path):
    one, two = "0x" + "0" * 63 + "1", "0x" + "0" * 63 + "2"
    b = demo_batch(4, salt=one)
    assert b.step == 4 and b.salt == one
    assert b.commitment() == demo_batch(4, salt=one).commitment()
    assert b.commitment() != demo_batch(4, salt=two).commitment()
    with pytest.raises(zkstep.ZkstepError, match="64 hex digits"):
        demo_batch(4, salt="0x01")
    p = tmp_path / "b.safetensors"
    b.save(str(p))
    again = zkstep.Batch.load(SPEC, str(p))
    assert again.step == 4 and again.commitment() == b.commitment()
    with pytest.raises(zkstep.ZkstepError, match="2-D"):
        zkstep.batch_from_numpy(SPEC, np.zeros(8), np.zeros((8, 1)), step=0)


def test_the_reference_step_refuses_a_batch_of_another_step(step0):
    before, _, _ = step0
    with pytest.raises(zkstep.ZkstepError, match="step 5"):
        before.train_step(demo_batch(5))


def test_a_step_proves_and_verifies_against_its_files(keys, step0, proven):
    before, batch, after = step0
    proof, seen = proven
    vk = keys.verifying_key()
    assert vk.commit_scheme == "kzg"  # the default
    st = zkstep.verify(vk, proof, before=before, after=after, batch=batch)
    assert st["c_before"] == vk.commitment(before) and st["c_after"] == vk.commitment(after)
    assert st["c_after"] != after.commitment()  # the points' hash, not the chain's
    assert st["c_batch"] == batch.commitment() and st["step"] == 0
    assert proof.statement == st
    assert 0 < len(proof) <= 16 * 1024
    stages = {s for s, _, _ in seen}
    assert {"fold", "compress"} <= stages and any(d == n > 0 for s, d, n in seen if s == "fold")


def test_a_tampered_checkpoint_is_rejected(keys, step0, proven):
    before, batch, after = step0
    proof, _ = proven
    fixed = zkstep.checkpoint_to_numpy(after)
    fixed["l3.w"][0, 5] += 1  # one weight of θ_{t+1} off by one unit
    tampered, _ = zkstep.checkpoint_from_numpy(SPEC, fixed, step=1)
    with pytest.raises(zkstep.VerifyError, match="c_after"):
        zkstep.verify(keys.verifying_key(), proof, before=before, after=tampered, batch=batch)
    with pytest.raises(zkstep.ZkstepError):
        zkstep.prove(keys, before, tampered, batch)
    with pytest.raises(zkstep.VerifyError, match="c_batch"):
        zkstep.verify(keys.verifying_key(), proof, batch=demo_batch(0, seed=1))


def test_proofs_and_keys_go_through_their_files(tmp_path, keys, step0, proven):
    before, batch, after = step0
    proof, _ = proven
    keys.save(str(tmp_path / "keys"))
    assert sorted(os.listdir(tmp_path / "keys")) == ["points.key", "proving.key", "verifying.key"]
    vk = zkstep.VerifyingKey.load(str(tmp_path / "keys" / "verifying.key"))
    assert vk.spec_digest == SPEC.digest
    proof.save(str(tmp_path / "step.zkstep"))
    again = zkstep.Proof.load(str(tmp_path / "step.zkstep"))
    assert again.to_bytes() == proof.to_bytes() == zkstep.Proof.from_bytes(proof.to_bytes()).to_bytes()
    assert zkstep.verify(vk, again, before=before, after=after, batch=batch)["step"] == 0
    with pytest.raises(zkstep.ZkstepError):
        zkstep.Proof.from_bytes(proof.to_bytes()[:-7])
    with pytest.raises(zkstep.ZkstepError, match="verifying.key"):
        zkstep.Proof.load(str(tmp_path / "keys" / "verifying.key"))
    loaded = zkstep.Keys.load(str(tmp_path / "keys"))
    assert loaded.folds == keys.folds and loaded.spec == SPEC


def test_checkpoint_files_are_checked_through_the_points_file(tmp_path, keys, step0, proven):
    # keys on KZG points (the default): a verifying key read from a file
    # commits checkpoints with the points file beside it, or the one given
    before, batch, after = step0
    proof, _ = proven
    keys.save(str(tmp_path / "keys"))
    points = str(tmp_path / "keys" / "points.key")
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(tmp_path / "keys" / "verifying.key", alone / "verifying.key")
    vk = zkstep.VerifyingKey.load(str(alone / "verifying.key"))
    with pytest.raises(zkstep.ZkstepError, match="points.key"):
        zkstep.verify(vk, proof, before=before)
    st = zkstep.verify(vk, proof, before=before, after=after, batch=batch, points=points)
    assert st["c_after"] == vk.commitment(after, points=points) and st["step"] == 0
    fixed = zkstep.checkpoint_to_numpy(after)
    fixed["l3.w"][0, 5] += 1
    tampered, _ = zkstep.checkpoint_from_numpy(SPEC, fixed, step=1)
    with pytest.raises(zkstep.VerifyError, match="c_after"):
        zkstep.verify(vk, proof, after=tampered, points=points)
    with pytest.raises(zkstep.ZkstepError, match="kzg"):
        zkstep.Keys.keygen(SPEC, commit_scheme="kzh")


def test_chain_keys_name_checkpoints_by_their_poseidon_chain(tmp_path, step0):
    before, batch, after = step0
    chain = zkstep.Keys.keygen(SPEC, commit_scheme="chain")
    proof = zkstep.prove(chain, before, after, batch)
    vk = chain.verifying_key()
    assert vk.commit_scheme == "chain"
    st = zkstep.verify(vk, proof, before=before, after=after, batch=batch)
    assert (st["c_before"], st["c_after"]) == (before.commitment(), after.commitment()) == (
        vk.commitment(before),
        vk.commitment(after),
    )
    chain.save(str(tmp_path / "keys"))
    assert sorted(os.listdir(tmp_path / "keys")) == ["proving.key", "verifying.key"]
    with pytest.raises(zkstep.ZkstepError, match="hash chains"):
        zkstep.verify(vk, proof, after=after, points=str(tmp_path / "keys" / "verifying.key"))


def test_an_exception_from_progress_stops_the_prover(keys, step0):
    before, batch, after = step0

    class Stop(Exception):
        pass

    def stop(stage, done, total):
        if stage == "fold":
            raise Stop("enough")

    with pytest.raises(Stop, match="enough"):
        zkstep.prove(keys, before, after, batch, progress=stop)


def test_a_run_directory_is_the_one_train_writes(tmp_path, step0):
    before, batch, after = step0
    run = zkstep.RunWriter.create(str(tmp_path / "run"), before)
    run.push(batch, after, 0.25)
    assert len(run) == 1
    m = json.loads((tmp_path / "run" / "run.json").read_text())
    assert m["format"] == "zkstep-run" and m["spec_digest"] == SPEC.digest
    e = m["steps"][0]
    assert (e["c_before"], e["c_after"], e["c_batch"]) == (before.commitment(), after.commitment(), batch.commitment())
    for f in ("spec.toml", "ckpt_0.safetensors", "ckpt_1.safetensors", "batch_0.safetensors"):
        assert (tmp_path / "run" / f).exists()
    with pytest.raises(zkstep.ZkstepError, match="step 0"):
        run.push(batch, after, 0.0)  # step 0 again
    with pytest.raises(zkstep.ZkstepError):
        run.push(demo_batch(1), after, 0.0)  # θ_1 is not Step(θ_1, batch_1)
    with pytest.raises(zkstep.ZkstepError, match="already"):
        zkstep.RunWriter.create(str(tmp_path / "run"), before)
    # a directory holding a file of the user's is refused, the file kept
    other = tmp_path / "mine"
    other.mkdir()
    (other / "ckpt_0.safetensors").write_bytes(b"the user's own")
    with pytest.raises(zkstep.ZkstepError, match="not empty"):
        zkstep.RunWriter.create(str(other), before)
    assert (other / "ckpt_0.safetensors").read_bytes() == b"the user's own"


def test_ctrl_c_stops_the_prover_at_the_next_fold(keys, step0):
    import signal

    before, batch, after = step0
    seen = []

    def interrupt(stage, done, total):
        seen.append(stage)
        if len(seen) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        zkstep.prove(keys, before, after, batch, progress=interrupt)
    # the signal is seen at the next event, before the prover goes on
    assert len(seen) <= 2


def test_a_segment_of_two_steps_proves_and_verifies(keys, step0):
    before, batch0, after = step0
    batch1 = demo_batch(1, seed=5)
    last, _ = after.train_step(batch1)
    proof = zkstep.prove_segment(keys, [before, after, last], [batch0, batch1])
    assert proof.statement["kind"] == "segment" and proof.statement["steps"] == 2
    vk = keys.verifying_key()
    st = zkstep.verify(vk, proof, before=before, after=last, batches=[batch0, batch1])
    assert (st["c_start"], st["c_end"], st["step"]) == (vk.commitment(before), vk.commitment(last), 0)
    with pytest.raises(zkstep.VerifyError):
        zkstep.verify(vk, proof, before=before, after=after, batches=[batch0, batch1])
    with pytest.raises(zkstep.VerifyError):
        zkstep.verify(vk, proof, batches=[batch1, batch0])
    with pytest.raises(zkstep.ZkstepError, match="k \\+ 1 checkpoints"):
        zkstep.prove_segment(keys, [before, after], [batch0, batch1])


def test_the_docstring_examples_run():
    import doctest

    failed, tried = doctest.testmod(zkstep, raise_on_error=False)
    assert tried > 0 and failed == 0
