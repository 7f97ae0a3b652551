//! The softmax component (cross-entropy specs): each sample's softmax over
//! the top layer's output units, cut across the layer's folds like any
//! other layer, so that no fold grows with the number of classes.
//!
//! First phase (W₁), in every fold: per sample i the claimed maximum M_i
//! and sum Σ_i of the row's exponentials; per row t of the tile, with
//! `on_t = is_top·m_t·last_seg` (a unit this fold checks),
//! `d = on_t·(A − M_i)` (an entry at the maximum where `on_t = 0`),
//! `e = exp(d)` (whose reduction `−d = k·L + ρ` with k ≥ 0 makes `M_i ≥ A`),
//! `p = div_round(e·S, Σ_i)`, the loss identity `S·dA + r − off = c·(P − Y)`
//! where `on_t`, and a boolean `o_t` that marks the unit attaining the
//! maximum (`o_t·d = 0`, `o_t·(1 − on_t) = 0`).
//!
//! Second phase (W₂, [`claims`]): the fold's claims under ρ,
//! `Σ_i ρ^{i·n}·(Σ_i + ρ^{B·n}·M_i)`, which the top layer's first fold
//! puts into the state and every other top fold must equal; and the running
//! `Σ_i ρ^{i·n}·(Σ_t on_t·e_it − Σ_i + ρ^{B·n}·(Σ_t o_it − 1))`, started
//! by the first top fold and zero at the last: so Σ_i is the sum of the
//! whole row's exponentials and exactly one unit of the row attains M_i.
//! Everything it combines is in W₁, committed before ρ, so by
//! Schwartz–Zippel a false claim survives with probability ≤ 2·B·n/|F|
//! (docs/SOUNDNESS.md, "Softmax across folds"). Native twin:
//! `zkstep_core::softmax::{softmax_trace, softmax_tile}`.

use super::cells::CellVars;
use super::challenges::Powers;
use super::ctx::{Ctx, Var};
use super::desc::Desc;
use ff::PrimeField;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_core::fixed::Rounding;
use zkstep_core::poseidon::fr_from_i128;
use zkstep_core::softmax::SoftmaxTrace;
use zkstep_gadgets::arith::{div_rem, exp_neg};
use zkstep_gadgets::expr::{
    add, add_assign, alloc, enforce_bool, enforce_eq_if, enforce_mul, materialise, mul, scale,
    select, sub, var, zero, Expr, Fr,
};
use zkstep_gadgets::range::RangeCheck;

/// One fold's softmax witness: per sample its trace cut to the tile
/// (`zkstep_core::softmax::softmax_tile`) and the tile's row that attains
/// the maximum, if this fold holds it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SoftmaxWitness {
    /// Per sample: M, Σ, and the tile's exponentials and probabilities.
    pub samples: Vec<SoftmaxTrace>,
    /// Per sample: the row of the tile attaining the maximum.
    pub argmax: Vec<Option<usize>>,
}

/// What the first phase hands the second.
pub(crate) struct SoftmaxVars {
    /// Claimed maxima M_i.
    m: Vec<Var>,
    /// Claimed sums Σ_i.
    sum: Vec<Var>,
    /// `Σ_t on_t·e_it`.
    e_sum: Vec<Expr>,
    /// `Σ_t o_it`.
    hits: Vec<Expr>,
}

/// The first phase: every sample's block (`s{i}/…`) and its loss identities.
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    ctx: &Ctx,
    desc: &Desc,
    cells: &CellVars,
    w: Option<&SoftmaxWitness>,
) -> Result<SoftmaxVars, SynthesisError> {
    let c_loss = fr_from_i128(ctx.lay.spec.loss_grad_c() as i128);
    let on: Vec<Var> = (0..ctx.rows)
        .map(|t| {
            mul(
                cs.namespace(|| format!("on{t}")),
                &desc.flags.is_top,
                &var(&desc.cell_mask[t]),
            )
        })
        .collect::<Result<_, _>>()?;
    let mut out = SoftmaxVars {
        m: Vec::with_capacity(ctx.batch),
        sum: Vec::with_capacity(ctx.batch),
        e_sum: Vec::with_capacity(ctx.batch),
        hits: Vec::with_capacity(ctx.batch),
    };
    for i in 0..ctx.batch {
        let sw = match w {
            Some(w) => Some((
                w.samples.get(i).ok_or(SynthesisError::AssignmentMissing)?,
                *w.argmax.get(i).ok_or(SynthesisError::AssignmentMissing)?,
            )),
            None => None,
        };
        sample(cs.namespace(|| format!("s{i}")), rc, ctx, &on, c_loss, i, sw, cells, &mut out)?;
    }
    Ok(out)
}

/// Sample i's block: M_i and Σ_i, then per row the exponential, the hit
/// selector, the probability and (where `on_t`) the loss identity.
#[allow(clippy::too_many_arguments)]
fn sample<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    ctx: &Ctx,
    on: &[Var],
    c_loss: Fr,
    i: usize,
    w: Option<(&SoftmaxTrace, Option<usize>)>,
    cells: &CellVars,
    out: &mut SoftmaxVars,
) -> Result<(), SynthesisError> {
    let rounding = ctx.lay.spec.rounding;
    let one = ctx.one::<CS>();
    // no range check on either: M_i is pinned to an attained activation and
    // Σ_i to the row's sum where the top layer ends (`claims`)
    let m = alloc(cs.namespace(|| "max"), w.map(|(t, _)| fr_from_i128(t.m)))?;
    let sum = alloc(cs.namespace(|| "sum"), w.map(|(t, _)| fr_from_i128(t.sum)))?;
    let two_sum = scale(&var(&sum), Fr::from(2u64));
    // 2Σ ≤ 2·classes·S < 2^{31 + bits(classes)}
    let classes = ctx.lay.spec.output_width();
    let d_bits = 32 + usize::BITS - classes.leading_zeros();
    let (mut e_sum, mut hits) = (zero(), zero());
    for (t, on_t) in on.iter().enumerate() {
        let c = ctx.cell(i, t);
        let d = mul(
            cs.namespace(|| format!("d{t}")),
            &var(on_t),
            &sub(&cells.act[c], &var(&m)),
        )?;
        let e = exp_neg(
            cs.namespace(|| format!("exp{t}")),
            rc,
            &var(&d),
            ctx.bits + 2,
            rounding,
            w.map(|(w, _)| &w.exp[t]),
        )?;
        let me = mul(cs.namespace(|| format!("sum{t}")), &var(on_t), &var(&e))?;
        add_assign(&mut e_sum, &var(&me));
        // o_t: the unit attaining the maximum (A = M there), one this fold checks
        let o = alloc(
            cs.namespace(|| format!("hit{t}")),
            w.map(|(_, h)| Fr::from((h == Some(t)) as u64)),
        )?;
        enforce_bool(cs.namespace(|| format!("hit{t}_bool")), &var(&o));
        enforce_mul(cs.namespace(|| format!("hit{t}_at_max")), &var(&o), &var(&d), &zero());
        enforce_mul(
            cs.namespace(|| format!("hit{t}_checked")),
            &var(&o),
            &sub(&one, &var(on_t)),
            &zero(),
        );
        add_assign(&mut hits, &var(&o));
        // p_t = div_round(e_t·S, Σ): 2·S·e_t + off(2Σ) = p_t·2Σ + r
        let twice = scale(&var(&e), Fr::from_u128(2 * ctx.s));
        let num = match rounding {
            Rounding::HalfUp => add(&twice, &var(&sum)),
            Rounding::Floor => twice,
        };
        let (p, _) = div_rem(
            cs.namespace(|| format!("p{t}")),
            rc,
            &num,
            &two_sum,
            d_bits,
            32,
            w.map(|(w, _)| w.p[t]),
            w.map(|(w, _)| w.p_rem[t]),
        )?;
        // a unit this fold checks: S·dA + r − off = c·(P − Y)
        let rhs = scale(&sub(&var(&p), &cells.cells[c].y), c_loss);
        enforce_eq_if(
            cs.namespace(|| format!("loss{t}")),
            &var(on_t),
            &cells.grad_lhs[c],
            &rhs,
        );
    }
    out.m.push(m);
    out.sum.push(sum);
    out.e_sum.push(e_sum);
    out.hits.push(hits);
    Ok(())
}

/// The second phase: the next values of the state's two softmax slots
/// (claims, running sums), checking a top fold's claims against the first
/// top fold's and the running sums zero at the top layer's last fold.
pub(crate) fn claims<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    desc: &Desc,
    pw: &Powers,
    sv: &SoftmaxVars,
) -> Result<(Var, Var), SynthesisError> {
    let sl = ctx.lay.slots.softmax.ok_or_else(|| {
        SynthesisError::Unsatisfiable("softmax claims in a spec without cross-entropy".into())
    })?;
    let flags = &desc.flags;
    let one = ctx.one::<CS>();
    // ρ^{B·n}: the weight that keeps the second family of terms apart
    let last = ctx.batch - 1;
    let apart = var(&mul(cs.namespace(|| "apart"), &pw.sample[last], &pw.stride)?);
    let rlc = |cs: &mut CS, name: &str, v: &[Expr]| -> Result<Expr, SynthesisError> {
        let mut acc = zero();
        for (i, x) in v.iter().enumerate() {
            let p = mul(cs.namespace(|| format!("{name}{i}")), &pw.sample[i], x)?;
            add_assign(&mut acc, &var(&p));
        }
        Ok(acc)
    };
    let vars = |v: &[Var]| v.iter().map(var).collect::<Vec<_>>();
    let s_rlc = rlc(&mut cs, "sum", &vars(&sv.sum))?;
    let m_rlc = rlc(&mut cs, "max", &vars(&sv.m))?;
    let m_apart = mul(cs.namespace(|| "max_apart"), &apart, &m_rlc)?;
    let own = add(&s_rlc, &var(&m_apart));
    // every top fold claims what the top layer's first fold did
    let first_top = mul(cs.namespace(|| "first_top"), &flags.first, &flags.is_top)?;
    let later_top = sub(&flags.is_top, &var(&first_top));
    let z_claims = ctx.z(sl.claims);
    enforce_eq_if(cs.namespace(|| "claims_kept"), &later_top, &own, &z_claims);
    let claims_next = select(cs.namespace(|| "claims"), &flags.is_top, &own, &z_claims)?;
    // running sums: this fold's exponentials and hits, less the claims on the first
    let e_rlc = rlc(&mut cs, "e", &sv.e_sum)?;
    let h_rlc = rlc(&mut cs, "hit", &sv.hits)?;
    let ones = pw.sample.iter().fold(zero(), |a, s| add(&a, s));
    let ones_first = mul(cs.namespace(|| "ones_first"), &var(&first_top), &ones)?;
    let hits_apart = mul(
        cs.namespace(|| "hits_apart"),
        &apart,
        &sub(&h_rlc, &var(&ones_first)),
    )?;
    let s_first = mul(cs.namespace(|| "sums_first"), &var(&first_top), &s_rlc)?;
    let kept = mul(
        cs.namespace(|| "acc_kept"),
        &sub(&one, &flags.first),
        &ctx.z(sl.acc),
    )?;
    let acc_next = materialise(
        cs.namespace(|| "acc"),
        &sub(&add(&add(&var(&kept), &e_rlc), &var(&hits_apart)), &var(&s_first)),
    )?;
    let ends = mul(cs.namespace(|| "ends"), &flags.last, &flags.is_top)?;
    enforce_eq_if(cs.namespace(|| "settled"), &var(&ends), &var(&acc_next), &zero());
    Ok((claims_next, acc_next))
}
