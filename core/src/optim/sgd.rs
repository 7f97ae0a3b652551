//! SGD, cost-aware: `W' = W − rescale_{S²}(lr·dW_acc)` (dW never exists at
//! scale S, so a weight has one rescale), `b' = b − rescale_S(lr·db_acc)`.
//! Native twin of the circuits' `update::sgd` gadget.

use crate::checked::Ctx;
use crate::error::Result;
use crate::fixed::{SCALE_I128, SCALE_SQ};
use crate::model::LayerParams;

/// What the SGD update of one layer computed.
#[derive(Clone, Debug)]
pub struct SgdTrace {
    /// Δ for the weights (quotients), `[outputs, inputs]`.
    pub w_delta: Vec<i128>,
    /// Remainders in `[0, S²)`.
    pub w_rem: Vec<i64>,
    /// Δ for the biases.
    pub b_delta: Vec<i128>,
    /// Remainders in `[0, S)`.
    pub b_rem: Vec<i64>,
}

/// One SGD update of a layer.
pub(crate) fn update(
    ctx: &Ctx,
    lr_fx: i64,
    lp: &LayerParams,
    dw_acc: &[i128],
    db_acc: &[i128],
) -> Result<(LayerParams, SgdTrace)> {
    let lr = lr_fx as i128;
    let n_in = lp.w.cols;
    let mut new = lp.clone();
    let mut w_delta = vec![0i128; dw_acc.len()];
    let mut w_rem = vec![0i64; dw_acc.len()];
    for (n, &g) in dw_acc.iter().enumerate() {
        let (j, k) = (n / n_in, n % n_in);
        let r = ctx.rescale(ctx.mul(lr, g, "lr·dW", j, k)?, SCALE_SQ, "lr·dW", j, k)?;
        new.w.data[n] = ctx.fit(lp.w.data[n] as i128 - r.q, "W'", j, k)?;
        w_delta[n] = r.q;
        w_rem[n] = r.r as i64;
    }
    let mut b_delta = vec![0i128; db_acc.len()];
    let mut b_rem = vec![0i64; db_acc.len()];
    for (j, &g) in db_acc.iter().enumerate() {
        let r = ctx.rescale(ctx.mul(lr, g, "lr·db", j, 0)?, SCALE_I128, "lr·db", j, 0)?;
        new.b[j] = ctx.fit(lp.b[j] as i128 - r.q, "b'", j, 0)?;
        b_delta[j] = r.q;
        b_rem[j] = r.r as i64;
    }
    Ok((
        new,
        SgdTrace {
            w_delta,
            w_rem,
            b_delta,
            b_rem,
        },
    ))
}
