//! The CycleFold circuit of design step 2 (docs/design/fresh-verify.md):
//! over the primary curve's base field, where the primary's commitments are
//! native points, it checks Rⱼ = Pⱼ + r·Qⱼ for every commitment a primary
//! fold combines (the witness parts and E with T), r = 2¹²⁸ + 2K + 1 by
//! `ladder`. No hash and no state: its public IO is K, then each
//! (Pⱼ, Qⱼ, Rⱼ) as coordinates (x, y), the point at infinity as (0, 0).
//!
//! The primary that folds these instances (holding its own running
//! instance, matching these points to its commitments' limbs) is
//! [`crate::cfprimary`], beside the IVC and not the product's (measured and
//! not adopted: docs/design/fresh-verify.md). Why a point's IO is
//! its own: (0, 0) is on neither curve (y² = x³ + b, b ≠ 0), an input
//! point's infinity flag is forced by its coordinates (flag ⇒ x = y = 0,
//! no flag ⇒ on the curve), and an output's public coordinates are the
//! computed point's, zeroed where it is infinite.

use crate::instance::Commitment;
use crate::ladder::{fold_point, odd_challenge};
use ff::{Field, PrimeField, PrimeFieldBits};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{AllocatedBit, ConstraintSystem, SynthesisError};
use nova_snark::gadgets::ecc::AllocatedPoint;
use nova_snark::traits::commitment::CommitmentTrait;
use nova_snark::traits::Engine;

/// Bits of K.
pub const K_BITS: usize = 128;

/// One multiplication's points: the running commitment P and the incoming
/// one Q (R = P + r·Q is computed).
pub type Pair<E> = (Commitment<E>, Commitment<E>);

/// A point's public coordinates: (x, y), or (0, 0) for infinity.
pub fn io_coords<E: Engine>(c: &Commitment<E>) -> [E::Base; 2] {
    let (x, y, inf) = c.to_coordinates();
    if inf {
        [E::Base::ZERO; 2]
    } else {
        [x, y]
    }
}

/// The native reference: each R = P + r·Q.
pub fn fold_native<E: Engine>(k: u128, pairs: &[Pair<E>]) -> Vec<Commitment<E>> {
    let r = odd_challenge::<E::Scalar>(k, K_BITS as u32);
    pairs.iter().map(|(p, q)| *p + *q * r).collect()
}

/// The public IO for `pairs` folded with K: K, then each P, Q and R's
/// coordinates.
pub fn public_io<E: Engine>(k: u128, pairs: &[Pair<E>]) -> Vec<E::Base> {
    let rs = fold_native::<E>(k, pairs);
    let mut io = vec![E::Base::from_u128(k)];
    for ((p, q), r) in pairs.iter().zip(&rs) {
        for c in [p, q, r] {
            io.extend(io_coords::<E>(c));
        }
    }
    io
}

/// Public values of a circuit of `n` multiplications.
pub fn io_len(n: usize) -> usize {
    1 + 6 * n
}

/// The circuit for `n` multiplications over `E::Base` (`E` the primary
/// engine, whose points are native here). `io` is the claimed public IO
/// ([`public_io`] for an honest prover; None for the shape).
pub fn synthesize<E: Engine, CS: ConstraintSystem<E::Base>>(
    cs: &mut CS,
    n: usize,
    io: Option<&[E::Base]>,
) -> Result<(), SynthesisError> {
    if io.is_some_and(|v| v.len() != io_len(n)) {
        return Err(SynthesisError::Unsatisfiable(format!(
            "{} public values for {n} multiplications, not {}",
            io.map_or(0, <[_]>::len),
            io_len(n)
        )));
    }
    // K and its bits: K < 2¹²⁸
    let k = input(cs, io, 0)?;
    let kv = k.get_value().map(|v| v.to_le_bits());
    let bits = (0..K_BITS)
        .map(|i| AllocatedBit::alloc(cs.namespace(|| format!("K bit {i}")), kv.as_ref().map(|b| b[i])))
        .collect::<Result<Vec<_>, _>>()?;
    cs.enforce(
        || "K = its bits",
        |lc| {
            let mut lc = lc;
            let mut w = E::Base::ONE;
            for b in &bits {
                lc = lc + (w, b.get_variable());
                w = w.double();
            }
            lc
        },
        |lc| lc + CS::one(),
        |lc| lc + k.get_variable(),
    );
    for j in 0..n {
        let mut cs = cs.namespace(|| format!("mult {j}"));
        let base = 1 + 6 * j;
        let v = (0..6).map(|t| input(&mut cs, io, base + t)).collect::<Result<Vec<_>, _>>()?;
        // a claimed point off the curve is refused before nova-snark's
        // complete addition computes with it (its doubling would divide by
        // 0 at y = 0); the constraints refuse it all the same
        for (name, t) in [("P", 0), ("Q", 2)] {
            if let (Some(x), Some(y)) = (v[t].get_value(), v[t + 1].get_value()) {
                if !on_curve_or_origin::<E>(x, y) {
                    return Err(SynthesisError::Unsatisfiable(format!("multiplication {j}: {name} is not on the curve")));
                }
            }
        }
        let p = io_point::<E, _>(cs.namespace(|| "P"), v[0].clone(), v[1].clone())?;
        let q = io_point::<E, _>(cs.namespace(|| "Q"), v[2].clone(), v[3].clone())?;
        let r = fold_point(cs.namespace(|| "P + r·Q"), &p, &q, &bits)?;
        let (rx, ry) = (&v[4], &v[5]);
        // the public R is the computed one, (0, 0) where it is infinite
        for (name, public, v) in [("x", rx, &r.x), ("y", ry, &r.y)] {
            cs.enforce(
                || format!("R.{name} public"),
                |lc| lc + CS::one() - r.is_infinity.get_variable(),
                |lc| lc + v.get_variable(),
                |lc| lc + public.get_variable(),
            );
        }
    }
    Ok(())
}

/// Whether (x, y) is on the curve or (0, 0).
fn on_curve_or_origin<E: Engine>(x: E::Base, y: E::Base) -> bool {
    let (a, b, _, _) = <E::GE as nova_snark::traits::Group>::group_params();
    (x.is_zero_vartime() && y.is_zero_vartime()) || y.square() == x.square() * x + a * x + b
}

/// Public value j.
fn input<F: PrimeField, CS: ConstraintSystem<F>>(
    cs: &mut CS,
    io: Option<&[F]>,
    j: usize,
) -> Result<AllocatedNum<F>, SynthesisError> {
    AllocatedNum::alloc_input(cs.namespace(|| format!("io {j}")), || {
        io.map(|v| v[j]).ok_or(SynthesisError::AssignmentMissing)
    })
}

/// A point from its public (x, y): infinite iff (0, 0), else on the curve.
fn io_point<E: Engine, CS: ConstraintSystem<E::Base>>(
    cs: CS,
    x: AllocatedNum<E::Base>,
    y: AllocatedNum<E::Base>,
) -> Result<AllocatedPoint<E>, SynthesisError> {
    let inf = match (x.get_value(), y.get_value()) {
        (Some(a), Some(b)) => Some(a.is_zero_vartime() && b.is_zero_vartime()),
        _ => None,
    };
    io_point_with(cs, x, y, inf)
}

/// [`io_point`] with the infinity flag given (tests give a false one).
fn io_point_with<E: Engine, CS: ConstraintSystem<E::Base>>(
    mut cs: CS,
    x: AllocatedNum<E::Base>,
    y: AllocatedNum<E::Base>,
    inf: Option<bool>,
) -> Result<AllocatedPoint<E>, SynthesisError> {
    let flag = AllocatedBit::alloc(cs.namespace(|| "infinite"), inf)?;
    for (name, v) in [("x", &x), ("y", &y)] {
        cs.enforce(
            || format!("infinite ⇒ {name} = 0"),
            |lc| lc + flag.get_variable(),
            |lc| lc + v.get_variable(),
            |lc| lc,
        );
    }
    let is_infinity = AllocatedNum::alloc(cs.namespace(|| "flag"), || {
        flag.get_value()
            .map(|f| if f { E::Base::ONE } else { E::Base::ZERO })
            .ok_or(SynthesisError::AssignmentMissing)
    })?;
    cs.enforce(
        || "flag as a number",
        |lc| lc + flag.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + is_infinity.get_variable(),
    );
    let p = AllocatedPoint { x, y, is_infinity };
    p.check_on_curve(cs.namespace(|| "on the curve"))?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use nova_snark::frontend::test_shape_cs::TestShapeCS;
    use nova_snark::traits::commitment::CommitmentEngineTrait;
    use rand::rngs::StdRng;
    use rand::{RngCore, SeedableRng};

    type E1 = nova_snark::provider::Bn256EngineKZG;
    type Fq = <E1 as Engine>::Base;
    type Fr = <E1 as Engine>::Scalar;

    /// Four pairs as a `PerRunTwice` fold has them (W₁, W₂, W₃, E with T),
    /// with an infinite running commitment, an infinite incoming one, and a
    /// pair whose sum is infinite.
    fn pairs(seed: u64) -> (u128, Vec<Pair<E1>>) {
        let mut rng = StdRng::seed_from_u64(seed);
        let ck = <E1 as Engine>::CE::setup(b"cyclefold test", 4).unwrap();
        let mut com = || {
            let v: Vec<Fr> = (0..4).map(|_| Fr::from(rng.next_u64())).collect();
            <E1 as Engine>::CE::commit(&ck, &v, &Fr::ZERO)
        };
        let zero = <E1 as Engine>::CE::commit(&ck, &[Fr::ZERO; 4], &Fr::ZERO);
        let (a, b, c, d) = (com(), com(), com(), com());
        let k = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let r = odd_challenge::<Fr>(k, K_BITS as u32);
        let cancel = zero + d * (-r);
        (k, vec![(zero, a), (b, zero), (c, a), (cancel, d)])
    }

    /// Whether the circuit accepts `io` (a synthesis error refuses it too).
    fn run(n: usize, io: &[Fq]) -> bool {
        let mut cs = TestConstraintSystem::<Fq>::new();
        synthesize::<E1, _>(&mut cs, n, Some(io)).is_ok() && cs.is_satisfied()
    }

    #[test]
    fn a_point_off_the_curve_or_a_false_infinity_is_unsatisfied() {
        // the constraints alone, with no guard before them
        let (_, ps) = pairs(4);
        let [x, y] = io_coords::<E1>(&ps[0].1);
        for (px, py, ok) in [(x, y, true), (Fq::ZERO, Fq::ZERO, true), (x, y + Fq::ONE, false), (Fq::ONE, Fq::ZERO, false), (Fq::ZERO, Fq::ONE, false)] {
            let mut cs = TestConstraintSystem::<Fq>::new();
            let a = AllocatedNum::alloc(cs.namespace(|| "x"), || Ok(px)).unwrap();
            let b = AllocatedNum::alloc(cs.namespace(|| "y"), || Ok(py)).unwrap();
            let p = io_point::<E1, _>(cs.namespace(|| "P"), a, b).unwrap();
            assert_eq!(cs.is_satisfied(), ok, "({px:?}, {py:?})");
            assert_eq!(p.is_infinity.get_value() == Some(Fq::ONE), px.is_zero_vartime() && py.is_zero_vartime());
        }
        // an infinity flag claimed for a point on the curve, and none for (0, 0)
        for (px, py, flag) in [(x, y, true), (Fq::ZERO, Fq::ZERO, false)] {
            let mut cs = TestConstraintSystem::<Fq>::new();
            let a = AllocatedNum::alloc(cs.namespace(|| "x"), || Ok(px)).unwrap();
            let b = AllocatedNum::alloc(cs.namespace(|| "y"), || Ok(py)).unwrap();
            io_point_with::<E1, _>(cs.namespace(|| "P"), a, b, Some(flag)).unwrap();
            assert!(!cs.is_satisfied(), "flag {flag} for ({px:?}, {py:?})");
        }
    }

    #[test]
    fn an_honest_fold_satisfies_it_and_matches_the_native_one() {
        let (k, ps) = pairs(1);
        let io = public_io::<E1>(k, &ps);
        assert_eq!(io.len(), io_len(4));
        assert!(run(4, &io));
        // the last pair's sum is infinite: (0, 0) in the IO
        assert_eq!(&io[io.len() - 2..], &[Fq::ZERO, Fq::ZERO]);
        for kk in [0, u128::MAX] {
            assert!(run(4, &public_io::<E1>(kk, &ps)), "K = {kk}");
        }
    }

    #[test]
    fn a_wrong_public_value_is_unsatisfied() {
        let (k, ps) = pairs(2);
        let io = public_io::<E1>(k, &ps);
        // every public value but K changed by one: R no longer P + r·Q, or
        // an input point off the curve
        for j in 1..io.len() {
            let mut bad = io.clone();
            bad[j] += Fq::ONE;
            assert!(!run(4, &bad), "io {j} + 1 satisfied");
        }
        // another K (R computed for the first)
        let mut bad = io.clone();
        bad[0] += Fq::ONE;
        assert!(!run(4, &bad), "another K");
        // K past 128 bits
        let mut bad = io.clone();
        bad[0] += Fq::from(2).pow_vartime([128]);
        assert!(!run(4, &bad), "K + 2¹²⁸");
        // R's sum written for the other sign of r·Q
        let neg = fold_native::<E1>(k, &[(ps[2].0, ps[2].1 * -Fr::ONE)]);
        let mut bad = io.clone();
        bad[1 + 6 * 2 + 4..1 + 6 * 2 + 6].copy_from_slice(&io_coords::<E1>(&neg[0]));
        assert!(!run(4, &bad), "P − r·Q");
        // the wrong length is an error, not a panic
        let mut cs = TestConstraintSystem::<Fq>::new();
        assert!(synthesize::<E1, _>(&mut cs, 3, Some(&io)).is_err());
    }

    #[test]
    fn four_multiplications_fit_two_to_the_twelve() {
        // design step 2's claim: the CycleFold instance within 2¹² (nova-snark's
        // scalar multiplication would not fit: 4 × 1,220 + IO)
        for (n, cons) in [(3, 2_616), (4, 3_445)] {
            // a shape over Fq: the engine whose scalars are E1's base
            let mut cs = TestShapeCS::<nova_snark::provider::GrumpkinEngine>::new();
            synthesize::<E1, _>(&mut cs, n, None).unwrap();
            assert_eq!(cs.num_constraints(), cons, "{n} multiplications");
            assert!(cs.num_constraints() <= 4096 && cs.num_aux() + cs.num_inputs() <= 4096, "{} / {}", cs.num_aux(), cs.num_inputs());
        }
    }
}
