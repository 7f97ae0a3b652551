//! The weight-rows component: per output unit t of the tile, its weights W
//! and W′ and bias b, b′ (stored, range-checked), the optimizer's update
//! (the spec's [`UpdateGadget`]), the matrix identities by random linear
//! combination, and the absorption of the row's record into the running
//! Commit(θ_t) and Commit(θ_{t+1}) chains.
//!
//! - F1 forward: `Σ_i ρ^{i·n}(S·Z + r − off − S·b)[i,t] = Σ_k τA[k]·W[t,k]`;
//! - F2 weight gradient: `Σ_k ρ^k·term_k = factor·Σ_i dZ[i,t]·Aρ[i]`;
//! - F3 input gradient, right side: `(Σ_i ρ^{i·n}dZ[i,t])·(Σ_k ρ^k W[t,k])`,
//!   accumulated for the layer below (settled there).
//!
//! The stored values, the update and the commitment chains are the first
//! phase (W₁, committed before ρ); the identities' products and sums depend
//! on ρ and are allocated after the challenges (W₂).
//!
//! Masked rows check nothing and are not absorbed.

use super::cells::CellVars;
use super::challenges::Powers;
use super::consume::Consumed;
use super::ctx::{Ctx, Var};
use super::desc::Desc;
use crate::update::UpdateGadget;
use ff::{Field, PrimeField};
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_core::commit::{param_record, record_body};
use zkstep_gadgets::expr::{
    add, add_assign, cst, enforce_eq_if, horner, lin, materialise, mul, scale, sub, var, zero, Expr, Fr,
};
use zkstep_gadgets::fixed::alloc_stored;
use zkstep_gadgets::hash::{chain_absorb_if, pack};
use zkstep_fold::after_challenges;
use zkstep_gadgets::range::RangeCheck;

/// One row's witness: W and W′ (padded to n_max), b, b′ and the optimizer's values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowWitness {
    /// W[j, :], padded.
    pub w: Vec<i64>,
    /// W′[j, :], padded.
    pub w_new: Vec<i64>,
    /// b[j].
    pub b: i64,
    /// b′[j].
    pub b_new: i64,
    /// The optimizer's witness for this row.
    pub update: crate::update::RowUpdate,
}

/// What the rows give the settle component.
pub(crate) struct RowsOut {
    /// Running Commit(θ_t) after this tile.
    pub h_before: Expr,
    /// Running Commit(θ_{t+1}) after this tile.
    pub h_after: Expr,
    /// Evaluations only: ζ^k, k the next coefficient's index.
    pub zeta_pow: Expr,
    /// This tile's share of the input-gradient identity's right side.
    pub part_r: Expr,
    /// Row 0's running (F1 right side, F2 left side, F3 weight factor) over
    /// its segments so far (its whole sums when rows are whole).
    pub acc: (Var, Var, Var),
}

/// The inputs every row reads.
pub(crate) struct RowInputs<'a> {
    pub desc: &'a Desc,
    pub pw: &'a Powers,
    pub cells: &'a CellVars,
    pub consumed: &'a Consumed,
}

/// Synthesize every row of the tile with the optimizer gadget `g`.
pub(crate) fn synthesize<CS: ConstraintSystem<Fr>, R: RangeCheck, G: UpdateGadget>(
    mut cs: CS,
    rc: &mut R,
    ctx: &Ctx,
    g: &G,
    inp: &RowInputs,
    w: Option<&[RowWitness]>,
) -> Result<RowsOut, SynthesisError> {
    let commit = &ctx.lay.slots.commit;
    let mut out = RowsOut {
        h_before: ctx.z(commit.h_before),
        h_after: ctx.z(commit.h_after),
        zeta_pow: commit.eval.map_or(zero(), |e| ctx.z(e.power)),
        part_r: zero(),
        acc: (ctx.z[0].clone(), ctx.z[0].clone(), ctx.z[0].clone()),
    };
    for t in 0..ctx.rows {
        let rw = w.map(|w| &w[t]);
        let upd = match rw {
            Some(r) => Some(G::row(&r.update).ok_or(SynthesisError::AssignmentMissing)?),
            None => None,
        };
        // row t's constraints alike for every t: one unit, evaluated once a group
        zkstep_fold::in_unit("row", t, || {
            row(
                cs.namespace(|| format!("row{t}")),
                rc,
                ctx,
                g,
                inp,
                t,
                rw,
                upd,
                &mut out,
            )
        })?;
    }
    Ok(out)
}

/// The weights of a row as the identities and the commitments use them.
struct RowSums {
    wrow: Vec<Expr>,
    wnew: Vec<Expr>,
    state: Vec<Vec<Expr>>,
    state_new: Vec<Vec<Expr>>,
    /// `Σ_k ρ^k·term_k` (F2's left side).
    f2: Expr,
    /// `Σ_k τA[k]·W[k]` (F1's right side).
    f1r: Expr,
    /// `Σ_k ρ^k·W[k]` (F3's weight factor).
    wrho: Expr,
}

#[allow(clippy::too_many_arguments)]
fn row<CS: ConstraintSystem<Fr>, R: RangeCheck, G: UpdateGadget>(
    mut cs: CS,
    rc: &mut R,
    ctx: &Ctx,
    g: &G,
    inp: &RowInputs,
    t: usize,
    rw: Option<&RowWitness>,
    upd: Option<&G::Row>,
    out: &mut RowsOut,
) -> Result<(), SynthesisError> {
    let mut sums = weights(&mut cs, rc, ctx, g, inp, (t, rw), upd)?;
    if t == 0 {
        // outside the unit: row 0's unit then has every other row's shape
        zkstep_fold::with_unit(None, || after_challenges(|| accumulate(&mut cs, ctx, inp, &mut sums, out)))?;
    }
    let b = alloc_stored(cs.namespace(|| "b"), rc, rw.map(|r| r.b), ctx.bits)?;
    let b_new = alloc_stored(cs.namespace(|| "b_new"), rc, rw.map(|r| r.b_new), ctx.bits)?;
    let db = (0..ctx.batch).fold(zero(), |acc, i| {
        add(&acc, &var(&inp.cells.dz[ctx.cell(i, t)]))
    });
    let bias = g.bias(&mut cs, rc, ctx, &var(&b), &var(&b_new), &db, upd)?;
    // a row's cells, bias and identities are checked on its last segment
    let active = var(&inp.desc.cell_mask[t]);
    after_challenges(|| identities(&mut cs, ctx, g, inp, t, &var(&b), &sums, &active, out))?;
    // commitments: the record's rows a block at a time, then the biases
    // (`param_record`, the native order)
    let live = (&var(&inp.desc.row_mask[t]), &active);
    if let Some(ev) = ctx.lay.slots.commit.eval {
        // ζ is drawn after the first phase, so the evaluations are in W₂
        let zeta = ctx.z(ev.zeta);
        return after_challenges(|| {
            evaluate_records(
                cs.namespace(|| "theta_at_zeta"),
                ctx,
                &zeta,
                live,
                out,
                [
                    (&sums.wrow, &sums.state, var(&b), &bias.state),
                    (&sums.wnew, &sums.state_new, var(&b_new), &bias.state_new),
                ],
            )
        });
    }
    out.h_before = absorb_record(
        cs.namespace(|| "c_before"),
        ctx,
        live,
        &out.h_before,
        (&sums.wrow, &sums.state),
        (var(&b), &bias.state),
    )?;
    out.h_after = absorb_record(
        cs.namespace(|| "c_after"),
        ctx,
        live,
        &out.h_after,
        (&sums.wnew, &sums.state_new),
        (var(&b_new), &bias.state_new),
    )?;
    Ok(())
}

/// A row's record in θ_t and in θ_{t+1}: its W (or W′) row and state rows,
/// its biases.
type RecordVars<'a> = (&'a [Expr], &'a [Vec<Expr>], Expr, &'a [Expr]);

/// The pieces of a row's record as [`absorb_record`] cuts them, packed:
/// the whole record when rows are whole, else this segment's blocks (live
/// when `live.0`) and the biases (on the row's last segment, `live.1`).
fn record_pieces<CS: ConstraintSystem<Fr>>(
    ctx: &Ctx,
    live: (&Expr, &Expr),
    (w, state, b, bstate): &RecordVars,
) -> Vec<(Expr, Vec<Expr>)> {
    let mut rows: Vec<&[Expr]> = vec![w];
    rows.extend(state.iter().map(Vec::as_slice));
    let mut biases = vec![b.clone()];
    biases.extend_from_slice(bstate);
    if ctx.lay.segments == 1 {
        return vec![(live.1.clone(), pack::<CS>(&param_record(&rows, &biases)))];
    }
    vec![
        (live.0.clone(), pack::<CS>(&record_body(&rows))),
        (live.1.clone(), pack::<CS>(&biases)),
    ]
}

/// Add a row's coefficients, in θ_t and θ_{t+1} alike, to the running
/// evaluations at ζ: a piece of m packed values at position k adds
/// `ζ^k·Σ_i e_i·ζ^i` (Horner's rule, m − 1 products a side) and moves the
/// position to k + m, where its mask is set; the masked power is shared by
/// both sides. The native twin is `zkstep_core::commit::evaluate` over
/// `param_coefficients`.
fn evaluate_records<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    zeta: &Expr,
    live: (&Expr, &Expr),
    out: &mut RowsOut,
    [before, after]: [RecordVars; 2],
) -> Result<(), SynthesisError> {
    let pieces = record_pieces::<CS>(ctx, live, &before)
        .into_iter()
        .zip(record_pieces::<CS>(ctx, live, &after));
    for (k, ((mask, eb), (_, ea))) in pieces.enumerate() {
        let mut cs = cs.namespace(|| format!("piece{k}"));
        let sb = horner(cs.namespace(|| "before"), zeta, &eb)?;
        let sa = horner(cs.namespace(|| "after"), zeta, &ea)?;
        let q = var(&mul(cs.namespace(|| "masked_power"), &mask, &out.zeta_pow)?);
        let tb = mul(cs.namespace(|| "term_before"), &q, &sb)?;
        let ta = mul(cs.namespace(|| "term_after"), &q, &sa)?;
        out.h_before = add(&out.h_before, &var(&tb));
        out.h_after = add(&out.h_after, &var(&ta));
        let zm = super::challenges::power(cs.namespace(|| "zeta_m"), zeta, eb.len())?;
        let step = mul(
            cs.namespace(|| "advance"),
            &q,
            &sub(&var(&zm), &ctx.one::<CS>()),
        )?;
        out.zeta_pow = add(&out.zeta_pow, &var(&step));
    }
    Ok(())
}

/// Absorb a row's record (its W or W′ row and state rows, its biases) into
/// the chain `h`: whole when rows are whole, else this segment's blocks
/// when its weights are live (`live.0`) and the biases on the row's last
/// segment (`live.1`).
fn absorb_record<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    ctx: &Ctx,
    live: (&Expr, &Expr),
    h: &Expr,
    (w, state): (&[Expr], &[Vec<Expr>]),
    (b, bstate): (Expr, &[Expr]),
) -> Result<Expr, SynthesisError> {
    let mut rows: Vec<&[Expr]> = vec![w];
    rows.extend(state.iter().map(Vec::as_slice));
    let mut biases = vec![b];
    biases.extend_from_slice(bstate);
    if ctx.lay.segments == 1 {
        let rec = pack::<CS>(&param_record(&rows, &biases));
        return Ok(var(&chain_absorb_if(cs, live.1, h, &rec)?));
    }
    let body = pack::<CS>(&record_body(&rows));
    let hw = chain_absorb_if(cs.namespace(|| "w"), live.0, h, &body)?;
    let hb = chain_absorb_if(cs.namespace(|| "b"), live.1, &var(&hw), &pack::<CS>(&biases))?;
    Ok(var(&hb))
}

/// Every weight of a row: W, W′, the update, and the per-weight products of F1–F3.
#[allow(clippy::too_many_arguments)]
fn weights<CS: ConstraintSystem<Fr>, R: RangeCheck, G: UpdateGadget>(
    cs: &mut CS,
    rc: &mut R,
    ctx: &Ctx,
    g: &G,
    inp: &RowInputs,
    (t, rw): (usize, Option<&RowWitness>),
    upd: Option<&G::Row>,
) -> Result<RowSums, SynthesisError> {
    let mut s = RowSums {
        wrow: Vec::with_capacity(ctx.seg_w),
        wnew: Vec::with_capacity(ctx.seg_w),
        state: vec![],
        state_new: vec![],
        f2: zero(),
        f1r: zero(),
        wrho: zero(),
    };
    let (mut grad, mut f1s) = (Vec::with_capacity(ctx.seg_w), zero());
    for k in 0..ctx.live_w {
        let mut ck = cs.namespace(|| format!("k{k}"));
        // each weight's work alike for every weight of every row: a unit
        let (wa, wn, u, f1) = zkstep_fold::in_unit("weight", t * ctx.seg_w + k, || {
            let wa = alloc_stored(ck.namespace(|| "w"), rc, rw.map(|r| r.w[k]), ctx.bits)?;
            let wn = alloc_stored(
                ck.namespace(|| "w_new"),
                rc,
                rw.map(|r| r.w_new[k]),
                ctx.bits,
            )?;
            let u = g.weight(&mut ck, rc, ctx, &var(&wa), &var(&wn), upd, k)?;
            let f1 = after_challenges(|| {
                mul(
                    ck.namespace(|| "f1"),
                    &var(&inp.consumed.ta_in[k]),
                    &var(&wa),
                )
            })?;
            Ok::<_, SynthesisError>((wa, wn, u, f1))
        })?;
        add_assign(&mut f1s, &var(&f1));
        grad.push(u.grad_term);
        push_state(&mut s.state, u.state);
        push_state(&mut s.state_new, u.state_new);
        s.wrow.push(var(&wa));
        s.wnew.push(var(&wn));
    }
    // slots no fold fills: zeros in the records, nothing in the sums
    let states = ctx.lay.spec.optimizer.state_names().len();
    for _ in ctx.live_w..ctx.seg_w {
        push_state(&mut s.state, vec![zero(); states]);
        push_state(&mut s.state_new, vec![zero(); states]);
        s.wrow.push(zero());
        s.wnew.push(zero());
    }
    // ρ^{k0}·Σ_k ρ^k·term_k and ρ^{k0}·Σ_k ρ^k·W[k] by Horner's rule (no powers of ρ)
    let (rho, k0) = (&inp.pw.rho[1], var(&inp.pw.rho_k0));
    s.f1r = f1s;
    after_challenges(|| -> Result<(), SynthesisError> {
        let f2 = horner(cs.namespace(|| "f2"), rho, &grad)?;
        s.f2 = var(&mul(cs.namespace(|| "f2_k0"), &k0, &f2)?);
        let wrho = horner(cs.namespace(|| "wrho"), rho, &s.wrow[..ctx.live_w])?;
        s.wrho = var(&mul(cs.namespace(|| "wrho_k0"), &k0, &wrho)?);
        Ok(())
    })?;
    Ok(s)
}

/// Row 0's sums over its segments so far: the state's running sums (zero on
/// a row's first segment) plus this fold's, stored for the next fold; the
/// identities of the row's last segment use the totals.
fn accumulate<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    ctx: &Ctx,
    inp: &RowInputs,
    sums: &mut RowSums,
    out: &mut RowsOut,
) -> Result<(), SynthesisError> {
    let links = &ctx.lay.slots.links;
    let not_first = sub(&ctx.one::<CS>(), &inp.desc.flags.first_seg);
    let mut total = |name: &str, slot: usize, part: &Expr| -> Result<Var, SynthesisError> {
        let prev = mul(
            cs.namespace(|| format!("{name}_prev")),
            &not_first,
            &ctx.z(slot),
        )?;
        materialise(
            cs.namespace(|| format!("{name}_acc")),
            &add(&var(&prev), part),
        )
    };
    let f1 = total("f1", links.acc_f1, &sums.f1r)?;
    let f2 = total("f2", links.acc_f2, &sums.f2)?;
    let wr = total("wrho", links.acc_wrho, &sums.wrho)?;
    (sums.f1r, sums.f2, sums.wrho) = (var(&f1), var(&f2), var(&wr));
    out.acc = (f1, f2, wr);
    Ok(())
}

/// Append one weight's state values to the per-tensor rows.
fn push_state(rows: &mut Vec<Vec<Expr>>, vals: Vec<Expr>) {
    rows.resize(vals.len().max(rows.len()), vec![]);
    for (r, v) in rows.iter_mut().zip(vals) {
        r.push(v);
    }
}

/// F1 and F2 for row t, and its share of F3's right side.
#[allow(clippy::too_many_arguments)]
fn identities<CS: ConstraintSystem<Fr>, G: UpdateGadget>(
    cs: &mut CS,
    ctx: &Ctx,
    g: &G,
    inp: &RowInputs,
    t: usize,
    b: &Expr,
    sums: &RowSums,
    active: &Expr,
    out: &mut RowsOut,
) -> Result<(), SynthesisError> {
    let one = cst::<CS>(Fr::ONE);
    let (s, off) = (Fr::from_u128(ctx.s), Fr::from_u128(ctx.off_s));
    let (mut f1l, mut f2r, mut dzt) = (zero(), zero(), zero());
    for i in 0..ctx.batch {
        let c = ctx.cell(i, t);
        let cell = &inp.cells.cells[c];
        let dz: &Var = &inp.cells.dz[c];
        let ez = lin(&[(s, &cell.z), (Fr::ONE, &cell.z_r), (-off, &one), (-s, b)]);
        let sample = &inp.pw.sample[i];
        f1l = add(
            &f1l,
            &var(&mul(cs.namespace(|| format!("f1l{i}")), sample, &ez)?),
        );
        let ar = var(&inp.consumed.ar_in[i]);
        f2r = add(
            &f2r,
            &var(&mul(cs.namespace(|| format!("f2r{i}")), &var(dz), &ar)?),
        );
        dzt = add(
            &dzt,
            &var(&mul(cs.namespace(|| format!("dzt{i}")), sample, &var(dz))?),
        );
    }
    // F1 forward: Σ_i ρ^{i·n}(S·Z + r − off − S·b) = Σ_k τA[k]·W[k]
    enforce_eq_if(cs.namespace(|| "forward"), active, &f1l, &sums.f1r);
    // F2 weight gradient: Σ_k ρ^k·term_k = factor·Σ_i dZ[i]·Aρ[i]
    let f2r = match g.gradient_factor() {
        Some(f) => scale(&f2r, f),
        None => f2r,
    };
    enforce_eq_if(cs.namespace(|| "weight_grad"), active, &sums.f2, &f2r);
    // F3 input gradient, right-hand side: (Σ_i ρ^{i·n} dZ[i])·(Σ_k ρ^k W[k])
    let pr = mul(cs.namespace(|| "f3"), &dzt, &sums.wrho)?;
    let masked = mul(cs.namespace(|| "f3m"), active, &var(&pr))?;
    add_assign(&mut out.part_r, &var(&masked));
    Ok(())
}
