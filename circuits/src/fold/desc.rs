//! The descriptor component: the fold's tile descriptor as witnessed
//! booleans and numbers, hashed into the schedule chain (so the verifier's
//! check of the final chain pins every fold's role), and the prefix mask of
//! the tile's active rows.

use super::ctx::{Ctx, Var};
use crate::layout::TileDesc;
use ff::Field;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_gadgets::expr::{
    add, alloc, cst, enforce_bool, enforce_eq, enforce_mul, mul, sub, var, zero, Expr, Fr,
};
use zkstep_gadgets::hash::h24;

/// The descriptor's flags as circuit expressions (each boolean).
pub(crate) struct Flags {
    /// A ReLU layer.
    pub is_relu: Expr,
    /// The top layer (its outputs feed the loss).
    pub is_top: Expr,
    /// An input tile.
    pub is_input: Expr,
    /// First tile of its layer.
    pub first: Expr,
    /// Last tile of its layer.
    pub last: Expr,
    /// The last fold.
    pub is_final: Expr,
}

/// What the descriptor component gives the others.
pub(crate) struct Desc {
    /// The flags.
    pub flags: Flags,
    /// The next link of the schedule chain.
    pub sched: Var,
    /// `m_t = [t < rows_active]`.
    pub row_mask: Vec<Var>,
    /// `m_t·(1 − is_input)`: rows that carry weights.
    pub row_weights: Vec<Var>,
}

/// Allocate the descriptor, absorb it into the schedule chain, build the row masks.
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    desc: Option<&TileDesc>,
) -> Result<Desc, SynthesisError> {
    let fields: Vec<Var> = (0..10)
        .map(|f| {
            alloc(
                cs.namespace(|| format!("f{f}")),
                desc.map(|d| Fr::from(d.fields()[f])),
            )
        })
        .collect::<Result<_, _>>()?;
    for (f, flag) in fields.iter().enumerate().skip(4) {
        enforce_bool(cs.namespace(|| format!("flag{f}")), &var(flag));
    }
    let flags = Flags {
        is_relu: var(&fields[4]),
        is_top: var(&fields[5]),
        is_input: var(&fields[6]),
        first: var(&fields[7]),
        last: var(&fields[8]),
        is_final: var(&fields[9]),
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
    let not_input = sub(&ctx.one::<CS>(), &flags.is_input);
    let row_weights = (0..ctx.rows)
        .map(|t| {
            mul(
                cs.namespace(|| format!("row_weights{t}")),
                &var(&row_mask[t]),
                &not_input,
            )
        })
        .collect::<Result<_, _>>()?;
    Ok(Desc {
        flags,
        sched,
        row_mask,
        row_weights,
    })
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
