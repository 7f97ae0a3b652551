//! The cells component: for each (sample i, row t) of the tile, the layer's
//! forward output and its incoming gradient.
//!
//! Per cell: Z (stored, range-checked) and its rescale remainder (both
//! bounds), the sign-pinned ReLU selector and the activation (selected by
//! the descriptor's ReLU flag), Y (stored), dA (stored) and its remainder;
//! on the top layer `S·dA + r − off = c·(A − Y)` (the MSE gradient, exact;
//! cross-entropy's `c·(P − Y)` is the softmax component's, `fold::softmax`);
//! and `dZ = dA ⊙ s` (or dA). The forward identity that ties Z to the
//! layer's input is checked by the weight rows (F1); dA on layers below the
//! top by the input-gradient identity (F3) when the layer above settles.
//! Native twin: `zkstep_core::exec::{forward_layer, loss_grad}`.

use super::ctx::{Ctx, Var};
use super::desc::{Desc, Flags};
use ff::PrimeField;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_core::poseidon::fr_from_i128;
use zkstep_core::spec::Loss;
use zkstep_gadgets::expr::{add, cst, enforce_eq_if, mul, scale, sub, var, Expr, Fr};
use zkstep_gadgets::fixed::{alloc_remainder, alloc_stored, relu};
use zkstep_gadgets::range::RangeCheck;

/// One cell's values: `i64` in the witness, variables in the circuit.
/// For input tiles Z holds the batch input X.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell<V> {
    /// Pre-activation Z (X for input tiles).
    pub z: V,
    /// Remainder of Z's rescale.
    pub z_r: V,
    /// ReLU selector `[Z ≥ 1]` (0 or 1).
    pub s: V,
    /// Target Y (top layer; zero elsewhere).
    pub y: V,
    /// Incoming gradient dA.
    pub da: V,
    /// Remainder of dA's rescale.
    pub da_r: V,
}

impl<V> Cell<V> {
    /// The same cell with every value mapped.
    pub fn map<U>(&self, f: impl Fn(&V) -> U) -> Cell<U> {
        Cell {
            z: f(&self.z),
            z_r: f(&self.z_r),
            s: f(&self.s),
            y: f(&self.y),
            da: f(&self.da),
            da_r: f(&self.da_r),
        }
    }
}

impl Cell<i64> {
    /// The witness of a padding cell (zero values, remainders equal to the
    /// rounding offset, so that `S·0 + off − off = 0`).
    pub fn padding(off_s: i64) -> Self {
        Cell {
            z: 0,
            z_r: 0,
            s: 0,
            y: 0,
            da: 0,
            da_r: off_s,
        }
    }
}

/// The cells as the other components use them.
pub(crate) struct CellVars {
    /// Each cell's values (allocated, or for remainders their expressions).
    pub cells: Vec<Cell<Expr>>,
    /// Activation A (ReLU(Z) or Z).
    pub act: Vec<Expr>,
    /// `S·dA + r − off` (the rescaled gradient's left side).
    pub grad_lhs: Vec<Expr>,
    /// dZ = dA ⊙ ReLU′.
    pub dz: Vec<Var>,
}

/// Synthesize every cell of the tile (cross-entropy's loss identities
/// are the softmax component's: `fold::softmax`).
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    ctx: &Ctx,
    desc: &Desc,
    w: Option<&[Cell<i64>]>,
) -> Result<CellVars, SynthesisError> {
    let flags = &desc.flags;
    let n = ctx.batch * ctx.rows;
    let mut out = CellVars {
        cells: Vec::with_capacity(n),
        act: Vec::with_capacity(n),
        grad_lhs: Vec::with_capacity(n),
        dz: Vec::with_capacity(n),
    };
    let mse = (ctx.lay.spec.loss == Loss::Mse)
        .then(|| fr_from_i128(ctx.lay.spec.loss_grad_c() as i128));
    for i in 0..ctx.batch {
        for t in 0..ctx.rows {
            let c = ctx.cell(i, t);
            let cw = w.map(|w| &w[c]);
            let cs = cs.namespace(|| format!("c{i}_{t}"));
            zkstep_fold::in_unit("cell", c, || cell(cs, rc, ctx, flags, mse, cw, &mut out))?;
        }
    }
    Ok(out)
}

fn cell<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    ctx: &Ctx,
    flags: &Flags,
    c_mse: Option<Fr>,
    w: Option<&Cell<i64>>,
    out: &mut CellVars,
) -> Result<(), SynthesisError> {
    let one = ctx.one::<CS>();
    let z = alloc_stored(cs.namespace(|| "z"), rc, w.map(|w| w.z), ctx.bits)?;
    let z_r = alloc_remainder(cs.namespace(|| "z_r"), rc, w.map(|w| w.z_r), ctx.any_by_s())?;
    let (s, a_relu) = relu(
        cs.namespace(|| "relu"),
        rc,
        &var(&z),
        w.map(|w| w.s == 1),
        ctx.bits,
    )?;
    let diff = sub(&var(&a_relu), &var(&z));
    let adj = mul(cs.namespace(|| "act"), &flags.is_relu, &diff)?;
    let a = add(&var(&z), &var(&adj));
    let y = alloc_stored(cs.namespace(|| "y"), rc, w.map(|w| w.y), ctx.bits)?;
    let da = alloc_stored(cs.namespace(|| "da"), rc, w.map(|w| w.da), ctx.bits)?;
    let da_r = alloc_remainder(
        cs.namespace(|| "da_r"),
        rc,
        w.map(|w| w.da_r),
        ctx.any_by_s(),
    )?;
    let grad_lhs = sub(
        &add(&scale(&var(&da), Fr::from_u128(ctx.s)), &da_r),
        &cst::<CS>(Fr::from_u128(ctx.off_s)),
    );
    // top layer, MSE: dA = rescale_S(c·(A − Y)) (cross-entropy's is per sample)
    if let Some(c) = c_mse {
        let loss_rhs = scale(&sub(&a, &var(&y)), c);
        enforce_eq_if(cs.namespace(|| "loss"), &flags.is_top, &grad_lhs, &loss_rhs);
    }
    // dZ = dA ⊙ (ReLU′ = s, or 1)
    let sel_m1 = mul(cs.namespace(|| "sel"), &flags.is_relu, &sub(&var(&s), &one))?;
    let sel = add(&one, &var(&sel_m1));
    let dz = mul(cs.namespace(|| "dz"), &var(&da), &sel)?;
    out.cells.push(Cell {
        z: var(&z),
        z_r,
        s: var(&s),
        y: var(&y),
        da: var(&da),
        da_r,
    });
    out.act.push(a);
    out.grad_lhs.push(grad_lhs);
    out.dz.push(dz);
    Ok(())
}
