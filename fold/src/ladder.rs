//! A variable-base scalar multiplication in ≈ 6 constraints a bit: ρ·Q for
//! the folding challenge ρ = 2ⁿ + 2K + 1, K's n bits given, Q a point of a
//! prime-order curve y² = x³ + ax + b (BN254 G1, Grumpkin), and the fold of
//! a commitment R = P + ρ·Q.
//!
//! The ladder starts at A = 2Q and, from K's top bit down, sets
//! A ← (A + d·Q) + A with the digit d = 2b − 1 ∈ {−1, +1}: after all n
//! digits A = (2ⁿ⁺¹ + Σ dⱼ2ʲ)·Q = (2ⁿ + 2K + 1)·Q. The challenge is defined
//! as that odd number (`odd_challenge`), so no offset is left to remove;
//! its 2ⁿ values are as many as K's, and two of them differ by 2(K − K'),
//! never 0 modulo the group order.
//!
//! Why incomplete additions are exact here (docs/SOUNDNESS.md, "The
//! ladder"). Q ≠ ∞ (an infinite Q is swapped for a fixed point and the
//! result for ∞) and the group has prime order r > 6·2ⁿ. Before each
//! step A = m·Q with m ∈ [2ᵗ + 1, 3·2ᵗ − 1] after t steps (m = 2 at the
//! start). A + d·Q needs m ≢ ±1 (mod r): m ≥ 2 and m < r − 1. The sum
//! (m + d)·Q plus A needs m + d ≢ ±m: d ≠ 0 and 0 < 2m + d < r. So every
//! addition's two x-coordinates differ, each slope is the unique solution
//! of its constraint, and the chord formulas give the group law; the
//! doubling needs y_Q ≠ 0, true for a point of odd order. The witness of
//! any satisfying assignment is therefore the honest one.

use ff::{Field, PrimeField};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{AllocatedBit, ConstraintSystem, SynthesisError};
use nova_snark::gadgets::ecc::AllocatedPoint;
use nova_snark::traits::{Engine, Group};

/// ρ = 2ⁿ + 2K + 1 for K below 2ⁿ (n ≤ 128), as a field element.
pub fn odd_challenge<F: PrimeField>(k: u128, n: u32) -> F {
    F::from(2).pow_vartime([u64::from(n)]) + F::from_u128(k).double() + F::ONE
}

/// ρ from K's bits (little-endian) as a linear combination, allocated.
pub fn odd_challenge_num<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    bits: &[AllocatedBit],
) -> Result<AllocatedNum<F>, SynthesisError> {
    let n = bits.len() as u64;
    let value = bits.iter().rev().try_fold(F::ZERO, |acc, b| {
        b.get_value().map(|v| acc.double() + if v { F::ONE } else { F::ZERO })
    });
    let rho = AllocatedNum::alloc(cs.namespace(|| "rho"), || {
        value
            .map(|k| F::from(2).pow_vartime([n]) + k.double() + F::ONE)
            .ok_or(SynthesisError::AssignmentMissing)
    })?;
    cs.enforce(
        || "rho = 2^n + 2K + 1",
        |lc| {
            let mut lc = lc + (F::from(2).pow_vartime([n]) + F::ONE, CS::one());
            let mut w = F::from(2);
            for b in bits {
                lc = lc + (w, b.get_variable());
                w = w.double();
            }
            lc
        },
        |lc| lc + CS::one(),
        |lc| lc + rho.get_variable(),
    );
    Ok(rho)
}

/// A fixed point of the curve: the smallest x ≥ 1 whose x³ + ax + b is a
/// square (BN254's (1, 2)); the ladder runs on it when Q is infinite.
fn stand_in<E: Engine>() -> Result<(E::Base, E::Base), SynthesisError> {
    let (a, b, _, _) = E::GE::group_params();
    let mut x = E::Base::ONE;
    for _ in 0..1000 {
        let y = (x.square() * x + a * x + b).sqrt();
        if bool::from(y.is_some()) {
            return Ok((x, y.unwrap_or(E::Base::ZERO)));
        }
        x += E::Base::ONE;
    }
    Err(SynthesisError::Unsatisfiable("no stand-in point found".into()))
}

fn alloc<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    name: &str,
    v: Option<F>,
) -> Result<AllocatedNum<F>, SynthesisError> {
    AllocatedNum::alloc(cs.namespace(|| name.to_string()), || v.ok_or(SynthesisError::AssignmentMissing))
}

/// num / den, or 0 where den = 0 (only a point off the curve gets there:
/// its constraint is then unsatisfied rather than the synthesis failing).
fn div<F: Field>(num: Option<F>, den: Option<F>) -> Option<F> {
    Some(num? * Option::<F>::from(den?.invert()).unwrap_or(F::ZERO))
}

/// A point of the ladder, never infinite (x, y).
struct Affine<F: PrimeField> {
    x: AllocatedNum<F>,
    y: AllocatedNum<F>,
}

/// ρ·Q for ρ = 2ⁿ + 2K + 1, `bits` K's bits (little-endian, booleans the
/// caller has constrained). Q must be on the curve or infinite (the caller
/// checks it); the result is ∞ exactly when Q is.
pub fn mul_odd<E: Engine, CS: ConstraintSystem<E::Base>>(
    mut cs: CS,
    q: &AllocatedPoint<E>,
    bits: &[AllocatedBit],
) -> Result<AllocatedPoint<E>, SynthesisError> {
    let (a, _, _, _) = E::GE::group_params();
    // r ≥ 2^(NUM_BITS − 1) > 6·2ⁿ
    if bits.is_empty() || bits.len() + 4 > E::Scalar::NUM_BITS as usize {
        return Err(SynthesisError::Unsatisfiable(format!(
            "the ladder takes 1 to {} bits, not {}",
            E::Scalar::NUM_BITS - 4,
            bits.len()
        )));
    }
    let (sx, sy) = stand_in::<E>()?;
    let inf = q.is_infinity.get_value();
    // the base: Q, or the stand-in where Q is infinite
    let pick = |v: Option<E::Base>, s: E::Base| match (inf, v) {
        (Some(i), Some(v)) => Some(if i == E::Base::ONE { s } else { v }),
        _ => None,
    };
    let bx = alloc(cs.namespace(|| "base x"), "v", pick(q.x.get_value(), sx))?;
    let by = alloc(cs.namespace(|| "base y"), "v", pick(q.y.get_value(), sy))?;
    for (name, c, s, v) in [("base x", &bx, sx, &q.x), ("base y", &by, sy, &q.y)] {
        cs.enforce(
            || format!("{name} = Q or the stand-in"),
            |lc| lc + q.is_infinity.get_variable(),
            |lc| lc + (s, CS::one()) - v.get_variable(),
            |lc| lc + c.get_variable() - v.get_variable(),
        );
    }

    // A = 2·base: λ·2y = 3x² + a
    let xx = bx.square(cs.namespace(|| "x²"))?;
    let l0 = alloc(
        cs.namespace(|| "double λ"),
        "v",
        div(
            xx.get_value().map(|v| v.double() + v + a),
            by.get_value().map(|v| v.double()),
        ),
    )?;
    cs.enforce(
        || "2y·λ = 3x² + a",
        |lc| lc + l0.get_variable(),
        |lc| lc + (E::Base::from(2), by.get_variable()),
        |lc| lc + (E::Base::from(3), xx.get_variable()) + (a, CS::one()),
    );
    let mut acc = chord_end(cs.namespace(|| "double"), &l0, &bx, &bx, &by)?;

    for (j, bit) in bits.iter().enumerate().rev() {
        let mut cs = cs.namespace(|| format!("bit {j}"));
        // S = d·base, d = 2b − 1: y_S = (2b − 1)·y
        let ys = alloc(
            cs.namespace(|| "y_S"),
            "v",
            match (bit.get_value(), by.get_value()) {
                (Some(b), Some(y)) => Some(if b { y } else { -y }),
                _ => None,
            },
        )?;
        cs.enforce(
            || "y_S = (2b - 1)·y",
            |lc| lc + (E::Base::from(2), bit.get_variable()),
            |lc| lc + by.get_variable(),
            |lc| lc + ys.get_variable() + by.get_variable(),
        );
        // R = A + S: λ₁·(x_S − x_A) = y_S − y_A, x_R = λ₁² − x_A − x_S
        let l1 = alloc(
            cs.namespace(|| "λ1"),
            "v",
            div(
                ys.get_value().zip(acc.y.get_value()).map(|(s, a)| s - a),
                bx.get_value().zip(acc.x.get_value()).map(|(s, a)| s - a),
            ),
        )?;
        cs.enforce(
            || "λ1·(x_S - x_A) = y_S - y_A",
            |lc| lc + l1.get_variable(),
            |lc| lc + bx.get_variable() - acc.x.get_variable(),
            |lc| lc + ys.get_variable() - acc.y.get_variable(),
        );
        let xr = chord_x(cs.namespace(|| "x_R"), &l1, &acc.x, &bx)?;
        // A' = R + A without y_R: (λ₁ + λ₂)·(x_A − x_R) = 2·y_A
        let l2 = alloc(
            cs.namespace(|| "λ2"),
            "v",
            match (l1.get_value(), acc.y.get_value(), div(
                acc.y.get_value().map(|y| y.double()),
                acc.x.get_value().zip(xr.get_value()).map(|(a, r)| a - r),
            )) {
                (Some(l1), Some(_), Some(q)) => Some(q - l1),
                _ => None,
            },
        )?;
        cs.enforce(
            || "(λ1 + λ2)·(x_A - x_R) = 2·y_A",
            |lc| lc + l1.get_variable() + l2.get_variable(),
            |lc| lc + acc.x.get_variable() - xr.get_variable(),
            |lc| lc + (E::Base::from(2), acc.y.get_variable()),
        );
        acc = chord_end(cs.namespace(|| "A'"), &l2, &xr, &acc.x, &acc.y)?;
    }

    // ∞ where Q is: (0, 0) and Q's flag
    let mut out = Vec::with_capacity(2);
    for (name, v) in [("x", &acc.x), ("y", &acc.y)] {
        let o = alloc(
            cs.namespace(|| format!("out {name}")),
            "v",
            match (inf, v.get_value()) {
                (Some(i), Some(v)) => Some(v * (E::Base::ONE - i)),
                _ => None,
            },
        )?;
        cs.enforce(
            || format!("out {name} = (1 - inf)·{name}"),
            |lc| lc + CS::one() - q.is_infinity.get_variable(),
            |lc| lc + v.get_variable(),
            |lc| lc + o.get_variable(),
        );
        out.push(o);
    }
    let y = out.pop().ok_or(SynthesisError::AssignmentMissing)?;
    let x = out.pop().ok_or(SynthesisError::AssignmentMissing)?;
    Ok(AllocatedPoint {
        x,
        y,
        is_infinity: q.is_infinity.clone(),
    })
}

/// The end of a chord (or tangent) step from slope λ through (x₁, ·) and
/// (x₂, y₂): x₃ = λ² − x₁ − x₂, y₃ = λ·(x₂ − x₃) − y₂.
fn chord_end<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    l: &AllocatedNum<F>,
    x1: &AllocatedNum<F>,
    x2: &AllocatedNum<F>,
    y2: &AllocatedNum<F>,
) -> Result<Affine<F>, SynthesisError> {
    let x = chord_x(cs.namespace(|| "x"), l, x1, x2)?;
    let y = alloc(
        cs.namespace(|| "y"),
        "v",
        match (l.get_value(), x2.get_value(), x.get_value(), y2.get_value()) {
            (Some(l), Some(x2), Some(x), Some(y2)) => Some(l * (x2 - x) - y2),
            _ => None,
        },
    )?;
    cs.enforce(
        || "y = λ(x2 - x) - y2",
        |lc| lc + l.get_variable(),
        |lc| lc + x2.get_variable() - x.get_variable(),
        |lc| lc + y.get_variable() + y2.get_variable(),
    );
    Ok(Affine { x, y })
}

/// x₃ = λ² − x₁ − x₂: the third x-coordinate on the line of slope λ.
fn chord_x<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    l: &AllocatedNum<F>,
    x1: &AllocatedNum<F>,
    x2: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError> {
    let x = alloc(
        cs.namespace(|| "x"),
        "v",
        l.get_value()
            .zip(x1.get_value())
            .zip(x2.get_value())
            .map(|((l, a), b)| l.square() - a - b),
    )?;
    cs.enforce(
        || "x = λ² - x1 - x2",
        |lc| lc + l.get_variable(),
        |lc| lc + l.get_variable(),
        |lc| lc + x.get_variable() + x1.get_variable() + x2.get_variable(),
    );
    Ok(x)
}

/// R = P + ρ·Q (complete: either point may be infinite, or P = ±ρ·Q).
pub fn fold_point<E: Engine, CS: ConstraintSystem<E::Base>>(
    mut cs: CS,
    p: &AllocatedPoint<E>,
    q: &AllocatedPoint<E>,
    bits: &[AllocatedBit],
) -> Result<AllocatedPoint<E>, SynthesisError> {
    let m = mul_odd(cs.namespace(|| "ρ·Q"), q, bits)?;
    p.add(cs.namespace(|| "P + ρ·Q"), &m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::{Curve, Group as _};
    use halo2curves::CurveAffine;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use nova_snark::gadgets::utils::le_bits_to_num;
    use rand::rngs::StdRng;
    use rand::{RngCore, SeedableRng};

    type E1 = nova_snark::provider::Bn256EngineKZG;
    type E2 = nova_snark::provider::GrumpkinEngine;
    type Fr = <E2 as Engine>::Base;

    /// A point's (x, y, infinity), as `AllocatedPoint::alloc` takes it.
    fn coords<C: CurveAffine>(p: C::CurveExt) -> (C::Base, C::Base, bool) {
        let a = p.to_affine();
        if bool::from(a.is_identity()) {
            return (C::Base::ZERO, C::Base::ZERO, true);
        }
        match Option::<halo2curves::Coordinates<C>>::from(a.coordinates()) {
            Some(c) => (*c.x(), *c.y(), false),
            None => (C::Base::ZERO, C::Base::ZERO, true),
        }
    }

    fn bits_of<F: PrimeField, CS: ConstraintSystem<F>>(cs: &mut CS, k: u128, n: usize) -> Vec<AllocatedBit> {
        (0..n)
            .map(|i| AllocatedBit::alloc(cs.namespace(|| format!("k{i}")), Some((k >> i) & 1 == 1)).unwrap())
            .collect()
    }

    /// The gadget on (P, Q, K) against the native P + ρ·Q; (satisfied, constraints of the fold).
    fn check<E, C>(p: C::CurveExt, q: C::CurveExt, k: u128) -> (bool, usize)
    where
        E: Engine,
        C: CurveAffine<Base = E::Base, ScalarExt = E::Scalar>,
    {
        let mut cs = TestConstraintSystem::<E::Base>::new();
        let pa = AllocatedPoint::<E>::alloc(cs.namespace(|| "P"), Some(coords::<C>(p))).unwrap();
        let qa = AllocatedPoint::<E>::alloc(cs.namespace(|| "Q"), Some(coords::<C>(q))).unwrap();
        qa.check_on_curve(cs.namespace(|| "Q on the curve")).unwrap();
        let bits = bits_of(&mut cs, k, 128);
        let before = cs.num_constraints();
        let r = fold_point(cs.namespace(|| "fold"), &pa, &qa, &bits).unwrap();
        let n = cs.num_constraints() - before;
        let rho = odd_challenge::<E::Scalar>(k, 128);
        let want = coords::<C>(p + q * rho);
        let got = (r.x.get_value().unwrap(), r.y.get_value().unwrap(), r.is_infinity.get_value().unwrap() == E::Base::ONE);
        assert_eq!(got.2, want.2, "infinity flag");
        if !want.2 {
            assert_eq!((got.0, got.1), (want.0, want.1), "coordinates");
        }
        // ρ's own number matches the native one
        let rho_num = odd_challenge_num(cs.namespace(|| "rho"), &bits).unwrap();
        let k_num = le_bits_to_num(cs.namespace(|| "k"), &bits).unwrap();
        assert_eq!(k_num.get_value().map(|v| v.double() + E::Base::from(2).pow_vartime([128]) + E::Base::ONE), rho_num.get_value());
        (cs.is_satisfied(), n)
    }

    fn cases<C: CurveAffine>(seed: u64) -> Vec<(C::CurveExt, C::CurveExt, u128)> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut k = || (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
        let g = C::CurveExt::generator();
        let (a, b) = (g * C::ScalarExt::from(k() as u64 | 1), g * C::ScalarExt::from(k() as u64 | 3));
        let inf = C::CurveExt::identity();
        let kk = k();
        let rho = odd_challenge::<C::ScalarExt>(kk, 128);
        vec![
            (a, b, k()),
            (b, a, 0),
            (a, b, u128::MAX),
            (a, inf, k()),            // Q infinite: R = P
            (inf, b, k()),            // P infinite: R = ρ·Q
            (inf, inf, k()),
            (-(b * rho), b, kk),      // P = −ρ·Q: R = ∞
            (b * rho, b, kk),         // P = ρ·Q: the complete addition doubles
            (g, g, 7),
        ]
    }

    #[test]
    fn folds_as_the_group_law_does_on_both_curves() {
        use halo2curves::bn256::G1Affine;
        use halo2curves::grumpkin::G1Affine as GAffine;
        for (p, q, k) in cases::<G1Affine>(1) {
            let (ok, n) = check::<E1, G1Affine>(p, q, k);
            assert!(ok);
            // 6 a bit; 4 for 2Q; 4 for Q or the stand-in and ∞ out; nova-snark's complete addition 33
            assert_eq!(n, 6 * 128 + 8 + 33, "constraints of P + ρ·Q");
        }
        for (p, q, k) in cases::<GAffine>(2) {
            assert!(check::<E2, GAffine>(p, q, k).0);
        }
    }

    #[test]
    fn the_ladder_is_cheaper_than_nova_snarks_scalar_multiplication() {
        use halo2curves::bn256::G1Affine;
        let g = <G1Affine as CurveAffine>::CurveExt::generator();
        let mut cs = TestConstraintSystem::<<E1 as Engine>::Base>::new();
        let qa = AllocatedPoint::<E1>::alloc(cs.namespace(|| "Q"), Some(coords::<G1Affine>(g))).unwrap();
        let bits = bits_of(&mut cs, 12345, 128);
        let before = cs.num_constraints();
        qa.scalar_mul(cs.namespace(|| "nova"), &bits).unwrap();
        let nova = cs.num_constraints() - before;
        let before = cs.num_constraints();
        mul_odd(cs.namespace(|| "ladder"), &qa, &bits).unwrap();
        let ours = cs.num_constraints() - before;
        assert!(ours * 3 < nova * 2, "ladder {ours}, nova-snark {nova}");
    }

    #[test]
    fn every_variable_of_the_ladder_is_pinned() {
        // on Grumpkin, whose circuit is over BN254's Fr (the recording
        // constraint system's field): each variable the ladder allocates,
        // changed alone, breaks a constraint it occurs in
        use halo2curves::grumpkin::G1Affine as GAffine;
        use zkstep_gadgets::testing::Rec;
        for (ci, (p, q, k)) in cases::<GAffine>(3).into_iter().enumerate() {
            let mut cs = Rec::default();
            let _pa = AllocatedPoint::<E2>::alloc(cs.namespace(|| "P"), Some(coords::<GAffine>(p))).unwrap();
            let qa = AllocatedPoint::<E2>::alloc(cs.namespace(|| "Q"), Some(coords::<GAffine>(q))).unwrap();
            qa.check_on_curve(cs.namespace(|| "Q on the curve")).unwrap();
            let first_bit = cs.aux.len();
            let bits = bits_of(&mut cs, k, 128);
            let first = cs.aux.len();
            // the ladder alone (nova-snark's complete addition leaves an
            // inverse free where its input is zero, by design)
            mul_odd(cs.namespace(|| "ladder"), &qa, &bits).unwrap();
            let broken: Vec<usize> = (0..cs.cons.len()).filter(|&k| !cs.holds(k)).collect();
            assert!(broken.is_empty(), "case {ci}: {broken:?} of {} (first ladder var {first})", cs.cons.len());
            assert_eq!(cs.free_variables(first), Vec::<usize>::new(), "free variables of the fold");
            // a flipped bit of K
            let mut flipped = cs.aux.clone();
            flipped[first_bit + 77] = Fr::ONE - flipped[first_bit + 77];
            let saved = std::mem::replace(&mut cs.aux, flipped);
            assert!(!cs.all_hold(), "a flipped bit of K");
            cs.aux = saved;
            // Q's flag turned on for a finite Q (its coordinates kept): the
            // ladder runs on the stand-in and the output must be ∞
            if !coords::<GAffine>(q).2 {
                cs.aux[5] = Fr::ONE;
                assert!(!cs.all_hold(), "an infinite Q with a finite output");
            }
        }
    }

    #[test]
    fn too_many_bits_are_refused() {
        let mut cs = TestConstraintSystem::<<E1 as Engine>::Base>::new();
        let qa = AllocatedPoint::<E1>::alloc(cs.namespace(|| "Q"), None).unwrap();
        let bits = bits_of(&mut cs, 0, 128);
        let mut many = bits.clone();
        many.extend(bits);
        assert!(mul_odd(cs.namespace(|| "m"), &qa, &many).is_err());
        assert!(mul_odd(cs.namespace(|| "e"), &qa, &[]).is_err());
    }
}
