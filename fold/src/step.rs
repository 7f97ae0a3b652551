//! The step circuit the IVC applies once per fold, in two phases.
//!
//! Phase one allocates everything that does not depend on a challenge (W₁:
//! limbs, multiplicities, the values a check at a random point tests); the
//! folding layer commits W₁, draws the challenges from that commitment, and
//! phase two allocates what depends on them (W₂: inverses, running sums) and
//! returns the next state. A circuit without challenges does all its work in
//! phase one; its witness is not split at all.

use ff::PrimeField;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};

/// How the challenges of a two-phase step circuit are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ChallengeMode {
    /// No challenges: the step circuit has one phase.
    None,
    /// Each fold draws its own: αⱼ = H(pp, comm_W₁, j), a public input of the
    /// fold's instance, recomputed by the circuit that folds it.
    PerFold,
    /// One set for the whole IVC: αⱼ = H(chain, j), where the chain hashes
    /// every fold's comm_W₁ in order inside the circuit that folds it; the
    /// challenges are constants of the state, and the verifier checks them
    /// against the chain's end. The prover commits every W₁ first.
    PerRun,
    /// Two rounds of `PerRun` challenges: the first as `PerRun`'s, after
    /// every fold's W₁; the step circuit's last
    /// [`StepCircuit::num_late_challenges`] after every fold's W₂ as well,
    /// βⱼ = H(end₁, end₂, j), where a second chain hashes every fold's
    /// comm_W₂. W₂ is then the step's second phase only; what depends on
    /// the late challenges goes to W₃ ([`crate::after_late_challenges`]).
    /// The prover commits every W₁, then every W₂, then folds.
    PerRunTwice,
}

/// A step circuit over the field `F`.
pub trait StepCircuit<F: PrimeField>: Send + Sync {
    /// What phase one hands to phase two.
    type Carry;

    /// Number of state slots.
    fn arity(&self) -> usize;

    /// Number of challenges phase two receives (0 with [`ChallengeMode::None`]).
    fn num_challenges(&self) -> usize {
        0
    }

    /// How many of the challenges (the last ones) are drawn in the second
    /// round ([`ChallengeMode::PerRunTwice`]); 0 for the other modes.
    fn num_late_challenges(&self) -> usize {
        0
    }

    /// How many of the last values phase one allocates are supplied late (a
    /// lookup table's multiplicities, counted over a whole step): a `PerRun`
    /// prover's first pass commits W₁ without them
    /// ([`crate::Ivc::precommit`]) and adds them once every fold's first
    /// pass has run ([`crate::Precommitment::complete`]). They are W₁ all
    /// the same: committed before any challenge is drawn.
    fn late(&self) -> usize {
        0
    }

    /// The next state as phase one leaves it, when phase two changes only
    /// slots that depend on the challenges: a `PerRun` prover's first pass
    /// then skips phase two (nothing it computes is needed before the
    /// challenges exist). None: the first pass runs phase two at stand-in
    /// challenges to learn the next state.
    fn provisional_next(&self, _carry: &Self::Carry) -> Option<Vec<F>> {
        None
    }

    /// Phase one: allocate W₁ (nothing that depends on a challenge).
    fn first<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Self::Carry, SynthesisError>;

    /// Phase two: allocate W₂ given the challenges (both rounds, the late
    /// ones last; allocations that depend on a late one inside
    /// [`crate::after_late_challenges`]); return z_{i+1}.
    fn second<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        carry: Self::Carry,
        challenges: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError>;
}

/// Any one-phase nova-snark step circuit, run as a step circuit of this
/// layer (the differential tests run the same circuit through both).
#[derive(Clone, Debug)]
pub struct OnePhase<C>(pub C);

impl<F: PrimeField, C: nova_snark::traits::circuit::StepCircuit<F>> StepCircuit<F> for OnePhase<C> {
    type Carry = Vec<AllocatedNum<F>>;

    fn arity(&self) -> usize {
        self.0.arity()
    }

    fn first<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Self::Carry, SynthesisError> {
        self.0.synthesize(cs, z)
    }

    fn second<CS: ConstraintSystem<F>>(
        &self,
        _: &mut CS,
        carry: Self::Carry,
        _: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
        Ok(carry)
    }
}
