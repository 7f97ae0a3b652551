//! Non-linear integer arithmetic the adaptive optimizers and the softmax
//! need: floor square root, division with remainder by a witness divisor,
//! the maximum of a vector and the exponential of a non-positive value.
//! Each is exact (two-sided checks, so the witness is unique) and sits
//! beside its native twin in `zkstep_core::fixed` (`isqrt`, `div_rem`),
//! `zkstep_core::softmax` (`exp_neg`) or the standard library (`max`).
//!
//! Every bound is a range check through [`RangeCheck`], so a lookup
//! implementation makes these cheaper without changing them. The field
//! equations below equal the integer ones because every term is far below
//! p/2 (each gadget states its bound on the inputs).

use crate::expr::{
    add, alloc, cst, enforce_bool, enforce_eq, enforce_mul, mul, scale, sub, var, Expr, Fr,
};
use crate::fixed::{alloc_remainder, rescale_with_q, RemainderClass};
use crate::range::{range_bits, RangeCheck};
use crate::Result;
use ff::{Field, PrimeField};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::ConstraintSystem;
use zkstep_core::fixed::{Rounding, SCALE_I128};
use zkstep_core::poseidon::fr_from_i128;
use zkstep_core::softmax::{exp_coefficients, ExpTrace, EXP_DEGREE, EXP_MAX_SHIFT, LN2_FX};

/// `r = ⌊√x⌋` for an x the caller has checked to `|x| < 2^x_bits` (a
/// negative x has no root that passes; `x_bits ≤ 200`), h = ⌈x_bits/2⌉: the slack `t = x − r²` is ≥ 0
/// (`…/r_sq_le_x`: r is not too high) and `2r − t ≥ 0` (`…/x_lt_next_sq`:
/// x < (r + 1)², r is not too low), each in w = h + 1 bits (or the range
/// check's [`RangeCheck::two_sided_width`] of it). r needs no range check
/// of its own: the two give `2r ≡ c` with c = t + (2r − t) < 2^(w+1); were
/// c odd, r would be (c + p)/2 and `4t ≡ 4x − c²` (mod p), both sides far
/// below p/2 in size, so `4t = 4x − c²` over ℤ and c² ≡ 0 (mod 4), which
/// an odd c is not. So r = c/2 < 2^w, every value is far below p/2, the
/// field identities are the integer ones `r² ≤ x < (r + 1)²`, and r (<
/// 2^h) is unique. Cost: 2h + 5 constraints with bit decompositions.
pub fn isqrt<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    cs: CS,
    rc: &mut R,
    x: &Expr,
    x_bits: u32,
    r_val: Option<u128>,
) -> Result<AllocatedNum<Fr>> {
    isqrt_fr(cs, rc, x, x_bits, r_val.map(Fr::from_u128))
}

/// [`isqrt`] with the root's witness as a field element (a forger's root
/// need not be an integer).
pub(crate) fn isqrt_fr<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    x: &Expr,
    x_bits: u32,
    r_val: Option<Fr>,
) -> Result<AllocatedNum<Fr>> {
    assert!(x_bits <= 200, "isqrt of a value over 200 bits");
    let h = x_bits.div_ceil(2).max(1);
    let r = alloc(cs.namespace(|| "r"), r_val)?;
    let rr = mul(cs.namespace(|| "r_sq"), &var(&r), &var(&r))?;
    let t = sub(x, &var(&rr));
    // 0 ≤ t ≤ 2r from both sides (2r < 2^(h+1))
    let w = rc.two_sided_width(h + 1);
    // the argument above needs c² and 4x far below p/2: 2w + 2 < 253
    assert!(w <= 125, "isqrt: slack width {w} too wide for an unchecked root");
    rc.bits(cs.namespace(|| "r_sq_le_x"), &t, w)?;
    let room = sub(&scale(&var(&r), Fr::from(2u64)), &t);
    rc.bits(cs.namespace(|| "x_lt_next_sq"), &room, w)?;
    Ok(r)
}

/// `n = q·d + r` with `0 ≤ r < d` (floor division, also for negative n) by
/// a divisor expression d the caller has checked to lie in `[1, 2^d_bits)`,
/// with q allocated and checked to `q_bits` signed bits (`…/q_range`) and r
/// to `[0, d)` from both sides (`…/r_ge_0`, `…/r_lt_d`), and the product
/// `q·d = n − r` (`…/div`). With |n| < 2^250 and `q_bits + d_bits ≤ 250`
/// no side wraps in the field, so q = ⌊n/d⌋ is the only witness.
/// Returns `(q, r)`.
#[allow(clippy::too_many_arguments)]
pub fn div_rem<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    n: &Expr,
    d: &Expr,
    d_bits: u32,
    q_bits: u32,
    q_val: Option<i128>,
    r_val: Option<i128>,
) -> Result<(AllocatedNum<Fr>, AllocatedNum<Fr>)> {
    assert!(q_bits + d_bits <= 250, "div_rem operands too wide");
    let q = alloc(cs.namespace(|| "q"), q_val.map(fr_from_i128))?;
    rc.signed(cs.namespace(|| "q_range"), &var(&q), q_bits)?;
    let r = alloc(cs.namespace(|| "r"), r_val.map(fr_from_i128))?;
    let w = rc.two_sided_width(d_bits);
    rc.bits(cs.namespace(|| "r_ge_0"), &var(&r), w)?;
    let below = sub(&sub(d, &cst::<CS>(Fr::ONE)), &var(&r));
    rc.bits(cs.namespace(|| "r_lt_d"), &below, w)?;
    enforce_mul(cs.namespace(|| "div"), &var(&q), d, &sub(n, &var(&r)));
    Ok((q, r))
}

/// `m = max(xs)` for values the caller has checked to `bits` signed bits:
/// `m − x_i ∈ [0, 2^bits)` for every i (`…/ge{i}`: m is an upper bound)
/// and `Π (m − x_i) = 0` (`…/attained`: m is one of them; a field has no
/// zero divisors). Cost: n·(bits + 1) + max(n − 1, 1) constraints.
pub fn max<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    xs: &[Expr],
    bits: u32,
    m_val: Option<i128>,
) -> Result<AllocatedNum<Fr>> {
    assert!(!xs.is_empty(), "max of no values");
    let m = alloc(cs.namespace(|| "m"), m_val.map(fr_from_i128))?;
    let gaps: Vec<Expr> = xs.iter().map(|x| sub(&var(&m), x)).collect();
    for (i, g) in gaps.iter().enumerate() {
        rc.bits(cs.namespace(|| format!("ge{i}")), g, bits)?;
    }
    let mut prod = gaps[0].clone();
    for (i, g) in gaps
        .iter()
        .enumerate()
        .skip(1)
        .take(gaps.len().saturating_sub(2))
    {
        prod = var(&mul(cs.namespace(|| format!("prod{i}")), &prod, g)?);
    }
    match gaps.len() {
        1 => enforce_eq(cs.namespace(|| "attained"), &prod, &crate::expr::zero()),
        n => enforce_mul(
            cs.namespace(|| "attained"),
            &prod,
            &gaps[n - 1],
            &crate::expr::zero(),
        ),
    }
    Ok(m)
}

/// `S·e^{x/S}` for x ≤ 0 (the caller has checked x to `x_bits` signed
/// bits), exactly as `zkstep_core::softmax::exp_neg` defines it, from its
/// trace `t`:
/// - `−x = k·L + ρ` with k in `x_bits − 29` bits (`…/k_range`, so −x ≥ 0)
///   and `0 ≤ ρ < L` (`…/rho`), L = round(ln 2·S);
/// - Horner `h_i = c_i + rescale_S(−h_{i+1}·ρ)`, each h_i in [0, 2³⁰)
///   (`…/h{i}/range`, which also pins the quotient) with its remainder
///   checked from both sides (`…/h{i}/rescale`);
/// - the shift `kc = min(k, 31)`: a selector `big` with
///   `30 − k + big·(2k − 61) ≥ 0` (`…/shift_sel`: big = 1 ⇔ k ≥ 31),
///   `kc = k + big·(31 − k)`, kc's five bits and `2^kc` as their product;
/// - the result `rescale_{2^kc}(e_ρ)` as a division with remainder by the
///   value 2^kc ([`div_rem`], `…/shift`; half-up as `(2e + d) / 2d`, equal
///   to `(e + d/2) / d` for every power of two).
///
/// Returns the value. 1,049 constraints for a 64-bit x with bit decomposition.
pub fn exp_neg<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    cs: CS,
    rc: &mut R,
    x: &Expr,
    x_bits: u32,
    rounding: Rounding,
    t: Option<&ExpTrace>,
) -> Result<AllocatedNum<Fr>> {
    exp_neg_selecting(cs, rc, x, x_bits, rounding, t, false)
}

/// [`exp_neg`] with the selector `big` flipped when `flip_big` (a test's
/// prover who claims the other side of k ≥ 31): every value after it is
/// computed from the flipped selector, so only `…/shift_sel` (or kc's bits)
/// can reject it.
fn exp_neg_selecting<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    x: &Expr,
    x_bits: u32,
    rounding: Rounding,
    t: Option<&ExpTrace>,
    flip_big: bool,
) -> Result<AllocatedNum<Fr>> {
    let s = SCALE_I128 as u128;
    let k_bits = x_bits.saturating_sub(29).max(6);
    let big_of = |t: &ExpTrace| (t.k >= EXP_MAX_SHIFT as i128) != flip_big;
    // the shift the selector gives: min(k, 31) when honest
    let kc_of = |t: &ExpTrace| if big_of(t) { EXP_MAX_SHIFT as i128 } else { t.k };
    let k = alloc(cs.namespace(|| "k"), t.map(|t| fr_from_i128(t.k)))?;
    rc.bits(cs.namespace(|| "k_range"), &var(&k), k_bits)?;
    let rho = alloc_remainder(
        cs.namespace(|| "rho"),
        rc,
        t.map(|t| t.rho as i64),
        RemainderClass::any(LN2_FX as u128, 0),
    )?;
    // −x = k·L + ρ (linear)
    let kl = add(&scale(&var(&k), fr_from_i128(LN2_FX)), &rho);
    enforce_eq(cs.namespace(|| "reduce"), &scale(x, -Fr::ONE), &kl);

    let c = exp_coefficients();
    let off = rounding.offset(SCALE_I128) as u128;
    let mut h = cst::<CS>(fr_from_i128(c[EXP_DEGREE]));
    for i in (0..EXP_DEGREE).rev() {
        let mut cs = cs.namespace(|| format!("h{i}"));
        let prod = if i + 1 == EXP_DEGREE {
            scale(&rho, fr_from_i128(c[EXP_DEGREE]))
        } else {
            var(&mul(cs.namespace(|| "h_rho"), &h, &rho)?)
        };
        let hi = alloc(cs.namespace(|| "val"), t.map(|t| fr_from_i128(t.h[i])))?;
        rc.bits(cs.namespace(|| "range"), &var(&hi), 30)?;
        let q = sub(&var(&hi), &cst::<CS>(fr_from_i128(c[i])));
        rescale_with_q(
            cs.namespace(|| "rescale"),
            rc,
            &scale(&prod, -Fr::ONE),
            RemainderClass::any(s, off),
            &q,
            t.map(|t| fr_from_i128(t.rem[i])),
        )?;
        h = var(&hi);
    }

    // kc = min(k, 31) through the selector big = [k ≥ 31]
    let big = alloc(
        cs.namespace(|| "big"),
        t.map(|t| Fr::from(u64::from(big_of(t)))),
    )?;
    enforce_bool(cs.namespace(|| "big_bool"), &var(&big));
    let max_shift = cst::<CS>(Fr::from(u64::from(EXP_MAX_SHIFT)));
    let big_k = mul(
        cs.namespace(|| "big_times"),
        &var(&big),
        &sub(
            &scale(&var(&k), Fr::from(2u64)),
            &add(&max_shift, &max_shift),
        ),
    )?;
    // 30 − k + big·(2k − 62) + big = (30 − k)(1 − big) + big·(k − 31)
    let side = add(
        &add(
            &sub(&sub(&max_shift, &cst::<CS>(Fr::ONE)), &var(&k)),
            &var(&big_k),
        ),
        &var(&big),
    );
    rc.bits(cs.namespace(|| "shift_sel"), &side, k_bits)?;
    let big_gap = mul(
        cs.namespace(|| "big_gap"),
        &var(&big),
        &sub(&max_shift, &var(&k)),
    )?;
    let kc = add(&var(&k), &var(&big_gap));
    let bits = range_bits(cs.namespace(|| "kc_bits"), &kc, 5)?;
    let mut pow = add(&cst::<CS>(Fr::ONE), &scale(&var(&bits[0]), Fr::from(1u64)));
    for (i, b) in bits.iter().enumerate().skip(1) {
        let factor = add(
            &cst::<CS>(Fr::ONE),
            &scale(&var(b), Fr::from((1u64 << (1u32 << i)) - 1)),
        );
        pow = var(&mul(cs.namespace(|| format!("pow{i}")), &pow, &factor)?);
    }

    // value = rescale_{2^kc}(h₀)
    let (n, d, d_bits) = match rounding {
        Rounding::HalfUp => (
            add(&scale(&h, Fr::from(2u64)), &pow),
            scale(&pow, Fr::from(2u64)),
            EXP_MAX_SHIFT + 2,
        ),
        Rounding::Floor => (h.clone(), pow.clone(), EXP_MAX_SHIFT + 1),
    };
    // (value, remainder) of h₀ / 2^kc: the trace's when honest
    let shifted = t.map(|t| {
        let shift = 1i128 << kc_of(t).clamp(0, 126);
        let value = if flip_big {
            match rounding {
                Rounding::HalfUp => (2 * t.h[0] + shift).div_euclid(2 * shift),
                Rounding::Floor => t.h[0].div_euclid(shift),
            }
        } else {
            t.value
        };
        let rem = match rounding {
            Rounding::HalfUp => 2 * t.h[0] + shift - value * 2 * shift,
            Rounding::Floor => t.h[0] - value * shift,
        };
        (value, rem)
    });
    let (value, _) = div_rem(
        cs.namespace(|| "shift"),
        rc,
        &n,
        &d,
        d_bits,
        32,
        shifted.map(|v| v.0),
        shifted.map(|v| v.1),
    )?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range::BitDecomposition;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use zkstep_core::fixed::{div_rem as native_div_rem, isqrt as native_isqrt};

    type Outcome = (bool, Option<String>, usize);

    fn outcome(cs: &TestConstraintSystem<Fr>) -> Outcome {
        (
            cs.is_satisfied(),
            cs.which_is_unsatisfied().map(String::from),
            cs.num_constraints(),
        )
    }

    fn run_isqrt(x: u128, r: u128) -> Outcome {
        run_isqrt_fr(x, Fr::from_u128(r))
    }

    fn run_isqrt_fr(x: u128, r: Fr) -> Outcome {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let xa = alloc(cs.namespace(|| "x"), Some(Fr::from_u128(x))).unwrap();
        let bits = 100;
        isqrt_fr(
            cs.namespace(|| "sqrt"),
            &mut BitDecomposition,
            &var(&xa),
            bits,
            Some(r),
        )
        .unwrap();
        outcome(&cs)
    }

    #[test]
    fn isqrt_agrees_with_native_and_rejects_a_root_one_off() {
        for x in [
            0u128,
            1,
            2,
            3,
            4,
            15,
            16,
            17,
            999_999_999_999_999_999,
            (1u128 << 100) - 1,
        ] {
            let r = native_isqrt(x);
            let (ok, which, cost) = run_isqrt(x, r);
            assert!(ok, "x {x}: {which:?}");
            assert_eq!(cost, 2 * 50 + 5);
            if r > 0 {
                let (ok, which, _) = run_isqrt(x, r - 1);
                assert!(!ok, "x {x}: root one too low accepted");
                // t = x − (r − 1)² may also outgrow its h + 1 bits
                let which = which.unwrap();
                assert!(
                    which.contains("x_lt_next_sq") || which.contains("r_sq_le_x"),
                    "{which}"
                );
            }
            let (ok, which, _) = run_isqrt(x, r + 1);
            assert!(!ok, "x {x}: root one too high accepted");
            assert!(which.unwrap().contains("r_sq_le_x"));
            // a root that is no integer: r* = (c + p)/2 = c/2 in the field,
            // for the odd c next to 2r, so that 2r* ≡ c is as small as an
            // honest 2r; its square is no small integer, and t fails
            for c in [2 * r + 1, 2 * r.max(1) - 1] {
                let half = Fr::from_u128(c) * Fr::from(2u64).invert().unwrap();
                let (ok, which, _) = run_isqrt_fr(x, half);
                assert!(!ok, "x {x}: root (c + p)/2, c = {c}, accepted");
                assert!(which.unwrap().contains("r_sq_le_x"), "x {x} c {c}");
            }
        }
    }

    fn run_div(n: i128, d: i128, q: i128, r: i128) -> Outcome {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let na = alloc(cs.namespace(|| "n"), Some(fr_from_i128(n))).unwrap();
        let da = alloc(cs.namespace(|| "d"), Some(fr_from_i128(d))).unwrap();
        div_rem(
            cs.namespace(|| "div"),
            &mut BitDecomposition,
            &var(&na),
            &var(&da),
            64,
            100,
            Some(q),
            Some(r),
        )
        .unwrap();
        outcome(&cs)
    }

    #[test]
    fn div_rem_agrees_with_native_and_pins_the_remainder() {
        let cases = [
            (7i128, 2i128),
            (-7, 2),
            (0, 5),
            (123_456_789_012_345_678_901, 1_000_000_007),
            (-(1i128 << 90), 3),
            (5, 1),
        ];
        for (n, d) in cases {
            let (q, r) = native_div_rem(n, d).unwrap();
            let (ok, which, _) = run_div(n, d, q, r);
            assert!(ok, "{n} / {d}: {which:?}");
            // the remainder equal to the divisor, quotient one lower
            let (ok, which, _) = run_div(n, d, q - 1, r + d);
            assert!(!ok && which.unwrap().contains("r_lt_d"), "{n} / {d}");
            // a negative remainder, quotient one higher
            let (ok, which, _) = run_div(n, d, q + 1, r - d);
            assert!(!ok && which.unwrap().contains("r_ge_0"), "{n} / {d}");
            // a wrong quotient with the honest remainder
            let (ok, which, _) = run_div(n, d, q + 1, r);
            assert!(!ok && which.unwrap().contains("div"), "{n} / {d}");
        }
        // a quotient past its declared range with a matching remainder
        let q = 1i128 << 99;
        let (ok, which, _) = run_div(q * 3, 3, q, 0);
        assert!(!ok && which.unwrap().contains("q_range"));
    }

    fn run_max(xs: &[i128], m: i128) -> Outcome {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let vals: Vec<Expr> = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                var(&alloc(cs.namespace(|| format!("x{i}")), Some(fr_from_i128(x))).unwrap())
            })
            .collect();
        max(
            cs.namespace(|| "max"),
            &mut BitDecomposition,
            &vals,
            64,
            Some(m),
        )
        .unwrap();
        outcome(&cs)
    }

    #[test]
    fn max_agrees_with_native_and_rejects_a_wrong_maximum() {
        for xs in [
            vec![5i128],
            vec![-3, -9],
            vec![1, 7, 7, -2],
            vec![-(1i128 << 62), 0, (1i128 << 62) - 1, 12],
        ] {
            let m = *xs.iter().max().unwrap();
            let (ok, which, cost) = run_max(&xs, m);
            assert!(ok, "{xs:?}: {which:?}");
            assert_eq!(cost, xs.len() * 65 + (xs.len() - 1).max(1));
            // a non-maximal element of the vector
            if let Some(&low) = xs.iter().filter(|&&x| x < m).max() {
                let (ok, which, _) = run_max(&xs, low);
                assert!(!ok && which.unwrap().contains("/ge"), "{xs:?}");
            }
            // an upper bound that is not attained
            let (ok, which, _) = run_max(&xs, m + 1);
            assert!(!ok && which.unwrap().contains("attained"), "{xs:?}");
        }
    }

    /// A mutation of an exponential's witness.
    type Edit = dyn Fn(&mut ExpTrace);

    fn run_exp(x: i128, rounding: Rounding, edit: &Edit) -> (Outcome, Option<Fr>) {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let xa = alloc(cs.namespace(|| "x"), Some(fr_from_i128(x))).unwrap();
        let mut t = zkstep_core::softmax::exp_neg(x, rounding).unwrap();
        edit(&mut t);
        let v = exp_neg(
            cs.namespace(|| "exp"),
            &mut BitDecomposition,
            &var(&xa),
            64,
            rounding,
            Some(&t),
        )
        .unwrap();
        (outcome(&cs), v.get_value())
    }

    #[test]
    fn exp_agrees_with_native_and_rejects_wrong_witnesses() {
        let xs = [
            0i128,
            -1,
            -693_147_181,
            -1_000_000_000,
            -5_432_109_876,
            -21_487_562_611, // k = 31: the first shift that saturates
            -30_000_000_000,
            -(1i128 << 62),
        ];
        for rounding in [Rounding::HalfUp, Rounding::Floor] {
            for x in xs {
                let native = zkstep_core::softmax::exp_neg(x, rounding).unwrap();
                let ((ok, which, cost), v) = run_exp(x, rounding, &|_| {});
                assert!(ok, "x {x}: {which:?}");
                assert_eq!(v, Some(fr_from_i128(native.value)), "x {x}");
                assert!(cost < 1_100, "{cost}"); // 1,049 at 64-bit x
                let wrong: [(&str, &Edit); 4] = [
                    ("value + 1", &|t| t.value += 1),
                    ("value − 1", &|t| t.value -= 1),
                    ("k + 1", &|t| {
                        t.k += 1;
                        t.rho -= LN2_FX;
                    }),
                    ("h₃ + 1", &|t| t.h[3] += 1),
                ];
                for (what, edit) in wrong {
                    let ((ok, _, _), _) = run_exp(x, rounding, edit);
                    assert!(!ok, "x {x}: {what} accepted");
                }
            }
        }
        // k one lower with ρ ≥ L: the remainder's upper bound
        let ((ok, which, _), _) = run_exp(-5_432_109_876, Rounding::HalfUp, &|t| {
            t.k -= 1;
            t.rho += LN2_FX;
        });
        assert!(!ok && which.unwrap().contains("rho"));
        // a positive x has no witness: −x = k·L + ρ needs a negative k
        let mut cs = TestConstraintSystem::<Fr>::new();
        let xa = alloc(cs.namespace(|| "x"), Some(Fr::from(5u64))).unwrap();
        let mut t = zkstep_core::softmax::exp_neg(0, Rounding::HalfUp).unwrap();
        t.k = -1;
        t.rho = LN2_FX - 5;
        exp_neg(
            cs.namespace(|| "exp"),
            &mut BitDecomposition,
            &var(&xa),
            64,
            Rounding::HalfUp,
            Some(&t),
        )
        .unwrap();
        assert!(!cs.is_satisfied());
        assert!(cs.which_is_unsatisfied().unwrap().contains("k_range"));
    }

    /// The shift selector `big` claimed on the wrong side of k ≥ 31, with
    /// every value after it (kc, its bits, 2^kc, the quotient and remainder)
    /// computed from the flipped selector: rejected at `shift_sel`, which
    /// is the only thing that ties `big` to k; the same run unflipped holds.
    #[test]
    fn a_flipped_shift_selector_is_rejected() {
        // k = 1, 7, 31 (the first that saturates), 32, 43
        for x in [
            -1_000_000_000i128,
            -5_432_109_876,
            -21_487_562_611,
            -22_180_709_792,
            -30_000_000_000,
        ] {
            for rounding in [Rounding::HalfUp, Rounding::Floor] {
                let t = zkstep_core::softmax::exp_neg(x, rounding).unwrap();
                for flip in [false, true] {
                    let mut cs = TestConstraintSystem::<Fr>::new();
                    let xa = alloc(cs.namespace(|| "x"), Some(fr_from_i128(x))).unwrap();
                    let rc = &mut BitDecomposition;
                    exp_neg_selecting(cs.namespace(|| "exp"), rc, &var(&xa), 64, rounding, Some(&t), flip)
                        .unwrap();
                    let which = cs.which_is_unsatisfied().map(String::from);
                    if flip {
                        let which = which.unwrap_or_else(|| panic!("x {x} (k {}): flipped big accepted", t.k));
                        assert!(which.contains("shift_sel"), "x {x} (k {}): {which}", t.k);
                    } else {
                        assert_eq!(which, None, "x {x}");
                    }
                }
            }
        }
    }

    /// Every private variable the four gadgets allocate is pinned: bumping
    /// any one alone breaks a constraint.
    #[test]
    fn no_witness_of_the_arithmetic_gadgets_is_free() {
        use crate::testing::Rec;
        let mut cs = Rec::default();
        let mut input = |v: i128| var(&alloc(&mut cs, Some(fr_from_i128(v))).unwrap());
        let (x, n, d) = (
            input(999_999_999_999),
            input(-123_456_789_012),
            input(1_000_003),
        );
        let xs: Vec<Expr> = [5i128, -9, 5, 2].iter().map(|&v| input(v)).collect();
        let e = input(-5_432_109_876);
        let first = cs.aux.len();
        let rc = &mut BitDecomposition;
        isqrt(&mut cs, rc, &x, 40, Some(native_isqrt(999_999_999_999))).unwrap();
        let (q, r) = native_div_rem(-123_456_789_012, 1_000_003).unwrap();
        div_rem(&mut cs, rc, &n, &d, 32, 64, Some(q), Some(r)).unwrap();
        max(&mut cs, rc, &xs, 64, Some(5)).unwrap();
        for rounding in [Rounding::HalfUp, Rounding::Floor] {
            let t = zkstep_core::softmax::exp_neg(-5_432_109_876, rounding).unwrap();
            exp_neg(&mut cs, rc, &e, 64, rounding, Some(&t)).unwrap();
        }
        assert!(cs.all_hold());
        let free = cs.free_variables(first);
        assert!(
            free.is_empty(),
            "free: {free:?} of {}",
            cs.aux.len() - first
        );
    }
}
