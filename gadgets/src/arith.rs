//! Non-linear integer arithmetic the adaptive optimizers and the softmax
//! need: floor square root, division with remainder by a witness divisor,
//! and the maximum of a vector. Each is exact (two-sided checks, so the
//! witness is unique) and sits beside its native twin in
//! `zkstep_core::fixed` (`isqrt`, `div_rem`) or the standard library (`max`).
//!
//! Every bound is a range check through [`RangeCheck`], so a lookup
//! implementation makes these cheaper without changing them. The field
//! equations below equal the integer ones because every term is far below
//! p/2 (each gadget states its bound on the inputs).

use crate::expr::{alloc, cst, enforce_eq, enforce_mul, mul, scale, sub, var, Expr, Fr};
use crate::range::RangeCheck;
use crate::Result;
use ff::{Field, PrimeField};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::ConstraintSystem;
use zkstep_core::poseidon::fr_from_i128;

/// `r = ⌊√x⌋` for an x the caller has checked to lie in `[0, 2^x_bits)`
/// (`x_bits ≤ 200`): r has h = ⌈x_bits/2⌉ bits (`…/r_range`), the slack
/// `t = x − r²` is ≥ 0 (`…/r_sq_le_x`: r is not too high) and `t ≤ 2r`
/// (`…/x_lt_next_sq`: x < (r + 1)², r is not too low), each in h + 1 bits.
/// All values are below 2^(2h+2) ≪ p, so the field identities are the
/// integer ones and r is unique. Cost: 3h + 6 constraints.
pub fn isqrt<CS: ConstraintSystem<Fr>, R: RangeCheck>(
    mut cs: CS,
    rc: &mut R,
    x: &Expr,
    x_bits: u32,
    r_val: Option<u128>,
) -> Result<AllocatedNum<Fr>> {
    assert!(x_bits <= 200, "isqrt of a value over 200 bits");
    let h = x_bits.div_ceil(2).max(1);
    let r = alloc(cs.namespace(|| "r"), r_val.map(Fr::from_u128))?;
    rc.bits(cs.namespace(|| "r_range"), &var(&r), h)?;
    let rr = mul(cs.namespace(|| "r_sq"), &var(&r), &var(&r))?;
    let t = sub(x, &var(&rr));
    rc.bits(cs.namespace(|| "r_sq_le_x"), &t, h + 1)?;
    let room = sub(&scale(&var(&r), Fr::from(2u64)), &t);
    rc.bits(cs.namespace(|| "x_lt_next_sq"), &room, h + 1)?;
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
    rc.bits(cs.namespace(|| "r_ge_0"), &var(&r), d_bits)?;
    let below = sub(&sub(d, &cst::<CS>(Fr::ONE)), &var(&r));
    rc.bits(cs.namespace(|| "r_lt_d"), &below, d_bits)?;
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
        let mut cs = TestConstraintSystem::<Fr>::new();
        let xa = alloc(cs.namespace(|| "x"), Some(Fr::from_u128(x))).unwrap();
        let bits = 100;
        isqrt(
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
            assert_eq!(cost, 3 * 50 + 6);
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
            // (at x = 2¹⁰⁰ − 1, r + 1 = 2⁵⁰ is already past r's bits)
            let which = which.unwrap();
            assert!(
                which.contains("r_sq_le_x") || which.contains("r_range"),
                "{which}"
            );
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
}
