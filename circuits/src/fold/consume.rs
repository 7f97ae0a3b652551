//! The consumer component: the claims this tile makes about its layer's
//! input, which the layer below settles.
//!
//! - τA (the fold's segment of it: n_max values when rows are whole): in W₂,
//!   committed before γ; its sum `Σ_k τA[k]·γ^k` at γ (W₃) is what all folds
//!   of the layer must agree on (the layer's first row sets each segment's
//!   sum in the state; every other fold's must equal it), so they provably
//!   use one vector; `γ^{k0}` times it, summed over the first row's
//!   segments, is the claim on the producing layer (settled when that
//!   layer's last tile ends);
//! - Aρ (B values): its digest must equal the state's on every tile but the
//!   first;
//! - on a non-top layer's first tile, the Aρ vector the layer above claimed
//!   about this layer's output ("up"), opened against the state's digest.

use super::challenges::Powers;
use super::ctx::{Ctx, Var};
use super::desc::Desc;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_gadgets::expr::{
    add, add_assign, alloc, cst, enforce_eq_if, horner, materialise, mul, select, sub, var, zero, Expr, Fr,
};
use zkstep_fold::after_late_challenges;
use zkstep_gadgets::hash::chain_absorb;

/// The consumer's witness: values that depend on the challenges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkWitness {
    /// τA of the layer's input: this fold's segment (seg_w values, zero-padded).
    pub ta_in: Vec<Fr>,
    /// Aρ of the layer's input (B).
    pub ar_in: Vec<Fr>,
    /// First tile of a non-top layer: the layer above's Aρ claim about this layer's output.
    pub ar_up: Vec<Fr>,
}

/// The consumed vectors and their digests.
pub(crate) struct Consumed {
    /// τA values.
    pub ta_in: Vec<Var>,
    /// Aρ values.
    pub ar_in: Vec<Var>,
    /// The "up" Aρ values.
    pub ar_up: Vec<Var>,
    /// The next value of each segment's slot (its sum at γ).
    pub claim_ta: Vec<Var>,
    /// The next claim `Σ_k τA[k]·γ^k` on the producing layer (summed over
    /// the first row's segments, then kept).
    pub claim_rlc: Var,
    /// Digest of Aρ.
    pub digest_ar: Expr,
}

/// Synthesize the consumer claims.
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    desc: &Desc,
    pw: &Powers,
    w: Option<&LinkWitness>,
) -> Result<Consumed, SynthesisError> {
    let links = &ctx.lay.slots.links;
    let flags = &desc.flags;
    let allocv = |cs: &mut CS, name: &str, len: usize, f: &dyn Fn(&LinkWitness) -> &[Fr]| {
        (0..len)
            .map(|k| alloc(cs.namespace(|| format!("{name}{k}")), w.map(|w| f(w)[k])))
            .collect::<Result<Vec<Var>, _>>()
    };
    let ta_in = allocv(&mut cs, "ta", ctx.seg_w, &|w| &w.ta_in)?;
    let ar_in = allocv(&mut cs, "ar", ctx.batch, &|w| &w.ar_in)?;
    let ar_up = allocv(&mut cs, "up", ctx.batch, &|w| &w.ar_up)?;
    let one = ctx.one::<CS>();
    let ta_vec: Vec<Expr> = ta_in.iter().map(var).collect();
    // everything at γ is W₃ (τA itself is W₂, fixed before γ)
    let (claim_ta, claim_rlc) = after_late_challenges(|| {
        // Σ_k τA[k]·γ^k by Horner's rule, then times γ^{k0}
        let sum = horner(cs.namespace(|| "ta_g"), &pw.gamma[1], &ta_vec)?;
        let rlc = var(&mul(cs.namespace(|| "ta_g_k0"), &var(&pw.gamma_k0), &sum)?);
        // the first row sets its segment's sum; every other fold must match it
        let slots: Vec<Expr> = links.claim_ta.clone().map(|i| ctx.z(i)).collect();
        let mut claimed = zero();
        let mut claim_ta = Vec::with_capacity(slots.len());
        for (s, (e, z)) in desc.seg_onehot.iter().zip(&slots).enumerate() {
            let pick = mul(cs.namespace(|| format!("pick{s}")), e, z)?;
            add_assign(&mut claimed, &var(&pick));
            let set = mul(cs.namespace(|| format!("set{s}")), e, &flags.first_row)?;
            let d = mul(cs.namespace(|| format!("upd{s}")), &var(&set), &sub(&sum, z))?;
            claim_ta.push(materialise(
                cs.namespace(|| format!("claim{s}")),
                &add(z, &var(&d)),
            )?);
        }
        // the claim on the producing layer: the first row's segments' sum
        let z_rlc = ctx.z(links.claim_rlc);
        let kept = mul(
            cs.namespace(|| "rlc_keep"),
            &sub(&one, &flags.first_seg),
            &z_rlc,
        )?;
        let claim_rlc = select(
            cs.namespace(|| "claim_rlc"),
            &flags.first_row,
            &add(&var(&kept), &rlc),
            &z_rlc,
        )?;
        let not_first_row = sub(&one, &flags.first_row);
        enforce_eq_if(cs.namespace(|| "ta_claim"), &not_first_row, &sum, &claimed);
        Ok::<_, SynthesisError>((claim_ta, claim_rlc))
    })?;
    let not_first = sub(&one, &flags.first);
    let claim_ar = ctx.z(links.claim_ar);
    let ar_init = cst::<CS>(ctx.lay.ar_init());
    let digest_ar = opened(&mut cs, "ar", &ar_in, &ar_init, &not_first, &claim_ar)?;
    // the layer above's claim about this layer's output, opened on a
    // non-top layer's first tile. With one layer every fold is the top
    // layer's (`is_top` is 1 in every descriptor the schedule binds), so
    // the check could never bind: its digest is left out (docs/SOUNDNESS.md)
    if ctx.lay.spec.layers.len() > 1 {
        let first_not_top = mul(
            cs.namespace(|| "first_not_top"),
            &flags.first,
            &sub(&one, &flags.is_top),
        )?;
        opened(
            &mut cs,
            "up",
            &ar_up,
            &ar_init,
            &var(&first_not_top),
            &claim_ar,
        )?;
    }
    Ok(Consumed {
        ta_in,
        ar_in,
        ar_up,
        claim_ta,
        claim_rlc,
        digest_ar,
    })
}

/// The digest of `values` (a chain from `init`), required equal to `claim`
/// when `cond` is 1 (namespaces `{name}_digest`, `{name}_claim`).
fn opened<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    name: &str,
    values: &[Var],
    init: &Expr,
    cond: &Expr,
    claim: &Expr,
) -> Result<Expr, SynthesisError> {
    let vals: Vec<Expr> = values.iter().map(var).collect();
    let digest = var(&chain_absorb(
        cs.namespace(|| format!("{name}_digest")),
        init,
        &vals,
    )?);
    enforce_eq_if(
        cs.namespace(|| format!("{name}_claim")),
        cond,
        &digest,
        claim,
    );
    Ok(digest)
}
