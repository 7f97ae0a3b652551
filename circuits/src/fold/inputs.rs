//! The inputs component: the fold's X section, `xcols` columns of the batch
//! input X (columns `x0 … x0 + x_active − 1`; the rest masked).
//!
//! X has no fold of its own: every fold brings a few of its columns, so a
//! one-layer step of width n costs n folds, not 2n. Per column: its B values
//! (stored, range-checked: packing three to a field element is injective only
//! on the declared range), one record of D(X) (the order of the native
//! `commit_batch`), and its share of the two claims layer 1 makes about its
//! input — `Σ_k γ^k·τA[k]` with `τA[k] = Σ_i ρ^{i·n}·X[i,k]`, and
//! `Aρ[i] = Σ_k ρ^k·X[i,k]` — accumulated in the state and required equal to
//! layer 1's claims on the last fold (a layer-1 tile: its claim slot holds
//! the γ-sum of layer 1's τA, summed over its first row's segments, and its
//! Aρ is that of every layer-1 fold by the digests).
//!
//! X and D(X) are the first phase (W₁, committed before ρ and γ; c_batch
//! binds D(X) besides); the shares depend on the challenges and are
//! allocated after them (W₂ under ρ, W₃ under γ). Masked columns contribute nothing
//! (their coefficients are multiplied by the mask), so a prover cannot use
//! them to cancel a wrong claim after seeing γ.

use super::challenges::Powers;
use super::consume::Consumed;
use super::ctx::{Ctx, Var};
use super::desc::Desc;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_gadgets::expr::{add_assign, enforce_eq_if, materialise, mul, var, zero, Expr, Fr};
use zkstep_gadgets::fixed::alloc_stored;
use zkstep_gadgets::hash::{chain_absorb_if, pack};
use zkstep_fold::{after_challenges, after_late_challenges};
use zkstep_gadgets::range::RangeCheck;

/// What the X section gives the settle component: the next values of its slots.
pub(crate) struct InputsOut {
    /// D(X) after this fold.
    pub d_x: Expr,
    /// ρ^{x0 + xcols}.
    pub x_rho: Var,
    /// γ^{x0 + xcols}.
    pub x_gamma: Var,
    /// Running Σ_k γ^k·τA_X[k].
    pub x_prod: Var,
    /// Running Aρ_X (B values).
    pub x_ar: Vec<Var>,
}

/// Synthesize the X section. `w`: X values, `i·xcols + c` (zero-padded).
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    ctx: &Ctx,
    desc: &Desc,
    pw: &Powers,
    consumed: &Consumed,
    w: Option<&[i64]>,
) -> Result<InputsOut, SynthesisError> {
    let sl = &ctx.lay.slots.inputs;
    let (xcols, bsz) = (ctx.lay.xcols, ctx.batch);
    let (x_rho, x_gamma) = (ctx.z(sl.x_rho), ctx.z(sl.x_gamma));
    let mut d_x = ctx.z(ctx.lay.slots.batch.d_x);
    let mut prod = ctx.z(sl.x_prod);
    let mut ar: Vec<Expr> = sl.x_ar.clone().map(|i| ctx.z(i)).collect();
    for c in 0..xcols {
        let mut cc = cs.namespace(|| format!("x{c}"));
        let col = (0..bsz)
            .map(|i| {
                let v = w.map(|w| w[i * xcols + c]);
                alloc_stored(cc.namespace(|| format!("v{i}")), rc, v, ctx.bits).map(|v| var(&v))
            })
            .collect::<Result<Vec<Expr>, _>>()?;
        let m = var(&desc.x_mask[c]);
        d_x = var(&chain_absorb_if(
            cc.namespace(|| "d_x"),
            &m,
            &d_x,
            &pack::<CS>(&col),
        )?);
        after_challenges(|| -> Result<(), SynthesisError> {
            let rho_c = masked_power(cc.namespace(|| "rho"), &m, &x_rho, &pw.rho[c])?;
            let mut tau = zero();
            for (i, v) in col.iter().enumerate() {
                let t = mul(cc.namespace(|| format!("ta{i}")), &pw.sample[i], v)?;
                add_assign(&mut tau, &var(&t));
                let a = mul(cc.namespace(|| format!("ar{i}")), &var(&rho_c), v)?;
                add_assign(&mut ar[i], &var(&a));
            }
            // the column's share at γ: W₃
            after_late_challenges(|| -> Result<(), SynthesisError> {
                let gamma_c = masked_power(cc.namespace(|| "gamma"), &m, &x_gamma, &pw.gamma[c])?;
                let g = mul(cc.namespace(|| "prod"), &var(&gamma_c), &tau)?;
                add_assign(&mut prod, &var(&g));
                Ok(())
            })
        })?;
    }
    after_challenges(|| shares(cs, ctx, desc, pw, consumed, d_x, &prod, &ar))
}

/// The X section's running claims, settled on the last fold (all after the challenges).
#[allow(clippy::too_many_arguments)]
fn shares<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    desc: &Desc,
    pw: &Powers,
    consumed: &Consumed,
    d_x: Expr,
    prod: &Expr,
    ar: &[Expr],
) -> Result<InputsOut, SynthesisError> {
    let sl = &ctx.lay.slots.inputs;
    let (x_rho, x_gamma) = (ctx.z(sl.x_rho), ctx.z(sl.x_gamma));
    let xcols = ctx.lay.xcols;
    let x_prod = after_late_challenges(|| materialise(cs.namespace(|| "x_prod"), prod))?;
    let x_ar = ar
        .iter()
        .enumerate()
        .map(|(i, a)| materialise(cs.namespace(|| format!("x_ar{i}")), a))
        .collect::<Result<Vec<Var>, _>>()?;
    // the last fold (a layer-1 tile) settles layer 1's claims about X
    let fin = &desc.flags.is_final;
    enforce_eq_if(
        cs.namespace(|| "x_ta_settled"),
        fin,
        &var(&x_prod),
        &var(&consumed.claim_rlc),
    );
    for (i, a) in x_ar.iter().enumerate() {
        enforce_eq_if(
            cs.namespace(|| format!("x_ar_settled{i}")),
            fin,
            &var(a),
            &var(&consumed.ar_in[i]),
        );
    }
    Ok(InputsOut {
        d_x,
        x_rho: mul(cs.namespace(|| "x_rho"), &x_rho, &pw.rho[xcols])?,
        x_gamma: after_late_challenges(|| mul(cs.namespace(|| "x_gamma"), &x_gamma, &pw.gamma[xcols]))?,
        x_prod,
        x_ar,
    })
}

/// `m·(x^{x0}·x^c)`: column c's coefficient, zero when the column is masked.
fn masked_power<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    m: &Expr,
    off: &Expr,
    p: &Expr,
) -> Result<Var, SynthesisError> {
    let x = mul(cs.namespace(|| "pow"), off, p)?;
    mul(cs.namespace(|| "masked"), m, &var(&x))
}
