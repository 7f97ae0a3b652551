//! A two-phase step circuit for tests: a permutation shown by a grand
//! product at a challenge drawn after the values are committed.
//!
//! Phase one allocates a fold's values a₁…aₙ and b₁…bₙ (W₁); phase two
//! computes Π(α − aᵢ) and Π(α − bᵢ) (W₂). `PerFold`: each fold's two
//! products must be equal (b a permutation of a within the fold), and the
//! state counts folds. `PerRun`: the state carries both running products
//! across folds, equal at the end iff the run's b is a permutation of its a.

use ff::PrimeField;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};

/// The permutation circuit of one fold.
#[derive(Clone, Debug)]
pub struct Permutation<F> {
    /// Values of the first list.
    pub a: Vec<F>,
    /// Values of the second list.
    pub b: Vec<F>,
    /// Whether each fold must hold a permutation (PerFold) or only the run.
    pub per_fold: bool,
    /// Added to α where phase two computes its values (not in its
    /// constraints): a prover that computes W₂ under another challenge.
    pub skew: F,
}

impl<F: PrimeField> Permutation<F> {
    /// An honest fold of these lists.
    pub fn new(a: Vec<u64>, b: Vec<u64>, per_fold: bool) -> Self {
        assert_eq!(a.len(), b.len());
        Permutation {
            a: a.into_iter().map(F::from).collect(),
            b: b.into_iter().map(F::from).collect(),
            per_fold,
            skew: F::ZERO,
        }
    }

    /// Π(α − v) natively.
    pub fn product(alpha: F, v: &[F]) -> F {
        v.iter().fold(F::ONE, |p, x| p * (alpha - x))
    }
}

fn running_product<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    start: &AllocatedNum<F>,
    alpha: &AllocatedNum<F>,
    skew: F,
    values: &[AllocatedNum<F>],
) -> Result<AllocatedNum<F>, SynthesisError> {
    let mut p = start.clone();
    for (k, v) in values.iter().enumerate() {
        let next = AllocatedNum::alloc(cs.namespace(|| format!("p{k}")), || {
            match (p.get_value(), alpha.get_value(), v.get_value()) {
                (Some(p), Some(a), Some(v)) => Ok(p * (a + skew - v)),
                _ => Err(SynthesisError::AssignmentMissing),
            }
        })?;
        cs.enforce(
            || format!("p{k}·(α − v{k})"),
            |lc| lc + p.get_variable(),
            |lc| lc + alpha.get_variable() - v.get_variable(),
            |lc| lc + next.get_variable(),
        );
        p = next;
    }
    Ok(p)
}

impl<F: PrimeField> crate::StepCircuit<F> for Permutation<F> {
    type Carry = (Vec<AllocatedNum<F>>, Vec<AllocatedNum<F>>, Vec<AllocatedNum<F>>);

    fn arity(&self) -> usize {
        2
    }

    fn num_challenges(&self) -> usize {
        1
    }

    fn first<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Self::Carry, SynthesisError> {
        let mut alloc = |name: &str, v: &[F]| {
            v.iter()
                .enumerate()
                .map(|(k, x)| AllocatedNum::alloc(cs.namespace(|| format!("{name}{k}")), || Ok(*x)))
                .collect::<Result<Vec<_>, _>>()
        };
        let a = alloc("a", &self.a)?;
        let b = alloc("b", &self.b)?;
        Ok((z.to_vec(), a, b))
    }

    fn second<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        (z, a, b): Self::Carry,
        challenges: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
        let alpha = &challenges[0];
        if self.per_fold {
            let one = AllocatedNum::alloc(cs.namespace(|| "one"), || Ok(F::ONE))?;
            cs.enforce(
                || "one",
                |lc| lc + one.get_variable(),
                |lc| lc + CS::one(),
                |lc| lc + CS::one(),
            );
            let pa = running_product(cs.namespace(|| "a"), &one, alpha, self.skew, &a)?;
            let pb = running_product(cs.namespace(|| "b"), &one, alpha, self.skew, &b)?;
            cs.enforce(
                || "Π(α − a) = Π(α − b)",
                |lc| lc + pa.get_variable() - pb.get_variable(),
                |lc| lc + CS::one(),
                |lc| lc,
            );
            let count = AllocatedNum::alloc(cs.namespace(|| "count"), || {
                z[0].get_value()
                    .map(|v| v + F::ONE)
                    .ok_or(SynthesisError::AssignmentMissing)
            })?;
            cs.enforce(
                || "count + 1",
                |lc| lc + z[0].get_variable() + CS::one(),
                |lc| lc + CS::one(),
                |lc| lc + count.get_variable(),
            );
            Ok(vec![count, z[1].clone()])
        } else {
            let pa = running_product(cs.namespace(|| "a"), &z[0], alpha, self.skew, &a)?;
            let pb = running_product(cs.namespace(|| "b"), &z[1], alpha, self.skew, &b)?;
            Ok(vec![pa, pb])
        }
    }
}

/// z ↦ 2z + 1 on one slot: the smallest one-phase circuit (nova-snark's
/// trait, run through [`crate::OnePhase`]).
#[derive(Clone, Debug, Default)]
pub struct Doubler;

impl<F: PrimeField> nova_snark::traits::circuit::StepCircuit<F> for Doubler {
    fn arity(&self) -> usize {
        1
    }

    fn synthesize<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
        let y = AllocatedNum::alloc(cs.namespace(|| "y"), || {
            z[0].get_value()
                .map(|v| v.double() + F::ONE)
                .ok_or(SynthesisError::AssignmentMissing)
        })?;
        cs.enforce(
            || "y = 2z + 1",
            |lc| lc + z[0].get_variable() + z[0].get_variable() + CS::one(),
            |lc| lc + CS::one(),
            |lc| lc + y.get_variable(),
        );
        Ok(vec![y])
    }
}
