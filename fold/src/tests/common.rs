//! Engines and small step circuits shared by the fold crate's tests.
#![allow(dead_code)]
#![allow(clippy::unwrap_used)]

use ff::Field;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use nova_snark::traits::snark::RelaxedR1CSSNARKTrait;
use crate::{ChallengeMode, Params};

pub type E1 = nova_snark::provider::Bn256EngineKZG;
/// The secondary as zkstep runs it: commitments in rows.
pub type E2 = crate::rows::GrumpkinRows;
pub type F = <E1 as nova_snark::traits::Engine>::Scalar;
/// The later parts' openings (HyperKZG: a degree bound, docs/SOUNDNESS.md).
pub type EE1 = nova_snark::provider::hyperkzg::EvaluationEngine<E1>;
/// Spartan's openings, as zkstep runs them.
pub type EeSpartan1 = nova_snark::provider::mercury::EvaluationEngine<E1>;
pub type EE2 = crate::rows::RowIpa;
pub type S1 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E1, EeSpartan1>;
pub type S1Pp = nova_snark::spartan::ppsnark::RelaxedR1CSSNARK<E1, EeSpartan1>;
pub type S2 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E2, EE2>;
pub type Proof = crate::CompressedProof<E1, E2, S1, S2, EE1>;

/// z ↦ (z₀³ + z₁ + 5, z₀ + z₁): a one-phase circuit of arity 2.
#[derive(Clone, Debug, Default)]
pub struct Cubic;

impl nova_snark::traits::circuit::StepCircuit<F> for Cubic {
    fn arity(&self) -> usize {
        2
    }

    fn synthesize<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
        let x2 = z[0].square(cs.namespace(|| "x2"))?;
        let x3 = x2.mul(cs.namespace(|| "x3"), &z[0])?;
        let y = AllocatedNum::alloc(cs.namespace(|| "y"), || {
            let v = x3.get_value().zip(z[1].get_value());
            v.map(|(a, b)| a + b + F::from(5))
                .ok_or(SynthesisError::AssignmentMissing)
        })?;
        cs.enforce(
            || "y = x3 + z1 + 5",
            |lc| lc + x3.get_variable() + z[1].get_variable() + (F::from(5), CS::one()),
            |lc| lc + CS::one(),
            |lc| lc + y.get_variable(),
        );
        let s = z[0].add(cs.namespace(|| "s"), &z[1])?;
        Ok(vec![y, s])
    }
}

/// The native twin of [`Cubic`].
pub fn cubic(z: &[F]) -> Vec<F> {
    vec![z[0] * z[0] * z[0] + z[1] + F::from(5), z[0] + z[1]]
}

/// Dev parameters for a step circuit, sized for Spartan.
pub fn params<C: crate::StepCircuit<F>>(c: &C, mode: ChallengeMode) -> Params<E1, E2> {
    Params::setup(c, mode, &*S1::ck_floor(), &*S2::ck_floor()).unwrap()
}

/// n copies of the field element 1 + k, for inputs that are not all zero.
pub fn ramp(n: usize) -> Vec<F> {
    (0..n).map(|k| F::from(k as u64 + 1)).collect()
}

/// A random field element.
pub fn rand_f() -> F {
    F::random(&mut rand::rngs::OsRng)
}
