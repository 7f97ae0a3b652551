//! The reference executor: THE definition of one training step.
//!
//! Plain checked integer arithmetic, no circuit code. For every layer it
//! records what the circuit needs (inputs, quotients and remainders of every
//! rescale, ReLU selectors, accumulated gradients), so that the circuit's
//! witness is *read* from this trace, never recomputed differently.
//!
//! Semantics (docs/SEMANTICS.md has the full statement and the bounds):
//! - forward: `Z = rescale_S(A·Wᵀ + b·S)`, `A' = ReLU(Z)` (selector `s = [Z ≥ 1]`) or `A' = Z`;
//! - loss: MSE `dA_L = rescale_S(c·(A_L − Y))`, `c = round(2S/(B·d_out))`, or
//!   cross-entropy `dA_L = rescale_S(c·(P − Y))`, `c = round(S/B)`, P = softmax(A_L);
//! - backward: `dZ = dA ⊙ s`; `dW_acc = dZᵀ·A` (scale S², never rescaled for SGD);
//!   `db_acc = Σ_batch dZ`; `dA_prev = rescale_S(dZ·W)` (layers ≥ 2 only);
//! - the optimizer's update (`crate::optim`, one file per optimizer): SGD
//!   `W' = W − rescale_{S²}(lr·dW_acc)`; momentum through the velocity.
//!
//! Every stored result must lie in the spec's value range and every i128
//! operation is checked: leaving either is an error naming layer, tensor, index.

use crate::checked::{Ctx, ExactSum};
use crate::error::Result;
use crate::fixed::SCALE_I128;
use crate::model::{Batch, Checkpoint, LayerParams};
pub use crate::optim::UpdateTrace;
use crate::softmax::{softmax_trace, SoftmaxTrace};
use crate::spec::{Activation, Loss, ModelSpec};
use crate::tensor::Matrix;

/// Forward pass of one layer.
#[derive(Clone, Debug)]
pub struct ForwardTrace {
    /// The layer's input A_{l−1}, `[B, inputs]` (X for layer 1).
    pub input: Matrix,
    /// Pre-activation Z (rescaled), `[B, outputs]`.
    pub z: Matrix,
    /// Remainders of Z's rescale, in `[0, S)`.
    pub z_rem: Vec<i64>,
    /// ReLU selectors `s = [Z ≥ 1]` (ReLU layers only).
    pub sel: Option<Vec<bool>>,
    /// Output A_l, `[B, outputs]`.
    pub out: Matrix,
}

/// The loss and its gradient with respect to the network output.
#[derive(Clone, Debug)]
pub struct LossTrace {
    /// `dA_L = rescale_S(c·(A_L − Y))`, `[B, outputs]`.
    pub da: Matrix,
    /// Remainders of dA_L's rescale.
    pub da_rem: Vec<i64>,
    /// The loss as a real number (reported, not proven).
    pub loss: f64,
    /// Cross-entropy: each sample's softmax (empty for MSE).
    pub softmax: Vec<SoftmaxTrace>,
}

/// Backward pass and update of one layer.
#[derive(Clone, Debug)]
pub struct BackwardTrace {
    /// `dZ = dA ⊙ s`, `[B, outputs]`.
    pub dz: Matrix,
    /// `dW_acc = dZᵀ·A_{l−1}` at scale S², `[outputs, inputs]` row-major.
    pub dw_acc: Vec<i128>,
    /// `db_acc = Σ_batch dZ` at scale S.
    pub db_acc: Vec<i128>,
    /// `dA_{l−1}` and its remainders (layers ≥ 2).
    pub da_prev: Option<(Matrix, Vec<i64>)>,
    /// The optimizer's update.
    pub update: UpdateTrace,
}

/// Everything one step computed.
#[derive(Clone, Debug)]
pub struct StepTrace {
    /// Per layer, input to output.
    pub forward: Vec<ForwardTrace>,
    /// Loss gradient.
    pub loss: LossTrace,
    /// Per layer, indexed like `forward` (computed last to first).
    pub backward: Vec<BackwardTrace>,
    /// θ_{t+1}.
    pub after: Checkpoint,
}

/// Forward pass of one layer (public so the circuits' tests can call the twin).
pub fn forward_layer(
    spec: &ModelSpec,
    l: usize,
    lp: &LayerParams,
    input: &Matrix,
) -> Result<ForwardTrace> {
    let ctx = Ctx { spec, layer: l + 1 };
    let ls = &spec.layers[l];
    let b = input.rows;
    let mut z = Matrix::zeros(b, ls.outputs);
    let mut z_rem = vec![0i64; b * ls.outputs];
    for i in 0..b {
        let a = input.row(i);
        for j in 0..ls.outputs {
            let w = lp.w.row(j);
            let mut acc = ExactSum::default();
            acc.add(lp.b[j] as i128 * SCALE_I128); // |b·S| < 2⁹³
            for (&x, &y) in a.iter().zip(w) {
                acc.add(x as i128 * y as i128); // |x·y| ≤ 2¹²⁶
            }
            let (q, r) = ctx.rescale_fit(ctx.exact(acc, "Z", i, j)?, "Z", i, j)?;
            *z.at_mut(i, j) = q;
            z_rem[i * ls.outputs + j] = r;
        }
    }
    let (sel, out) = match ls.activation {
        Activation::Relu => {
            let sel: Vec<bool> = z.data.iter().map(|&v| v >= 1).collect();
            let data = z.data.iter().map(|&v| v.max(0)).collect();
            (
                Some(sel),
                Matrix {
                    rows: b,
                    cols: ls.outputs,
                    data,
                },
            )
        }
        Activation::Identity => (None, z.clone()),
    };
    Ok(ForwardTrace {
        input: input.clone(),
        z,
        z_rem,
        sel,
        out,
    })
}

/// The loss gradient with respect to the network output A_L:
/// MSE `dA_L = rescale_S(c·(A_L − Y))`, `c = round(2S/(B·d_out))`, or
/// cross-entropy `dA_L = rescale_S(c·(P − Y))`, `c = round(S/B)`, P the
/// row-wise softmax of A_L (`crate::softmax`).
pub fn loss_grad(spec: &ModelSpec, out: &Matrix, y: &Matrix) -> Result<LossTrace> {
    let ctx = Ctx {
        spec,
        layer: spec.layers.len(),
    };
    let c = spec.loss_grad_c() as i128;
    let s = SCALE_I128 as f64;
    let mut softmax = Vec::new();
    let mut loss = 0f64;
    // the quantity c multiplies, per cell: A − Y or P − Y
    let mut diff = vec![0i128; out.data.len()];
    for i in 0..out.rows {
        let row: Vec<i128> = out.row(i).iter().map(|&v| v as i128).collect();
        match spec.loss {
            Loss::Mse => {
                for j in 0..out.cols {
                    let d = row[j] - y.at(i, j) as i128;
                    loss += (d as f64 / s).powi(2) / out.data.len() as f64;
                    diff[i * out.cols + j] = d;
                }
            }
            Loss::CrossEntropy => {
                let st = softmax_trace(&row, spec.rounding)
                    .ok_or_else(|| ctx.over("softmax", i, 0))?;
                // −Σ_j y_j·log_softmax(a)_j in real arithmetic, averaged over the batch
                let zf: Vec<f64> = row.iter().map(|&v| v as f64 / s).collect();
                let mx = zf.iter().cloned().fold(f64::MIN, f64::max);
                let lse = mx + zf.iter().map(|v| (v - mx).exp()).sum::<f64>().ln();
                for j in 0..out.cols {
                    let yj = y.at(i, j) as i128;
                    loss += (yj as f64 / s) * (lse - zf[j]) / out.rows as f64;
                    diff[i * out.cols + j] = st.p[j] - yj;
                }
                softmax.push(st);
            }
        }
    }
    let mut da = Matrix::zeros(out.rows, out.cols);
    let mut da_rem = vec![0; out.data.len()];
    for (n, &d) in diff.iter().enumerate() {
        let (i, j) = (n / out.cols.max(1), n % out.cols.max(1));
        let (q, r) = ctx.rescale_fit(ctx.mul(c, d, "dA", i, j)?, "dA", i, j)?;
        da.data[n] = q;
        da_rem[n] = r;
    }
    Ok(LossTrace {
        da,
        da_rem,
        loss,
        softmax,
    })
}

/// Backward pass and update of layer `l` given `dA_l`, in update number `t`
/// (the step index before it plus 1).
pub fn backward_layer(
    spec: &ModelSpec,
    t: u64,
    l: usize,
    lp: &LayerParams,
    fwd: &ForwardTrace,
    da: &Matrix,
) -> Result<(BackwardTrace, LayerParams)> {
    let ctx = Ctx { spec, layer: l + 1 };
    let ls = &spec.layers[l];
    let (bsz, n_in, n_out) = (da.rows, ls.inputs, ls.outputs);
    let mut dz = da.clone();
    if let Some(sel) = &fwd.sel {
        for (v, &s) in dz.data.iter_mut().zip(sel) {
            if !s {
                *v = 0;
            }
        }
    }
    // dW_acc[j][k] = Σ_i dZ[i][j]·A[i][k], at scale S².
    // Sums are exact (order-independent); see docs/SEMANTICS.md §1.
    let mut dw_sum = vec![ExactSum::default(); n_out * n_in];
    let mut db_sum = vec![ExactSum::default(); n_out];
    for i in 0..bsz {
        let a = fwd.input.row(i);
        for j in 0..n_out {
            let g = dz.at(i, j) as i128;
            db_sum[j].add(g);
            if g == 0 {
                continue;
            }
            let row = &mut dw_sum[j * n_in..(j + 1) * n_in];
            for (acc, &x) in row.iter_mut().zip(a) {
                acc.add(g * x as i128);
            }
        }
    }
    let dw_acc = dw_sum
        .into_iter()
        .enumerate()
        .map(|(n, s)| ctx.exact(s, "dW", n / n_in.max(1), n % n_in.max(1)))
        .collect::<Result<Vec<i128>>>()?;
    let db_acc = db_sum
        .into_iter()
        .enumerate()
        .map(|(j, s)| ctx.exact(s, "db", j, 0))
        .collect::<Result<Vec<i128>>>()?;
    // dA_{l−1}[i][k] = rescale_S(Σ_j dZ[i][j]·W[j][k]), needed below layer 1 only.
    let da_prev = if l > 0 {
        let mut m = Matrix::zeros(bsz, n_in);
        let mut rem = vec![0; bsz * n_in];
        let mut acc = vec![ExactSum::default(); n_in];
        for i in 0..bsz {
            acc.iter_mut().for_each(|a| *a = ExactSum::default());
            for j in 0..n_out {
                let g = dz.at(i, j) as i128;
                if g == 0 {
                    continue;
                }
                for (a, &w) in acc.iter_mut().zip(lp.w.row(j)) {
                    a.add(g * w as i128);
                }
            }
            for k in 0..n_in {
                let (q, r) = ctx.rescale_fit(ctx.exact(acc[k], "dA", i, k)?, "dA", i, k)?;
                *m.at_mut(i, k) = q;
                rem[i * n_in + k] = r;
            }
        }
        Some((m, rem))
    } else {
        None
    };
    let (new, update) = crate::optim::update(&ctx, t, lp, &dw_acc, &db_acc)?;
    Ok((
        BackwardTrace {
            dz,
            dw_acc,
            db_acc,
            da_prev,
            update,
        },
        new,
    ))
}

/// Forward pass only: the network's output on `x` (for evaluation).
pub fn predict(spec: &ModelSpec, ckpt: &Checkpoint, x: &Matrix) -> Result<Matrix> {
    let mut a = x.clone();
    for (l, lp) in ckpt.layers.iter().enumerate() {
        a = forward_layer(spec, l, lp, &a)?.out;
    }
    Ok(a)
}

/// One training step: θ_{t+1} = Step_spec(θ_t, X, Y), with its full trace.
pub fn step(spec: &ModelSpec, before: &Checkpoint, batch: &Batch) -> Result<StepTrace> {
    before.validate(spec)?;
    batch.validate(spec)?;
    let nl = spec.layers.len();
    let mut forward: Vec<ForwardTrace> = Vec::with_capacity(nl);
    for l in 0..nl {
        let input = forward.last().map_or(&batch.x, |f| &f.out);
        let f = forward_layer(spec, l, &before.layers[l], input)?;
        forward.push(f);
    }
    let loss = loss_grad(spec, &forward[nl - 1].out, &batch.y)?;
    let t = before.step.checked_add(1).ok_or_else(|| {
        crate::error::CoreError::Invalid("the step index is at its maximum (2^64 − 1)".into())
    })?;
    let mut backward: Vec<Option<BackwardTrace>> = vec![None; nl];
    let mut after_layers: Vec<Option<LayerParams>> = vec![None; nl];
    let mut da = loss.da.clone();
    for l in (0..nl).rev() {
        let (bt, new) = backward_layer(spec, t, l, &before.layers[l], &forward[l], &da)?;
        if let Some((m, _)) = &bt.da_prev {
            da = m.clone();
        }
        backward[l] = Some(bt);
        after_layers[l] = Some(new);
    }
    let backward = backward.into_iter().flatten().collect();
    let layers = after_layers.into_iter().flatten().collect();
    Ok(StepTrace {
        forward,
        loss,
        backward,
        after: Checkpoint { step: t, layers },
    })
}
