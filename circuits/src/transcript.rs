//! The Fiat–Shamir side of a proof, in one place for the native witness
//! builder, the circuit and the verifier: domain tags of the chains that
//! live only inside proofs and the segment chains' links (with the short
//! sponge `h8`: the circuit computes them in every fold). Both challenges
//! are drawn by the folding layer: ρ from the commitments to every fold's
//! first phase, γ from those and the commitments to every fold's second
//! part (docs/SOUNDNESS.md, "Challenges from commitments").

use serde::{Deserialize, Serialize};
use zkstep_core::poseidon::{h8_of, Fr};

/// Domain tags of the chains that live only inside proofs.
pub mod domain {
    /// Schedule chain.
    pub const SCHEDULE: u64 = 0x7a6b_7374_6570_0010;
    // 0x…0011 was the transcript T of ρ (ρ is now drawn from commitments)
    // 0x…0012 was the digest of a consumed τA vector (now fixed by comm_W₂)
    /// Digest of an Aρ claim vector.
    pub const A_RHO: u64 = 0x7a6b_7374_6570_0013;
    // 0x…0014 was the second transcript T2 of γ (γ is now drawn from commitments)
    /// Segment chain of the steps' batch commitments.
    pub const SEGMENT_BATCHES: u64 = 0x7a6b_7374_6570_0015;
    /// Segment chain of the steps' Adam constants.
    pub const SEGMENT_ADAM: u64 = 0x7a6b_7374_6570_0016;
    /// The evaluation point ζ of the checkpoint polynomials.
    pub const ZETA: u64 = 0x7a6b_7374_6570_0017;
    /// Commit(θ) of a checkpoint's KZG point (`theta::commitment`).
    pub const CHECKPOINT_POINT: u64 = 0x7a6b_7374_6570_0018;
    /// The combination r of a proof's KZG opening.
    pub const OPENING_R: u64 = 0x7a6b_7374_6570_0019;
    /// The digest of π_merge's commitments that its ζ absorbs.
    pub const MERGE_ANCHORS: u64 = 0x7a6b_7374_6570_001a;
}

/// The two Fiat–Shamir challenges of a proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenges {
    /// ρ: the random linear combinations of the matrix checks, the folding
    /// layer's second run challenge (after every fold's first phase).
    pub rho: Fr,
    /// γ: binds the τA vectors between layers, the folding layer's
    /// second-round challenge (after every fold's second part, which holds
    /// the consumed τA vectors).
    pub gamma: Fr,
}

/// One link of a segment chain: `H₈(h, values…)` (at most 7 values).
pub fn segment_absorb(h: Fr, values: &[Fr]) -> Fr {
    let mut input = vec![h];
    input.extend_from_slice(values);
    h8_of(&input)
}
