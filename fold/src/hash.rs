//! The hashes of the layer's own fold challenges and of the run's
//! challenges, natively: the folding challenge r (compression's fold of the
//! last instance), the challenge that masks a running instance, and the
//! PerRun challenges drawn from the chains' ends. All are nova-snark's
//! Poseidon RO of the curve named (`E::RO` over `E::Base`): the wide sponge
//! (rate 24) where many values are hashed, the narrow one (rate 5) for a
//! chain link. The hashes the primary circuit computes (its state hash,
//! r₁, the CycleFold fold's K, the chain links, PerFold challenges) live
//! beside that circuit in `augmented`, each with its native twin; every
//! twin pair is exercised by the IVC's own checks, which fail if the two
//! sides differ.

use crate::instance::{Commitment, FoldInstance, RunningInstance};
use nova_snark::gadgets::utils::base_as_scalar;
use nova_snark::traits::{AbsorbInROTrait, Engine, ROConstants, ROMode, ROTrait};

/// Bits kept of a hash that is public IO: below both fields' moduli, so
/// the value is the same number in the circuit of either curve.
pub const HASH_BITS: usize = 250;
/// Bits of K, the hash a folding challenge r = 2¹²⁸ + 2K + 1 is made from.
pub const CHALLENGE_BITS: usize = 128;

/// Which sponge width the layer's hashes use (a chain link: [`LINK_MODE`]).
pub const RO_MODE: ROMode = ROMode::Wide;
/// The chain links' sponge: four values (the previous link and a point's
/// three packed limbs) fit its rate, so a link is one narrow permutation
/// (≈ 2.5× fewer constraints than the wide one, and no bit decomposition
/// of its output).
pub const LINK_MODE: ROMode = ROMode::Narrow;

fn ro<E: Engine>(c: &ROConstants<E>) -> E::RO {
    E::RO::new_with_mode(c.clone(), RO_MODE)
}


/// The folding challenge r = 2¹²⁸ + 2K + 1 for K = H(pp, u, T) (128
/// bits), as a scalar of `E`: the odd number the circuits' ladder
/// multiplies by with no offset left over (`ladder`). The running instance
/// is not absorbed: u's public IO holds its hash.
pub fn fold_challenge<E: Engine>(
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
pub fn relaxed_challenge<E: Engine>(
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
