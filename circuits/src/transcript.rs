//! The Fiat–Shamir side of a proof, in one place for the native witness
//! builder, the circuit and the verifier: domain tags of the chains that
//! live only inside proofs, the first links of the two transcripts and the
//! challenges. The order in which a fold's values enter the transcript is
//! `fold::record::fold_transcript`.

use serde::{Deserialize, Serialize};
use zkstep_core::poseidon::{h24, Fr, RATE};

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
}

/// The two Fiat–Shamir challenges of a proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenges {
    /// ρ = H(T_final): the random linear combinations of the matrix checks.
    pub rho: Fr,
    /// γ = H(T2_final, 1): binds the τA vectors between layers.
    pub gamma: Fr,
}

/// `T₀ = H(TRANSCRIPT, spec_digest, c_before, c_after, c_batch, step)`.
pub fn transcript_init(spec_digest: Fr, c_before: Fr, c_after: Fr, c_batch: Fr, step: u64) -> Fr {
    let mut input = [Fr::from(0u64); RATE];
    input[0] = Fr::from(domain::TRANSCRIPT);
    input[1] = spec_digest;
    input[2] = c_before;
    input[3] = c_after;
    input[4] = c_batch;
    input[5] = Fr::from(step);
    h24(&input)
}

/// `T2₀ = H(TRANSCRIPT2, spec_digest, ρ)`: the second transcript starts
/// after ρ, so γ comes after everything ρ depends on.
pub fn transcript2_init(spec_digest: Fr, rho: Fr) -> Fr {
    let mut input = [Fr::from(0u64); RATE];
    input[0] = Fr::from(domain::TRANSCRIPT2);
    input[1] = spec_digest;
    input[2] = rho;
    h24(&input)
}

/// The challenge: `ρ = H(T_final, 0, …)`.
pub fn challenge_from_transcript(t_final: Fr) -> Fr {
    let mut input = [Fr::from(0u64); RATE];
    input[0] = t_final;
    h24(&input)
}

/// The second challenge: `γ = H(T2_final, 1, 0, …)`.
pub fn challenge2_from_transcript(t2_final: Fr) -> Fr {
    let mut input = [Fr::from(0u64); RATE];
    input[0] = t2_final;
    input[1] = Fr::from(1u64);
    h24(&input)
}
