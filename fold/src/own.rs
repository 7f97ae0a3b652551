//! The primary's own instances inside its own circuit, the CycleFold shape
//! of design step 2 (docs/design/fresh-verify.md): a commitment is a point
//! of the primary curve, whose coordinates are numbers of the other field,
//! so the circuit holds each as limbs of 68, 68 and 118 bits
//! ([`Foreign`]), the point at infinity as (0, 0) as the CycleFold
//! circuit's public IO writes it; u and X are native. The primary folds u
//! and X itself and takes the folded commitments from the CycleFold
//! instance that computes them, whose public IO these limbs are.
//!
//! Fresh limbs (an incoming instance's, the cross term's, the folded
//! commitments') are range-checked and below the field's modulus
//! ([`Foreign::alloc_canonical`]), so a point has one limb vector and every
//! hash of limbs binds the point; a running instance's limbs are bound by
//! the state hash to limbs that were checked where they were made.

use crate::cyclefold::io_coords;
use crate::foreign::{big_to_field, field_to_big, limbs_of, Foreign};
use crate::gadgets::pairwise;
use crate::instance::{Commitment, FoldInstance, RunningInstance};
use ff::{Field, PrimeField};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{Boolean, ConstraintSystem, SynthesisError};
use nova_snark::gadgets::utils::conditionally_select;
use nova_snark::traits::{Engine, ROCircuitTrait, ROTrait};
use num_bigint::BigUint;

/// The modulus of `E`'s base field (its points' coordinates).
pub fn base_modulus<E: Engine>() -> BigUint {
    field_to_big(&-E::Base::ONE) + 1u8
}

/// Absorb a point of `E` as the circuit over `E::Scalar` holds it: x's
/// limbs, then y's, (0, 0) for infinity.
pub fn absorb_point<E: Engine, R: ROTrait<E::Scalar>>(ro: &mut R, c: &Commitment<E>) {
    for v in io_coords::<E>(c) {
        for l in limbs_of(&field_to_big(&v)) {
            ro.absorb(big_to_field::<E::Scalar>(&l));
        }
    }
}

/// A point's limbs packed three to a number of the circuit's field (x₀ +
/// 2⁶⁸x₁ + 2¹³⁶y₀, x₂ + 2¹¹⁸y₁, y₂: below 2²⁰⁴, 2¹⁸⁶ and 2¹¹⁸, so one
/// packing for each limb vector in range), as [`OwnPoint::packed`] makes
/// them for a point whose limbs it has range-checked.
fn packed_values(c: [BigUint; 2]) -> [BigUint; 3] {
    let (x, y) = (limbs_of(&c[0]), limbs_of(&c[1]));
    [&x[0] + (&x[1] << 68u32) + (&y[0] << 136u32), &x[2] + (&y[1] << 118u32), y[2].clone()]
}

/// Absorb a point of `E` as [`OwnPoint::absorb_packed`] does.
pub fn absorb_point_packed<E: Engine, R: ROTrait<E::Scalar>>(ro: &mut R, c: &Commitment<E>) {
    for v in packed_values(io_coords::<E>(c).map(|v| field_to_big(&v))) {
        ro.absorb(big_to_field::<E::Scalar>(&v));
    }
}

/// Absorb a running instance of `E` as [`AllocOwnRunning::absorb`] does:
/// its points (witness parts, then E), u, X.
pub fn absorb_running<E: Engine, R: ROTrait<E::Scalar>>(ro: &mut R, u: &RunningInstance<E>) {
    for c in u.comm_w.iter().chain([&u.comm_e]) {
        absorb_point::<E, R>(ro, c);
    }
    ro.absorb(u.u);
    for x in &u.x {
        ro.absorb(*x);
    }
}

/// Absorb a fresh instance of `E` as the primary's circuit absorbs its
/// allocation: each part's limbs packed ([`OwnPoint::packed`]: they are
/// range-checked where allocated), then X.
pub fn absorb_fold<E: Engine, R: ROTrait<E::Scalar>>(ro: &mut R, u: &FoldInstance<E>) {
    for c in &u.comm_w {
        absorb_point_packed::<E, R>(ro, c);
    }
    for x in &u.x {
        ro.absorb(*x);
    }
}

/// A point of the primary curve in the primary's circuit: its coordinates
/// as limbs, (0, 0) for infinity.
#[derive(Clone)]
pub struct OwnPoint<F: PrimeField> {
    /// x.
    pub x: Foreign<F>,
    /// y.
    pub y: Foreign<F>,
    // whether the limbs were range-checked here (only then may they be packed)
    checked: bool,
}

impl<F: PrimeField> OwnPoint<F> {
    /// Allocate `c` (None: infinity), its limbs canonical when `checked`,
    /// else unchecked (a point the state hash binds).
    pub fn alloc<E: Engine<Scalar = F>, CS: ConstraintSystem<F>>(
        mut cs: CS,
        c: Option<&Commitment<E>>,
        checked: bool,
    ) -> Result<Self, SynthesisError> {
        let [x, y] = c.map_or([E::Base::ZERO; 2], io_coords::<E>).map(|v| field_to_big(&v));
        let q = base_modulus::<E>();
        let one = |cs: &mut CS, name: &str, v: &BigUint| {
            if checked {
                Foreign::alloc_canonical(cs.namespace(|| name.to_string()), Some(v), &q)
            } else {
                Foreign::alloc_unchecked(cs.namespace(|| name.to_string()), Some(v))
            }
        };
        Ok(OwnPoint {
            x: one(&mut cs, "x", &x)?,
            y: one(&mut cs, "y", &y)?,
            checked,
        })
    }

    /// Infinity, on the constrained zero.
    pub fn zero(zero: &AllocatedNum<F>) -> Self {
        OwnPoint {
            x: Foreign::zero(zero),
            y: Foreign::zero(zero),
            checked: true,
        }
    }

    /// `a` if `cond`, else `b`.
    pub fn select<CS: ConstraintSystem<F>>(mut cs: CS, a: &Self, b: &Self, cond: &Boolean) -> Result<Self, SynthesisError> {
        Ok(OwnPoint {
            x: Foreign::select(cs.namespace(|| "x"), &a.x, &b.x, cond)?,
            y: Foreign::select(cs.namespace(|| "y"), &a.y, &b.y, cond)?,
            checked: a.checked && b.checked,
        })
    }

    /// Absorb x's limbs, then y's.
    pub fn absorb<R: ROCircuitTrait<F>>(&self, ro: &mut R) {
        for c in [&self.x, &self.y] {
            for l in &c.limbs {
                ro.absorb(l);
            }
        }
    }

    /// The limbs packed three to a number ([`absorb_point_packed`]): for a
    /// point whose limbs were range-checked here, so the packing is one to
    /// one; an unchecked point is refused.
    pub fn packed<CS: ConstraintSystem<F>>(&self, mut cs: CS) -> Result<[AllocatedNum<F>; 3], SynthesisError> {
        if !self.checked {
            return Err(SynthesisError::Unsatisfiable("packing limbs that were not range-checked".into()));
        }
        let (x, y) = (&self.x.limbs, &self.y.limbs);
        let terms: [Vec<(&AllocatedNum<F>, u32)>; 3] =
            [vec![(&x[0], 0), (&x[1], 68), (&y[0], 136)], vec![(&x[2], 0), (&y[1], 118)], vec![(&y[2], 0)]];
        let mut out = Vec::with_capacity(3);
        for (k, t) in terms.iter().enumerate() {
            let pow = |n: u32| F::from(2).pow_vartime([u64::from(n)]);
            let value = t.iter().try_fold(F::ZERO, |acc, (l, n)| l.get_value().map(|v| acc + v * pow(*n)));
            let v = AllocatedNum::alloc(cs.namespace(|| format!("packed {k}")), || {
                value.ok_or(SynthesisError::AssignmentMissing)
            })?;
            cs.enforce(
                || format!("packed {k} is its limbs"),
                |lc| t.iter().fold(lc, |lc, (l, n)| lc + (pow(*n), l.get_variable())),
                |lc| lc + CS::one(),
                |lc| lc + v.get_variable(),
            );
            out.push(v);
        }
        out.try_into().map_err(|_| SynthesisError::Unsatisfiable("three packed values".into()))
    }

    /// Absorb the packed limbs ([`OwnPoint::packed`]).
    pub fn absorb_packed<CS: ConstraintSystem<F>, R: ROCircuitTrait<F>>(&self, cs: CS, ro: &mut R) -> Result<(), SynthesisError> {
        for v in self.packed(cs)? {
            ro.absorb(&v);
        }
        Ok(())
    }

    /// (x, y) as the CycleFold circuit's public IO holds them.
    pub fn io(&self) -> [Foreign<F>; 2] {
        [self.x.clone(), self.y.clone()]
    }
}

fn alloc_num<F: PrimeField, CS: ConstraintSystem<F>>(mut cs: CS, name: &str, v: F) -> Result<AllocatedNum<F>, SynthesisError> {
    AllocatedNum::alloc(cs.namespace(|| name.to_string()), || Ok(v))
}

/// The primary's running instance in its own circuit.
#[derive(Clone)]
pub struct AllocOwnRunning<F: PrimeField> {
    /// Witness commitments.
    pub w: Vec<OwnPoint<F>>,
    /// Error commitment.
    pub e: OwnPoint<F>,
    /// The relaxation scalar.
    pub u: AllocatedNum<F>,
    /// Public IO.
    pub x: Vec<AllocatedNum<F>>,
}

impl<F: PrimeField> AllocOwnRunning<F> {
    /// Allocate `inst` unchecked (None: the all-zero instance's values).
    pub fn alloc<E: Engine<Scalar = F>, CS: ConstraintSystem<F>>(
        mut cs: CS,
        inst: Option<&RunningInstance<E>>,
        parts: usize,
        io: usize,
    ) -> Result<Self, SynthesisError> {
        let w = (0..parts)
            .map(|k| OwnPoint::alloc::<E, _>(cs.namespace(|| format!("W{k}")), inst.map(|u| &u.comm_w[k]), false))
            .collect::<Result<Vec<_>, _>>()?;
        let e = OwnPoint::alloc::<E, _>(cs.namespace(|| "E"), inst.map(|u| &u.comm_e), false)?;
        let u = alloc_num(cs.namespace(|| "u"), "v", inst.map_or(F::ZERO, |u| u.u))?;
        let x = (0..io)
            .map(|k| alloc_num(cs.namespace(|| format!("X{k}")), "v", inst.map_or(F::ZERO, |u| u.x[k])))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AllocOwnRunning { w, e, u, x })
    }

    /// The all-zero instance on the constrained zero.
    pub fn zero(zero: &AllocatedNum<F>, parts: usize, io: usize) -> Self {
        AllocOwnRunning {
            w: vec![OwnPoint::zero(zero); parts],
            e: OwnPoint::zero(zero),
            u: zero.clone(),
            x: vec![zero.clone(); io],
        }
    }

    /// `a` if `cond`, else `b`.
    pub fn select<CS: ConstraintSystem<F>>(mut cs: CS, a: &Self, b: &Self, cond: &Boolean) -> Result<Self, SynthesisError> {
        let w = pairwise(&a.w, &b.w, |k, p, q| OwnPoint::select(cs.namespace(|| format!("W{k}")), p, q, cond))?;
        let e = OwnPoint::select(cs.namespace(|| "E"), &a.e, &b.e, cond)?;
        let u = conditionally_select(cs.namespace(|| "u"), &a.u, &b.u, cond)?;
        let x = pairwise(&a.x, &b.x, |k, p, q| conditionally_select(cs.namespace(|| format!("X{k}")), p, q, cond))?;
        Ok(AllocOwnRunning { w, e, u, x })
    }

    /// Absorb as [`absorb_running`] does.
    pub fn absorb<R: ROCircuitTrait<F>>(&self, ro: &mut R) {
        for p in self.w.iter().chain([&self.e]) {
            p.absorb(ro);
        }
        ro.absorb(&self.u);
        for x in &self.x {
            ro.absorb(x);
        }
    }
}

/// A fresh instance of the primary in its own circuit, limbs canonical.
#[derive(Clone)]
pub struct AllocOwnIncoming<F: PrimeField> {
    /// Witness commitments.
    pub w: Vec<OwnPoint<F>>,
    /// Public IO.
    pub x: Vec<AllocatedNum<F>>,
}

impl<F: PrimeField> AllocOwnIncoming<F> {
    /// Allocate `inst` (None: points at infinity and zeros, the first fold's).
    pub fn alloc<E: Engine<Scalar = F>, CS: ConstraintSystem<F>>(
        mut cs: CS,
        inst: Option<&FoldInstance<E>>,
        parts: usize,
        io: usize,
    ) -> Result<Self, SynthesisError> {
        let w = (0..parts)
            .map(|k| OwnPoint::alloc::<E, _>(cs.namespace(|| format!("W{k}")), inst.map(|u| &u.comm_w[k]), true))
            .collect::<Result<Vec<_>, _>>()?;
        let x = (0..io)
            .map(|k| alloc_num(cs.namespace(|| format!("X{k}")), "v", inst.map_or(F::ZERO, |u| u.x[k])))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AllocOwnIncoming { w, x })
    }

}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::frontend::test_cs::TestConstraintSystem;

    type E1 = nova_snark::provider::Bn256EngineKZG;
    type Fr = <E1 as Engine>::Scalar;

    #[test]
    fn a_coordinate_has_only_its_canonical_limbs() {
        let q = base_modulus::<E1>();
        let top = (&q >> 136u32) << 136u32;
        for (v, ok) in [
            (BigUint::from(5u8), true),
            (&q - 1u8, false), // top limb equal to q's: refused (probability < 2⁻¹¹⁷)
            (&top - 1u8, true),
            (q.clone(), false),
            (&q + 5u8, false), // 5 + q, the other representative below 2²⁵⁴
            ((BigUint::from(1u8) << 254u32) - 1u8, false),
        ] {
            let mut cs = TestConstraintSystem::<Fr>::new();
            // the guard refuses before the constraints would
            let guarded = Foreign::<Fr>::alloc_canonical(cs.namespace(|| "g"), Some(&v), &q);
            assert_eq!(guarded.is_ok(), ok, "{v}");
            let mut cs = TestConstraintSystem::<Fr>::new();
            Foreign::<Fr>::alloc_canonical_with(cs.namespace(|| "v"), Some(&v), &q, false).unwrap();
            assert_eq!(cs.is_satisfied(), ok, "{v}");
        }
    }

    #[test]
    fn only_checked_limbs_are_packed_and_the_packing_is_the_natives() {
        use nova_snark::traits::commitment::CommitmentEngineTrait;
        let ck = <E1 as Engine>::CE::setup(b"own test", 2).unwrap();
        let c = <E1 as Engine>::CE::commit(&ck, &[Fr::random(rand::rngs::OsRng), Fr::ONE], &Fr::ZERO);
        let mut cs = TestConstraintSystem::<Fr>::new();
        let checked = OwnPoint::<Fr>::alloc::<E1, _>(cs.namespace(|| "c"), Some(&c), true).unwrap();
        let unchecked = OwnPoint::<Fr>::alloc::<E1, _>(cs.namespace(|| "u"), Some(&c), false).unwrap();
        let packed = checked.packed(cs.namespace(|| "p")).unwrap();
        assert!(unchecked.packed(cs.namespace(|| "q")).is_err());
        assert!(cs.is_satisfied());
        let native = packed_values(io_coords::<E1>(&c).map(|v| field_to_big(&v)));
        for (a, b) in packed.iter().zip(&native) {
            assert_eq!(field_to_big(&a.get_value().unwrap()), *b);
        }
    }
}
