//! The producer component: what this tile's outputs contribute to the claims
//! the next folds check, and the batch digests.
//!
//! - τA records: `Σ_i ρ^{i·n}·A[i, j0+t]` per row (the layer below's
//!   consumers hash and γ-combine the vector they use; settle compares);
//! - the Aρ share `ρ^{j0}·Σ_t ρ^t·A[i, j0+t]` per sample;
//! - the input-gradient identity's left side `ρ^{j0}·Σ_{i,t} ρ^{i·n+t}·(S·dA + r − off)`;
//! - D(Y) on top-layer tiles (one record per column; D(X) is the inputs
//!   component's).
//!
//! Masked rows contribute nothing.
// loops index cells, masks and powers by the same (sample, row)
#![allow(clippy::needless_range_loop)]

use super::cells::CellVars;
use super::challenges::Powers;
use super::ctx::{Ctx, Var};
use super::desc::{Desc, Flags};
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_gadgets::expr::{add, add_assign, mul, var, zero, Expr, Fr};
use zkstep_gadgets::hash::{chain_absorb_if, pack};

/// What this tile produced.
pub(crate) struct Produced {
    /// τA record per row.
    pub ta_rec: Vec<Expr>,
    /// Aρ share per sample.
    pub part_ar: Vec<Expr>,
    /// Left side of the input-gradient identity (this tile's share).
    pub part_l: Expr,
    /// D(Y) after this tile.
    pub d_y: Expr,
}

/// Synthesize the producer side.
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    desc: &Desc,
    pw: &Powers,
    cells: &CellVars,
) -> Result<Produced, SynthesisError> {
    let (rows, bsz) = (ctx.rows, ctx.batch);
    let rm = &desc.cell_mask;
    let mut am = Vec::with_capacity(bsz * rows);
    for i in 0..bsz {
        for t in 0..rows {
            am.push(var(&mul(
                cs.namespace(|| format!("am{i}_{t}")),
                &var(&rm[t]),
                &cells.act[ctx.cell(i, t)],
            )?));
        }
    }
    let mut ta_rec = Vec::with_capacity(rows);
    for t in 0..rows {
        let mut s = zero();
        for i in 0..bsz {
            let p = mul(
                cs.namespace(|| format!("ta{i}_{t}")),
                &pw.sample[i],
                &am[ctx.cell(i, t)],
            )?;
            add_assign(&mut s, &var(&p));
        }
        ta_rec.push(s);
    }
    let mut part_ar = Vec::with_capacity(bsz);
    let mut left = zero();
    for i in 0..bsz {
        let (ap, lrow) = sample_shares(&mut cs, ctx, i, rm, pw, &am, cells)?;
        part_ar.push(var(&mul(
            cs.namespace(|| format!("apo{i}")),
            &var(&pw.rho_off),
            &ap,
        )?));
        left = add(
            &left,
            &var(&mul(
                cs.namespace(|| format!("lb{i}")),
                &pw.sample[i],
                &lrow,
            )?),
        );
    }
    let part_l = var(&mul(cs.namespace(|| "left_off"), &var(&pw.rho_off), &left)?);
    let d_y = targets_digest(&mut cs, ctx, rm, &desc.flags, cells)?;
    Ok(Produced {
        ta_rec,
        part_ar,
        part_l,
        d_y,
    })
}

/// Sample i's `Σ_t ρ^t·A[i,t]` and `Σ_t ρ^t·m_t·(S·dA + r − off)[i,t]`.
fn sample_shares<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    ctx: &Ctx,
    i: usize,
    rm: &[Var],
    pw: &Powers,
    am: &[Expr],
    cells: &CellVars,
) -> Result<(Expr, Expr), SynthesisError> {
    let mut ap = zero();
    let mut lrow = zero();
    for t in 0..ctx.rows {
        let c = ctx.cell(i, t);
        ap = add(
            &ap,
            &var(&mul(
                cs.namespace(|| format!("ap{i}_{t}")),
                &pw.rho[t],
                &am[c],
            )?),
        );
        let masked = mul(
            cs.namespace(|| format!("lm{i}_{t}")),
            &var(&rm[t]),
            &cells.grad_lhs[c],
        )?;
        lrow = add(
            &lrow,
            &var(&mul(
                cs.namespace(|| format!("lp{i}_{t}")),
                &pw.rho[t],
                &var(&masked),
            )?),
        );
    }
    Ok((ap, lrow))
}

/// D(Y) (top-layer tiles), one record per active column.
fn targets_digest<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    ctx: &Ctx,
    rm: &[Var],
    flags: &Flags,
    cells: &CellVars,
) -> Result<Expr, SynthesisError> {
    let mut dy = ctx.z(ctx.lay.slots.batch.d_y);
    for t in 0..ctx.rows {
        let col_y: Vec<Expr> = (0..ctx.batch)
            .map(|i| cells.cells[ctx.cell(i, t)].y.clone())
            .collect();
        // one permutation a row, each fed the last's output: a unit all the same
        dy = zkstep_fold::in_unit("dy", t, || {
            let ay = mul(
                cs.namespace(|| format!("ay{t}")),
                &var(&rm[t]),
                &flags.is_top,
            )?;
            chain_absorb_if(
                cs.namespace(|| format!("dy{t}")),
                &var(&ay),
                &dy,
                &pack::<CS>(&col_y),
            )
            .map(|v| var(&v))
        })?;
    }
    Ok(dy)
}
