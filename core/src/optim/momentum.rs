//! SGD with momentum (all rescales by S): `dW = rescale_S(dW_acc)`,
//! `v' = rescale_S(μ·v) + dW`, `W' = W − rescale_S(lr·v')`; biases alike with
//! `db_acc` in place of dW. Native twin of the circuits' `update::momentum`.

use crate::checked::Ctx;
use crate::error::{CoreError, Result};
use crate::fixed::SCALE_I128;
use crate::model::LayerParams;

/// What the momentum update of one layer computed (every rescale's quotient
/// and remainder, per weight `[outputs, inputs]` and per bias `[outputs]`).
#[derive(Clone, Debug)]
pub struct MomentumTrace {
    /// `dW = rescale_S(dW_acc)`.
    pub dw: Vec<i64>,
    /// Remainders of `dW`.
    pub dw_rem: Vec<i64>,
    /// `rescale_S(μ·vW)`.
    pub mvw: Vec<i64>,
    /// Remainders of `μ·vW`.
    pub mvw_rem: Vec<i64>,
    /// Weight update quotients `rescale_S(lr·vW')`.
    pub w_delta: Vec<i128>,
    /// Their remainders.
    pub w_rem: Vec<i64>,
    /// `rescale_S(μ·vb)`.
    pub mvb: Vec<i64>,
    /// Remainders of `μ·vb`.
    pub mvb_rem: Vec<i64>,
    /// Bias update quotients `rescale_S(lr·vb')`.
    pub b_delta: Vec<i128>,
    /// Their remainders.
    pub b_rem: Vec<i64>,
}

/// One momentum update of a layer.
pub(crate) fn update(
    ctx: &Ctx,
    lr_fx: i64,
    mu_fx: i64,
    lp: &LayerParams,
    dw_acc: &[i128],
    db_acc: &[i128],
) -> Result<(LayerParams, MomentumTrace)> {
    let (lr, mu) = (lr_fx as i128, mu_fx as i128);
    let (vw, vb) = match lp.state.as_slice() {
        [v] => (&v.w, &v.b),
        _ => {
            return Err(CoreError::Invalid(format!(
                "layer {}: the momentum optimizer needs vW and vb in the checkpoint",
                ctx.layer
            )))
        }
    };
    let n_in = lp.w.cols;
    let mut new = lp.clone();
    let m = dw_acc.len();
    let (mut dw, mut dw_rem, mut mvw, mut mvw_rem) =
        (vec![0; m], vec![0; m], vec![0; m], vec![0; m]);
    let (mut w_delta, mut w_rem) = (vec![0i128; m], vec![0; m]);
    let mut new_vw = vw.clone();
    for n in 0..m {
        let (j, k) = (n / n_in, n % n_in);
        (dw[n], dw_rem[n]) = ctx.rescale_fit(dw_acc[n], "dW", j, k)?;
        (mvw[n], mvw_rem[n]) = ctx.rescale_fit(mu * vw.data[n] as i128, "mu·vW", j, k)?;
        let v_new = ctx.fit(mvw[n] as i128 + dw[n] as i128, "vW'", j, k)?;
        new_vw.data[n] = v_new;
        let r = ctx.rescale(lr * v_new as i128, SCALE_I128, "lr·vW'", j, k)?;
        new.w.data[n] = ctx.fit(lp.w.data[n] as i128 - r.q, "W'", j, k)?;
        w_delta[n] = r.q;
        w_rem[n] = r.r as i64;
    }
    let n_out = db_acc.len();
    let (mut mvb, mut mvb_rem, mut b_delta, mut b_rem) = (
        vec![0; n_out],
        vec![0; n_out],
        vec![0i128; n_out],
        vec![0; n_out],
    );
    let mut new_vb = vb.clone();
    for j in 0..n_out {
        (mvb[j], mvb_rem[j]) = ctx.rescale_fit(mu * vb[j] as i128, "mu·vb", j, 0)?;
        let v_new = ctx.fit(mvb[j] as i128 + db_acc[j], "vb'", j, 0)?;
        new_vb[j] = v_new;
        let r = ctx.rescale(lr * v_new as i128, SCALE_I128, "lr·vb'", j, 0)?;
        new.b[j] = ctx.fit(lp.b[j] as i128 - r.q, "b'", j, 0)?;
        b_delta[j] = r.q;
        b_rem[j] = r.r as i64;
    }
    new.state = vec![crate::model::StateTensor {
        w: new_vw,
        b: new_vb,
    }];
    Ok((
        new,
        MomentumTrace {
            dw,
            dw_rem,
            mvw,
            mvw_rem,
            w_delta,
            w_rem,
            mvb,
            mvb_rem,
            b_delta,
            b_rem,
        },
    ))
}
