//! The challenges component: the powers of ρ and γ a fold needs as vectors
//! (up to `max(rows, xcols)`: sums over a row's n_max weights use Horner's
//! rule instead), the per-sample strides ρ^{i·n_max}, and the tile offsets
//! ρ^{j0}, γ^{j0} (1 on a layer's first tile, else the previous tile's times
//! x^rows).

use super::ctx::{Ctx, Var};
use super::desc::Flags;
use ff::Field;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_fold::after_late_challenges;
use zkstep_gadgets::expr::{cst, materialise, mul, select, var, Expr, Fr};

/// Powers of the challenges.
pub(crate) struct Powers {
    /// `ρ^0 … ρ^m`, m = max(rows, xcols, 1).
    pub rho: Vec<Expr>,
    /// `γ^0 … γ^m`.
    pub gamma: Vec<Expr>,
    /// `ρ^{i·n_max}` for each sample i.
    pub sample: Vec<Expr>,
    /// `ρ^{n_max}`, the step between samples.
    pub stride: Expr,
    /// ρ^{j0} of this tile.
    pub rho_off: Var,
    /// γ^{j0} of this tile.
    pub gamma_off: Var,
    /// ρ^{k0} of this fold's segment of a row.
    pub rho_k0: Var,
    /// γ^{k0} of this fold's segment of a row.
    pub gamma_k0: Var,
}

/// Compute the powers (multiplications only; the challenges are state constants).
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    flags: &Flags,
) -> Result<Powers, SynthesisError> {
    let slots = &ctx.lay.slots;
    let upto = ctx.rows.max(ctx.lay.xcols).max(1);
    let rho = powers_of(cs.namespace(|| "rho"), &ctx.z(slots.statement.rho), upto)?;
    let stride = var(&power(cs.namespace(|| "stride"), &rho[1], ctx.n)?);
    let mut sample: Vec<Expr> = vec![cst::<CS>(Fr::ONE)];
    for i in 1..ctx.batch {
        let p = mul(cs.namespace(|| format!("b{i}")), &sample[i - 1], &stride)?;
        sample.push(var(&p));
    }
    // ρ^{j0}, γ^{j0}: advanced by x^rows on a row's first segment only
    let advance = |cs: &mut CS, name: &str, x_r: &Expr| {
        select(
            cs.namespace(|| format!("{name}_adv")),
            &flags.first_seg,
            x_r,
            &cst::<CS>(Fr::ONE),
        )
    };
    let rho_r = advance(&mut cs, "rho", &rho[ctx.rows])?;
    let rho_off = tile_offset(
        cs.namespace(|| "rho_off"),
        &flags.first,
        &ctx.z(slots.links.rho_off),
        &var(&rho_r),
    )?;
    // ρ^{k0}, γ^{k0} of the segment: 1 on a row's first, then times x^{seg_w}
    let seg_step = |cs: &mut CS, name: &str, x: &Expr| -> Result<Expr, SynthesisError> {
        if ctx.lay.segments == 1 {
            Ok(cst::<CS>(Fr::ONE))
        } else {
            Ok(var(&power(
                cs.namespace(|| name.to_string()),
                x,
                ctx.seg_w,
            )?))
        }
    };
    let rho_s = seg_step(&mut cs, "rho_seg", &rho[1])?;
    let rho_k0 = tile_offset(
        cs.namespace(|| "rho_k0"),
        &flags.first_seg,
        &ctx.z(slots.links.rho_k0),
        &rho_s,
    )?;
    // γ's (drawn after every W₂): W₃
    let (gamma, gamma_off, gamma_k0) = after_late_challenges(|| {
        let gamma = powers_of(
            cs.namespace(|| "gamma"),
            &ctx.z(slots.transcript.gamma),
            upto,
        )?;
        let gamma_r = advance(&mut cs, "gamma", &gamma[ctx.rows])?;
        let gamma_off = tile_offset(
            cs.namespace(|| "g_off"),
            &flags.first,
            &ctx.z(slots.links.g_off),
            &var(&gamma_r),
        )?;
        let gamma_s = seg_step(&mut cs, "gamma_seg", &gamma[1])?;
        let gamma_k0 = tile_offset(
            cs.namespace(|| "gamma_k0"),
            &flags.first_seg,
            &ctx.z(slots.links.gamma_k0),
            &gamma_s,
        )?;
        Ok::<_, SynthesisError>((gamma, gamma_off, gamma_k0))
    })?;
    Ok(Powers {
        rho,
        gamma,
        sample,
        stride,
        rho_off,
        gamma_off,
        rho_k0,
        gamma_k0,
    })
}

/// `[1, x, x², …, x^upto]` (upto − 1 multiplications).
fn powers_of<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    x: &Expr,
    upto: usize,
) -> Result<Vec<Expr>, SynthesisError> {
    let mut p: Vec<Expr> = vec![cst::<CS>(Fr::ONE), x.clone()];
    for k in 2..=upto {
        let v = mul(cs.namespace(|| format!("p{k}")), &p[k - 1], x)?;
        p.push(var(&v));
    }
    p.truncate(upto + 1);
    Ok(p)
}

/// `x^e` for e ≥ 1 by squaring and multiplying (≤ 2·log₂ e constraints).
pub(crate) fn power<CS: ConstraintSystem<Fr>>(mut cs: CS, x: &Expr, e: usize) -> Result<Var, SynthesisError> {
    let mut acc: Option<Var> = None;
    for b in (0..usize::BITS - e.leading_zeros()).rev() {
        acc = Some(match acc {
            None => materialise(cs.namespace(|| "x"), x)?,
            Some(a) => {
                let sq = mul(cs.namespace(|| format!("sq{b}")), &var(&a), &var(&a))?;
                if e >> b & 1 == 1 {
                    mul(cs.namespace(|| format!("mul{b}")), &var(&sq), x)?
                } else {
                    sq
                }
            }
        });
    }
    acc.ok_or_else(|| SynthesisError::Unsatisfiable("x^0 is not a power this gadget makes".into()))
}

/// x^{j0} of a tile: 1 on a layer's first tile, else the previous tile's
/// offset times x^R.
fn tile_offset<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    first: &Expr,
    prev: &Expr,
    x_r: &Expr,
) -> Result<Var, SynthesisError> {
    let next = mul(cs.namespace(|| "next"), prev, x_r)?;
    select(
        cs.namespace(|| "off"),
        first,
        &cst::<CS>(Fr::ONE),
        &var(&next),
    )
}
