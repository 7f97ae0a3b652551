//! The consumer component: the claims this tile makes about its layer's
//! input, which the layer below settles.
//!
//! - τA (n_max values): hashed whole (23 a permutation) so that all folds of
//!   the layer provably use one vector (the digest must equal the state's on
//!   every tile but the first), and combined as `Σ_k τA[k]·γ^k`, the claim on
//!   the producing layer (settled when that layer's last tile ends);
//! - Aρ (B values): its digest must equal the state's on every tile but the
//!   first;
//! - on a non-top layer's first tile, the Aρ vector the layer above claimed
//!   about this layer's output ("up"), opened against the state's digest.

use super::ctx::{Ctx, Var};
use super::desc::Flags;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_gadgets::expr::{alloc, cst, enforce_eq_if, horner, mul, sub, var, Expr, Fr};
use zkstep_gadgets::hash::chain_absorb;

/// The consumer's witness: values that depend on the challenges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkWitness {
    /// τA of the layer's input (n_max, zero-padded).
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
    /// Digest of τA.
    pub digest_ta: Expr,
    /// `Σ_k τA[k]·γ^k`.
    pub rlc: Expr,
    /// Digest of Aρ.
    pub digest_ar: Expr,
}

/// Synthesize the consumer claims.
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    flags: &Flags,
    gamma: &[Expr],
    w: Option<&LinkWitness>,
) -> Result<Consumed, SynthesisError> {
    let links = &ctx.lay.slots.links;
    let allocv = |cs: &mut CS, name: &str, len: usize, f: &dyn Fn(&LinkWitness) -> &[Fr]| {
        (0..len)
            .map(|k| alloc(cs.namespace(|| format!("{name}{k}")), w.map(|w| f(w)[k])))
            .collect::<Result<Vec<Var>, _>>()
    };
    let ta_in = allocv(&mut cs, "ta", ctx.n, &|w| &w.ta_in)?;
    let ar_in = allocv(&mut cs, "ar", ctx.batch, &|w| &w.ar_in)?;
    let ar_up = allocv(&mut cs, "up", ctx.batch, &|w| &w.ar_up)?;
    let one = ctx.one::<CS>();
    let ta_vec: Vec<Expr> = ta_in.iter().map(var).collect();
    let digest_ta = var(&chain_absorb(
        cs.namespace(|| "ta_digest"),
        &cst::<CS>(ctx.lay.ta_init()),
        &ta_vec,
    )?);
    // Σ_k τA[k]·γ^k by Horner's rule
    let rlc = horner(cs.namespace(|| "ta_g"), &gamma[1], &ta_vec)?;
    let not_first = sub(&one, &flags.first);
    enforce_eq_if(
        cs.namespace(|| "ta_claim"),
        &not_first,
        &digest_ta,
        &ctx.z(links.claim_ta),
    );
    let claim_ar = ctx.z(links.claim_ar);
    let ar_init = cst::<CS>(ctx.lay.ar_init());
    let digest_ar = opened(&mut cs, "ar", &ar_in, &ar_init, &not_first, &claim_ar)?;
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
    Ok(Consumed {
        ta_in,
        ar_in,
        ar_up,
        digest_ta,
        rlc,
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
