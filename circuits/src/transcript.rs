//! The Fiat–Shamir side of a proof, in one place for the native witness
//! builder, the circuit and the verifier: domain tags of the chains that
//! live only inside proofs, the first link of the second transcript, the
//! second challenge and the segment chains' links (all with the short
//! sponge `h8`: the circuit computes them in every fold). The first
//! challenge ρ is drawn by the folding layer from the commitments to every
//! fold's first phase (docs/SOUNDNESS.md, "Challenges from commitments").

use serde::{Deserialize, Serialize};
use zkstep_core::poseidon::{h8_of, Fr};

/// Domain tags of the chains that live only inside proofs.
pub mod domain {
    /// Schedule chain.
    pub const SCHEDULE: u64 = 0x7a6b_7374_6570_0010;
    // 0x…0011 was the transcript T of ρ (ρ is now drawn from commitments)
    /// Chain over the τ-folded columns of a layer's output (τA records).
    pub const TAU_A: u64 = 0x7a6b_7374_6570_0012;
    /// Digest of an Aρ claim vector.
    pub const A_RHO: u64 = 0x7a6b_7374_6570_0013;
    /// Second transcript: the τA vectors the layers consume (after ρ).
    pub const TRANSCRIPT2: u64 = 0x7a6b_7374_6570_0014;
    /// Segment chain of the steps' batch commitments.
    pub const SEGMENT_BATCHES: u64 = 0x7a6b_7374_6570_0015;
    /// Segment chain of the steps' Adam constants.
    pub const SEGMENT_ADAM: u64 = 0x7a6b_7374_6570_0016;
}

/// The two Fiat–Shamir challenges of a proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenges {
    /// ρ: the random linear combinations of the matrix checks, the folding
    /// layer's second run challenge (after every fold's first phase).
    pub rho: Fr,
    /// γ = H(T2_final, 1): binds the τA vectors between layers.
    pub gamma: Fr,
}

/// `T2₀ = H₈(TRANSCRIPT2, spec_digest, ρ)`: the second transcript starts
/// after ρ, so γ comes after everything ρ depends on.
pub fn transcript2_init(spec_digest: Fr, rho: Fr) -> Fr {
    h8_of(&[Fr::from(domain::TRANSCRIPT2), spec_digest, rho])
}

/// The second challenge: `γ = H₈(T2_final, 1, 0, …)`.
pub fn challenge2_from_transcript(t2_final: Fr) -> Fr {
    h8_of(&[t2_final, Fr::from(1u64)])
}

/// One link of a segment chain: `H₈(h, values…)` (at most 7 values).
pub fn segment_absorb(h: Fr, values: &[Fr]) -> Fr {
    let mut input = vec![h];
    input.extend_from_slice(values);
    h8_of(&input)
}
