//! zkstep-fold: the folding layer under zkstep's proofs.
//!
//! A Nova IVC over a cycle of curves, written on nova-snark's public
//! building blocks (its constraint-system frontend, R1CS shapes, commitment
//! engines, point and non-native gadgets, Poseidon RO, and Spartan for
//! compression), with one thing nova-snark's own IVC cannot do: a step
//! circuit may draw **challenges after part of its witness is committed**.
//! A fold's witness is split into W₁ (committed first) and W₂ (which may
//! depend on the challenges); the challenges are hashes of comm_W₁, checked
//! by the circuit that folds the instance on the other curve, where the
//! commitments are native points. See docs/ARCHITECTURE.md ("The folding
//! layer") and docs/SOUNDNESS.md ("Challenges from committed witnesses").
//!
//! | module | holds |
//! | --- | --- |
//! | [`step`] | the two-phase [`StepCircuit`] trait, [`ChallengeMode`] |
//! | [`cs`] | constraint systems that place variables in W₁ or W₂ |
//! | [`instance`] | committed instances and witnesses, split commitments |
//! | [`hash`] | every hash of the layer (the two that read an allocated instance are in `gadgets`) |
//! | [`gadgets`] | instances allocated in the other curve's circuit, their hash and fold; a hash cut to 250 bits whose range the circuit using it checks |
//! | [`commit`] | Pedersen commitments on Grumpkin through zkstep-pippenger (nova-snark's MSM is slow just under 8,103 points) |
//! | [`nifs`] | the native fold |
//! | [`ladder`] | a fold's scalar multiplications by the odd challenge r = 2¹²⁸ + 2K + 1 |
//! | [`foreign`] | a value of the other field folded as an integer identity |
//! | [`augmented`] | the primary and secondary circuits |
//! | [`cyclefold`] | the CycleFold circuit: R = P + r·Q for each commitment a fold combines |
//! | [`own`], [`cfprimary`], [`cfivc`] | the CycleFold shape beside the IVC: the primary's own instances as limbs, its circuit, its driver (tested; measured and not adopted, docs/design/fresh-verify.md) |
//! | [`poseidon`] | nova-snark's wide Poseidon sponge as a circuit with fewer non-zeros (the primary's hashes) |
//! | [`params`] | shapes, commitment keys, the digest |
//! | [`ivc`] | the driver: [`Ivc`], precommitments, recursive verification |
//! | [`compress`] | zero-knowledge compression and its verification |
//! | [`ipa`] | the secondary's evaluation argument (nova-snark's IPA, a prover that never folds its key) |
//! | [`rows`] | the secondary's engine: commitments in Pedersen rows under shared generators (two), and its evaluation argument (rows combined, then [`ipa`]) |
//! | [`kzg`] | a univariate KZG opening (checkpoints on KZG points) |
//! | `rawkey` | commitment keys written uncompressed |
//! | [`spartan`] | Spartan's verifier on zkstep's compact key (matrices, stored digest) |
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod augmented;
pub mod cfivc;
pub mod cfprimary;
pub mod commit;
pub mod compress;
pub mod cyclefold;
pub mod cs;
pub mod error;
pub mod foreign;
pub mod gadgets;
pub mod hash;
pub mod instance;
pub mod ipa;
pub mod ivc;
pub mod kzg;
pub mod ladder;
pub mod nifs;
pub mod own;
pub mod params;
pub mod poseidon;
pub mod rawkey;
pub mod rows;
pub mod spartan;
pub mod step;
pub mod sums;
pub mod testing;

#[cfg(test)]
mod forge;
#[cfg(test)]
mod tests;

pub use cs::{after_challenges, after_late_challenges, current_unit, in_unit, is_after_challenges, with_unit, RowGroups, UnitTag};
pub use compress::{BoundsDegree, CompressedProof, Masks, ProverKey, VerifierKey};
pub use spartan::Compressor;
pub use error::{FoldError, Result};
pub use ivc::{run_challenges, FirstPhase, Ivc, Precommitment, SecondCommitment, SecondPhase};
pub use params::{CircuitSizes, KeyCapacity, Params};
pub use step::{ChallengeMode, OnePhase, StepCircuit};
