//! SGD's gadget. Native twin: `zkstep_core::optim::sgd`.
//!
//! Weight: `S²·(W − W′) + r − off = lr·dW_acc` with `0 ≤ r < S²` (both
//! bounds) — the quotient is `W − W′`, a difference of two range-checked
//! values — tested through F2 with the term `S²·(W − W′) + r − off` and the
//! factor lr. Bias: `lr·db + off = S·(b − b′) + r`, `0 ≤ r < S`, exact.

use super::{BiasOut, RowUpdate, UpdateGadget, WeightOut};
use crate::fold::ctx::Ctx;
use ff::PrimeField;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_core::fixed::SCALE_SQ;
use zkstep_core::optim::SgdTrace;
use zkstep_core::poseidon::fr_from_i128;
use zkstep_gadgets::expr::{add, cst, scale, sub, Expr, Fr};
use zkstep_gadgets::fixed::{alloc_remainder, rescale_with_q};
use zkstep_gadgets::range::RangeCheck;

/// One weight's SGD values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SgdWeight<V> {
    /// Remainder of `lr·dW_acc + off` by S².
    pub r: V,
}

/// A row's SGD witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SgdRow {
    /// Per weight (n_max, padded).
    pub weights: Vec<SgdWeight<i64>>,
    /// Remainder of the bias update.
    pub bias_r: i64,
}

impl SgdRow {
    /// A padding row: remainders equal to the rounding offsets (zero update).
    pub fn padding(n: usize, off_sq: i64, off_s: i64) -> Self {
        SgdRow {
            weights: vec![SgdWeight { r: off_sq }; n],
            bias_r: off_s,
        }
    }

    /// Fill row j's values from the layer's trace: weights `k0 …` of the row
    /// (those below `n_in`), and the bias on the row's last segment.
    pub fn fill(&mut self, t: &SgdTrace, j: usize, n_in: usize, k0: usize, last_seg: bool) {
        for (c, w) in self.weights.iter_mut().enumerate() {
            if k0 + c < n_in {
                w.r = t.w_rem[j * n_in + k0 + c];
            }
        }
        if last_seg {
            self.bias_r = t.b_rem[j];
        }
    }
}

/// The SGD gadget.
pub(crate) struct Sgd {
    /// lr at scale S.
    pub lr_fx: i64,
}

impl UpdateGadget for Sgd {
    type Row = SgdRow;

    fn row(u: &RowUpdate) -> Option<&SgdRow> {
        match u {
            RowUpdate::Sgd(r) => Some(r),
            _ => None,
        }
    }

    fn weight<CS: ConstraintSystem<Fr>, R: RangeCheck>(
        &self,
        mut cs: CS,
        rc: &mut R,
        ctx: &Ctx,
        w: &Expr,
        w_new: &Expr,
        row: Option<&SgdRow>,
        k: usize,
    ) -> Result<WeightOut, SynthesisError> {
        let sq = SCALE_SQ as u128;
        // lr·dW_acc + off: r ≡ off (mod gcd(lr, S²)), so only k of r = g·k + r0 is checked
        let r = alloc_remainder(
            cs.namespace(|| "upd_r"),
            rc,
            row.map(|r| r.weights[k].r),
            ctx.multiple(self.lr_fx, sq),
        )?;
        // the update's quotient W − W′: a difference of two range-checked values
        let q = sub(w, w_new);
        let grad_term = sub(
            &add(&scale(&q, Fr::from_u128(sq)), &r),
            &cst::<CS>(Fr::from_u128(ctx.off_sq)),
        );
        Ok(WeightOut {
            grad_term,
            state: vec![],
            state_new: vec![],
        })
    }

    fn bias<CS: ConstraintSystem<Fr>, R: RangeCheck>(
        &self,
        mut cs: CS,
        rc: &mut R,
        ctx: &Ctx,
        b: &Expr,
        b_new: &Expr,
        db: &Expr,
        row: Option<&SgdRow>,
    ) -> Result<BiasOut, SynthesisError> {
        rescale_with_q(
            cs.namespace(|| "lr_db"),
            rc,
            &scale(db, fr_from_i128(self.lr_fx as i128)),
            ctx.multiple(self.lr_fx, ctx.s),
            &sub(b, b_new),
            row.map(|r| fr_from_i128(r.bias_r as i128)),
        )?;
        Ok(BiasOut {
            state: vec![],
            state_new: vec![],
        })
    }

    fn gradient_factor(&self) -> Option<Fr> {
        Some(fr_from_i128(self.lr_fx as i128))
    }
}
