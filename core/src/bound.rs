//! docs/SEMANTICS.md §5 as a computation: one step in real (f64) arithmetic
//! from the same stored inputs, beside an element-wise bound on
//! |fixed − real| for every parameter and state value of θ_{t+1}.
//!
//! The forward and backward passes propagate §5's bounds (each rescale adds
//! ρ, linear maps carry the errors through |W|), the loss gradient adds its
//! constant's rounding (MSE) or the softmax's (cross-entropy), and each
//! optimizer adds its update's: SGD and momentum by §5's lines, Adam and
//! AdamW by its first-order-free bound on the fixed-point trace's own m′, v′
//! and denominators. `core/tests/executor.rs` checks the fixed-point step
//! against it on random specs; the Python package's Recorder holds
//! PyTorch's float64 update to it.

use crate::exec::StepTrace;
use crate::fixed::{to_real, Rounding, SCALE};
use crate::optim::{adam, UpdateTrace};
use crate::spec::{Activation, Loss, Optimizer};
use crate::{Batch, Checkpoint, Matrix, ModelSpec};

const U: f64 = 1.0 / SCALE as f64;

/// Values with a bound on each one's error (real units).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bounded {
    /// The real values.
    pub v: Vec<f64>,
    /// |fixed − real| ≤ e, element by element.
    pub e: Vec<f64>,
}

impl Bounded {
    fn exact(data: &[i64], input_err: f64) -> Bounded {
        Bounded {
            v: data.iter().map(|&x| to_real(x)).collect(),
            e: vec![input_err; data.len()],
        }
    }

    fn zeros(n: usize) -> Bounded {
        Bounded {
            v: vec![0.0; n],
            e: vec![0.0; n],
        }
    }
}

/// One layer of θ_{t+1} in real arithmetic: W′ [outputs·inputs] row-major,
/// b′, and each optimizer state tensor's weights and biases in the spec's
/// order (momentum's v; Adam's m and v are not bounded here: `state` is empty).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RealLayer {
    /// W′.
    pub w: Bounded,
    /// b′.
    pub b: Bounded,
    /// The state tensors (weights, biases).
    pub state: Vec<(Bounded, Bounded)>,
}

/// The rounding's unit ρ: half an ulp for half-up, one for floor.
pub fn rounding_unit(r: Rounding) -> f64 {
    match r {
        Rounding::HalfUp => U / 2.0,
        Rounding::Floor => U,
    }
}

/// How to compare.
#[derive(Clone, Copy, Debug)]
pub struct BoundOptions {
    /// The rescales' rounding unit (None: the spec's).
    pub rho: Option<f64>,
    /// An error on every input and target value (0 for the stored batch;
    /// ½·10⁻⁹ when the reference ran on the floats the batch was quantised
    /// from).
    pub input_err: f64,
}

impl Default for BoundOptions {
    fn default() -> Self {
        BoundOptions {
            rho: None,
            input_err: 0.0,
        }
    }
}

/// The step in real arithmetic with §5's bounds, from the checkpoint and
/// batch the fixed-point step `trace` ran on. None when a ReLU
/// pre-activation is within its bound of zero (its selector could differ).
pub fn real_step(
    spec: &ModelSpec,
    ck: &Checkpoint,
    batch: &Batch,
    trace: &StepTrace,
    opts: BoundOptions,
) -> Option<Vec<RealLayer>> {
    let rho = opts.rho.unwrap_or_else(|| rounding_unit(spec.rounding));
    let (acts, sels) = forward(spec, ck, &batch.x, rho, opts.input_err)?;
    let mut da = loss_grad(spec, &acts[spec.layers.len()], &batch.y, rho, opts.input_err);
    let mut out = vec![RealLayer::default(); spec.layers.len()];
    for l in (0..spec.layers.len()).rev() {
        let (dw, db, prev) = backward(spec, ck, l, &acts[l], &sels[l], &da, rho);
        out[l] = update(spec, &ck.layers[l], &trace.backward[l].update, &dw, &db, rho)?;
        da = prev;
    }
    Some(out)
}

/// Every layer's activations A_0 … A_L (width, real and bounded values) and
/// its ReLU selectors.
type Forward = (Vec<(usize, Bounded)>, Vec<Option<Vec<bool>>>);

/// Every layer's activations A_0 … A_L (real, bounded) and ReLU selectors.
fn forward(
    spec: &ModelSpec,
    ck: &Checkpoint,
    x: &Matrix,
    rho: f64,
    input_err: f64,
) -> Option<Forward> {
    let mut acts = vec![(x.cols, Bounded::exact(&x.data, input_err))];
    let mut sels = vec![];
    for (l, ls) in spec.layers.iter().enumerate() {
        let (cols, a) = &acts[l];
        let rows = a.v.len() / cols.max(&1);
        let lp = &ck.layers[l];
        let mut z = Bounded::zeros(rows * ls.outputs);
        for i in 0..rows {
            for j in 0..ls.outputs {
                let (mut s, mut e) = (to_real(lp.b[j]), rho);
                for k in 0..ls.inputs {
                    let w = to_real(lp.w.at(j, k));
                    s += a.v[i * cols + k] * w;
                    e += w.abs() * a.e[i * cols + k];
                }
                z.v[i * ls.outputs + j] = s;
                z.e[i * ls.outputs + j] = e;
            }
        }
        if ls.activation == Activation::Relu {
            if z.v.iter().zip(&z.e).any(|(v, e)| v.abs() <= e + U) {
                return None;
            }
            let sel: Vec<bool> = z.v.iter().map(|&v| v > 0.0).collect();
            for (n, &s) in sel.iter().enumerate() {
                if !s {
                    z.v[n] = 0.0;
                    z.e[n] = 0.0;
                }
            }
            sels.push(Some(sel));
        } else {
            sels.push(None);
        }
        acts.push((ls.outputs, z));
    }
    Some((acts, sels))
}

/// dA_L: MSE's c·(A − Y) or cross-entropy's c·(softmax(A) − Y).
fn loss_grad(spec: &ModelSpec, out: &(usize, Bounded), y: &Matrix, rho: f64, input_err: f64) -> Bounded {
    let (dout, a) = out;
    let b = spec.batch_size as f64;
    let cfx = to_real(spec.loss_grad_c());
    let mut da = a.clone();
    match spec.loss {
        Loss::Mse => {
            let cr = 2.0 / (b * *dout as f64);
            for n in 0..a.v.len() {
                let diff = a.v[n] - to_real(y.data[n]);
                let e = a.e[n] + input_err;
                da.v[n] = cr * diff;
                da.e[n] = cfx * e + (cfx - cr).abs() * (diff.abs() + e) + rho;
            }
        }
        Loss::CrossEntropy => {
            let ex = crate::softmax::exp_error_bound(spec.rounding);
            for row in 0..a.v.len() / dout {
                let r = row * dout..(row + 1) * dout;
                let max = a.v[r.clone()].iter().cloned().fold(f64::MIN, f64::max);
                let sum: f64 = a.v[r.clone()].iter().map(|z| (z - max).exp()).sum();
                let worst = a.e[r.clone()].iter().cloned().fold(0.0, f64::max);
                let ep = (ex * (*dout as f64 + 1.0) + 1.0) * U + 0.5 * worst;
                for n in r {
                    let p = (a.v[n] - max).exp() / sum;
                    let diff = p - to_real(y.data[n]);
                    let e = ep + input_err;
                    da.v[n] = diff / b;
                    da.e[n] = rho + cfx * e + (cfx - 1.0 / b).abs() * (diff.abs() + e);
                }
            }
        }
    }
    da
}

/// Layer l's dW, db (real, bounded) and dA_{l−1}.
fn backward(
    spec: &ModelSpec,
    ck: &Checkpoint,
    l: usize,
    act: &(usize, Bounded),
    sel: &Option<Vec<bool>>,
    da: &Bounded,
    rho: f64,
) -> (Bounded, Bounded, Bounded) {
    let ls = &spec.layers[l];
    let lp = &ck.layers[l];
    let (ni, no) = (ls.inputs, ls.outputs);
    let a = &act.1;
    let bsz = a.v.len() / ni.max(1);
    let mut dz = da.clone();
    if let Some(sel) = sel {
        for (n, &s) in sel.iter().enumerate() {
            if !s {
                dz.v[n] = 0.0;
                dz.e[n] = 0.0;
            }
        }
    }
    let mut dw = Bounded::zeros(no * ni);
    let mut db = Bounded::zeros(no);
    for j in 0..no {
        for i in 0..bsz {
            let (g, ge) = (dz.v[i * no + j], dz.e[i * no + j]);
            db.v[j] += g;
            db.e[j] += ge;
            for k in 0..ni {
                let (x, xe) = (a.v[i * ni + k], a.e[i * ni + k]);
                dw.v[j * ni + k] += g * x;
                dw.e[j * ni + k] += (g.abs() + ge) * xe + (x.abs() + xe) * ge;
            }
        }
    }
    let mut prev = Bounded {
        v: vec![0.0; bsz * ni],
        e: vec![rho; bsz * ni],
    };
    for i in 0..bsz {
        for k in 0..ni {
            for j in 0..no {
                let w = to_real(lp.w.at(j, k));
                prev.v[i * ni + k] += dz.v[i * no + j] * w;
                prev.e[i * ni + k] += w.abs() * dz.e[i * no + j];
            }
        }
    }
    (dw, db, prev)
}

/// The optimizer's update of one layer, real and bounded.
fn update(
    spec: &ModelSpec,
    lp: &crate::LayerParams,
    tr: &UpdateTrace,
    dw: &Bounded,
    db: &Bounded,
    rho: f64,
) -> Option<RealLayer> {
    let mut w = Bounded::exact(&lp.w.data, 0.0);
    let mut b = Bounded::exact(&lp.b, 0.0);
    let mut state = vec![];
    match (&spec.optimizer, tr) {
        (Optimizer::Sgd { lr_fx }, _) => {
            let lr = to_real(*lr_fx);
            for (p, g) in [(&mut w, dw), (&mut b, db)] {
                for n in 0..p.v.len() {
                    p.v[n] -= lr * g.v[n];
                    p.e[n] = lr * g.e[n] + rho;
                }
            }
        }
        (Optimizer::Momentum { lr_fx, mu_fx }, _) => {
            let (lr, mu) = (to_real(*lr_fx), to_real(*mu_fx));
            let st = lp.state.first()?;
            let mut vw = Bounded::exact(&st.w.data, 0.0);
            let mut vb = Bounded::exact(&st.b, 0.0);
            // a weight's gradient is rescaled once more than a bias's (§5)
            for (p, v, g, extra) in [(&mut w, &mut vw, dw, rho), (&mut b, &mut vb, db, 0.0)] {
                for n in 0..p.v.len() {
                    v.v[n] = mu * v.v[n] + g.v[n];
                    v.e[n] = rho + extra + g.e[n];
                    p.v[n] -= lr * v.v[n];
                    p.e[n] = lr * v.e[n] + rho;
                }
            }
            state.push((vw, vb));
        }
        (Optimizer::Adam(h), UpdateTrace::Adam(t)) => {
            let s = SCALE as f64;
            let (m0, v0) = (lp.state.first()?, lp.state.get(1)?);
            let moments = [(&m0.w.data, &v0.w.data), (&m0.b, &v0.b)];
            for ((p, g, els), (ms, vs)) in [(&mut w, dw, &t.w), (&mut b, db, &t.b)].into_iter().zip(moments) {
                for n in 0..p.v.len() {
                    let (m, v) = (ms[n] as f64 / (s * s), vs[n] as f64 / (s * s));
                    let (real, _, _) = adam::adam_f64(h, t.step.t, p.v[n], m, v, g.v[n]);
                    let th_d = if h.decoupled {
                        p.v[n] * (1.0 - to_real(h.lr_fx) * to_real(h.weight_decay_fx))
                    } else {
                        p.v[n]
                    };
                    let delta_star = (th_d - real) * s;
                    p.e[n] = adam::update_bound(h, &t.step, els.get(n)?, g.e[n] * s, delta_star, rho * s, 1e-6) / s;
                    p.v[n] = real;
                }
            }
        }
        (Optimizer::Adam(_), _) => return None,
    }
    Some(RealLayer { w, b, state })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::data::{make_batch, two_moons};
    use crate::model::seeded_salt;

    /// Cross-entropy with Adam and AdamW, and MSE with each optimizer, on
    /// the demo's data: over 5 steps every W′ and b′ of the fixed-point step
    /// lies within its bound of the real one (which the f64 slack widens by
    /// its own rounding only), and the bound is not vacuous (< 10⁻⁶).
    #[test]
    fn the_fixed_step_lies_within_its_bound_for_every_loss_and_optimizer() {
        let ds = two_moons(64, 0.1, 3);
        let mut checked = 0;
        for (loss, opt) in [
            ("cross_entropy", "kind = \"adam\"\nlr = 0.01"),
            ("cross_entropy", "kind = \"adamw\"\nlr = 0.01"),
            ("cross_entropy", "kind = \"momentum\"\nlr = 0.05\nmu = 0.9"),
            ("mse", "kind = \"sgd\"\nlr = 0.1"),
            ("mse", "kind = \"adam\"\nlr = 0.01"),
        ] {
            let out = if loss == "mse" { 1 } else { 2 };
            let toml = format!(
                "batch_size = 8\nloss = \"{loss}\"\n[optimizer]\n{opt}\n[[layers]]\ninputs = 2\noutputs = 8\nactivation = \"relu\"\n[[layers]]\ninputs = 8\noutputs = {out}\nactivation = \"identity\"\n"
            );
            let spec = ModelSpec::from_toml_str(&toml).unwrap();
            let mut ds = ds.clone();
            if out == 2 {
                // one-hot targets from the moons' labels
                let y: Vec<i64> = ds.y.data.iter().flat_map(|&v| if v > 0 { [0, SCALE] } else { [SCALE, 0] }).collect();
                ds.y = Matrix { rows: ds.y.rows, cols: 2, data: y };
            }
            let mut ck = Checkpoint::init(&spec, 5);
            for t in 0..5 {
                let batch = make_batch(&ds, 8, t, 1, seeded_salt(1, t));
                let tr = crate::step(&spec, &ck, &batch).unwrap();
                if let Some(real) = real_step(&spec, &ck, &batch, &tr, BoundOptions::default()) {
                    for (lp, r) in tr.after.layers.iter().zip(&real) {
                        for (got, want) in [(&lp.w.data, &r.w), (&lp.b, &r.b)] {
                            for ((&g, &v), &e) in got.iter().zip(&want.v).zip(&want.e) {
                                let err = (to_real(g) - v).abs();
                                let slack = 1e-12 * (1.0 + v.abs());
                                assert!(err <= e + slack, "{loss} {opt}: {err} > {e}");
                                assert!(e < 1e-6, "{loss} {opt}: a vacuous bound {e}");
                            }
                        }
                    }
                    checked += 1;
                }
                ck = tr.after;
            }
        }
        assert!(checked >= 20, "only {checked} of 25 steps compared");
    }
}
