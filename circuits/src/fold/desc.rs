//! The descriptor component: the fold's tile descriptor as witnessed
//! booleans and numbers, hashed into the schedule chain (so the verifier's
//! check of the final chain pins every fold's role), and the prefix mask of
//! the tile's active rows and X columns.

use super::ctx::{Ctx, Var};
use crate::layout::{TileDesc, DESC_FIELDS, DESC_NUMBERS};
use ff::Field;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_gadgets::expr::{
    add, add_assign, alloc, cst, enforce_bool, enforce_eq, enforce_mul, mul, scale, sub, var, zero, Expr, Fr,
};
use zkstep_gadgets::hash::h24;

/// The descriptor's flags as circuit expressions (each boolean).
pub(crate) struct Flags {
    /// A ReLU layer.
    pub is_relu: Expr,
    /// The top layer (its outputs feed the loss).
    pub is_top: Expr,
    /// First tile of its layer.
    pub first: Expr,
    /// Last tile of its layer.
    pub last: Expr,
    /// The last fold.
    pub is_final: Expr,
    /// A tile of the layer's first output units.
    pub first_row: Expr,
    /// The row's first segment.
    pub first_seg: Expr,
    /// The row's last segment.
    pub last_seg: Expr,
}

/// What the descriptor component gives the others.
pub(crate) struct Desc {
    /// The flags.
    pub flags: Flags,
    /// The next link of the schedule chain.
    pub sched: Var,
    /// `m_t = [t < rows_active]`.
    pub row_mask: Vec<Var>,
    /// `m_t·last_seg`: rows whose cells, bias and identities this fold checks.
    pub cell_mask: Vec<Var>,
    /// `x_c = [c < x_active]`: the X section's columns in use.
    pub x_mask: Vec<Var>,
    /// One-hot of the segment index (`[1]` when rows are whole).
    pub seg_onehot: Vec<Expr>,
    /// First entry of the fold's lookup-table slice.
    pub tbase: Var,
}

/// Allocate the descriptor, absorb it into the schedule chain, build the row masks.
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    desc: Option<&TileDesc>,
) -> Result<Desc, SynthesisError> {
    let fields: Vec<Var> = (0..DESC_FIELDS)
        .map(|f| {
            alloc(
                cs.namespace(|| format!("f{f}")),
                desc.map(|d| Fr::from(d.fields()[f])),
            )
        })
        .collect::<Result<_, _>>()?;
    for (f, flag) in fields.iter().enumerate().skip(DESC_NUMBERS) {
        enforce_bool(cs.namespace(|| format!("flag{f}")), &var(flag));
    }
    let flag = |k: usize| var(&fields[DESC_NUMBERS + k]);
    let flags = Flags {
        is_relu: flag(0),
        is_top: flag(1),
        first: flag(2),
        last: flag(3),
        is_final: flag(4),
        first_row: flag(5),
        first_seg: flag(6),
        last_seg: flag(7),
    };
    let mut sched_in = vec![ctx.z(ctx.lay.slots.schedule.sched)];
    sched_in.extend(fields.iter().map(var));
    sched_in.resize(24, zero());
    let sched = h24(cs.namespace(|| "sched"), &sched_in)?;
    let row_mask = prefix_mask(
        cs.namespace(|| "rows"),
        &var(&fields[2]),
        ctx.rows,
        desc.map(|d| d.rows_active),
    )?;
    let cell_mask = (0..ctx.rows)
        .map(|t| {
            mul(
                cs.namespace(|| format!("cell_mask{t}")),
                &var(&row_mask[t]),
                &flags.last_seg,
            )
        })
        .collect::<Result<_, _>>()?;
    let seg_onehot = onehot(
        cs.namespace(|| "seg"),
        &var(&fields[6]),
        ctx.lay.segments,
        desc.map(|d| d.seg),
    )?;
    let x_mask = prefix_mask(
        cs.namespace(|| "xcols"),
        &var(&fields[5]),
        ctx.lay.xcols,
        desc.map(|d| d.x_active),
    )?;
    Ok(Desc {
        flags,
        sched,
        row_mask,
        cell_mask,
        x_mask,
        seg_onehot,
        tbase: fields[7].clone(),
    })
}

/// Booleans `e_s = [s = index]` for s < len: boolean, summing to 1, with
/// `Σ s·e_s = index`. One segment needs no variables: `[1]`.
fn onehot<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    index: &Expr,
    len: usize,
    index_val: Option<usize>,
) -> Result<Vec<Expr>, SynthesisError> {
    if len == 1 {
        enforce_eq(cs.namespace(|| "index0"), index, &zero());
        return Ok(vec![cst::<CS>(Fr::ONE)]);
    }
    let mut e = Vec::with_capacity(len);
    let (mut sum, mut weighted) = (zero(), zero());
    for s in 0..len {
        let b = alloc(
            cs.namespace(|| format!("e{s}")),
            index_val.map(|i| if i == s { Fr::ONE } else { Fr::ZERO }),
        )?;
        enforce_bool(cs.namespace(|| format!("bool{s}")), &var(&b));
        add_assign(&mut sum, &var(&b));
        add_assign(&mut weighted, &scale(&var(&b), Fr::from(s as u64)));
        e.push(var(&b));
    }
    enforce_eq(cs.namespace(|| "one"), &sum, &cst::<CS>(Fr::ONE));
    enforce_eq(cs.namespace(|| "index"), &weighted, index);
    Ok(e)
}

/// Booleans `m_k = [k < count]` for k < len: boolean, non-increasing, summing to `count`.
fn prefix_mask<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    count: &Expr,
    len: usize,
    count_val: Option<usize>,
) -> Result<Vec<Var>, SynthesisError> {
    let mut m: Vec<Var> = Vec::with_capacity(len);
    for k in 0..len {
        let b = alloc(
            cs.namespace(|| format!("m{k}")),
            count_val.map(|c| if k < c { Fr::ONE } else { Fr::ZERO }),
        )?;
        enforce_bool(cs.namespace(|| format!("bool{k}")), &var(&b));
        if k > 0 {
            // m_k·(1 − m_{k−1}) = 0
            let one_minus = sub(&cst::<CS>(Fr::ONE), &var(&m[k - 1]));
            enforce_mul(
                cs.namespace(|| format!("mono{k}")),
                &var(&b),
                &one_minus,
                &zero(),
            );
        }
        m.push(b);
    }
    let sum = m.iter().fold(zero(), |acc, b| add(&acc, &var(b)));
    enforce_eq(cs.namespace(|| "sum"), &sum, count);
    Ok(m)
}
