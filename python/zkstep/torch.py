"""PyTorch adapters: specs from ``nn.Sequential``, checkpoints from ``state_dict``,
and a :class:`Recorder` that records an ordinary training loop as a zkstep run.

zkstep proves dense ReLU networks (``nn.Linear`` layers with biases, ``nn.ReLU``
between them), trained with MSE or cross-entropy (mean reduction) by SGD,
SGD with momentum (no dampening, no Nesterov), Adam or AdamW (no AMSGrad) in
one parameter group. Anything else is refused with :class:`zkstep.ZkstepError`
naming what is not supported.

A recorded run is proven by ``zkstep prove-run`` or the Ray fan-out unchanged::

    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)).double()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    with zkstep.torch.Recorder(model, opt, "cross_entropy", "runs/r1", batch_size=8) as rec:
        for x, y in batches:
            rec.batch(x, y)                      # the batch the next step trains on
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()                           # recorded: files, drift, sync
    print(rec.drift_table())
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

from . import (
    SCALE,
    Batch,
    Checkpoint,
    RunWriter,
    Spec,
    ZkstepError,
    batch_from_numpy,
    checkpoint_from_numpy,
    checkpoint_to_numpy,
)

try:
    import torch
    from torch import nn
except ImportError as e:  # pragma: no cover - exercised only without torch
    raise ImportError("zkstep.torch needs PyTorch: pip install torch") from e

log = logging.getLogger("zkstep")

__all__ = [
    "DriftError",
    "Recorder",
    "StepDrift",
    "checkpoint_from_torch",
    "load_into_torch",
    "spec_from_torch",
]


class DriftError(ZkstepError):
    """PyTorch's update and the proven fixed-point one differ by more than the tolerance."""


def _loss_name(loss: Union[str, "nn.Module"]) -> str:
    if isinstance(loss, str):
        if loss in ("mse", "cross_entropy"):
            return loss
        raise ZkstepError(f"loss {loss!r}: zkstep proves 'mse' and 'cross_entropy'")
    if isinstance(loss, nn.MSELoss):
        if loss.reduction != "mean":
            raise ZkstepError(f"MSELoss(reduction={loss.reduction!r}): zkstep proves the mean")
        return "mse"
    if isinstance(loss, nn.CrossEntropyLoss):
        if loss.reduction != "mean" or loss.weight is not None or loss.label_smoothing != 0.0:
            raise ZkstepError(
                "CrossEntropyLoss: zkstep proves the mean over the batch, without class weights or label smoothing"
            )
        return "cross_entropy"
    raise ZkstepError(f"loss {type(loss).__name__}: zkstep proves MSELoss and CrossEntropyLoss")


def _layers(model: "nn.Module") -> List[Tuple[int, int, str]]:
    """(inputs, outputs, activation) per Linear of a Sequential of Linear/ReLU."""
    if not isinstance(model, nn.Sequential):
        raise ZkstepError(f"{type(model).__name__}: zkstep proves an nn.Sequential of Linear and ReLU")
    mods = list(model)
    layers: List[Tuple[int, int, str]] = []
    for i, m in enumerate(mods):
        if isinstance(m, nn.Linear):
            if m.bias is None:
                raise ZkstepError(f"layer {i} (Linear) has no bias: zkstep's layers always train one")
            relu = i + 1 < len(mods) and isinstance(mods[i + 1], nn.ReLU)
            layers.append((m.in_features, m.out_features, "relu" if relu else "identity"))
        elif isinstance(m, nn.ReLU):
            if i == 0 or not isinstance(mods[i - 1], nn.Linear):
                raise ZkstepError(f"layer {i} (ReLU) does not follow a Linear")
        else:
            raise ZkstepError(f"layer {i} is {type(m).__name__}: zkstep proves Linear and ReLU layers only")
    if not layers:
        raise ZkstepError("the model has no Linear layer")
    return layers


def _optimizer_toml(model: "nn.Module", opt: "torch.optim.Optimizer") -> List[str]:
    if len(opt.param_groups) != 1:
        raise ZkstepError(f"the optimizer has {len(opt.param_groups)} parameter groups; zkstep proves one")
    g = opt.param_groups[0]
    if [id(p) for p in g["params"]] != [id(p) for p in model.parameters()]:
        raise ZkstepError("the optimizer's parameters are not the model's, in the model's order")
    if isinstance(opt, torch.optim.SGD):
        if g.get("weight_decay", 0) or g.get("nesterov", False) or g.get("dampening", 0):
            raise ZkstepError("SGD with weight decay, Nesterov or dampening: zkstep proves plain SGD and momentum")
        if g.get("maximize", False):
            raise ZkstepError("SGD(maximize=True) is not supported")
        if g.get("momentum", 0):
            return ['kind = "momentum"', f"lr = {g['lr']!r}", f"mu = {g['momentum']!r}"]
        return ['kind = "sgd"', f"lr = {g['lr']!r}"]
    if isinstance(opt, (torch.optim.Adam, torch.optim.AdamW)):
        if g.get("amsgrad", False) or g.get("maximize", False):
            raise ZkstepError("Adam with AMSGrad or maximize is not supported")
        kind = "adamw" if isinstance(opt, torch.optim.AdamW) else "adam"
        b1, b2 = g["betas"]
        return [
            f'kind = "{kind}"',
            f"lr = {float(g['lr'])!r}",
            f"beta1 = {b1!r}",
            f"beta2 = {b2!r}",
            f"eps = {g['eps']!r}",
            f"weight_decay = {g['weight_decay']!r}",
        ]
    raise ZkstepError(f"optimizer {type(opt).__name__}: zkstep proves SGD, momentum, Adam and AdamW")


def spec_from_torch(
    model: "nn.Module",
    loss: Union[str, "nn.Module"],
    optimizer: "torch.optim.Optimizer",
    batch_size: int,
    rounding: str = "half-up",
) -> Spec:
    """The zkstep spec of a PyTorch model, loss and optimizer (hyper-parameters
    declared at scale 10⁹, as the proof uses them).

    >>> m = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
    >>> spec_from_torch(m, "mse", torch.optim.SGD(m.parameters(), lr=0.1), 8).widths
    [2, 16, 1]
    """
    lines = [f"batch_size = {int(batch_size)}", f'rounding = "{rounding}"', f'loss = "{_loss_name(loss)}"', "", "[optimizer]"]
    lines += _optimizer_toml(model, optimizer)
    for n_in, n_out, act in _layers(model):
        lines += ["", "[[layers]]", f"inputs = {n_in}", f"outputs = {n_out}", f'activation = "{act}"']
    return Spec.from_toml("\n".join(lines) + "\n")


def _numpy(t: "torch.Tensor") -> np.ndarray:
    return t.detach().cpu().numpy()


def checkpoint_from_torch(
    spec: Spec,
    model: "nn.Module",
    optimizer: Optional["torch.optim.Optimizer"] = None,
    step: Optional[int] = None,
) -> Tuple[Checkpoint, Dict[str, float]]:
    """Quantise a model's parameters (and its optimizer's state, if it has
    any yet) into a checkpoint of ``spec``. Adam's step count becomes the
    checkpoint's step unless ``step`` is given. Returns the checkpoint and
    the quantisation report."""
    _layers(model)
    tensors = {k: _numpy(v) for k, v in model.state_dict().items()}
    state = None
    if optimizer is not None and spec.optimizer != "sgd":
        params = list(model.parameters())
        flat: Dict[str, np.ndarray] = {}
        for i, p in enumerate(params):
            for key, v in optimizer.state.get(p, {}).items():
                if v is None:
                    continue
                flat[f"state.{i}.{key}"] = _numpy(v) if torch.is_tensor(v) else np.asarray(v, dtype=np.float64)
        state = flat or None
    return checkpoint_from_numpy(spec, tensors, state, step, label="<torch state_dict>")


def load_into_torch(ckpt: Checkpoint, model: "nn.Module", optimizer: Optional["torch.optim.Optimizer"] = None) -> None:
    """Set a model's parameters (and its optimizer's state) to a checkpoint's values."""
    arrays = checkpoint_to_numpy(ckpt, real=True)
    linears = [m for m in model if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for l, lin in enumerate(linears, start=1):
            lin.weight.copy_(torch.from_numpy(arrays[f"l{l}.w"]))
            lin.bias.copy_(torch.from_numpy(arrays[f"l{l}.b"]))
    if optimizer is None:
        return
    keys = {"momentum": [("v", "momentum_buffer")], "adam": [("m", "exp_avg"), ("v", "exp_avg_sq")]}
    kind = ckpt_kind(optimizer)
    for l, lin in enumerate(linears, start=1):
        for p, suffix in ((lin.weight, "w"), (lin.bias, "b")):
            st = optimizer.state.get(p, {})
            for name, key in keys.get(kind, []):
                # before its first step an optimizer has no state (zeros): nothing to set
                if key in st and torch.is_tensor(st[key]):
                    st[key].copy_(torch.from_numpy(arrays[f"l{l}.{name}{suffix}"]).to(st[key].dtype))


def ckpt_kind(optimizer: "torch.optim.Optimizer") -> str:
    """zkstep's kind of state for a torch optimizer: sgd, momentum or adam."""
    if isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW)):
        return "adam"
    if isinstance(optimizer, torch.optim.SGD) and optimizer.param_groups[0].get("momentum", 0):
        return "momentum"
    return "sgd"


@dataclass
class StepDrift:
    """How far PyTorch's update of one step is from the proven fixed-point one."""

    step: int
    #: largest |torch − fixed| over the parameters, in units of 10⁻⁹
    max_units: float
    #: the tensor where it is largest (zkstep name)
    tensor: str
    #: the tolerance it was held to, in units of 10⁻⁹ (when no bound applies)
    tolerance: float
    loss: float
    #: with docs/SEMANTICS.md §5's element-wise bound (float64 models): the
    #: largest |torch − fixed| / bound over the parameters (≤ 1: within it);
    #: None when the tolerance was used instead
    bound_ratio: Optional[float] = None

    @property
    def ok(self) -> bool:
        if self.bound_ratio is not None:
            return self.bound_ratio <= 1.0
        return self.max_units <= self.tolerance


class Recorder:
    """Record an ordinary PyTorch training loop as a zkstep run directory.

    Call :meth:`batch` with each step's (x, y) before ``optimizer.step()``;
    a hook on the optimizer then runs zkstep's fixed-point reference step from
    the last recorded checkpoint, writes the batch and θ_{t+1} into ``run_dir``
    (the layout of ``zkstep train``: spec.toml, ckpt_{t}, batch_{t}, run.json),
    and compares PyTorch's float update with the fixed-point one: the drift,
    in units of 10⁻⁹, warned about (or, with ``strict``, raised as
    :class:`DriftError`) above ``tolerance``. With ``sync`` (the default) the
    model and optimizer state are then set to the fixed-point θ_{t+1}, so the
    model trained is the one proven and the two never diverge.

    For a float64 model each weight and bias is held to docs/SEMANTICS.md
    §5's element-wise bound on |fixed − real| (``Checkpoint.train_step_bounded``,
    with the batch's quantisation as an input error and float64's own
    rounding as slack): PyTorch's float64 step is that real step. Where §5
    gives no bound (a float32 model, whose own rounding of 6·10⁻⁸ relative
    an operation dominates; or a ReLU pre-activation within its bound of
    zero) the drift is held to ``tolerance`` (units of 10⁻⁹): by default 64
    units plus 10⁻⁸ (float64) or 10⁻⁶ (float32) of the largest |θ|
    (26–55 units measured for float32 at unit scale).
    """

    def __init__(
        self,
        model: "nn.Module",
        optimizer: "torch.optim.Optimizer",
        loss: Union[str, "nn.Module"],
        run_dir: str,
        batch_size: int,
        *,
        strict: bool = False,
        sync: bool = True,
        tolerance: Optional[float] = None,
        spec: Optional[Spec] = None,
    ) -> None:
        self.model, self.optimizer = model, optimizer
        self.spec = spec if spec is not None else spec_from_torch(model, loss, optimizer, batch_size)
        self.strict, self.sync, self.tolerance = strict, sync, tolerance
        self.current, report = checkpoint_from_torch(self.spec, model, optimizer, step=0)
        # the run first: a refused directory leaves the model as it was
        self.run = RunWriter.create(str(run_dir), self.current)
        if sync:
            load_into_torch(self.current, model, optimizer)
        self.drifts: List[StepDrift] = []
        self._batch: Optional[Batch] = None
        self._hook = optimizer.register_step_post_hook(self._after_step)
        log.info("recording into %s (quantised %d values, max error %.2e)", run_dir, report["count"], report["max_abs_err"])

    def batch(self, x, y) -> Batch:
        """The batch the next ``optimizer.step()`` trains on (tensors or arrays)."""
        to_np = lambda a: _numpy(a) if torch.is_tensor(a) else np.asarray(a)
        self._batch = batch_from_numpy(self.spec, to_np(x), to_np(y), step=self.current.step)
        return self._batch

    def _tolerance(self, after: Dict[str, np.ndarray]) -> float:
        if self.tolerance is not None:
            return self.tolerance
        biggest = max((float(np.abs(a).max()) for a in after.values() if a.size), default=0.0)
        dtype = next(self.model.parameters()).dtype
        rel = 1e-8 if dtype == torch.float64 else 1e-6
        return 64.0 + rel * biggest * SCALE

    def _after_step(self, optimizer, args, kwargs) -> None:
        if self._batch is None:
            raise ZkstepError("Recorder: call rec.batch(x, y) before optimizer.step()")
        batch, self._batch = self._batch, None
        fixed, loss, bounds = self.current.train_step_bounded(batch)
        b = checkpoint_to_numpy(fixed, real=True)
        linears = [m for m in self.model if isinstance(m, nn.Linear)]
        torch_params = {}
        for l, lin in enumerate(linears, start=1):
            torch_params[f"l{l}.w"] = _numpy(lin.weight).astype(np.float64)
            torch_params[f"l{l}.b"] = _numpy(lin.bias).astype(np.float64)
        use_bound = bounds is not None and next(self.model.parameters()).dtype == torch.float64
        bound = {n: np.frombuffer(data, dtype="<f8").reshape(shape) for n, shape, data in bounds or []}
        worst, where, ratio = 0.0, "", 0.0
        for name, a in torch_params.items():
            diff = np.abs(a - b[name])
            d = float(diff.max()) * SCALE if diff.size else 0.0
            if d >= worst:
                worst, where = d, name
            if use_bound and diff.size:
                # float64's own rounding in PyTorch's step, beside §5's bound
                slack = 1e-12 * (1.0 + np.abs(b[name]))
                ratio = max(ratio, float((diff / (bound[name] + slack)).max()))
        drift = StepDrift(fixed.step - 1, worst, where, self._tolerance(b), loss, ratio if use_bound else None)
        self.drifts.append(drift)
        self.run.push(batch, fixed, loss)
        self.current = fixed
        if self.sync:
            load_into_torch(fixed, self.model, self.optimizer)
        if not drift.ok:
            held = (
                f"{drift.bound_ratio:.3g} times docs/SEMANTICS.md §5's bound"
                if drift.bound_ratio is not None
                else f"tolerance {drift.tolerance:.3g}"
            )
            msg = (
                f"step {drift.step}: PyTorch's update differs from the proven one by {drift.max_units:.3g} "
                f"units of 1e-9 at `{drift.tensor}` ({held})"
            )
            if self.strict:
                raise DriftError(msg)
            warnings.warn(msg, RuntimeWarning, stacklevel=2)

    def drift_table(self) -> str:
        """The drift of every recorded step as a text table."""
        rows = [
            "step  max drift (1e-9 units)  at      held to               loss",
            "----  ----------------------  ------  --------------------  ----------",
        ]
        for d in self.drifts:
            held = f"§5 bound ({d.bound_ratio:.2f} of it)" if d.bound_ratio is not None else f"tolerance {d.tolerance:.3g}"
            rows.append(f"{d.step:4d}  {d.max_units:22.3f}  {d.tensor:6s}  {held:20s}  {d.loss:.6g}")
        return "\n".join(rows)

    def close(self) -> None:
        """Stop recording (the files written stay)."""
        if self._hook is not None:
            self._hook.remove()
            self._hook = None

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
