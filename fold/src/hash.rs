//! The layer's hashes, natively and in the circuit: the state hash an
//! instance's public IO carries, the folding challenge r, the chain of W₁
//! commitments and the challenges drawn from them. All are nova-snark's
//! Poseidon RO of the curve whose instances are folded (`E::RO` natively,
//! `E::ROCircuit` in the circuit over `E::Base`): the wide sponge (rate 24)
//! where many values are hashed or the output crosses to the other field,
//! the narrow one (rate 5) for a chain link, whose four values fit it and
//! whose output stays in its field (so it is kept whole, not cut to bits). The circuit twins of the
//! two hashes that read an allocated instance (the state hash, r) live
//! beside that instance in `gadgets`; every twin pair is exercised by the
//! IVC's own checks, which fail if the two sides differ.

use crate::instance::{Commitment, FoldInstance, RunningInstance};
use ff::PrimeField;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use nova_snark::gadgets::ecc::AllocatedPoint;
use nova_snark::gadgets::utils::{base_as_scalar, le_bits_to_num};
use nova_snark::traits::{
    AbsorbInROTrait, Engine, ROCircuitTrait, ROConstants, ROConstantsCircuit, ROMode, ROTrait,
};

/// Bits kept of a hash that is public IO: below both fields' moduli, so
/// the value is the same number in the circuit of either curve.
pub const HASH_BITS: usize = 250;
/// Bits of K, the hash a folding challenge r = 2¹²⁸ + 2K + 1 is made from.
pub const CHALLENGE_BITS: usize = 128;

/// Which sponge width the layer's hashes use (a chain link: [`LINK_MODE`]).
pub const RO_MODE: ROMode = ROMode::Wide;
/// The chain links' sponge: four values (the previous link and a point)
/// fit its rate, so a link is one narrow permutation (≈ 4× fewer
/// constraints than the wide one, and no bit decomposition of its output).
pub const LINK_MODE: ROMode = ROMode::Narrow;

fn ro<E: Engine>(c: &ROConstants<E>) -> E::RO {
    E::RO::new_with_mode(c.clone(), RO_MODE)
}

pub(crate) fn ro_circuit<E: Engine>(c: &ROConstantsCircuit<E>) -> E::ROCircuit {
    E::ROCircuit::new_with_mode(c.clone(), RO_MODE)
}

/// The state hash of the circuit that folds `E`'s instances:
/// `H(pp, i, state, U, blind)` (state: the primary's h₀ and zᵢ, the
/// secondary's chain).
pub fn state_hash<E: Engine + 'static>(
    c: &ROConstants<E>,
    pp: E::Base,
    i: u64,
    state: &[E::Base],
    u: &RunningInstance<E>,
    blind: E::Base,
) -> E::Base {
    let mut h = ro::<E>(c);
    h.absorb(pp);
    h.absorb(E::Base::from(i));
    for s in state {
        h.absorb(*s);
    }
    u.absorb(&mut h);
    h.absorb(blind);
    h.squeeze(HASH_BITS, false)
}

/// The folding challenge r = 2¹²⁸ + 2K + 1 for K = H(pp, u, T) (128
/// bits), as a scalar of `E`: the odd number the circuits' ladder
/// multiplies by with no offset left over (`ladder`). The running instance
/// is not absorbed: u's public IO holds its hash.
pub fn fold_challenge<E: Engine + 'static>(
    c: &ROConstants<E>,
    pp: E::Base,
    u: &FoldInstance<E>,
    t: &Commitment<E>,
) -> E::Scalar {
    let mut h = ro::<E>(c);
    h.absorb(pp);
    u.absorb(&mut h);
    t.absorb_in_ro(&mut h);
    let k = base_as_scalar::<E>(h.squeeze(CHALLENGE_BITS, false));
    crate::ladder::odd_challenge::<E::Scalar>(0, CHALLENGE_BITS as u32) + k + k
}

/// The challenge of folding two running instances (the random instance
/// folded in before compression): H(pp, U₁, U₂, T), outside any circuit.
pub fn relaxed_challenge<E: Engine + 'static>(
    c: &ROConstants<E>,
    pp: E::Base,
    u1: &RunningInstance<E>,
    u2: &RunningInstance<E>,
    t: &Commitment<E>,
) -> E::Scalar {
    let mut h = ro::<E>(c);
    h.absorb(pp);
    u1.absorb(&mut h);
    u2.absorb(&mut h);
    t.absorb_in_ro(&mut h);
    base_as_scalar::<E>(h.squeeze(CHALLENGE_BITS, false))
}

/// One link of the chain of W₁ commitments: H(previous, comm_W₁), the
/// narrow sponge's whole output. A link never leaves `E::Base` (the next
/// link, the secondary's state hash and the run's challenges, which are
/// cut to [`HASH_BITS`], all read it there), so nothing truncates it.
pub fn chain_link<E: Engine>(c: &ROConstants<E>, prev: E::Base, w1: &Commitment<E>) -> E::Base {
    let mut h = E::RO::new_with_mode(c.clone(), LINK_MODE);
    h.absorb(prev);
    w1.absorb_in_ro(&mut h);
    h.squeeze(E::Base::NUM_BITS as usize, false)
}

/// Circuit twin of [`chain_link`].
pub fn chain_link_circuit<E: Engine, CS: ConstraintSystem<E::Base>>(
    cs: CS,
    c: &ROConstantsCircuit<E>,
    prev: &AllocatedNum<E::Base>,
    w1: &AllocatedPoint<E>,
) -> Result<AllocatedNum<E::Base>, SynthesisError> {
    let mut h = E::ROCircuit::new_with_mode(c.clone(), LINK_MODE);
    h.absorb(prev);
    w1.absorb_in_ro(&mut h)?;
    h.squeeze_scalar(cs)
}

/// Challenge j of a fold whose W₁ commitment is `w1`: H(pp, comm_W₁, j).
pub fn fold_drawn<E: Engine>(c: &ROConstants<E>, pp: E::Base, w1: &Commitment<E>, j: usize) -> E::Base {
    let mut h = ro::<E>(c);
    h.absorb(pp);
    w1.absorb_in_ro(&mut h);
    h.absorb(E::Base::from(j as u64));
    h.squeeze(HASH_BITS, false)
}

/// Circuit twin of [`fold_drawn`].
pub fn fold_drawn_circuit<E: Engine, CS: ConstraintSystem<E::Base>>(
    mut cs: CS,
    c: &ROConstantsCircuit<E>,
    pp: &AllocatedNum<E::Base>,
    w1: &AllocatedPoint<E>,
    j: usize,
) -> Result<AllocatedNum<E::Base>, SynthesisError> {
    let mut h = ro_circuit::<E>(c);
    h.absorb(pp);
    w1.absorb_in_ro(&mut h)?;
    let jv = AllocatedNum::alloc(cs.namespace(|| "j"), || Ok(E::Base::from(j as u64)))?;
    cs.enforce(
        || "j is the constant",
        |lc| lc + jv.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + (E::Base::from(j as u64), CS::one()),
    );
    h.absorb(&jv);
    let bits = h.squeeze(cs.namespace(|| "squeeze"), HASH_BITS, false)?;
    le_bits_to_num(cs.namespace(|| "value"), &bits)
}

/// Challenge j of a whole run, from the chain's last link: H(end, j).
pub fn run_drawn<E: Engine>(c: &ROConstants<E>, end: E::Base, j: usize) -> E::Base {
    let mut h = ro::<E>(c);
    h.absorb(end);
    h.absorb(E::Base::from(j as u64));
    h.squeeze(HASH_BITS, false)
}

/// Challenge j of a run's second round (PerRunTwice), from both chains'
/// last links: H(end₁, end₂, j).
pub fn run_drawn_late<E: Engine>(c: &ROConstants<E>, end1: E::Base, end2: E::Base, j: usize) -> E::Base {
    let mut h = ro::<E>(c);
    h.absorb(end1);
    h.absorb(end2);
    h.absorb(E::Base::from(j as u64));
    h.squeeze(HASH_BITS, false)
}
