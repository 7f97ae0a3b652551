//! The step circuit of one fold: a tile of one layer (forward, loss or
//! incoming gradient, backward, optimizer update) or an input tile.
//!
//! Namespaces are hierarchical (`fwd/cell_3_1/relu/sign`, `upd/row_2/…`) so a
//! failing constraint names itself. docs/SOUNDNESS.md explains why each family
//! is there; the short version:
//! - matrix products are checked with random linear combinations in one
//!   challenge ρ (Freivalds), which the verifier requires to equal the hash of
//!   a transcript that binds every value those checks test, so ρ is fixed only
//!   after the values are (forward `Z = A·Wᵀ + b`, `dW_acc = dZᵀ·A`,
//!   `dA = dZ·W`);
//! - every rescale has both remainder bounds and a range-checked quotient;
//! - ReLU selectors are sign-pinned;
//! - weights, biases and optimizer state are absorbed into the running
//!   Commit(θ_t) and Commit(θ_{t+1}) chains, in the native order;
//! - links between folds (τ-folded activations, Aρ vectors, gradient
//!   identities) are claims in the state checked when the producing layer ends.

use crate::layout::{state, Layout};
use crate::witness::TileWitness;
use ff::{Field, PrimeField};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use nova_snark::traits::circuit::StepCircuit;
use std::sync::Arc;
use zkstep_core::commit::DOMAIN_BATCH;
use zkstep_core::fixed::{SCALE_I128, SCALE_SQ};
use zkstep_core::poseidon::fr_from_i128;
use zkstep_core::spec::Optimizer;
use zkstep_gadgets::expr::{
    add, alloc, cst, enforce_bool, enforce_eq, enforce_eq_if, lin, materialise, mul, scale, select,
    sub, var, zero, Expr, Fr,
};
use zkstep_gadgets::fixed::{relu, rescale_with_q};
use zkstep_gadgets::hash::{chain_absorb, chain_absorb_if, h24, pack};
use zkstep_gadgets::range::{range_bits, signed_range};

/// One fold's circuit. `witness: None` synthesises the shape only.
#[derive(Clone, Debug)]
pub struct TileCircuit {
    /// The proof's layout (shared by all folds).
    pub layout: Arc<Layout>,
    /// This fold's witness.
    pub witness: Option<Arc<TileWitness>>,
}

impl TileCircuit {
    /// A circuit for shape synthesis (keygen).
    pub fn shape(layout: Arc<Layout>) -> Self {
        TileCircuit {
            layout,
            witness: None,
        }
    }
}

fn fi(v: i64) -> Fr {
    fr_from_i128(v as i128)
}
fn fu(v: u128) -> Fr {
    Fr::from_u128(v)
}

type A = AllocatedNum<Fr>;

impl StepCircuit<Fr> for TileCircuit {
    fn arity(&self) -> usize {
        self.layout.arity()
    }

    fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        z: &[A],
    ) -> Result<Vec<A>, SynthesisError> {
        synthesize_tile(cs, &self.layout, self.witness.as_deref(), z)
    }
}

/// Allocate a value from the witness (None during shape synthesis).
fn wv<CS: ConstraintSystem<Fr>, T>(
    cs: CS,
    w: Option<&TileWitness>,
    f: impl Fn(&TileWitness) -> T,
    conv: impl Fn(T) -> Fr,
) -> Result<A, SynthesisError> {
    alloc(cs, w.map(|w| conv(f(w))))
}

/// A stored value: allocated and range-checked to the spec's signed range.
fn stored<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    val: Option<i64>,
    bits: u32,
) -> Result<A, SynthesisError> {
    let a = alloc(cs.namespace(|| "val"), val.map(fi))?;
    signed_range(cs.namespace(|| "range"), &var(&a), bits)?;
    Ok(a)
}

/// A remainder in `[0, d)`: allocated with both bounds.
fn remainder<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    val: Option<i64>,
    d: u128,
) -> Result<A, SynthesisError> {
    let a = alloc(cs.namespace(|| "val"), val.map(fi))?;
    let nb = zkstep_gadgets::range::bit_len(d - 1);
    range_bits(cs.namespace(|| "r_ge_0"), &var(&a), nb)?;
    let upper = sub(&cst::<CS>(fu(d - 1)), &var(&a));
    range_bits(cs.namespace(|| "r_lt_d"), &upper, nb)?;
    Ok(a)
}

/// Booleans `m_k = [k < count]` for k < len: boolean, non-increasing, summing to `count`.
fn prefix_mask<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    count: &Expr,
    len: usize,
    count_val: Option<usize>,
) -> Result<Vec<A>, SynthesisError> {
    let mut m: Vec<A> = Vec::with_capacity(len);
    for k in 0..len {
        let b = alloc(
            cs.namespace(|| format!("m{k}")),
            count_val.map(|c| if k < c { Fr::ONE } else { Fr::ZERO }),
        )?;
        enforce_bool(cs.namespace(|| format!("bool{k}")), &var(&b));
        if k > 0 {
            // m_k·(1 − m_{k−1}) = 0
            let one_minus = sub(&cst::<CS>(Fr::ONE), &var(&m[k - 1]));
            zkstep_gadgets::expr::enforce_mul(
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

/// x^{j0} of a tile: 1 on a layer's first tile, else the previous tile's
/// offset times x^R.
fn tile_offset<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    first: &Expr,
    prev: &Expr,
    x_r: &Expr,
) -> Result<A, SynthesisError> {
    let next = mul(cs.namespace(|| "next"), prev, x_r)?;
    select(
        cs.namespace(|| "off"),
        first,
        &cst::<CS>(Fr::ONE),
        &var(&next),
    )
}

#[allow(clippy::too_many_lines)]
fn synthesize_tile<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    lay: &Layout,
    w: Option<&TileWitness>,
    z: &[A],
) -> Result<Vec<A>, SynthesisError> {
    let (r, n, bsz) = (lay.rows, lay.n_max, lay.batch);
    let bits = lay.spec.value_range.bits;
    let rounding = lay.spec.rounding;
    let (off_s, off_sq) = (
        rounding.offset(SCALE_I128) as u128,
        rounding.offset(SCALE_SQ) as u128,
    );
    let s_u = SCALE_I128 as u128;
    let momentum = lay.momentum();
    let (lr, mu) = match lay.spec.optimizer {
        Optimizer::Sgd { lr_fx } => (lr_fx, 0),
        Optimizer::Momentum { lr_fx, mu_fx } => (lr_fx, mu_fx),
    };
    let zv = |i: usize| var(&z[i]);
    let one = cst::<CS>(Fr::ONE);
    let cell = |i: usize, t: usize| i * r + t;

    // ---- descriptor, schedule chain, masks
    let mut cs_d = cs.namespace(|| "desc");
    let fields: Vec<A> = (0..10)
        .map(|f| {
            wv(
                cs_d.namespace(|| format!("f{f}")),
                w,
                |w| w.desc.fields()[f],
                Fr::from,
            )
        })
        .collect::<Result<_, _>>()?;
    for (f, flag) in fields.iter().enumerate().skip(4) {
        enforce_bool(cs_d.namespace(|| format!("flag{f}")), &var(flag));
    }
    let (is_relu, is_top, is_input, first, last, is_final) = (
        var(&fields[4]),
        var(&fields[5]),
        var(&fields[6]),
        var(&fields[7]),
        var(&fields[8]),
        var(&fields[9]),
    );
    let mut sched_in = vec![zv(state::SCHED)];
    sched_in.extend(fields.iter().map(var));
    sched_in.resize(24, zero());
    let sched = h24(cs_d.namespace(|| "sched"), &sched_in)?;
    let rm = prefix_mask(
        cs_d.namespace(|| "rows"),
        &var(&fields[2]),
        r,
        w.map(|w| w.desc.rows_active),
    )?;
    let not_input = sub(&one, &is_input);
    let roww: Vec<A> = (0..r)
        .map(|t| {
            mul(
                cs_d.namespace(|| format!("roww{t}")),
                &var(&rm[t]),
                &not_input,
            )
        })
        .collect::<Result<_, _>>()?;
    drop(cs_d);

    // ---- powers of the challenges
    let mut cs_p = cs.namespace(|| "pow");
    let pw = powers_of(cs_p.namespace(|| "rho"), &zv(state::RHO), lay.max_pow())?;
    let gp = powers_of(cs_p.namespace(|| "gamma"), &zv(state::GAMMA), lay.max_pow())?;
    let stride = pw[n].clone();
    let mut bw: Vec<Expr> = vec![one.clone()];
    for i in 1..bsz {
        let p = mul(cs_p.namespace(|| format!("b{i}")), &bw[i - 1], &stride)?;
        bw.push(var(&p));
    }
    // ρ^{j0} and γ^{j0}: 1 on a layer's first tile, else the previous tile's times x^R
    let rho_off = tile_offset(
        cs_p.namespace(|| "rho_off"),
        &first,
        &zv(state::RHO_OFF),
        &pw[r],
    )?;
    let g_off = tile_offset(
        cs_p.namespace(|| "g_off"),
        &first,
        &zv(state::G_OFF),
        &gp[r],
    )?;
    drop(cs_p);

    // ---- cells: forward outputs, loss / incoming gradient
    let mut zq = Vec::with_capacity(bsz * r);
    let mut zr = Vec::with_capacity(bsz * r);
    let mut act = Vec::with_capacity(bsz * r);
    let mut yv = Vec::with_capacity(bsz * r);
    let mut dav = Vec::with_capacity(bsz * r);
    let mut dar = Vec::with_capacity(bsz * r);
    let mut texpr = Vec::with_capacity(bsz * r);
    let mut dz = Vec::with_capacity(bsz * r);
    let c_loss = fi(lay.spec.mse_grad_c());
    {
        let mut cs_c = cs.namespace(|| "cells");
        for i in 0..bsz {
            for t in 0..r {
                let c = cell(i, t);
                let mut cc = cs_c.namespace(|| format!("c{i}_{t}"));
                let q = stored(cc.namespace(|| "z"), w.map(|w| w.z[c]), bits)?;
                let rz = remainder(cc.namespace(|| "z_r"), w.map(|w| w.z_r[c]), s_u)?;
                let (s_al, a_relu) =
                    relu(cc.namespace(|| "relu"), &var(&q), w.map(|w| w.s[c]), bits)?;
                let diff = sub(&var(&a_relu), &var(&q));
                let adj = mul(cc.namespace(|| "act"), &is_relu, &diff)?;
                let a = add(&var(&q), &var(&adj));
                let y = stored(cc.namespace(|| "y"), w.map(|w| w.y[c]), bits)?;
                let da = stored(cc.namespace(|| "da"), w.map(|w| w.da[c]), bits)?;
                let rda = remainder(cc.namespace(|| "da_r"), w.map(|w| w.da_r[c]), s_u)?;
                let te = sub(
                    &add(&scale(&var(&da), fu(s_u)), &var(&rda)),
                    &cst::<CS>(fu(off_s)),
                );
                // top layer: dA = rescale_S(c·(A − Y))
                let loss_rhs = scale(&sub(&a, &var(&y)), c_loss);
                enforce_eq_if(cc.namespace(|| "loss"), &is_top, &te, &loss_rhs);
                // dZ = dA ⊙ (ReLU′ = s, or 1)
                let s_var = var(&s_al);
                let sel_m1 = mul(cc.namespace(|| "sel"), &is_relu, &sub(&s_var, &one))?;
                let sel = add(&one, &var(&sel_m1));
                let g = mul(cc.namespace(|| "dz"), &var(&da), &sel)?;
                zq.push(q);
                zr.push(rz);
                act.push(a);
                yv.push(y);
                dav.push(da);
                dar.push(rda);
                texpr.push(te);
                dz.push(g);
            }
        }
    }

    // ---- producer side: τA record, Aρ partial, input-gradient left-hand side, X and Y digests
    let mut cs_o = cs.namespace(|| "out");
    let mut am = Vec::with_capacity(bsz * r);
    for i in 0..bsz {
        for t in 0..r {
            am.push(var(&mul(
                cs_o.namespace(|| format!("am{i}_{t}")),
                &var(&rm[t]),
                &act[cell(i, t)],
            )?));
        }
    }
    let mut ta_rec = Vec::with_capacity(r);
    for t in 0..r {
        let mut s = zero();
        for i in 0..bsz {
            s = add(
                &s,
                &var(&mul(
                    cs_o.namespace(|| format!("ta{i}_{t}")),
                    &bw[i],
                    &am[cell(i, t)],
                )?),
            );
        }
        ta_rec.push(s);
    }
    let mut part_ar = Vec::with_capacity(bsz);
    let mut left = zero();
    for i in 0..bsz {
        let mut ap = zero();
        let mut lrow = zero();
        for t in 0..r {
            ap = add(
                &ap,
                &var(&mul(
                    cs_o.namespace(|| format!("ap{i}_{t}")),
                    &pw[t],
                    &am[cell(i, t)],
                )?),
            );
            let masked = mul(
                cs_o.namespace(|| format!("lm{i}_{t}")),
                &var(&rm[t]),
                &texpr[cell(i, t)],
            )?;
            lrow = add(
                &lrow,
                &var(&mul(
                    cs_o.namespace(|| format!("lp{i}_{t}")),
                    &pw[t],
                    &var(&masked),
                )?),
            );
        }
        part_ar.push(var(&mul(
            cs_o.namespace(|| format!("apo{i}")),
            &var(&rho_off),
            &ap,
        )?));
        left = add(
            &left,
            &var(&mul(cs_o.namespace(|| format!("lb{i}")), &bw[i], &lrow)?),
        );
    }
    let part_l = var(&mul(cs_o.namespace(|| "left_off"), &var(&rho_off), &left)?);
    let mut dx = zv(state::D_X);
    let mut dy = zv(state::D_Y);
    for t in 0..r {
        let col_x: Vec<Expr> = (0..bsz).map(|i| var(&zq[cell(i, t)])).collect();
        let col_y: Vec<Expr> = (0..bsz).map(|i| var(&yv[cell(i, t)])).collect();
        let ax = mul(cs_o.namespace(|| format!("ax{t}")), &var(&rm[t]), &is_input)?;
        let ay = mul(cs_o.namespace(|| format!("ay{t}")), &var(&rm[t]), &is_top)?;
        dx = var(&chain_absorb_if(
            cs_o.namespace(|| format!("dx{t}")),
            &var(&ax),
            &dx,
            &pack::<CS>(&col_x),
        )?);
        dy = var(&chain_absorb_if(
            cs_o.namespace(|| format!("dy{t}")),
            &var(&ay),
            &dy,
            &pack::<CS>(&col_y),
        )?);
    }
    drop(cs_o);

    // ---- consumer claims: τA and Aρ of the layer's input
    let mut cs_in = cs.namespace(|| "in");
    let ta_in: Vec<A> = (0..n)
        .map(|k| alloc(cs_in.namespace(|| format!("ta{k}")), w.map(|w| w.ta_in[k])))
        .collect::<Result<_, _>>()?;
    let ar_in: Vec<A> = (0..bsz)
        .map(|i| alloc(cs_in.namespace(|| format!("ar{i}")), w.map(|w| w.ar_in[i])))
        .collect::<Result<_, _>>()?;
    let ar_up: Vec<A> = (0..bsz)
        .map(|i| alloc(cs_in.namespace(|| format!("up{i}")), w.map(|w| w.ar_up[i])))
        .collect::<Result<_, _>>()?;
    // the vector is hashed whole (23 values a permutation) so that all folds
    // of the layer provably use the same one; its γ-combination is the claim
    // on the producing layer, checked when that layer's last tile settles
    let ta_vec: Vec<Expr> = ta_in.iter().map(var).collect();
    let dta = var(&chain_absorb(
        cs_in.namespace(|| "ta_digest"),
        &cst::<CS>(lay.ta_init()),
        &ta_vec,
    )?);
    let mut rlc = zero();
    for (k, t) in ta_vec.iter().enumerate() {
        rlc = add(
            &rlc,
            &var(&mul(cs_in.namespace(|| format!("ta_g{k}")), t, &gp[k])?),
        );
    }
    let not_first = sub(&one, &first);
    enforce_eq_if(
        cs_in.namespace(|| "ta_claim"),
        &not_first,
        &dta,
        &zv(state::CLAIM_TA),
    );
    let ar_vec: Vec<Expr> = ar_in.iter().map(var).collect();
    let dar_claim = var(&chain_absorb(
        cs_in.namespace(|| "ar_digest"),
        &cst::<CS>(lay.ar_init()),
        &ar_vec,
    )?);
    enforce_eq_if(
        cs_in.namespace(|| "ar_claim"),
        &not_first,
        &dar_claim,
        &zv(state::CLAIM_AR),
    );
    let up_vec: Vec<Expr> = ar_up.iter().map(var).collect();
    let dup = var(&chain_absorb(
        cs_in.namespace(|| "up_digest"),
        &cst::<CS>(lay.ar_init()),
        &up_vec,
    )?);
    let first_not_top = mul(
        cs_in.namespace(|| "first_not_top"),
        &first,
        &sub(&one, &is_top),
    )?;
    enforce_eq_if(
        cs_in.namespace(|| "up_claim"),
        &var(&first_not_top),
        &dup,
        &zv(state::CLAIM_AR),
    );
    drop(cs_in);

    // ---- weight rows: forward identity, update, gradient identities, commitments
    let mut hb = zv(state::H_BEFORE);
    let mut ha = zv(state::H_AFTER);
    let mut part_r = zero();
    let mut t_vals: Vec<Expr> = Vec::new();
    let mut wt_vals: Vec<Expr> = Vec::new(); // ρ-tested per-weight values for the transcript
    {
        let mut cs_w = cs.namespace(|| "rows");
        for t in 0..r {
            let mut cr = cs_w.namespace(|| format!("row{t}"));
            let ix = |k: usize| t * n + k;
            let mut wrow = Vec::with_capacity(n);
            let mut wnew = Vec::with_capacity(n);
            let mut vrow = Vec::new();
            let mut vnew = Vec::new();
            let mut f2 = zero();
            let mut f1r = zero();
            let mut wrho = zero();
            for k in 0..n {
                let mut ck = cr.namespace(|| format!("k{k}"));
                let wa = stored(ck.namespace(|| "w"), w.map(|w| w.w[ix(k)]), bits)?;
                let wn = stored(ck.namespace(|| "w_new"), w.map(|w| w.w_new[ix(k)]), bits)?;
                let q = sub(&var(&wa), &var(&wn)); // the update's quotient: a difference of two range-checked values
                let e = if momentum {
                    let v = stored(ck.namespace(|| "v"), w.map(|w| w.vw[ix(k)]), bits)?;
                    let vn = stored(ck.namespace(|| "v_new"), w.map(|w| w.vw_new[ix(k)]), bits)?;
                    let mvq = stored(ck.namespace(|| "mv_q"), w.map(|w| w.mv_q[ix(k)]), bits)?;
                    rescale_with_q(
                        ck.namespace(|| "mu_v"),
                        &scale(&var(&v), fi(mu)),
                        s_u,
                        off_s,
                        &var(&mvq),
                        w.map(|w| fi(w.mv_r[ix(k)])),
                    )?;
                    let dwq = stored(ck.namespace(|| "dw_q"), w.map(|w| w.dw_q[ix(k)]), bits)?;
                    let dwr = remainder(ck.namespace(|| "dw_r"), w.map(|w| w.dw_r[ix(k)]), s_u)?;
                    enforce_eq(
                        ck.namespace(|| "v_new=mv+dw"),
                        &var(&vn),
                        &add(&var(&mvq), &var(&dwq)),
                    );
                    rescale_with_q(
                        ck.namespace(|| "lr_v"),
                        &scale(&var(&vn), fi(lr)),
                        s_u,
                        off_s,
                        &q,
                        w.map(|w| fi(w.upd_r[ix(k)])),
                    )?;
                    wt_vals.push(var(&dwq));
                    wt_vals.push(var(&dwr));
                    vrow.push(var(&v));
                    vnew.push(var(&vn));
                    // S·dW + r − off = dW_acc
                    sub(
                        &add(&scale(&var(&dwq), fu(s_u)), &var(&dwr)),
                        &cst::<CS>(fu(off_s)),
                    )
                } else {
                    let ur = remainder(
                        ck.namespace(|| "upd_r"),
                        w.map(|w| w.upd_r[ix(k)]),
                        SCALE_SQ as u128,
                    )?;
                    wt_vals.push(var(&ur));
                    // S²·(W − W') + r − off = lr·dW_acc
                    sub(
                        &add(&scale(&q, fu(SCALE_SQ as u128)), &var(&ur)),
                        &cst::<CS>(fu(off_sq)),
                    )
                };
                f2 = add(&f2, &var(&mul(ck.namespace(|| "f2"), &pw[k], &e)?));
                f1r = add(
                    &f1r,
                    &var(&mul(ck.namespace(|| "f1"), &var(&ta_in[k]), &var(&wa))?),
                );
                wrho = add(
                    &wrho,
                    &var(&mul(ck.namespace(|| "wrho"), &pw[k], &var(&wa))?),
                );
                wrow.push(var(&wa));
                wnew.push(var(&wn));
            }
            // bias
            let b = stored(cr.namespace(|| "b"), w.map(|w| w.b[t]), bits)?;
            let bn = stored(cr.namespace(|| "b_new"), w.map(|w| w.b_new[t]), bits)?;
            let db = (0..bsz).fold(zero(), |acc, i| add(&acc, &var(&dz[cell(i, t)])));
            let bq = sub(&var(&b), &var(&bn));
            let (vb, vbn) = if momentum {
                let vb = stored(cr.namespace(|| "vb"), w.map(|w| w.vb[t]), bits)?;
                let vbn = stored(cr.namespace(|| "vb_new"), w.map(|w| w.vb_new[t]), bits)?;
                let mvb = stored(cr.namespace(|| "mvb_q"), w.map(|w| w.mvb_q[t]), bits)?;
                rescale_with_q(
                    cr.namespace(|| "mu_vb"),
                    &scale(&var(&vb), fi(mu)),
                    s_u,
                    off_s,
                    &var(&mvb),
                    w.map(|w| fi(w.mvb_r[t])),
                )?;
                enforce_eq(
                    cr.namespace(|| "vb_new=mvb+db"),
                    &var(&vbn),
                    &add(&var(&mvb), &db),
                );
                rescale_with_q(
                    cr.namespace(|| "lr_vb"),
                    &scale(&var(&vbn), fi(lr)),
                    s_u,
                    off_s,
                    &bq,
                    w.map(|w| fi(w.bu_r[t])),
                )?;
                (Some(vb), Some(vbn))
            } else {
                rescale_with_q(
                    cr.namespace(|| "lr_db"),
                    &scale(&db, fi(lr)),
                    s_u,
                    off_s,
                    &bq,
                    w.map(|w| fi(w.bu_r[t])),
                )?;
                (None, None)
            };
            // F1 forward: Σ_i ρ^{i·n}(S·Z + r − off − S·b) = Σ_k τA[k]·W[k]
            let mut f1l = zero();
            let mut f2r = zero();
            let mut dzt = zero();
            for i in 0..bsz {
                let c = cell(i, t);
                let ez = lin(&[
                    (fu(s_u), &var(&zq[c])),
                    (Fr::ONE, &var(&zr[c])),
                    (-fu(off_s), &one),
                    (-fu(s_u), &var(&b)),
                ]);
                f1l = add(
                    &f1l,
                    &var(&mul(cr.namespace(|| format!("f1l{i}")), &bw[i], &ez)?),
                );
                f2r = add(
                    &f2r,
                    &var(&mul(
                        cr.namespace(|| format!("f2r{i}")),
                        &var(&dz[c]),
                        &var(&ar_in[i]),
                    )?),
                );
                dzt = add(
                    &dzt,
                    &var(&mul(
                        cr.namespace(|| format!("dzt{i}")),
                        &bw[i],
                        &var(&dz[c]),
                    )?),
                );
            }
            enforce_eq_if(cr.namespace(|| "forward"), &var(&roww[t]), &f1l, &f1r);
            // F2 weight gradient: Σ_k ρ^k·e_k = (lr)·Σ_i dZ[i]·Aρ[i]
            let f2r = if momentum { f2r } else { scale(&f2r, fi(lr)) };
            enforce_eq_if(cr.namespace(|| "weight_grad"), &var(&roww[t]), &f2, &f2r);
            // F3 input gradient, right-hand side: (Σ_i ρ^{i·n} dZ[i])·(Σ_k ρ^k W[k])
            let pr = mul(cr.namespace(|| "f3"), &dzt, &wrho)?;
            part_r = add(
                &part_r,
                &var(&mul(cr.namespace(|| "f3m"), &var(&roww[t]), &var(&pr))?),
            );
            // commitments: W row ‖ b (‖ vW row ‖ vb), the native record order
            let mut rec_b = wrow.clone();
            rec_b.push(var(&b));
            let mut rec_a = wnew.clone();
            rec_a.push(var(&bn));
            if let (Some(vb), Some(vbn)) = (vb, vbn) {
                rec_b.extend(vrow);
                rec_b.push(var(&vb));
                rec_a.extend(vnew);
                rec_a.push(var(&vbn));
            }
            hb = var(&chain_absorb_if(
                cr.namespace(|| "c_before"),
                &var(&roww[t]),
                &hb,
                &pack::<CS>(&rec_b),
            )?);
            ha = var(&chain_absorb_if(
                cr.namespace(|| "c_after"),
                &var(&roww[t]),
                &ha,
                &pack::<CS>(&rec_a),
            )?);
        }
    }
    t_vals.extend(zq.iter().map(var));
    t_vals.extend(zr.iter().map(var));
    t_vals.extend(dav.iter().map(var));
    t_vals.extend(dar.iter().map(var));
    t_vals.extend(wt_vals);

    // ---- state update
    let mut cs_s = cs.namespace(|| "state");
    // Σ_t τA_rec[t]·γ^{j0+t} added to the layer's running sum
    let mut prod = var(&mul(
        cs_s.namespace(|| "ta_base"),
        &sub(&one, &first),
        &zv(state::PROD_TA),
    )?);
    for (t, rec) in ta_rec.iter().enumerate() {
        let g = mul(cs_s.namespace(|| format!("g_off{t}")), &var(&g_off), &gp[t])?;
        prod = add(
            &prod,
            &var(&mul(
                cs_s.namespace(|| format!("prod_ta{t}")),
                rec,
                &var(&g),
            )?),
        );
    }
    let prod_ta = materialise(cs_s.namespace(|| "prod_ta"), &prod)?;
    let out_ta = select(
        cs_s.namespace(|| "out_ta"),
        &first,
        &zv(state::CLAIM_RLC),
        &zv(state::OUT_TA),
    )?;
    // the batch salt: opens c_batch at the last fold, and salts both
    // transcripts (their final values are public; the salt keeps them hiding)
    let salt = alloc(cs_s.namespace(|| "salt"), w.map(|w| w.salt))?;
    // the second transcript takes every fold's consumed-vector digest
    let t2_new = chain_absorb(
        cs_s.namespace(|| "transcript2"),
        &zv(state::T2),
        &[dta.clone(), var(&salt)],
    )?;
    let mut rem_ar = Vec::with_capacity(bsz);
    for i in 0..bsz {
        let base = select(
            cs_s.namespace(|| format!("ar_base{i}")),
            &first,
            &var(&ar_up[i]),
            &zv(state::REM_AR + i),
        )?;
        rem_ar.push(materialise(
            cs_s.namespace(|| format!("rem_ar{i}")),
            &sub(&var(&base), &part_ar[i]),
        )?);
    }
    let da_base = select(
        cs_s.namespace(|| "da_base"),
        &first,
        &zv(state::ACC_R),
        &zv(state::REM_DA),
    )?;
    let rem_da = materialise(cs_s.namespace(|| "rem_da"), &sub(&var(&da_base), &part_l))?;
    let acc_keep = mul(cs_s.namespace(|| "acc_keep"), &not_first, &zv(state::ACC_R))?;
    let acc_r = materialise(cs_s.namespace(|| "acc_r"), &add(&var(&acc_keep), &part_r))?;
    // a layer's last tile settles the claims the layer above made about its output
    let settle = mul(cs_s.namespace(|| "settle"), &last, &sub(&one, &is_top))?;
    enforce_eq_if(
        cs_s.namespace(|| "ta_settled"),
        &var(&settle),
        &var(&prod_ta),
        &var(&out_ta),
    );
    for (i, ra) in rem_ar.iter().enumerate() {
        enforce_eq_if(
            cs_s.namespace(|| format!("ar_settled{i}")),
            &var(&settle),
            &var(ra),
            &zero(),
        );
    }
    let settle_da = mul(cs_s.namespace(|| "settle_da"), &var(&settle), &not_input)?;
    enforce_eq_if(
        cs_s.namespace(|| "da_settled"),
        &var(&settle_da),
        &var(&rem_da),
        &zero(),
    );
    // transcript
    let mut t_rec = pack::<CS>(&t_vals);
    t_rec.push(var(&salt));
    let t_new = chain_absorb(cs_s.namespace(|| "transcript"), &zv(state::T), &t_rec)?;
    // the last fold opens c_batch
    let mut cb_in = vec![
        cst::<CS>(Fr::from(DOMAIN_BATCH)),
        zv(state::SPEC),
        var(&salt),
        dx.clone(),
        dy.clone(),
    ];
    cb_in.resize(24, zero());
    let cb = h24(cs_s.namespace(|| "c_batch"), &cb_in)?;
    enforce_eq_if(
        cs_s.namespace(|| "c_batch_opened"),
        &is_final,
        &var(&cb),
        &zv(state::C_BATCH),
    );
    let mut out: Vec<A> = z.to_vec();
    out[state::SCHED] = sched;
    out[state::H_BEFORE] = materialise(cs_s.namespace(|| "hb"), &hb)?;
    out[state::H_AFTER] = materialise(cs_s.namespace(|| "ha"), &ha)?;
    out[state::T] = t_new;
    out[state::D_X] = materialise(cs_s.namespace(|| "dx"), &dx)?;
    out[state::D_Y] = materialise(cs_s.namespace(|| "dy"), &dy)?;
    out[state::CLAIM_TA] = materialise(cs_s.namespace(|| "claim_ta"), &dta)?;
    out[state::OUT_TA] = out_ta;
    out[state::PROD_TA] = prod_ta;
    out[state::CLAIM_AR] = materialise(cs_s.namespace(|| "claim_ar"), &dar_claim)?;
    out[state::REM_DA] = rem_da;
    out[state::ACC_R] = acc_r;
    out[state::RHO_OFF] = rho_off;
    out[state::T2] = t2_new;
    out[state::CLAIM_RLC] = materialise(cs_s.namespace(|| "claim_rlc"), &rlc)?;
    out[state::G_OFF] = g_off;
    for (i, ra) in rem_ar.into_iter().enumerate() {
        out[state::REM_AR + i] = ra;
    }
    // the verifier sees z_n: the last fold clears every slot that carries
    // private values (digests of X and Y, τA/Aρ claims, accumulators)
    let not_final = sub(&one, &is_final);
    for i in lay.private_slots() {
        out[i] = mul(
            cs_s.namespace(|| format!("clear{i}")),
            &not_final,
            &var(&out[i]),
        )?;
    }
    Ok(out)
}
