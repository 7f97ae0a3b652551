//! The settle component: the next state.
//!
//! It carries the claims between folds (τA sums under γ, remaining Aρ, the
//! input-gradient accumulators), settles a layer's claims on its last tile,
//! opens c_batch on the step's last fold, and closes the step there: the
//! checks that end it, then the next step's first state (every private slot
//! restarted; z_n is public). Everything here is a function of the first
//! phase's values and the challenges, so all of it is allocated after them
//! (W₃: several slots depend on γ).

use super::challenges::Powers;
use super::consume::Consumed;
use super::ctx::{Ctx, Var};
use super::desc::Desc;
use super::inputs::InputsOut;
use super::produce::Produced;
use super::rows::RowsOut;
use crate::state::{Final, Init, StatementField};
use crate::witness::NextStep;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_core::commit::{chain_init, DOMAIN_BATCH, DOMAIN_PARAMS};
use zkstep_core::poseidon::RATE;
use zkstep_gadgets::expr::{
    add, add_assign, alloc, cst, enforce_eq_if, materialise, mul, select, sub, var, zero, Expr, Fr,
};
use zkstep_gadgets::hash::{h24, h8};

/// Everything the other components produced.
pub(crate) struct Parts<'a> {
    pub desc: &'a Desc,
    pub pw: &'a Powers,
    pub produced: &'a Produced,
    pub consumed: &'a Consumed,
    pub rows: &'a RowsOut,
    pub inputs: &'a InputsOut,
    /// Cross-entropy: the softmax slots' next values (claims, running sums).
    pub softmax: Option<(Var, Var)>,
}

/// The claims carried to the next fold.
struct Claims {
    prod_ta: Var,
    out_ta: Var,
    rem_ar: Vec<Var>,
    rem_da: Var,
    acc_r: Var,
}

/// Compute z_{i+1}.
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    p: &Parts,
    salt: Option<Fr>,
    next: Option<NextStep>,
) -> Result<Vec<Var>, SynthesisError> {
    let sl = &ctx.lay.slots;
    let flags = &p.desc.flags;
    let claims = claims(&mut cs, ctx, p)?;
    // the batch salt: opens c_batch at the last fold
    let salt = var(&alloc(cs.namespace(|| "salt"), salt)?);
    // the last fold opens c_batch
    let mut cb_in = vec![
        cst::<CS>(Fr::from(DOMAIN_BATCH)),
        ctx.z(sl.statement.spec),
        salt,
        p.inputs.d_x.clone(),
        p.produced.d_y.clone(),
    ];
    cb_in.resize(24, zero());
    let cb = h24(cs.namespace(|| "c_batch"), &cb_in)?;
    enforce_eq_if(
        cs.namespace(|| "c_batch_opened"),
        &flags.is_final,
        &var(&cb),
        &ctx.z(sl.statement.c_batch),
    );
    let mut m = |name: &'static str, e: &Expr| materialise(cs.namespace(|| name), e);
    let mut out: Vec<Var> = ctx.z.to_vec();
    out[sl.schedule.sched] = p.desc.sched.clone();
    out[sl.commit.h_before] = m("hb", &p.rows.h_before)?;
    out[sl.commit.h_after] = m("ha", &p.rows.h_after)?;
    if let Some(ev) = sl.commit.eval {
        out[ev.power] = m("zeta_pow", &p.rows.zeta_pow)?;
    }
    out[sl.batch.d_x] = m("dx", &p.inputs.d_x)?;
    out[sl.batch.d_y] = m("dy", &p.produced.d_y)?;
    for (i, c) in sl.links.claim_ta.clone().zip(&p.consumed.claim_ta) {
        out[i] = c.clone();
    }
    out[sl.links.out_ta] = claims.out_ta;
    out[sl.links.prod_ta] = claims.prod_ta;
    out[sl.links.claim_ar] = m("claim_ar", &p.consumed.digest_ar)?;
    out[sl.links.rem_da] = claims.rem_da;
    out[sl.links.acc_r] = claims.acc_r;
    out[sl.links.rho_off] = p.pw.rho_off.clone();
    out[sl.links.claim_rlc] = p.consumed.claim_rlc.clone();
    out[sl.links.rho_k0] = p.pw.rho_k0.clone();
    out[sl.links.gamma_k0] = p.pw.gamma_k0.clone();
    out[sl.links.acc_f1] = p.rows.acc.0.clone();
    out[sl.links.acc_f2] = p.rows.acc.1.clone();
    out[sl.links.acc_wrho] = p.rows.acc.2.clone();
    out[sl.links.g_off] = p.pw.gamma_off.clone();
    for (i, ra) in sl.links.rem_ar.clone().zip(claims.rem_ar) {
        out[i] = ra;
    }
    let xs = &sl.inputs;
    out[xs.x_rho] = p.inputs.x_rho.clone();
    out[xs.x_gamma] = p.inputs.x_gamma.clone();
    out[xs.x_prod] = p.inputs.x_prod.clone();
    for (i, a) in xs.x_ar.clone().zip(&p.inputs.x_ar) {
        out[i] = a.clone();
    }
    if let (Some(s), Some((claims, acc))) = (sl.softmax, &p.softmax) {
        out[s.claims] = claims.clone();
        out[s.acc] = acc.clone();
    }
    close_step(cs.namespace(|| "close"), ctx, p, &mut out, next)?;
    Ok(out)
}

/// Names of the next step's public values, in [`NextStep::values`]' order.
const NEXT: [&str; 6] = ["c_after", "c_batch", "rho", "gamma", "k1", "c2"];

/// A step's last fold: the checks that close the step (the schedule, both
/// commitments), then every slot's value at the next
/// step's first fold ([`crate::layout::Layout::step_start`] in the circuit).
/// The next step's own values (its c_after, c_batch, challenges and Adam
/// constants) are witnesses of this fold, zero on every other fold; after a
/// proof's last step they are zero too, so z_n is what the verifier derives
/// from the statement.
fn close_step<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    p: &Parts,
    out: &mut [Var],
    next: Option<NextStep>,
) -> Result<(), SynthesisError> {
    let lay = ctx.lay;
    let sl = &lay.slots;
    let fin = &p.desc.flags.is_final;
    let one = ctx.one::<CS>();
    let not_final = sub(&one, fin);
    let c = |v: u64| cst::<CS>(Fr::from(v));
    // the commitment chains' first links are h24 (Commit(θ)'s definition);
    // the proof-internal hashes are the short h8
    let hash = |cs: &mut CS, name: &'static str, head: Vec<Expr>| {
        let mut input = head;
        input.resize(RATE, zero());
        h24(cs.namespace(|| name), &input).map(|v| var(&v))
    };
    let short = |cs: &mut CS, name: String, input: Vec<Expr>| {
        h8(cs.namespace(|| name), &input).map(|v| var(&v))
    };
    let slots = lay.slots.registry.slots();
    for (i, slot) in slots.iter().enumerate() {
        let v = var(&out[i]);
        let (name, got, want) = match slot.last {
            Final::Schedule => (
                format!("closes_{}", slot.name),
                v,
                cst::<CS>(lay.expected_schedule_digest()),
            ),
            Final::OpensCBefore => (
                format!("closes_{}", slot.name),
                v,
                ctx.z(sl.statement.c_before),
            ),
            Final::OpensCAfter => (
                format!("closes_{}", slot.name),
                v,
                ctx.z(sl.statement.c_after),
            ),
            Final::Unchanged(_)
            | Final::Cleared
            | Final::Lookup
            | Final::AbsorbsBatch
            | Final::AbsorbsAdam => continue,
        };
        enforce_eq_if(cs.namespace(|| name), fin, &got, &want);
    }
    // the next step's values: witnesses here, zero on every other fold
    // (Adam's two only where the spec has them)
    let values = next.map(|n| n.values());
    let used = if sl.adam.is_some() { 6 } else { 4 };
    let mut nv = Vec::with_capacity(NEXT.len());
    for (k, name) in NEXT.iter().enumerate().take(used) {
        let v = var(&alloc(
            cs.namespace(|| format!("next_{name}")),
            values.map(|v| v[k]),
        )?);
        enforce_eq_if(
            cs.namespace(|| format!("next_{name}_zero")),
            &not_final,
            &v,
            &zero(),
        );
        nv.push(v);
    }
    let spec = cst::<CS>(lay.spec_digest);
    let step = add(&ctx.z(sl.statement.step), &one);
    let c_before = ctx.z(sl.statement.c_after);
    // chains only: the next step's Commit(θ_{t+1})'s first link
    let after_start = match sl.commit.after_start {
        Some(_) => Some(hash(
            &mut cs,
            "params_after",
            vec![c(DOMAIN_PARAMS), spec.clone(), add(&step, &one)],
        )?),
        None => None,
    };
    for (i, slot) in slots.iter().enumerate() {
        if slot.last == Final::Lookup {
            continue; // the second phase closes the lookup sums
        }
        let start = match slot.init {
            Init::Statement(f) => match f {
                StatementField::Spec => continue,
                StatementField::CBefore => c_before.clone(),
                StatementField::CAfter => nv[0].clone(),
                StatementField::CBatch => nv[1].clone(),
                StatementField::Rho => nv[2].clone(),
                StatementField::Gamma => nv[3].clone(),
                StatementField::AdamK1 => nv[4].clone(),
                StatementField::AdamC2 => nv[5].clone(),
                StatementField::Step => step.clone(),
                // one point for the whole proof
                StatementField::Zeta => ctx.z(i),
            },
            Init::Chain(d) => cst::<CS>(chain_init(d, lay.spec_digest)),
            // Commit(θ_{t+1})'s first link is the next step's Commit(θ_t)'s
            Init::ParamsChain(after) => match (after, sl.commit.after_start, &after_start) {
                (false, Some(a), _) => ctx.z(a),
                (true, _, Some(h)) => h.clone(),
                _ => return Err(SynthesisError::Unsatisfiable(
                    "a commitment chain without its first links' slot".into(),
                )),
            },
            Init::Zero => zero(),
            Init::One => one.clone(),
            Init::Segment(_) => {
                let link = match (slot.last, sl.adam) {
                    (Final::AbsorbsAdam, Some(a)) => vec![ctx.z(i), ctx.z(a.k1), ctx.z(a.c2)],
                    _ => vec![ctx.z(i), ctx.z(sl.statement.c_batch)],
                };
                short(&mut cs, format!("segment{i}"), link)?
            }
        };
        out[i] = select(
            cs.namespace(|| format!("start{i}")),
            fin,
            &start,
            &var(&out[i]),
        )?;
    }
    Ok(())
}

/// Carry the claims to the next fold and settle them on a layer's last tile.
fn claims<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    ctx: &Ctx,
    p: &Parts,
) -> Result<Claims, SynthesisError> {
    let links = &ctx.lay.slots.links;
    let flags = &p.desc.flags;
    let one = ctx.one::<CS>();
    let not_first = sub(&one, &flags.first);
    // Σ_t τA_rec[t]·γ^{j0+t} added to the layer's running sum
    let mut prod = var(&mul(
        cs.namespace(|| "ta_base"),
        &not_first,
        &ctx.z(links.prod_ta),
    )?);
    for (t, rec) in p.produced.ta_rec.iter().enumerate() {
        let g = mul(
            cs.namespace(|| format!("g_off{t}")),
            &var(&p.pw.gamma_off),
            &p.pw.gamma[t],
        )?;
        let term = mul(cs.namespace(|| format!("prod_ta{t}")), rec, &var(&g))?;
        add_assign(&mut prod, &var(&term));
    }
    let prod_ta = materialise(cs.namespace(|| "prod_ta"), &prod)?;
    let out_ta = select(
        cs.namespace(|| "out_ta"),
        &flags.first,
        &ctx.z(links.claim_rlc),
        &ctx.z(links.out_ta),
    )?;
    let mut rem_ar = Vec::with_capacity(ctx.batch);
    for (i, slot) in links.rem_ar.clone().enumerate() {
        let base = select(
            cs.namespace(|| format!("ar_base{i}")),
            &flags.first,
            &var(&p.consumed.ar_up[i]),
            &ctx.z(slot),
        )?;
        rem_ar.push(materialise(
            cs.namespace(|| format!("rem_ar{i}")),
            &sub(&var(&base), &p.produced.part_ar[i]),
        )?);
    }
    let da_base = select(
        cs.namespace(|| "da_base"),
        &flags.first,
        &ctx.z(links.acc_r),
        &ctx.z(links.rem_da),
    )?;
    let rem_da = materialise(
        cs.namespace(|| "rem_da"),
        &sub(&var(&da_base), &p.produced.part_l),
    )?;
    let acc_keep = mul(cs.namespace(|| "acc_keep"), &not_first, &ctx.z(links.acc_r))?;
    let acc_r = materialise(
        cs.namespace(|| "acc_r"),
        &add(&var(&acc_keep), &p.rows.part_r),
    )?;
    // a layer's last tile settles the claims the layer above made about its output
    let settle = mul(
        cs.namespace(|| "settle"),
        &flags.last,
        &sub(&one, &flags.is_top),
    )?;
    enforce_eq_if(
        cs.namespace(|| "ta_settled"),
        &var(&settle),
        &var(&prod_ta),
        &var(&out_ta),
    );
    for (i, ra) in rem_ar.iter().enumerate() {
        enforce_eq_if(
            cs.namespace(|| format!("ar_settled{i}")),
            &var(&settle),
            &var(ra),
            &zero(),
        );
    }
    enforce_eq_if(
        cs.namespace(|| "da_settled"),
        &var(&settle),
        &var(&rem_da),
        &zero(),
    );
    Ok(Claims {
        prod_ta,
        out_ta,
        rem_ar,
        rem_da,
        acc_r,
    })
}
