//! The Fiat–Shamir side of a proof, in one place for the native witness
//! builder, the circuit and the verifier: domain tags of the chains that
//! live only inside proofs, the first links of the two transcripts, the
//! challenges and the segment chains' links (all with the short sponge
//! `h8`: the circuit computes them in every fold). The order in which a fold's values enter the transcript is
//! `fold::record::fold_transcript`.

use serde::{Deserialize, Serialize};
use zkstep_core::poseidon::{h8_of, Fr};

/// Domain tags of the chains that live only inside proofs.
pub mod domain {
    /// Schedule chain.
    pub const SCHEDULE: u64 = 0x7a6b_7374_6570_0010;
    /// Transcript chain (everything the challenge must come after).
    pub const TRANSCRIPT: u64 = 0x7a6b_7374_6570_0011;
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
    /// ρ = H(T_final): the random linear combinations of the matrix checks.
    pub rho: Fr,
    /// γ = H(T2_final, 1): binds the τA vectors between layers.
    pub gamma: Fr,
}

/// `T₀ = H₈(TRANSCRIPT, spec_digest, c_before, c_after, c_batch, step)`.
pub fn transcript_init(spec_digest: Fr, c_before: Fr, c_after: Fr, c_batch: Fr, step: u64) -> Fr {
    transcript_init_fr(spec_digest, c_before, c_after, c_batch, Fr::from(step))
}

/// [`transcript_init`] with the step as a field element (the circuit's view).
pub fn transcript_init_fr(spec_digest: Fr, c_before: Fr, c_after: Fr, c_batch: Fr, step: Fr) -> Fr {
    h8_of(&[
        Fr::from(domain::TRANSCRIPT),
        spec_digest,
        c_before,
        c_after,
        c_batch,
        step,
    ])
}

/// `T2₀ = H₈(TRANSCRIPT2, spec_digest, ρ)`: the second transcript starts
/// after ρ, so γ comes after everything ρ depends on.
pub fn transcript2_init(spec_digest: Fr, rho: Fr) -> Fr {
    h8_of(&[Fr::from(domain::TRANSCRIPT2), spec_digest, rho])
}

/// The challenge: `ρ = H₈(T_final, 0, …)`.
pub fn challenge_from_transcript(t_final: Fr) -> Fr {
    h8_of(&[t_final])
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
