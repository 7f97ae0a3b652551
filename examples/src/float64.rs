//! The same training step in float64, PyTorch's way (`nn.Linear`, ReLU,
//! `MSELoss` or `CrossEntropyLoss` with mean reduction, `SGD`/`Adam`/
//! `AdamW`): the real arithmetic zkstep's fixed point approximates, for
//! reports that put N fixed-point steps beside N float64 steps on the same
//! batches (the digits example, `examples/tests/float64.rs`).

use zkstep_core::fixed::{to_real, SCALE};
use zkstep_core::spec::{Activation, AdamHyper, Loss, Optimizer};
use zkstep_core::{Checkpoint, Matrix, ModelSpec};

/// One layer in float64: weights `[outputs][inputs]` row-major, biases, and
/// the optimizer's state tensors (each a weight part and a bias part).
#[derive(Clone, Debug)]
pub struct Layer {
    /// Weights, `outputs × inputs`, row-major.
    pub w: Vec<f64>,
    /// Biases.
    pub b: Vec<f64>,
    /// State tensors (momentum's v; Adam's m, v), in the spec's order.
    pub state: Vec<(Vec<f64>, Vec<f64>)>,
}

/// A model in float64 with its step count.
#[derive(Clone, Debug)]
pub struct Model {
    /// Layers, input to output.
    pub layers: Vec<Layer>,
    /// Steps taken.
    pub step: u64,
}

fn reals(v: &[i64]) -> Vec<f64> {
    v.iter().map(|&x| to_real(x)).collect()
}

impl Model {
    /// The reals a fixed-point checkpoint of `spec` stands for (Adam's
    /// moments are at scale S², every other value at S).
    pub fn from_checkpoint(spec: &ModelSpec, ck: &Checkpoint) -> Self {
        let adam = spec.optimizer.adam().is_some();
        let state = |v: &[i64]| -> Vec<f64> {
            let r = reals(v);
            if adam {
                r.iter().map(|x| x / SCALE as f64).collect()
            } else {
                r
            }
        };
        Model {
            step: ck.step,
            layers: ck
                .layers
                .iter()
                .map(|lp| Layer {
                    w: reals(&lp.w.data),
                    b: reals(&lp.b),
                    state: lp
                        .state
                        .iter()
                        .map(|st| (state(&st.w.data), state(&st.b)))
                        .collect(),
                })
                .collect(),
        }
    }

    /// The largest |fixed − float| over every weight and bias of `ck`.
    pub fn max_diff(&self, ck: &Checkpoint) -> f64 {
        let mut worst = 0f64;
        for (a, lp) in self.layers.iter().zip(&ck.layers) {
            for (x, &y) in a.w.iter().chain(&a.b).zip(lp.w.data.iter().chain(&lp.b)) {
                worst = worst.max((x - to_real(y)).abs());
            }
        }
        worst
    }
}

/// Rows of values, one per sample.
type Rows = Vec<Vec<f64>>;

/// Every layer's input (the last entry: the network's output) and pre-activation.
fn forward(spec: &ModelSpec, m: &Model, x: &[Vec<f64>]) -> (Vec<Rows>, Vec<Rows>) {
    let (mut inputs, mut pre) = (vec![], vec![]);
    let mut a: Vec<Vec<f64>> = x.to_vec();
    for (ls, l) in spec.layers.iter().zip(&m.layers) {
        let z: Vec<Vec<f64>> = a
            .iter()
            .map(|row| {
                (0..ls.outputs)
                    .map(|j| {
                        let w = &l.w[j * ls.inputs..(j + 1) * ls.inputs];
                        l.b[j] + w.iter().zip(row).map(|(p, q)| p * q).sum::<f64>()
                    })
                    .collect()
            })
            .collect();
        inputs.push(a);
        a = match ls.activation {
            Activation::Relu => z
                .iter()
                .map(|r| r.iter().map(|v| v.max(0.0)).collect())
                .collect(),
            Activation::Identity => z.clone(),
        };
        pre.push(z);
    }
    inputs.push(a);
    (inputs, pre)
}

/// Row-wise softmax.
fn softmax(row: &[f64]) -> Vec<f64> {
    let mx = row.iter().cloned().fold(f64::MIN, f64::max);
    let e: Vec<f64> = row.iter().map(|v| (v - mx).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

/// The loss of outputs `out` against targets `y` (mean over the batch; MSE
/// also over the outputs).
pub fn loss(spec: &ModelSpec, out: &[Vec<f64>], y: &[Vec<f64>]) -> f64 {
    let n = out.len() as f64;
    match spec.loss {
        Loss::Mse => {
            let d = out[0].len() as f64;
            out.iter()
                .zip(y)
                .flat_map(|(o, t)| o.iter().zip(t).map(|(a, b)| (a - b).powi(2)))
                .sum::<f64>()
                / (n * d)
        }
        Loss::CrossEntropy => {
            out.iter()
                .zip(y)
                .map(|(o, t)| {
                    let p = softmax(o);
                    -t.iter()
                        .zip(&p)
                        .map(|(a, b)| a * b.max(1e-300).ln())
                        .sum::<f64>()
                })
                .sum::<f64>()
                / n
        }
    }
}

/// Rows of a fixed-point matrix as reals.
pub fn rows(m: &Matrix) -> Vec<Vec<f64>> {
    (0..m.rows).map(|i| reals(m.row(i))).collect()
}

/// The model's outputs on `x`.
pub fn predict(spec: &ModelSpec, m: &Model, x: &[Vec<f64>]) -> Vec<Vec<f64>> {
    forward(spec, m, x).0.pop().unwrap_or_default()
}

/// One training step in float64 on the batch (x, y); returns the batch loss
/// before the update.
pub fn step(spec: &ModelSpec, m: &mut Model, x: &[Vec<f64>], y: &[Vec<f64>]) -> f64 {
    let (inputs, pre) = forward(spec, m, x);
    let out = &inputs[inputs.len() - 1];
    let l = loss(spec, out, y);
    let bsz = x.len() as f64;
    let dout = out[0].len() as f64;
    let mut da: Vec<Vec<f64>> = out
        .iter()
        .zip(y)
        .map(|(o, t)| match spec.loss {
            Loss::Mse => o
                .iter()
                .zip(t)
                .map(|(a, b)| 2.0 * (a - b) / (bsz * dout))
                .collect(),
            Loss::CrossEntropy => softmax(o)
                .iter()
                .zip(t)
                .map(|(p, b)| (p - b) / bsz)
                .collect(),
        })
        .collect();
    m.step += 1;
    let t = m.step as i32;
    let s = SCALE as f64;
    for li in (0..spec.layers.len()).rev() {
        let ls = spec.layers[li];
        let (n_in, n_out) = (ls.inputs, ls.outputs);
        let dz: Vec<Vec<f64>> = da
            .iter()
            .zip(&pre[li])
            .map(|(d, z)| {
                d.iter()
                    .zip(z)
                    .map(|(g, zv)| match ls.activation {
                        Activation::Relu if *zv <= 0.0 => 0.0,
                        _ => *g,
                    })
                    .collect()
            })
            .collect();
        let a = &inputs[li];
        let mut gw = vec![0.0; n_out * n_in];
        let mut gb = vec![0.0; n_out];
        for (dr, ar) in dz.iter().zip(a) {
            for j in 0..n_out {
                gb[j] += dr[j];
                for k in 0..n_in {
                    gw[j * n_in + k] += dr[j] * ar[k];
                }
            }
        }
        let layer = &mut m.layers[li];
        da = dz
            .iter()
            .map(|dr| {
                (0..n_in)
                    .map(|k| (0..n_out).map(|j| dr[j] * layer.w[j * n_in + k]).sum())
                    .collect()
            })
            .collect();
        let opt = spec.optimizer;
        let lr = opt.lr_fx() as f64 / s;
        for (p, g, part) in [(&mut layer.w, &gw, 0usize), (&mut layer.b, &gb, 1)] {
            match opt {
                Optimizer::Sgd { .. } => {
                    for (pv, gv) in p.iter_mut().zip(g) {
                        *pv -= lr * gv;
                    }
                }
                Optimizer::Momentum { mu_fx, .. } => {
                    let mu = mu_fx as f64 / s;
                    let v = if part == 0 {
                        &mut layer.state[0].0
                    } else {
                        &mut layer.state[0].1
                    };
                    for ((pv, gv), vv) in p.iter_mut().zip(g).zip(v.iter_mut()) {
                        *vv = mu * *vv + gv;
                        *pv -= lr * *vv;
                    }
                }
                Optimizer::Adam(h) => {
                    let (ms, vs) = layer.state.split_at_mut(1);
                    let (mm, vv) = if part == 0 {
                        (&mut ms[0].0, &mut vs[0].0)
                    } else {
                        (&mut ms[0].1, &mut vs[0].1)
                    };
                    for (((pv, gv), mv), sv) in
                        p.iter_mut().zip(g).zip(mm.iter_mut()).zip(vv.iter_mut())
                    {
                        (*pv, *mv, *sv) = adam_update(&h, t, (*pv, *mv, *sv), *gv);
                    }
                }
            }
        }
    }
    l
}

/// PyTorch's Adam or AdamW update number `t` of one parameter in float64:
/// `(θ, m, v)` and the gradient g give `(θ', m', v')`.
pub fn adam_update(h: &AdamHyper, t: i32, (theta, m, v): (f64, f64, f64), g: f64) -> (f64, f64, f64) {
    zkstep_core::optim::adam::adam_f64(h, t.max(0) as u64, theta, m, v, g)
}

/// The largest |θ' − float64| of one fixed-point Adam step's parameters,
/// the float64 update taken from the same stored θ, m, v and the same
/// gradient the fixed point used: the optimizer's own error, without the
/// gradient's (None for another optimizer).
pub fn adam_own_error(spec: &ModelSpec, before: &Checkpoint, trace: &zkstep_core::StepTrace) -> Option<f64> {
    let h = spec.optimizer.adam()?;
    let s = SCALE as f64;
    let t = (before.step + 1) as i32;
    let mut worst = 0f64;
    for (l, lp) in before.layers.iter().enumerate() {
        let zkstep_core::optim::UpdateTrace::Adam(at) = &trace.backward.get(l)?.update else {
            return None;
        };
        let (m, v) = (lp.state.first()?, lp.state.get(1)?);
        let params = lp.w.data.iter().chain(&lp.b);
        let moments = m.w.data.iter().chain(&m.b).zip(v.w.data.iter().chain(&v.b));
        let grads = at.dw.iter().map(|&g| g as i128).chain(at.b.iter().map(|e| e.g - e.l2));
        let news = at.w.iter().chain(&at.b);
        for (((&th, (&mv, &vv)), g), new) in params.zip(moments).zip(grads).zip(news) {
            let state = (to_real(th), mv as f64 / (s * s), vv as f64 / (s * s));
            let (want, _, _) = adam_update(&h, t, state, g as f64 / s);
            worst = worst.max((want - new.theta as f64 / s).abs());
        }
    }
    Some(worst)
}
