//! The Adam/AdamW element update. Native twin:
//! `zkstep_core::optim::adam::adam_element`.
//!
//! Per parameter, with the step's constants k₁ (= lr/bc₁) and c₂
//! (= 1/√bc₂) given as expressions (they change with the step while the
//! key does not, so a fold will read them from statement slots the verifier
//! derives from t):
//! - the decay (AdamW, by S², remainder in the class of lr·λ) or the L2 term
//!   (Adam, by S), its quotient range-checked;
//! - `m'` and `v'` stored (range-checked; both at scale S²) with their
//!   rescales' remainders checked from both sides;
//! - `round(√(v'·S²))` (√v' at scale S²: [`isqrt`] of 4·v'·S², then halved
//!   with a boolean carry), `den = rescale_S(√·c₂) + ε·S` at scale S²
//!   (quotient range-checked; ≥ ε·S ≥ S since both factors are ≥ 0);
//! - `Δ` by [`div_rem`] of `2·k₁·m' + off` by `2·den`, and `θ' = θ − decay − Δ`.
//!
//!
//! In a fold ([`Adam`], the spec's [`UpdateGadget`]) a weight's gradient is
//! `rescale_S(dW_acc)` (tested through F2 like momentum's) and a bias's is
//! `db`; k₁ and c₂ are the state's Adam slots, which the verifier fills from
//! the statement's step; m and v are committed beside θ (before and after).

use super::{rescaled_gradient, BiasOut, RowUpdate, UpdateGadget, WeightOut};
use crate::fold::ctx::Ctx;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_core::fixed::{RemainderClass, Rounding, SCALE_I128, SCALE_SQ};
use zkstep_core::optim::adam::{AdamHyper, AdamLayerTrace, AdamTrace};
use zkstep_core::poseidon::fr_from_i128;
use zkstep_core::StateTensor;
use zkstep_gadgets::arith::{div_rem, isqrt};
use zkstep_gadgets::expr::{
    add, alloc, cst, enforce_bool, enforce_eq, mul, scale, sub, var, zero, Expr, Fr,
};
use zkstep_gadgets::fixed::{alloc_stored, rescale_with_q};
use zkstep_gadgets::range::{bit_len, RangeCheck};

/// One element's Adam witness: the state before and the native trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdamWitness {
    /// First moment before.
    pub m: i64,
    /// Second moment before.
    pub v: i64,
    /// What the update computed.
    pub trace: AdamTrace,
}

/// What the element gadget gives back.
pub struct AdamOut {
    /// The moments after, `[m', v']` (committed beside θ').
    pub state_new: Vec<Expr>,
    /// The moments before, `[m, v]` (committed beside θ).
    pub state: Vec<Expr>,
}

fn f(v: i128) -> Fr {
    fr_from_i128(v)
}

/// Constrain one parameter's Adam/AdamW update from θ to θ' (both already
/// range-checked by the caller) given its gradient g at scale S, the step's
/// k₁ and c₂, and stored values of `bits` signed bits.
#[allow(clippy::too_many_arguments)]
pub fn adam_element<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    h: &AdamHyper,
    rounding: Rounding,
    bits: u32,
    (k1, c2): (&Expr, &Expr),
    (theta, theta_new, g): (&Expr, &Expr, &Expr),
    w: Option<&AdamWitness>,
) -> Result<AdamOut, SynthesisError> {
    let s = SCALE_I128;
    let su = s as u128;
    let off = |d: i128| rounding.offset(d) as u128;
    let tr = w.map(|w| &w.trace);
    let m = alloc_stored(cs.namespace(|| "m"), rc, w.map(|w| w.m), bits)?;
    let v = alloc_stored(cs.namespace(|| "v"), rc, w.map(|w| w.v), bits)?;

    // weight decay: AdamW's decay of θ, or Adam's L2 term in the gradient
    let wd = h.weight_decay_fx as i128;
    let (decay, g_e) = if wd == 0 {
        (zero(), g.clone())
    } else {
        let (c, d) = if h.decoupled {
            (h.lr_fx as i128 * wd, s * s)
        } else {
            (wd, s)
        };
        let q_val = tr.map(|t| if h.decoupled { t.decay } else { t.l2 } as i64);
        let q = alloc_stored(cs.namespace(|| "wd_q"), rc, q_val, decay_bits(c, d, bits))?;
        rescale_with_q(
            cs.namespace(|| "wd"),
            rc,
            &scale(theta, f(c)),
            RemainderClass::new(c, d as u128, off(d)),
            &var(&q),
            tr.map(|t| f(t.wd_rem)),
        )?;
        if h.decoupled {
            (var(&q), g.clone())
        } else {
            (zero(), add(g, &var(&q)))
        }
    };

    // m' = rescale_S(β₁·m + (S − β₁)·g·S), m at scale S²
    let (b1, b2) = (h.beta1_fx as i128, h.beta2_fx as i128);
    let m_new = alloc_stored(cs.namespace(|| "m_new"), rc, tr.map(|t| t.m as i64), bits)?;
    let zm = add(&scale(&var(&m), f(b1)), &scale(&g_e, f((s - b1) * s)));
    rescale_with_q(
        cs.namespace(|| "m_rescale"),
        rc,
        &zm,
        RemainderClass::any(su, off(s)),
        &var(&m_new),
        tr.map(|t| f(t.m_rem)),
    )?;

    // v' = rescale_S(β₂·v + (S − β₂)·g²), v at scale S²
    let g2 = mul(cs.namespace(|| "g_sq"), &g_e, &g_e)?;
    let v_new = alloc_stored(cs.namespace(|| "v_new"), rc, tr.map(|t| t.v as i64), bits)?;
    let zv = add(&scale(&var(&v), f(b2)), &scale(&var(&g2), f(s - b2)));
    rescale_with_q(
        cs.namespace(|| "v_rescale"),
        rc,
        &zv,
        RemainderClass::any(su, off(s)),
        &var(&v_new),
        tr.map(|t| f(t.v_rem)),
    )?;

    // round(√(v'·S²)) (√v' at scale S²): fl = ⌊√(4·v'·S²)⌋ (v' < 2^(bits−1)
    // and 4·S² < 2⁶², so 4·v'·S² < 2^(bits+61); isqrt also forces v' ≥ 0),
    // then fl + 1 = 2·root + c with c boolean: root = ⌊(fl + 1)/2⌋
    let root = {
        let mut cs = cs.namespace(|| "sqrt");
        let four = scale(&var(&v_new), f(4 * s * s));
        let fl_val = tr.map(|t| zkstep_core::fixed::isqrt((4 * s * s * t.v.max(0)) as u128));
        let fl = isqrt(cs.namespace(|| "floor"), rc, &four, bits + 61, fl_val)?;
        let root = alloc(cs.namespace(|| "root"), tr.map(|t| f(t.sqrt_v)))?;
        let c = alloc(
            cs.namespace(|| "half"),
            fl_val.zip(tr).map(|(fl, t)| f(fl as i128 + 1 - 2 * t.sqrt_v)),
        )?;
        enforce_bool(cs.namespace(|| "half_bool"), &var(&c));
        enforce_eq(
            cs.namespace(|| "round"),
            &add(&var(&fl), &cst::<CS>(Fr::from(1u64))),
            &add(&scale(&var(&root), Fr::from(2u64)), &var(&c)),
        );
        root
    };

    // den = rescale_S(root·c₂) + ε·S, at scale S²
    let rc2 = mul(cs.namespace(|| "root_c2"), &var(&root), c2)?;
    let den_q_bits = den_q_bits(bits);
    let eps_s = h.eps_fx as i128 * s;
    let den_q = alloc(cs.namespace(|| "den_q"), tr.map(|t| f(t.den - eps_s)))?;
    rc.bits(cs.namespace(|| "den_q_range"), &var(&den_q), den_q_bits)?;
    rescale_with_q(
        cs.namespace(|| "den_rescale"),
        rc,
        &var(&rc2),
        RemainderClass::any(su, off(s)),
        &var(&den_q),
        tr.map(|t| f(t.den_rem)),
    )?;
    let den = add(&var(&den_q), &cst::<CS>(f(eps_s)));
    let two_den = scale(&den, Fr::from(2u64));

    // Δ: 2·k₁·m' + off = Δ·(2·den) + r, off = den (half-up) or 0
    let k1m = mul(cs.namespace(|| "k1_m"), k1, &var(&m_new))?;
    let twice = scale(&var(&k1m), Fr::from(2u64));
    let num = match rounding {
        Rounding::HalfUp => add(&twice, &den),
        Rounding::Floor => twice,
    };
    // 2·den ≤ 2·(2^den_q_bits − 1 + ε·S)
    let two_den_max = 2 * ((1u128 << den_q_bits) - 1 + eps_s as u128);
    let (delta, _) = div_rem(
        cs.namespace(|| "delta"),
        rc,
        &num,
        &two_den,
        bit_len(two_den_max),
        bits,
        tr.map(|t| t.delta),
        tr.map(|t| t.delta_rem),
    )?;
    enforce_eq(
        cs.namespace(|| "theta_new"),
        theta_new,
        &sub(&sub(theta, &decay), &var(&delta)),
    );
    Ok(AdamOut {
        state: vec![var(&m), var(&v)],
        state_new: vec![var(&m_new), var(&v_new)],
    })
}

/// The width of `den_q = rescale_S(round(√(v'·S²))·c₂)`, unsigned: the
/// root is at most 2^h·S (h = ⌈bits/2⌉, v' < 2^(bits−1)) and
/// c₂ = rescale_{√bc₂}(S²) ≤ S²/isqrt(S) + 1 < 2^45 at every step (bc₂ ≥ 1;
/// the verifier supplies c₂), so den_q < 2^h·2^45 + 1 < 2^(h+46): every
/// honest element fits (den is not a stored value, so the executor needs no
/// check of its own); at 64 value bits 78 (five limbs).
pub fn den_q_bits(bits: u32) -> u32 {
    bits.div_ceil(2) + 46
}

/// The signed width of the weight decay's quotient `rescale_d(c·θ)` for a θ
/// of `bits` signed bits: |q| ≤ c·2^(bits−1)/d + 1, never wider than the
/// declared range (which the executor requires of it, so both accept the
/// same steps). AdamW's default (lr·λ = 10⁻⁵, d = S²) needs 48 bits.
pub fn decay_bits(c: i128, d: i128, bits: u32) -> u32 {
    let bound = (c.unsigned_abs())
        .checked_mul(1u128 << (bits - 1))
        .map(|n| n.div_ceil(d as u128) + 1);
    bound.map_or(bits, |b| (bit_len(b) + 1).min(bits))
}

/// One weight's (or bias's) Adam values in a fold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdamWeight {
    /// `dW = rescale_S(dW_acc)` (unused for a bias).
    pub dw_q: i64,
    /// Its remainder (unused for a bias).
    pub dw_r: i64,
    /// The element's moments and trace.
    pub el: AdamWitness,
}

/// A row's Adam witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdamRow {
    /// Per weight (n_max, padded).
    pub weights: Vec<AdamWeight>,
    /// The bias.
    pub bias: AdamWeight,
}

impl AdamRow {
    /// A padding row: θ, moments and gradient zero. Its trace is the same at
    /// every step (m' = 0 and √v' = 0 cancel k₁ and c₂): every remainder is
    /// its rescale's offset and the denominator is ε.
    pub fn padding(n: usize, h: &AdamHyper, rounding: Rounding) -> Self {
        let off = |d: i128| rounding.offset(d);
        let den = h.eps_fx as i128 * SCALE_I128;
        let trace = AdamTrace {
            decay: 0,
            l2: 0,
            wd_rem: off(if h.decoupled { SCALE_SQ } else { SCALE_I128 }),
            g: 0,
            m: 0,
            m_rem: off(SCALE_I128),
            v: 0,
            v_rem: off(SCALE_I128),
            sqrt_v: 0,
            den,
            den_rem: off(SCALE_I128),
            delta: 0,
            delta_rem: off(2 * den),
            theta: 0,
        };
        let w = AdamWeight {
            dw_q: 0,
            dw_r: off(SCALE_I128) as i64,
            el: AdamWitness { m: 0, v: 0, trace },
        };
        AdamRow {
            weights: vec![w; n],
            bias: w,
        }
    }

    /// Fill row j's values from the layer's trace and its moments before
    /// (`m`, `v`: the checkpoint's state tensors): weights `k0 …` of the
    /// row, and the bias on the row's last segment.
    pub fn fill(
        &mut self,
        t: &AdamLayerTrace,
        j: usize,
        (m, v): (&StateTensor, &StateTensor),
        (k0, last_seg): (usize, bool),
    ) {
        let n_in = m.w.cols;
        for (c, w) in self.weights.iter_mut().enumerate() {
            let k = k0 + c;
            if k >= n_in {
                break;
            }
            let e = j * n_in + k;
            *w = AdamWeight {
                dw_q: t.dw[e],
                dw_r: t.dw_rem[e],
                el: AdamWitness {
                    m: m.w.data[e],
                    v: v.w.data[e],
                    trace: t.w[e],
                },
            };
        }
        if last_seg {
            self.bias.el = AdamWitness {
                m: m.b[j],
                v: v.b[j],
                trace: t.b[j],
            };
        }
    }
}

/// The Adam/AdamW gadget of a fold.
pub(crate) struct Adam {
    /// The hyper-parameters.
    pub h: AdamHyper,
}

impl Adam {
    /// k₁ and c₂ from the state's Adam slots.
    fn constants(ctx: &Ctx) -> Result<(Expr, Expr), SynthesisError> {
        let a = ctx
            .lay
            .slots
            .adam
            .ok_or(SynthesisError::AssignmentMissing)?;
        Ok((ctx.z(a.k1), ctx.z(a.c2)))
    }

    /// One element with gradient `g`.
    #[allow(clippy::too_many_arguments)]
    fn element<CS: ConstraintSystem<Fr>, R: RangeCheck>(
        &self,
        cs: CS,
        rc: &mut R,
        ctx: &Ctx,
        theta: (&Expr, &Expr),
        g: &Expr,
        w: Option<&AdamWeight>,
    ) -> Result<AdamOut, SynthesisError> {
        let (k1, c2) = Self::constants(ctx)?;
        adam_element(
            cs,
            rc,
            &self.h,
            ctx.lay.spec.rounding,
            ctx.bits,
            (&k1, &c2),
            (theta.0, theta.1, g),
            w.map(|w| &w.el),
        )
    }
}

impl UpdateGadget for Adam {
    type Row = AdamRow;

    fn row(u: &RowUpdate) -> Option<&AdamRow> {
        match u {
            RowUpdate::Adam(r) => Some(r),
            _ => None,
        }
    }

    fn weight<CS: ConstraintSystem<Fr>, R: RangeCheck>(
        &self,
        mut cs: CS,
        rc: &mut R,
        ctx: &Ctx,
        w: &Expr,
        w_new: &Expr,
        row: Option<&AdamRow>,
        k: usize,
    ) -> Result<WeightOut, SynthesisError> {
        let wt = row.map(|r| &r.weights[k]);
        let (dw_q, _, grad_term) =
            rescaled_gradient(&mut cs, rc, ctx, wt.map(|w| (w.dw_q, w.dw_r)))?;
        let out = self.element(cs.namespace(|| "adam"), rc, ctx, (w, w_new), &dw_q, wt)?;
        Ok(WeightOut {
            grad_term,
            state: out.state,
            state_new: out.state_new,
        })
    }

    fn bias<CS: ConstraintSystem<Fr>, R: RangeCheck>(
        &self,
        mut cs: CS,
        rc: &mut R,
        ctx: &Ctx,
        b: &Expr,
        b_new: &Expr,
        db: &Expr,
        row: Option<&AdamRow>,
    ) -> Result<BiasOut, SynthesisError> {
        let out = self.element(
            cs.namespace(|| "adam_b"),
            rc,
            ctx,
            (b, b_new),
            db,
            row.map(|r| &r.bias),
        )?;
        Ok(BiasOut {
            state: out.state,
            state_new: out.state_new,
        })
    }

    fn gradient_factor(&self) -> Option<Fr> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use zkstep_core::optim::adam::{adam_element as native, AdamState, AdamStep};
    use zkstep_gadgets::range::BitDecomposition;

    /// Inputs [`synth`] allocates before the gadget's own variables.
    const INPUTS: usize = 5;

    /// Allocate k₁, c₂, θ, θ' and g, then the element gadget with witness `w`.
    fn synth<CS: ConstraintSystem<Fr>>(
        cs: &mut CS,
        h: &AdamHyper,
        k: &AdamStep,
        st: AdamState,
        (g, theta_new): (i128, i128),
        w: &AdamWitness,
    ) {
        let mut a =
            |name: &'static str, x: i128| var(&alloc(cs.namespace(|| name), Some(f(x))).unwrap());
        let (k1, c2) = (a("k1", k.k1), a("c2", k.c2));
        let (th, thn, ge) = (a("theta", st.theta), a("theta_new", theta_new), a("g", g));
        adam_element(
            cs.namespace(|| "adam"),
            &mut BitDecomposition,
            h,
            Rounding::HalfUp,
            64,
            (&k1, &c2),
            (&th, &thn, &ge),
            Some(w),
        )
        .unwrap();
    }

    type Edit = dyn Fn(&mut AdamWitness, &mut i128);

    /// Run the gadget on a native update with a mutation of its witness (and
    /// of θ'); returns (satisfied, the failing namespace, constraints).
    fn run(
        h: &AdamHyper,
        t: u64,
        st: AdamState,
        g: i128,
        edit: &Edit,
    ) -> (bool, Option<String>, usize) {
        let k = AdamStep::at(h, t, Rounding::HalfUp).unwrap();
        let trace = native(h, &k, Rounding::HalfUp, st, g).unwrap();
        let mut w = AdamWitness {
            m: st.m as i64,
            v: st.v as i64,
            trace,
        };
        let mut theta_new = trace.theta;
        edit(&mut w, &mut theta_new);
        let mut cs = TestConstraintSystem::<Fr>::new();
        synth(&mut cs, h, &k, st, (g, theta_new), &w);
        (
            cs.is_satisfied(),
            cs.which_is_unsatisfied().map(String::from),
            cs.num_constraints(),
        )
    }

    #[test]
    fn adam_element_agrees_with_native_and_rejects_mutations() {
        let states = [
            (
                AdamState {
                    theta: 0,
                    m: 0,
                    v: 0,
                },
                250_000_000i128,
                1u64,
            ),
            (
                AdamState {
                    theta: -123_456_789,
                    m: 3_000_000,
                    v: 40_000,
                },
                -77_777_777,
                5,
            ),
            (
                AdamState {
                    theta: 987_654_321,
                    m: -12_345,
                    v: 1,
                },
                0,
                1000,
            ),
        ];
        for decoupled in [false, true] {
            let mut h = AdamHyper::pytorch_default(decoupled);
            h.weight_decay_fx = 10_000_000;
            for (st, g, t) in states {
                let (ok, which, cost) = run(&h, t, st, g, &|_, _| {});
                assert!(ok, "{st:?}: {which:?}");
                eprintln!("adam (decoupled {decoupled}): {cost} constraints an element");
                // a quotient one lower with its remainder one divisor
                // higher satisfies the rescale's equation: its remainder's
                // range check is what rejects it (issue 30, finding 12)
                let s = SCALE_I128;
                let wd_d = if decoupled { s * s } else { s };
                // one past the narrowed widths (issue 26): den_q at
                // 2^den_q_bits, the decay's quotient at 2^(w−1)
                let dq = den_q_bits(64);
                assert_eq!(dq, 78);
                let (c, d) = if decoupled {
                    (h.lr_fx as i128 * h.weight_decay_fx as i128, s * s)
                } else {
                    (h.weight_decay_fx as i128, s)
                };
                let wq = decay_bits(c, d, 64);
                assert_eq!(wq, if decoupled { 48 } else { 58 });
                let wrong: [(&str, &str, &Edit); 13] = [
                    ("den_q = 2^78", "den_q_range", &move |w, _| {
                        w.trace.den = (1 << dq) + h.eps_fx as i128 * s;
                    }),
                    ("decay or L2 quotient one past its width", "wd_q/range", &move |w, _| {
                        if decoupled {
                            w.trace.decay = 1 << (wq - 1);
                        } else {
                            w.trace.l2 = 1 << (wq - 1);
                        }
                    }),
                    ("θ' + 1", "theta_new", &|_, th| *th += 1),
                    ("m' + 1", "m_rescale", &|w, _| w.trace.m += 1),
                    ("v' + 1", "v_rescale", &|w, _| w.trace.v += 1),
                    ("√ + 1", "sqrt/half_bool", &|w, _| w.trace.sqrt_v += 1),
                    ("√ − 1", "sqrt/half_bool", &|w, _| w.trace.sqrt_v -= 1),
                    ("decay or L2 − 1, r + d", "wd", &move |w, th| {
                        if decoupled {
                            w.trace.decay -= 1;
                            *th += 1;
                        } else {
                            w.trace.l2 -= 1;
                        }
                        w.trace.wd_rem += wd_d;
                    }),
                    ("m' − 1, r + S", "m_rescale", &move |w, _| {
                        w.trace.m -= 1;
                        w.trace.m_rem += s;
                    }),
                    ("v' − 1, r + S", "v_rescale", &move |w, _| {
                        w.trace.v -= 1;
                        w.trace.v_rem += s;
                    }),
                    ("den − 1, r + S", "den_rescale", &move |w, _| {
                        w.trace.den -= 1;
                        w.trace.den_rem += s;
                    }),
                    ("Δ + 1 with θ' − 1", "delta/div", &|w, th| {
                        w.trace.delta += 1;
                        *th -= 1;
                    }),
                    ("Δ − 1, r + 2·den", "delta/r_lt_d", &|w, th| {
                        w.trace.delta -= 1;
                        w.trace.delta_rem += 2 * w.trace.den;
                        *th += 1;
                    }),
                ];
                for (what, place, edit) in wrong {
                    let (ok, which, _) = run(&h, t, st, g, edit);
                    assert!(!ok, "{st:?} decoupled {decoupled}: {what} accepted");
                    let which = which.unwrap_or_default();
                    assert!(which.contains(place), "{what}: failed at {which}");
                }
            }
        }
    }

    /// [`den_q_bits`]' premise: c₂ < 2^45 at every step, largest where
    /// bc₂ = 1 (β₂ = 1 − 10⁻⁹ at t = 1); there, with v' near the top of its
    /// range, the honest element still fits.
    #[test]
    fn c2_stays_below_2_to_the_45_and_the_largest_denominator_fits() {
        let mut h = AdamHyper::pytorch_default(false);
        for rounding in [Rounding::HalfUp, Rounding::Floor] {
            for t in [1u64, 2, 10, 1000, 1 << 20, 1 << 40] {
                let k = AdamStep::at(&h, t, rounding).unwrap();
                assert!(k.c2 < 1 << 45, "t {t}: {}", k.c2);
            }
        }
        h.beta2_fx = 999_999_999;
        for rounding in [Rounding::HalfUp, Rounding::Floor] {
            let k = AdamStep::at(&h, 1, rounding).unwrap();
            assert_eq!(k.bc2, 1);
            assert!(k.c2 > 1 << 44 && k.c2 < 1 << 45, "{}", k.c2);
        }
        let st = AdamState {
            theta: 1,
            m: 5_000_000_000_000_000_000 / 2,
            v: 9_000_000_000_000_000_000,
        };
        let (ok, which, _) = run(&h, 1, st, 0, &|w, _| {
            assert!(w.trace.den - 1 > 1 << 45, "a large denominator: {}", w.trace.den);
        });
        assert!(ok, "{which:?}");
    }

    /// Every private variable of the element gadget is pinned (both variants).
    #[test]
    fn no_witness_of_the_adam_element_is_free() {
        use zkstep_gadgets::testing::Rec;
        for decoupled in [false, true] {
            let mut h = AdamHyper::pytorch_default(decoupled);
            h.weight_decay_fx = 10_000_000;
            let st = AdamState {
                theta: -123_456_789,
                m: 3_000_000,
                v: 40_000,
            };
            let k = AdamStep::at(&h, 5, Rounding::HalfUp).unwrap();
            let trace = native(&h, &k, Rounding::HalfUp, st, -77_777_777).unwrap();
            let w = AdamWitness {
                m: st.m as i64,
                v: st.v as i64,
                trace,
            };
            let mut cs = Rec::default();
            synth(&mut cs, &h, &k, st, (-77_777_777, trace.theta), &w);
            // the five inputs (k₁, c₂, θ, θ', g) come first
            let first = INPUTS;
            assert!(cs.all_hold());
            let free = cs.free_variables(first);
            assert!(free.is_empty(), "decoupled {decoupled}: free {free:?}");
        }
    }
}
