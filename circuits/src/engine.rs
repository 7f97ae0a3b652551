//! Engine aliases: BN254 (HyperKZG) primary, Grumpkin (IPA) secondary,
//! MicroSpartan (`ppsnark`, preprocessing) compression on both sides so that
//! verification does not grow with the fold's circuit.

use crate::circuit::TileCircuit;

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
/// Compression SNARK of the secondary.
pub type S2 = nova_snark::spartan::ppsnark::RelaxedR1CSSNARK<E2, EE2>;
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
