"""zkstep: zero-knowledge proofs that a neural-network training step was done as declared.

The same specs, checkpoints, batches, keys and proofs as the ``zkstep`` command
line, from Python (the Rust crates do the work; this package adds numpy and
PyTorch adapters). A step proven and verified in a few lines::

    import numpy as np, zkstep

    spec = zkstep.Spec.demo()                      # 2-16-16-1, MSE, SGD, batch 8
    before = zkstep.Checkpoint.init(spec, seed=1)
    x = np.random.default_rng(0).normal(size=(8, 2))
    y = np.tanh(x[:, :1])
    batch = zkstep.batch_from_numpy(spec, x, y, step=before.step)
    after, loss = before.train_step(batch)         # the fixed-point reference step
    keys = zkstep.Keys.keygen(spec)                # development parameters
    proof = zkstep.prove(keys, before, after, batch)
    zkstep.verify(keys.verifying_key(), proof, before=before, after=after, batch=batch)

Errors are :class:`ZkstepError` (a rejected proof: :class:`VerifyError`) with the
CLI's messages, naming the file, tensor and index at fault. Nothing is printed:
progress goes to a callback, or to a tqdm bar with ``progress=True`` when tqdm
is installed, and log records to the ``zkstep`` logger.
"""

from __future__ import annotations

import logging
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ._native import (
    FILE_VERSION,
    Batch,
    Checkpoint,
    Keys,
    Proof,
    RunWriter,
    Spec,
    VerifyError,
    VerifyingKey,
    ZkstepError,
)
from ._native import prove as _prove
from ._native import prove_segment as _prove_segment
from ._native import verify

__all__ = [
    "FILE_VERSION",
    "SCALE",
    "Batch",
    "Checkpoint",
    "Keys",
    "Proof",
    "RunWriter",
    "Spec",
    "VerifyError",
    "VerifyingKey",
    "ZkstepError",
    "batch_from_numpy",
    "checkpoint_from_numpy",
    "checkpoint_to_numpy",
    "prove",
    "prove_segment",
    "verify",
]

#: Fixed-point scale: a stored integer v means v / SCALE (Adam's moments: v / SCALE²).
SCALE = 10**9

log = logging.getLogger("zkstep")

ArrayLike = Union[np.ndarray, "object"]


def _raw(a: ArrayLike) -> Tuple[str, list, bytes]:
    """An array as (dtype name, shape, little-endian bytes) for the native module."""
    arr = np.asarray(a)
    if arr.dtype.kind == "f":
        arr = arr.astype("<f8" if arr.dtype.itemsize > 4 else "<f4", copy=False)
    elif arr.dtype.kind in "iu":
        arr = arr.astype("<i8", copy=False)
    else:
        raise ZkstepError(f"an array of dtype {arr.dtype} cannot be read as numbers")
    name = {"f8": "float64", "f4": "float32", "i8": "int64"}[arr.dtype.str[1:]]
    return name, list(arr.shape), np.ascontiguousarray(arr).tobytes()


def checkpoint_from_numpy(
    spec: Spec,
    tensors: Mapping[str, ArrayLike],
    optimizer_state: Optional[Mapping[str, ArrayLike]] = None,
    step: Optional[int] = None,
    label: str = "<numpy arrays>",
) -> Tuple[Checkpoint, Dict[str, float]]:
    """Quantise float arrays into a checkpoint of ``spec``.

    ``tensors`` uses zkstep's names (``l1.w`` [outputs, inputs], ``l1.b``, …) or
    PyTorch's (``0.weight``, ``0.bias``, … in layer order); ``optimizer_state``
    PyTorch's flattened optimizer state (``state.{i}.momentum_buffer``,
    ``state.{i}.exp_avg``, ``state.{i}.exp_avg_sq``, ``state.{i}.step``, i the
    parameter's index). Integer arrays are taken as fixed point already.
    Returns the checkpoint and the quantisation report (count, max and mean
    absolute error). ``label`` names the source in error messages.

    >>> spec = Spec.demo()
    >>> ck, report = checkpoint_from_numpy(spec, {n: np.zeros(s) for n, s in zip(spec.tensor_names(), [(16, 2), (16,), (16, 16), (16,), (1, 16), (1,)])})
    >>> ck.step, report["count"]
    (0, 337)
    """
    st = None if optimizer_state is None else [(k, _raw(v)) for k, v in optimizer_state.items()]
    return Checkpoint.import_tensors(
        spec, [(k, _raw(v)) for k, v in tensors.items()], st, step, label
    )


def checkpoint_to_numpy(ckpt: Checkpoint, real: bool = False) -> Dict[str, np.ndarray]:
    """A checkpoint's tensors by zkstep name: int64 fixed point, or with
    ``real=True`` float64 values (Adam's moments divided by SCALE², the rest by SCALE)."""
    out = {}
    for name, shape, data, scale in ckpt.tensors():
        a = np.frombuffer(data, dtype="<i8").reshape(shape)
        out[name] = a / float(scale) if real else a.copy()
    return out


def batch_from_numpy(
    spec: Spec,
    x: ArrayLike,
    y: ArrayLike,
    step: int,
    salt: Optional[str] = None,
    label: str = "<numpy batch>",
) -> Batch:
    """Quantise inputs ``x`` [B, inputs] and targets ``y`` [B, outputs] into the
    batch of step ``step``. For a cross-entropy spec, ``y`` may be class indices
    [B] (read as one-hot rows). A fresh random salt hides the batch inside its
    commitment unless ``salt`` (hex) is given."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    if spec.loss == "cross_entropy" and y.ndim == 1:
        classes = spec.widths[-1]
        if y.dtype.kind not in "iu" or (y < 0).any() or (y >= classes).any():
            raise ZkstepError(f"{label}: class indices must be whole numbers in 0..{classes}")
        y = np.eye(classes)[y]
    y = np.asarray(y, dtype=np.float64)
    return Batch.import_tensors(spec, _raw(x), _raw(y), step, salt, label)


def _progress_sink(progress: Union[None, bool, Callable[[str, int, int], None]]):
    """The callback `prove` gets: the user's, a tqdm bar, or None."""
    if progress is None or progress is False:
        return None, None
    if callable(progress):
        return progress, None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # no tqdm: progress as log records
        def to_log(stage: str, done: int, total: int) -> None:
            log.info("prove: %s %d/%d", stage, done, total)

        return to_log, None
    bar = tqdm(total=0, unit="fold", leave=False)

    def to_bar(stage: str, done: int, total: int) -> None:
        if bar.total != total:
            bar.reset(total=total)
        bar.set_description(stage)
        bar.n = done
        bar.refresh()

    return to_bar, bar


Progress = Union[None, bool, Callable[[str, int, int], None]]


def prove(keys: Keys, before: Checkpoint, after: Checkpoint, batch: Batch, progress: Progress = None) -> Proof:
    """Prove ``after = Step(before, batch)`` with ``keys``.

    The GIL is released while the prover runs. ``progress`` is a callable
    ``(stage, done, total)`` called between folds, or ``True`` for a tqdm bar
    (a log record when tqdm is missing). Ctrl-C stops the prover at the next
    fold and raises ``KeyboardInterrupt``; an exception from ``progress`` stops
    it the same way and is raised here.
    """
    sink, bar = _progress_sink(progress)
    try:
        return _prove(keys, before, after, batch, sink)
    finally:
        if bar is not None:
            bar.close()


def prove_segment(
    keys: Keys, checkpoints: Sequence[Checkpoint], batches: Sequence[Batch], progress: Progress = None
) -> Proof:
    """Prove k consecutive steps as one constant-size proof: ``checkpoints``
    θ_t … θ_{t+k} and the ``batches`` of steps t … t+k−1 (``zkstep
    prove-segment``'s proof). Progress and Ctrl-C as for :func:`prove`."""
    sink, bar = _progress_sink(progress)
    try:
        return _prove_segment(keys, list(checkpoints), list(batches), sink)
    finally:
        if bar is not None:
            bar.close()
