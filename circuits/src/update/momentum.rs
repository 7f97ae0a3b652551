//! The momentum gadget. Native twin: `zkstep_core::optim::momentum`.
//!
//! Weight: `dW = rescale_S(dW_acc)` (quotient range-checked, remainder with
//! both bounds; the identity `S·dW + r − off = dW_acc` is tested through F2
//! with factor 1), `rescale_S(μ·v)` (local), `v′ = rescale_S(μ·v) + dW`
//! (local), `W − W′ = rescale_S(lr·v′)` (local; quotient W − W′). The
//! velocity is committed beside W. Bias: the same with `db` in place of dW.

use super::{rescaled_gradient, BiasOut, RowUpdate, UpdateGadget, WeightOut};
use crate::fold::ctx::Ctx;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_core::optim::MomentumTrace;
use zkstep_core::poseidon::fr_from_i128;
use zkstep_gadgets::expr::{add, enforce_eq, scale, sub, var, Expr, Fr};
use zkstep_gadgets::fixed::{alloc_stored, rescale_with_q};
use zkstep_gadgets::range::RangeCheck;

/// One weight's (or bias's) momentum values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MomentumWeight<V> {
    /// Velocity before.
    pub v: V,
    /// Velocity after.
    pub v_new: V,
    /// `rescale_S(μ·v)`.
    pub mv_q: V,
    /// Its remainder.
    pub mv_r: V,
    /// `dW = rescale_S(dW_acc)` (unused for a bias).
    pub dw_q: V,
    /// Its remainder (unused for a bias).
    pub dw_r: V,
    /// Remainder of `lr·v′` (the update's quotient is W − W′).
    pub r: V,
}

/// A row's momentum witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MomentumRow {
    /// Per weight (n_max, padded).
    pub weights: Vec<MomentumWeight<i64>>,
    /// The bias (its `dw_q`, `dw_r` are unused).
    pub bias: MomentumWeight<i64>,
}

impl MomentumRow {
    /// A padding row: zero state and quotients, remainders equal to the offset.
    pub fn padding(n: usize, off_s: i64) -> Self {
        let w = MomentumWeight {
            v: 0,
            v_new: 0,
            mv_q: 0,
            mv_r: off_s,
            dw_q: 0,
            dw_r: off_s,
            r: off_s,
        };
        MomentumRow {
            weights: vec![w.clone(); n],
            bias: w,
        }
    }

    /// Fill row j's values from the layer's trace and velocities
    /// (`vw`, `vw_new`: row j of vW before and after; `vb`: vb[j] before and
    /// after): weights `k0 …` of the row, and the bias on the row's last
    /// segment.
    pub fn fill(
        &mut self,
        t: &MomentumTrace,
        j: usize,
        vw: (&[i64], &[i64]),
        vb: (i64, i64),
        (k0, last_seg): (usize, bool),
    ) {
        let n_in = vw.0.len();
        for (c, w) in self.weights.iter_mut().enumerate() {
            let k = k0 + c;
            if k >= n_in {
                break;
            }
            let src = j * n_in + k;
            *w = MomentumWeight {
                v: vw.0[k],
                v_new: vw.1[k],
                mv_q: t.mvw[src],
                mv_r: t.mvw_rem[src],
                dw_q: t.dw[src],
                dw_r: t.dw_rem[src],
                r: t.w_rem[src],
            };
        }
        if last_seg {
            self.bias = MomentumWeight {
                v: vb.0,
                v_new: vb.1,
                mv_q: t.mvb[j],
                mv_r: t.mvb_rem[j],
                dw_q: 0,
                dw_r: self.bias.dw_r,
                r: t.b_rem[j],
            };
        }
    }
}

/// The momentum gadget.
pub(crate) struct Momentum {
    /// lr at scale S.
    pub lr_fx: i64,
    /// μ at scale S.
    pub mu_fx: i64,
}

impl Momentum {
    /// `v′ = rescale_S(μ·v) + g` and `q = rescale_S(lr·v′)` with v, v′, rescale_S(μ·v)
    /// stored; `names` are the namespaces (v, v_new, mv_q, mu_v, sum, lr_v).
    /// Returns the allocated values, with `dw_q`, `dw_r` set to `g` and 0.
    #[allow(clippy::too_many_arguments)]
    fn velocity<CS: ConstraintSystem<Fr>, R: RangeCheck>(
        &self,
        cs: &mut CS,
        rc: &mut R,
        ctx: &Ctx,
        names: [&'static str; 6],
        w: Option<&MomentumWeight<i64>>,
        g: &Expr,
        q: &Expr,
    ) -> Result<MomentumWeight<Expr>, SynthesisError> {
        let v = alloc_stored(cs.namespace(|| names[0]), rc, w.map(|w| w.v), ctx.bits)?;
        let v_new = alloc_stored(cs.namespace(|| names[1]), rc, w.map(|w| w.v_new), ctx.bits)?;
        let mv_q = alloc_stored(cs.namespace(|| names[2]), rc, w.map(|w| w.mv_q), ctx.bits)?;
        let mv_r = rescale_with_q(
            cs.namespace(|| names[3]),
            rc,
            &scale(&var(&v), fr_from_i128(self.mu_fx as i128)),
            ctx.multiple(self.mu_fx, ctx.s),
            &var(&mv_q),
            w.map(|w| fr_from_i128(w.mv_r as i128)),
        )?;
        enforce_eq(
            cs.namespace(|| names[4]),
            &var(&v_new),
            &add(&var(&mv_q), g),
        );
        let r = rescale_with_q(
            cs.namespace(|| names[5]),
            rc,
            &scale(&var(&v_new), fr_from_i128(self.lr_fx as i128)),
            ctx.multiple(self.lr_fx, ctx.s),
            q,
            w.map(|w| fr_from_i128(w.r as i128)),
        )?;
        Ok(MomentumWeight {
            v: var(&v),
            v_new: var(&v_new),
            mv_q: var(&mv_q),
            mv_r,
            dw_q: g.clone(),
            dw_r: zkstep_gadgets::expr::zero(),
            r,
        })
    }
}

impl UpdateGadget for Momentum {
    type Row = MomentumRow;

    fn row(u: &RowUpdate) -> Option<&MomentumRow> {
        match u {
            RowUpdate::Momentum(r) => Some(r),
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
        row: Option<&MomentumRow>,
        k: usize,
    ) -> Result<WeightOut, SynthesisError> {
        let wt = row.map(|r| &r.weights[k]);
        let (dw_q, _, grad_term) =
            rescaled_gradient(&mut cs, rc, ctx, wt.map(|w| (w.dw_q, w.dw_r)))?;
        let vals = self.velocity(
            &mut cs,
            rc,
            ctx,
            ["v", "v_new", "mv_q", "mu_v", "v_new=mv+dw", "lr_v"],
            wt,
            &dw_q,
            &sub(w, w_new),
        )?;
        Ok(WeightOut {
            grad_term,
            state: vec![vals.v],
            state_new: vec![vals.v_new],
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
        row: Option<&MomentumRow>,
    ) -> Result<BiasOut, SynthesisError> {
        let vals = self.velocity(
            &mut cs,
            rc,
            ctx,
            ["vb", "vb_new", "mvb_q", "mu_vb", "vb_new=mvb+db", "lr_vb"],
            row.map(|r| &r.bias),
            db,
            &sub(b, b_new),
        )?;
        Ok(BiasOut {
            state: vec![vals.v],
            state_new: vec![vals.v_new],
        })
    }

    fn gradient_factor(&self) -> Option<Fr> {
        None
    }
}
