//! Fixed-point gadgets: rescale and the sign-pinned ReLU.
//!
//! `rescale`: `z + off = q·d + r` with BOTH `r ≥ 0` and `d − 1 − r ≥ 0`
//! (two range checks of ⌈log₂ d⌉ bits: one check alone would admit
//! `r ∈ [d, 2^⌈log₂ d⌉)` and let q move by one) and q range-checked by the
//! caller (or, as in the fused SGD update, q the difference of two
//! range-checked values). Native twin: `zkstep_core::fixed::rescale`.
//! Where z is a public constant c times an integer (lr·dW, μ·v), r is
//! stored as k in `r = g·k + r0` (`zkstep_core::fixed::RemainderClass`,
//! g = gcd(c, d)), and only k's ⌈log₂(d/g)⌉ bits are checked.
//!
//! `relu`: `a = s·z`, `s ∈ {0,1}`, and `y = s·(z − 1) + (1 − s)·(−z) ≥ 0`
//! range-checked, which pins `s = 1 ⇔ z ≥ 1` and `s = 0 ⇔ z ≤ 0` (also at
//! z = 0). The seed's three constraints (`y(1−s)=0, (x−y)s=0, y≥0`) accept
//! s = 0, y = 0 for a positive x; this gadget does not. Native twin: the
//! executor's `s = [Z ≥ 1]`, `A = max(Z, 0)`.

use crate::expr::{add, alloc, cst, enforce_bool, enforce_eq, mul, scale, sub, var, Expr, Fr};
use crate::range::RangeCheck;
use crate::Result;
use ff::{Field, PrimeField};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::ConstraintSystem;
pub use zkstep_core::fixed::RemainderClass;

/// A stored fixed-point value: allocated (`…/val`) and range-checked to the
/// spec's signed `bits` (`…/range`).
pub fn alloc_stored<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    val: Option<i64>,
    bits: u32,
) -> Result<AllocatedNum<Fr>> {
    let a = alloc(
        cs.namespace(|| "val"),
        val.map(|v| zkstep_core::poseidon::fr_from_i128(v as i128)),
    )?;
    rc.signed(cs.namespace(|| "range"), &var(&a), bits)?;
    Ok(a)
}

/// A remainder of the class `cl` (`r = g·k + r0`, `0 ≤ k < d/g`; with
/// g = 1 simply `0 ≤ r < d`): k allocated (`…/val`) with both bounds
/// (`…/r_ge_0`, `…/r_lt_d`); returns r as an expression. A value outside the
/// class gets a k that is no small integer, which the bounds reject.
pub fn alloc_remainder<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    cs: CS,
    rc: &mut R,
    val: Option<i64>,
    cl: RemainderClass,
) -> Result<Expr> {
    alloc_remainder_fr(
        cs,
        rc,
        val.map(|v| zkstep_core::poseidon::fr_from_i128(v as i128)),
        cl,
    )
}

fn alloc_remainder_fr<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    r: Option<Fr>,
    cl: RemainderClass,
) -> Result<Expr> {
    let (g, r0) = (Fr::from_u128(cl.g), Fr::from_u128(cl.r0));
    let g_inv = Option::<Fr>::from(g.invert()).expect("g divides d < p, so g ≠ 0 in the field");
    let k = alloc(cs.namespace(|| "val"), r.map(|r| (r - r0) * g_inv))?;
    rc.below(&mut cs, &var(&k), cl.steps())?;
    Ok(add(&scale(&var(&k), g), &cst::<CS>(r0)))
}

/// Enforce `z + off = q·d + r` with r of the class `cl` (which holds d and
/// off; `RemainderClass::new(c, …)` when z is c times an integer), for a
/// quotient expression `q` checked elsewhere; allocates and returns r.
pub fn rescale_with_q<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    z: &Expr,
    cl: RemainderClass,
    q: &Expr,
    r_val: Option<Fr>,
) -> Result<Expr> {
    let r = alloc_remainder_fr(cs.namespace(|| "r"), rc, r_val, cl)?;
    let lhs = add(z, &cst::<CS>(Fr::from_u128(cl.off)));
    let rhs = add(&scale(q, Fr::from_u128(cl.d)), &r);
    enforce_eq(cs.namespace(|| "div"), &lhs, &rhs);
    Ok(r)
}

/// Rescale with an allocated quotient, range-checked to `q_bits` signed bits.
/// Returns `(q, r)`.
#[allow(clippy::too_many_arguments)]
pub fn rescale<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    z: &Expr,
    d: u128,
    off: u128,
    q_val: Option<Fr>,
    r_val: Option<Fr>,
    q_bits: u32,
) -> Result<(AllocatedNum<Fr>, Expr)> {
    let q = alloc(cs.namespace(|| "q"), q_val)?;
    rc.signed(cs.namespace(|| "q_range"), &var(&q), q_bits)?;
    let cl = RemainderClass::any(d, off);
    let r = rescale_with_q(cs.namespace(|| "rescale"), rc, z, cl, &var(&q), r_val)?;
    Ok((q, r))
}

/// Sign-pinned ReLU of `z` (a value already range-checked to `bits` signed bits).
/// Returns `(s, a)` with `a = s·z`.
pub fn relu<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    z: &Expr,
    s_val: Option<bool>,
    bits: u32,
) -> Result<(AllocatedNum<Fr>, AllocatedNum<Fr>)> {
    let s = alloc(
        cs.namespace(|| "s"),
        s_val.map(|b| if b { Fr::ONE } else { Fr::ZERO }),
    )?;
    enforce_bool(cs.namespace(|| "s_bool"), &var(&s));
    let a = mul(cs.namespace(|| "a=s*z"), &var(&s), z)?;
    // y = s·(2z − 1) − z  (= z − 1 if s = 1, −z if s = 0) must be ≥ 0.
    let two_z_minus_1 = sub(&scale(z, Fr::from(2u64)), &cst::<CS>(Fr::ONE));
    let t = mul(cs.namespace(|| "s*(2z-1)"), &var(&s), &two_z_minus_1)?;
    let y = sub(&var(&t), z);
    rc.bits(cs.namespace(|| "sign"), &y, bits)?;
    Ok((s, a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range::BitDecomposition;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use zkstep_core::fixed::{rescale as native_rescale, Rounding, SCALE_I128, SCALE_SQ};
    use zkstep_core::poseidon::fr_from_i128;

    fn f(v: i128) -> Fr {
        fr_from_i128(v)
    }

    /// Run the rescale gadget on z with explicit (q, r); report satisfaction and the failing namespace.
    fn run_rescale(z: i128, d: i128, q: i128, r: i128) -> (bool, Option<String>) {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let za = alloc(cs.namespace(|| "z"), Some(f(z))).unwrap();
        rescale(
            cs.namespace(|| "l1")
                .namespace(|| "fwd")
                .namespace(|| "rescale"),
            &mut BitDecomposition,
            &var(&za),
            d as u128,
            (d / 2) as u128,
            Some(f(q)),
            Some(f(r)),
            64,
        )
        .unwrap();
        (
            cs.is_satisfied(),
            cs.which_is_unsatisfied().map(String::from),
        )
    }

    /// `c·x + off = q·d + r` for c = lr at S (0.01) and d = S²: the honest
    /// remainder passes with k's 37 bits; a remainder outside the class
    /// (r + 1), r + d with q one lower, and a negative r are rejected; and
    /// it costs less than the plain remainder.
    #[test]
    fn remainder_of_a_multiple_is_checked_in_its_class() {
        let (c, d) = (10_000_000i128, SCALE_SQ);
        let run = |cl: RemainderClass, x: i128, dq: i128, dr: i128| {
            let mut cs = TestConstraintSystem::<Fr>::new();
            let xa = alloc(cs.namespace(|| "x"), Some(f(x))).unwrap();
            let n = native_rescale(c * x, d, Rounding::HalfUp).unwrap();
            let qa = alloc(cs.namespace(|| "qv"), Some(f(n.q + dq))).unwrap();
            rescale_with_q(
                cs.namespace(|| "upd"),
                &mut BitDecomposition,
                &scale(&var(&xa), f(c)),
                cl,
                &var(&qa),
                Some(f(n.r + dr)),
            )
            .unwrap();
            (
                cs.is_satisfied(),
                cs.which_is_unsatisfied().map(String::from),
                cs.num_constraints(),
            )
        };
        let cl = RemainderClass::new(c, d as u128, (d / 2) as u128);
        for x in [-987_654_321_123_456_789i128, -3, 0, 7, 1 << 80] {
            assert!(run(cl, x, 0, 0).0, "x {x}");
        }
        let x = 123_456_789_012_345_678i128;
        let (ok, which, _) = run(cl, x, 0, 1);
        assert!(!ok && which.unwrap().contains("r_ge_0"));
        // k one class-width past d/g: over k's bits or, below them, over d/g
        let (ok, which, _) = run(cl, x, -1, d);
        let which = which.unwrap();
        assert!(
            !ok && (which.contains("r_lt_d") || which.contains("r_ge_0")),
            "{which}"
        );
        let small = -49_999_999_997i128; // c·small + off: remainder 0.3·10⁸, k + d/g within k's bits
        let (ok, which, _) = run(cl, small, -1, d);
        assert!(!ok && which.unwrap().contains("r_lt_d"));
        let (ok, which, _) = run(cl, x, 1, -d);
        assert!(
            !ok && which.unwrap().contains("r_ge_0"),
            "a negative remainder"
        );
        let plain = run(RemainderClass::any(d as u128, (d / 2) as u128), x, 0, 0);
        let class = run(cl, x, 0, 0);
        assert!(plain.0 && class.0);
        assert!(class.2 + 35 < plain.2, "{} vs {}", class.2, plain.2);
    }

    #[test]
    fn rescale_agrees_with_native() {
        for d in [SCALE_I128, SCALE_SQ] {
            for z in [
                0i128,
                1,
                -1,
                d / 2,
                -d / 2,
                d / 2 - 1,
                12_345_678_901_234,
                -98_765_432_109_876_543,
                7 * d + 3,
            ] {
                let n = native_rescale(z, d, Rounding::HalfUp).unwrap();
                assert!(run_rescale(z, d, n.q, n.r).0, "z {z} d {d}");
            }
        }
    }

    #[test]
    fn rescale_rejects_remainder_of_d_with_quotient_one_lower() {
        let d = SCALE_I128;
        let z = 5 * d + 17 - d / 2; // remainder 17
        let n = native_rescale(z, d, Rounding::HalfUp).unwrap();
        let (ok, which) = run_rescale(z, d, n.q - 1, n.r + d);
        assert!(!ok);
        assert!(
            which.unwrap().contains("r_lt_d"),
            "the upper remainder check must be the one that fails"
        );
        // r in [10^9, 2^30) is exactly what a one-sided 30-bit check would have let through
        assert!(n.r + d < (1 << 30));
    }

    #[test]
    fn rescale_rejects_negative_remainder_and_wrong_quotient() {
        let d = SCALE_I128;
        let n = native_rescale(3 * d + 1, d, Rounding::HalfUp).unwrap();
        let (ok, which) = run_rescale(3 * d + 1, d, n.q + 1, n.r - d);
        assert!(!ok && which.unwrap().contains("r_ge_0"));
        let (ok, which) = run_rescale(3 * d + 1, d, n.q + 1, n.r);
        assert!(!ok && which.unwrap().contains("div"));
    }

    #[test]
    fn rescale_rejects_quotient_out_of_range() {
        // a quotient ≥ 2^63 with a matching remainder: only the quotient check can catch it
        let d = SCALE_I128;
        let q = 1i128 << 63;
        let z = q * d - d / 2; // z + d/2 = q·d + 0
        let (ok, which) = run_rescale(z, d, q, 0);
        assert!(
            !ok && which.as_deref().unwrap_or("").contains("q_range"),
            "{which:?}"
        );
    }

    fn run_relu(z: i128, s: bool) -> (bool, Option<String>, Option<Fr>) {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let za = alloc(cs.namespace(|| "z"), Some(f(z))).unwrap();
        let (_, a) = relu(
            cs.namespace(|| "l2")
                .namespace(|| "fwd")
                .namespace(|| "relu")
                .namespace(|| "17"),
            &mut BitDecomposition,
            &var(&za),
            Some(s),
            64,
        )
        .unwrap();
        (
            cs.is_satisfied(),
            cs.which_is_unsatisfied().map(String::from),
            a.get_value(),
        )
    }

    #[test]
    fn relu_agrees_with_native_and_pins_the_selector() {
        for z in [-(1i128 << 62), -5, -1, 0, 1, 2, 1 << 62] {
            let s = z >= 1;
            let (ok, _, a) = run_relu(z, s);
            assert!(ok, "z {z}");
            assert_eq!(a, Some(f(z.max(0))));
            // the flipped selector is rejected, for positive, zero and negative z
            let (ok, which, _) = run_relu(z, !s);
            assert!(!ok, "flipped selector accepted at z = {z}");
            assert!(which.unwrap().starts_with("l2/fwd/relu/17/sign"));
        }
    }

    #[test]
    fn seed_relu_form_is_unsound_and_ours_is_not() {
        // The seed's constraints y(1−s)=0, (x−y)s=0, y≥0 accept x = 5, s = 0, y = 0:
        let (x, s, y) = (5i128, 0i128, 0i128);
        assert!(y * (1 - s) == 0 && (x - y) * s == 0 && y >= 0);
        // ours rejects the same assignment
        assert!(!run_relu(5, false).0);
    }
}
