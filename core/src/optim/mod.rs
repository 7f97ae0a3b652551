//! Optimizer updates: the native twins of the circuit's update gadgets
//! (`zkstep-circuits`' `update` module has one gadget file per file here).
//!
//! An optimizer takes a layer's parameters θ_l (and its state), the
//! accumulated gradients `dW_acc = dZᵀ·A` (scale S², never rescaled here)
//! and `db_acc = Σ_batch dZ` (scale S), and returns θ'_l with a trace of
//! every rescale's quotient and remainder, which is the gadget's witness.
//! Adding an optimizer: one file here (its update and trace), one gadget file
//! in the circuits, and one arm in [`update`] and in `ModelSpec`'s parser.

pub mod adam;
pub mod momentum;
pub mod sgd;

use crate::checked::Ctx;
use crate::error::Result;
use crate::model::LayerParams;
use crate::spec::Optimizer;

pub use momentum::MomentumTrace;
pub use sgd::SgdTrace;

/// The optimizer's update of one layer.
#[derive(Clone, Debug)]
pub enum UpdateTrace {
    /// Plain SGD.
    Sgd(SgdTrace),
    /// SGD with momentum.
    Momentum(MomentumTrace),
    /// Adam or AdamW.
    Adam(adam::AdamLayerTrace),
}

/// Apply the spec's optimizer to layer `ctx.layer` (1-based) in update
/// number `t` (the step before it plus 1; Adam's constants depend on it).
pub(crate) fn update(
    ctx: &Ctx,
    t: u64,
    lp: &LayerParams,
    dw_acc: &[i128],
    db_acc: &[i128],
) -> Result<(LayerParams, UpdateTrace)> {
    match ctx.spec.optimizer {
        Optimizer::Sgd { lr_fx } => {
            let (p, t) = sgd::update(ctx, lr_fx, lp, dw_acc, db_acc)?;
            Ok((p, UpdateTrace::Sgd(t)))
        }
        Optimizer::Momentum { lr_fx, mu_fx } => {
            let (p, t) = momentum::update(ctx, lr_fx, mu_fx, lp, dw_acc, db_acc)?;
            Ok((p, UpdateTrace::Momentum(t)))
        }
        Optimizer::Adam(h) => {
            let (p, tr) = adam::update(ctx, &h, t, lp, dw_acc, db_acc)?;
            Ok((p, UpdateTrace::Adam(tr)))
        }
    }
}
