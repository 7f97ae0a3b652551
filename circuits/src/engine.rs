//! Engine aliases: BN254 (HyperKZG) primary, Grumpkin (IPA) secondary.
//!
//! Compression: MicroSpartan (`ppsnark`, preprocessing) for the primary, so
//! verification does not grow with the step circuit; plain Spartan (`snark`)
//! for the secondary, whose circuit is Nova's fixed verifier circuit (it does
//! not grow either). Measured on this project's 2-core machine for one
//! 65k-constraint fold (examples/compress_variants.rs):
//!
//! | primary / secondary | compress | peak memory | verify |
//! | --- | --- | --- | --- |
//! | snark / snark | 3.3 s | 0.4 GB | 80 ms |
//! | ppsnark / snark | 42 s | 4.0 GB | 56 ms |
//! | snark / ppsnark | 19 s | 0.5 GB | 295 ms |
//! | ppsnark / ppsnark | 57 s | 4.1 GB | 290 ms |
//!
//! ppsnark's compression memory grows with the fold (8.3 GB at 197k
//! constraints), which is why the default fold budget is 2¹⁷.

use crate::fold::TileCircuit;

/// Primary engine (BN254 with HyperKZG commitments).
pub type E1 = nova_snark::provider::Bn256EngineKZG;
/// Secondary engine (Grumpkin with IPA).
pub type E2 = nova_snark::provider::GrumpkinEngine;
/// Evaluation engine of the primary.
pub type EE1 = nova_snark::provider::hyperkzg::EvaluationEngine<E1>;
/// Evaluation engine of the secondary.
pub type EE2 = nova_snark::provider::ipa_pc::EvaluationEngine<E2>;
/// Compression SNARK of the primary (preprocessing Spartan).
pub type S1 = nova_snark::spartan::ppsnark::RelaxedR1CSSNARK<E1, EE1>;
/// Compression SNARK of the secondary (Nova's fixed verifier circuit).
pub type S2 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E2, EE2>;
/// Nova public parameters for zkstep's step circuit.
pub type PublicParams = nova_snark::nova::PublicParams<E1, E2, TileCircuit>;
/// The IVC proof being built.
pub type RecursiveSnark = nova_snark::nova::RecursiveSNARK<E1, E2, TileCircuit>;
/// The compressed, zero-knowledge proof of one training step.
pub type CompressedSnark = nova_snark::nova::CompressedSNARK<E1, E2, TileCircuit, S1, S2>;
/// Prover key of the compression.
pub type ProverKey = nova_snark::nova::ProverKey<E1, E2, TileCircuit, S1, S2>;
/// Verifier key of the compression.
pub type VerifierKey = nova_snark::nova::VerifierKey<E1, E2, TileCircuit, S1, S2>;
