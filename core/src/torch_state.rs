//! PyTorch optimizer state, imported into a checkpoint's state tensors.
//!
//! `torch.optim.Adam(W)`'s `state_dict()["state"]` maps a parameter's index
//! (its place in `model.parameters()`: layer 1's weight, layer 1's bias,
//! layer 2's weight, …) to `exp_avg`, `exp_avg_sq` and `step`; `SGD` with
//! momentum to `momentum_buffer`. Flattened into one safetensors file as
//! `state.{i}.{key}` (docs/SEMANTICS.md §3 has the snippet), they become
//! the checkpoint's m, v (or velocity) by the same quantisation as the
//! weights, and Adam's common `step` becomes the checkpoint's step.

use crate::error::{CoreError, Result};
use crate::fixed::{SCALE_I128, SCALE_SQ};
use crate::format::{quantise_at, read_file, Dtype, QuantReport, StFile};
use crate::model::Checkpoint;
use crate::spec::{ModelSpec, Optimizer};
use std::path::Path;

fn ferr(path: &Path, msg: impl Into<String>) -> CoreError {
    CoreError::File {
        path: path.to_path_buf(),
        msg: msg.into(),
    }
}

/// The PyTorch keys of each of the spec's state tensors, in its order.
fn torch_keys(spec: &ModelSpec) -> &'static [&'static str] {
    match spec.optimizer {
        Optimizer::Sgd { .. } => &[],
        Optimizer::Momentum { .. } => &["momentum_buffer"],
        Optimizer::Adam(_) => &["exp_avg", "exp_avg_sq"],
    }
}

/// The scalar `state.{i}.step` as a whole number.
fn step_of(f: &StFile, path: &Path, name: &str) -> Result<u64> {
    let (dtype, shape) = f.info(name)?;
    if shape.iter().product::<usize>() != 1 {
        return Err(ferr(
            path,
            format!("tensor `{name}` has shape {shape:?}; a step count is one number"),
        ));
    }
    let v = if dtype == Dtype::I64 {
        f.i64_tensor(name, &shape)?[0] as f64
    } else {
        f.float_tensor(name)?.1[0]
    };
    // below 2⁵³ every whole f64 is exact
    if v < 0.0 || v.fract() != 0.0 || v >= 9_007_199_254_740_992.0 {
        return Err(ferr(
            path,
            format!("tensor `{name}` holds {v}, not a step count (a whole number ≥ 0)"),
        ));
    }
    Ok(v as u64)
}

/// Read `state.{i}.…` tensors from `path` into `ckpt`'s state tensors (and,
/// for Adam, its step); the quantisation error is merged into `report`.
pub fn import_optimizer_state(
    path: &Path,
    spec: &ModelSpec,
    ckpt: &mut Checkpoint,
    report: &mut QuantReport,
) -> Result<()> {
    import_optimizer_state_bytes(path, &read_file(path)?, spec, ckpt, report)
}

/// [`import_optimizer_state`] of safetensors bytes already read (`path`
/// names them in errors).
pub fn import_optimizer_state_bytes(
    path: &Path,
    bytes: &[u8],
    spec: &ModelSpec,
    ckpt: &mut Checkpoint,
    report: &mut QuantReport,
) -> Result<()> {
    let keys = torch_keys(spec);
    if keys.is_empty() {
        return Err(ferr(
            path,
            format!(
                "the spec's optimizer (`{}`) keeps no state to import",
                spec.optimizer.kind()
            ),
        ));
    }
    let f = StFile::parse(path, bytes)?;
    let mut steps: Option<(u64, String)> = None;
    for (l, (lp, ls)) in ckpt.layers.iter_mut().zip(&spec.layers).enumerate() {
        // model.parameters() order: the weight, then the bias
        for (i, is_bias) in [(2 * l, false), (2 * l + 1, true)] {
            let want = if is_bias {
                vec![ls.outputs]
            } else {
                vec![ls.outputs, ls.inputs]
            };
            for (st, key) in lp.state.iter_mut().zip(keys) {
                let name = format!("state.{i}.{key}");
                if !f.has(&name) {
                    return Err(ferr(
                        path,
                        format!(
                            "missing tensor `{name}` (layer {}'s {}; found: {})",
                            l + 1,
                            if is_bias { "bias" } else { "weight" },
                            f.names().join(", ")
                        ),
                    ));
                }
                let (shape, vals) = f.float_tensor(&name)?;
                if shape != want {
                    return Err(ferr(
                        path,
                        format!("tensor `{name}` has shape {shape:?}, the spec expects {want:?}"),
                    ));
                }
                if *key == "exp_avg_sq" {
                    if let Some(j) = vals.iter().position(|&v| v < 0.0) {
                        return Err(ferr(
                            path,
                            format!("tensor `{name}` holds {} at flat index {j}: a second moment is never negative", vals[j]),
                        ));
                    }
                }
                // Adam's moments are stored at S² (docs/SEMANTICS.md §3)
                let scale = if key.starts_with("exp_avg") {
                    SCALE_SQ
                } else {
                    SCALE_I128
                };
                let (q, r) = quantise_at(path, &name, &vals, scale, spec.value_range)?;
                report.merge(r);
                if is_bias {
                    st.b = q;
                } else {
                    st.w.data = q;
                }
            }
            if matches!(spec.optimizer, Optimizer::Adam(_)) {
                let name = format!("state.{i}.step");
                if !f.has(&name) {
                    return Err(ferr(
                        path,
                        format!("missing tensor `{name}` (Adam's step count)"),
                    ));
                }
                let t = step_of(&f, path, &name)?;
                match &steps {
                    Some((t0, first)) if *t0 != t => {
                        return Err(ferr(
                            path,
                            format!("`{name}` is {t} but `{first}` is {t0}: every parameter must have taken the same number of steps"),
                        ))
                    }
                    Some(_) => {}
                    None => steps = Some((t, name)),
                }
            }
        }
    }
    if let Some((t, _)) = steps {
        ckpt.step = t;
    }
    ckpt.validate(spec).map_err(|e| e.in_file(path))
}
