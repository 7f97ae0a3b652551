//! Optimizer update gadgets, one file per optimizer, each the circuit twin
//! of the native update in `zkstep-core`'s `optim` module (same name).
//!
//! The weight rows allocate W and W' (and b, b′) and hand each weight to the
//! spec's gadget, which allocates the optimizer's own values (remainders,
//! state), constrains what it can locally, and returns the term the
//! weight-gradient identity F2 tests, the values the transcript must absorb
//! (in [`UpdateGadget`]'s order, shared with the witness builder) and the
//! optimizer state that is committed beside W.
//!
//! Adding an optimizer: its native update in `core/src/optim/`, one gadget
//! file here, an arm in [`RowUpdate`] and in `fold::synthesize`'s dispatch.

pub mod adam;
pub mod momentum;
pub mod sgd;

use crate::fold::ctx::Ctx;
use ff::PrimeField;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_gadgets::expr::{add, cst, scale, sub, var, Expr, Fr};
use zkstep_gadgets::fixed::{alloc_remainder, alloc_stored};
use zkstep_gadgets::range::RangeCheck;

/// One row's optimizer witness (every weight of the row and its bias).
// Adam's inline bias trace makes its variant larger; there is one per row
// of a tile, so boxing would save little.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowUpdate {
    /// Plain SGD.
    Sgd(sgd::SgdRow),
    /// SGD with momentum.
    Momentum(momentum::MomentumRow),
    /// Adam or AdamW.
    Adam(adam::AdamRow),
}

/// What a weight's update gives back to the row.
pub(crate) struct WeightOut {
    /// The term of F2: `Σ_k ρ^k·term_k` must equal the factor times `Σ_i dZ[i]·Aρ[i]`.
    pub grad_term: Expr,
    /// Optimizer state before (committed in c_before beside W).
    pub state: Vec<Expr>,
    /// Optimizer state after (committed in c_after beside W').
    pub state_new: Vec<Expr>,
}

/// What a bias's update gives back to the row.
pub(crate) struct BiasOut {
    /// Optimizer state before.
    pub state: Vec<Expr>,
    /// Optimizer state after.
    pub state_new: Vec<Expr>,
}

/// One optimizer's constraints.
pub(crate) trait UpdateGadget {
    /// The per-row witness.
    type Row;

    /// This optimizer's witness in a row (None if the row is another optimizer's).
    fn row(u: &RowUpdate) -> Option<&Self::Row>;

    /// Constrain weight k's update from W to W′.
    #[allow(clippy::too_many_arguments)]
    fn weight<CS: ConstraintSystem<Fr>, R: RangeCheck>(
        &self,
        cs: CS,
        rc: &mut R,
        ctx: &Ctx,
        w: &Expr,
        w_new: &Expr,
        row: Option<&Self::Row>,
        k: usize,
    ) -> Result<WeightOut, SynthesisError>;

    /// Constrain the bias's update from b to b′ given `db = Σ_i dZ[i]`.
    #[allow(clippy::too_many_arguments)]
    fn bias<CS: ConstraintSystem<Fr>, R: RangeCheck>(
        &self,
        cs: CS,
        rc: &mut R,
        ctx: &Ctx,
        b: &Expr,
        b_new: &Expr,
        db: &Expr,
        row: Option<&Self::Row>,
    ) -> Result<BiasOut, SynthesisError>;

    /// The factor of F2's right side (SGD: lr, since its term is the fused
    /// update; None: 1).
    fn gradient_factor(&self) -> Option<Fr>;
}

/// A weight's gradient `dW = rescale_S(dW_acc)`, for the optimizers that
/// see the rescaled gradient (momentum, Adam): the quotient stored, the
/// remainder checked from both sides, and F2's term `S·dW + r − off`, so
/// that F2 with factor 1 tests `S·dW + r − off = dW_acc`.
/// Returns (dW, its remainder, the term).
pub(crate) fn rescaled_gradient<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    cs: &mut CS,
    rc: &mut R,
    ctx: &Ctx,
    w: Option<(i64, i64)>,
) -> Result<(Expr, Expr, Expr), SynthesisError> {
    let dw_q = alloc_stored(cs.namespace(|| "dw_q"), rc, w.map(|w| w.0), ctx.bits)?;
    let dw_r = alloc_remainder(cs.namespace(|| "dw_r"), rc, w.map(|w| w.1), ctx.any_by_s())?;
    let term = sub(
        &add(&scale(&var(&dw_q), Fr::from_u128(ctx.s)), &dw_r),
        &cst::<CS>(Fr::from_u128(ctx.off_s)),
    );
    Ok((var(&dw_q), dw_r, term))
}
