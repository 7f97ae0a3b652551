//! Engine aliases: BN254 (HyperKZG) primary, Grumpkin (IPA) secondary, the
//! folding layer's types over them (zkstep-fold), and the two compressions
//! of the primary ([`Compression`]).
//!
//! The secondary is always compressed with plain Spartan (`snark`): its
//! circuit is the folding layer's own (fixed) circuit. The primary is compressed with
//! Spartan or with MicroSpartan (`ppsnark`, preprocessing), chosen per key
//! (`zkstep keygen --compression`; the default, `sizing::default_compression`,
//! is Spartan: the fastest whole proof at every fold size measured). Measured on this project's 2-core
//! machine (examples/compress_variants.rs, the demo's 40,731-constraint
//! fold, warm verification):
//!
//! | primary / secondary | compress | verify |
//! | --- | --- | --- |
//! | snark / snark (Spartan) | 3.7 s | 85–86 ms |
//! | ppsnark / snark (MicroSpartan) | 27.8 s | 72 ms |
//!
//! and earlier, for a 65k-constraint fold: snark/ppsnark 19 s and 295 ms,
//! ppsnark/ppsnark 57 s and 290 ms (the secondary stays Spartan).
//! MicroSpartan pads the fold's matrix non-zeros to a power of two and
//! commits to them: the folding layer's own circuit has ≈ 250k non-zeros at
//! zkstep's state arity (nova-snark's had 372k), so a small fold still
//! costs a 2¹⁸–2²⁰ instance, and memory grows to ≈ 4 GiB at 2²¹.
//! Spartan's verifier instead evaluates the matrices itself, so its verification grows with the fold's non-zeros (bounded by
//! the fold, not by the model's width).
//!
//! Both open W and E with Mercury (a constant-size argument on HyperKZG's
//! key, ≈ 1.8 KB off a proof); the later parts' openings stay HyperKZG,
//! whose opening is also a degree bound (docs/SOUNDNESS.md).

use nova_snark::r1cs::R1CSShape;
use nova_snark::traits::snark::RelaxedR1CSSNARKTrait;
use serde::{Deserialize, Serialize};
use zkstep_core::Fr;
use zkstep_fold::{compress, FoldError};

/// Primary engine (BN254 with HyperKZG commitments).
pub type E1 = nova_snark::provider::Bn256EngineKZG;
/// Secondary engine (Grumpkin, commitments in rows under shared
/// generators: zkstep-fold's `rows`, whose IPA the verifier runs over
/// a quarter of the generators, one row's).
pub type E2 = zkstep_fold::rows::GrumpkinRows;
/// Read the folding layer's RO constants for these engines now (a
/// process shares them: `zkstep_fold::params::shared_constants`), so that a
/// key read later finds them: `zkstep-verify` calls it on a thread of its
/// own while it reads its files.
pub fn warm_constants() {
    let _ = zkstep_fold::params::RoSet::<E1, E2>::default();
}

/// Evaluation engine of the primary's later-part openings (HyperKZG: its
/// opening shows that a commitment lies on the first m generators, which
/// the challenges' soundness needs; docs/SOUNDNESS.md).
pub type EE1 = nova_snark::provider::hyperkzg::EvaluationEngine<E1>;
/// Evaluation engine of the primary's Spartan (Mercury: a constant-size
/// opening on HyperKZG's key; only the evaluation is needed there).
pub type EeSpartan1 = nova_snark::provider::mercury::EvaluationEngine<E1>;
/// Evaluation engine of the secondary (the rows combined, then nova-snark's
/// IPA with a faster prover and verifier over one row's generators).
pub type EE2 = zkstep_fold::rows::RowIpa;
/// MicroSpartan (preprocessing Spartan) for the primary.
pub type S1Pp = nova_snark::spartan::ppsnark::RelaxedR1CSSNARK<E1, EeSpartan1>;
/// Spartan for the primary (the verifier reads the R1CS matrices).
pub type S1Sp = nova_snark::spartan::snark::RelaxedR1CSSNARK<E1, EeSpartan1>;
/// Compression SNARK of the secondary (the folding layer's fixed circuit).
pub type S2 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E2, EE2>;
/// Public parameters of the folding layer for zkstep's step circuit.
pub type PublicParams = zkstep_fold::Params<E1, E2>;
/// The IVC being built.
pub type Ivc = zkstep_fold::Ivc<E1, E2>;
/// The random instances a compression folds in (drawable while folding).
pub type Masks = zkstep_fold::Masks<E1, E2>;

/// How the step circuit's challenges are drawn: one set for a whole proof,
/// α and ρ after every fold's first phase (the table is paid once a step,
/// sliced across its folds), γ in a second round after every fold's second
/// phase (which holds the consumed τA vectors γ tests).
pub const CHALLENGES: zkstep_fold::ChallengeMode = zkstep_fold::ChallengeMode::PerRunTwice;

/// How many challenges a fold draws: α (the lookups), ρ (the matrix
/// identities) and γ (the τA links between layers).
pub const NUM_CHALLENGES: usize = 3;

/// Of those, how many come in the second round (γ).
pub const NUM_LATE_CHALLENGES: usize = 1;

/// The fewest generators a development commitment key gets. nova-snark's
/// development setup computes the powers of τ one scalar multiplication a
/// point below 100,000 generators and with a fixed-base comb from there: a
/// key of 2¹⁶ took longer to make than one of 2¹⁷ (8.4 s against 4.2 s for
/// the demo's whole keygen, 8 and 16 units a fold). A longer key costs
/// nothing when proving (a commitment reads the prefix it needs): 4 MB more
/// in a proving key at most. Keys from a ceremony are as long as needed.
pub const DEV_CK_MIN: usize = 1 << 17;

/// A commitment key's size floor, as nova-snark's SNARKs give it.
pub type CkFloor<E> = Box<dyn for<'a> Fn(&'a R1CSShape<E>) -> usize>;

type Proof<S> = compress::CompressedProof<E1, E2, S, S2, EE1>;
type Pk<S> = compress::ProverKey<E1, E2, S, S2, EE1>;
type Vk<S> = compress::VerifierKey<E1, E2, S, S2, EE1>;

/// Which SNARK compresses the primary's folded instance (the secondary's is
/// always Spartan).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compression {
    /// Spartan: proving costs about a tenth of MicroSpartan's in time and
    /// memory; the verifier evaluates the fold's R1CS matrices, so verifying
    /// grows with the fold's non-zeros (not with the model's width, since
    /// folds are bounded).
    Spartan,
    /// MicroSpartan (preprocessing): verifying does not read the matrices,
    /// but proving pays commitments to them, padded to a power of two of
    /// the non-zeros.
    MicroSpartan,
}

impl Compression {
    /// Canonical name (what `--compression` takes and reports print).
    pub fn name(self) -> &'static str {
        match self {
            Compression::Spartan => "spartan",
            Compression::MicroSpartan => "microspartan",
        }
    }

    /// Parse a name as [`Compression::name`] writes it.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "spartan" => Some(Compression::Spartan),
            "microspartan" => Some(Compression::MicroSpartan),
            _ => None,
        }
    }

    /// The primary commitment key's size floor this compression needs.
    pub fn ck_floor(self) -> CkFloor<E1> {
        match self {
            Compression::Spartan => S1Sp::ck_floor(),
            Compression::MicroSpartan => S1Pp::ck_floor(),
        }
    }

    /// [`Compression::ck_floor`] for development keys (a fresh τ): at
    /// least [`DEV_CK_MIN`] generators.
    pub fn dev_ck_floor(self) -> CkFloor<E1> {
        let floor = self.ck_floor();
        Box::new(move |s| floor(s).max(DEV_CK_MIN))
    }

    /// The secondary's floor (the same for both).
    pub fn ck_floor_secondary() -> CkFloor<E2> {
        S2::ck_floor()
    }
}

/// Refuse a key whose commitment keys are too short for its circuits or
/// for compression `c` (an edited key file would otherwise panic while
/// proving).
pub fn check_key_lengths(pp: &PublicParams, c: Compression) -> Result<(), FoldError> {
    pp.check_key_lengths(c.ck_floor()(pp.primary_shape()), S2::ck_floor()(pp.secondary_shape()))
}

/// The compressed, zero-knowledge proof of one training step.
#[derive(Serialize, Deserialize)]
pub enum CompressedSnark {
    /// Compressed with Spartan.
    Spartan(Box<Proof<S1Sp>>),
    /// Compressed with MicroSpartan.
    MicroSpartan(Box<Proof<S1Pp>>),
}

/// Prover key of the compression.
#[derive(Serialize, Deserialize)]
pub enum ProverKey {
    /// For Spartan.
    Spartan(Box<Pk<S1Sp>>),
    /// For MicroSpartan.
    MicroSpartan(Box<Pk<S1Pp>>),
}

/// Verifier key of the compression.
#[derive(Serialize, Deserialize)]
pub enum VerifierKey {
    /// For Spartan.
    Spartan(Box<Vk<S1Sp>>),
    /// For MicroSpartan.
    MicroSpartan(Box<Vk<S1Pp>>),
}

impl ProverKey {
    /// The compression this key proves.
    pub fn compression(&self) -> Compression {
        match self {
            ProverKey::Spartan(_) => Compression::Spartan,
            ProverKey::MicroSpartan(_) => Compression::MicroSpartan,
        }
    }
}

impl VerifierKey {
    /// The compression this key verifies.
    pub fn compression(&self) -> Compression {
        match self {
            VerifierKey::Spartan(_) => Compression::Spartan,
            VerifierKey::MicroSpartan(_) => Compression::MicroSpartan,
        }
    }
}

impl CompressedSnark {
    /// The compression keys for `pp` (made with `c.ck_floor()`).
    pub fn setup(pp: &PublicParams, c: Compression) -> Result<(ProverKey, VerifierKey), FoldError> {
        Ok(match c {
            Compression::Spartan => {
                let (pk, vk) = compress::setup(pp)?;
                (ProverKey::Spartan(Box::new(pk)), VerifierKey::Spartan(Box::new(vk)))
            }
            Compression::MicroSpartan => {
                let (pk, vk) = compress::setup(pp)?;
                (
                    ProverKey::MicroSpartan(Box::new(pk)),
                    VerifierKey::MicroSpartan(Box::new(vk)),
                )
            }
        })
    }

    /// Compress a finished IVC.
    pub fn prove(pp: &PublicParams, pk: &ProverKey, ivc: &Ivc) -> Result<Self, FoldError> {
        Self::prove_masked(pp, pk, ivc, Masks::draw(pp)?)
    }

    /// Compress a finished IVC with masks drawn beforehand ([`Masks::draw`],
    /// e.g. while folding).
    pub fn prove_masked(pp: &PublicParams, pk: &ProverKey, ivc: &Ivc, masks: Masks) -> Result<Self, FoldError> {
        Ok(match pk {
            ProverKey::Spartan(pk) => CompressedSnark::Spartan(Box::new(Proof::prove_masked(pp, pk, ivc, masks)?)),
            ProverKey::MicroSpartan(pk) => {
                CompressedSnark::MicroSpartan(Box::new(Proof::prove_masked(pp, pk, ivc, masks)?))
            }
        })
    }

    /// Verify `num_steps` folds from `z0` to `zn` (the verifier's: the proof
    /// does not carry its last state). A proof of one compression under a
    /// key of the other is rejected.
    pub fn verify(&self, vk: &VerifierKey, num_steps: usize, z0: &[Fr], zn: &[Fr]) -> Result<(), FoldError> {
        let n = num_steps as u64;
        match (self, vk) {
            (CompressedSnark::Spartan(p), VerifierKey::Spartan(vk)) => p.verify(vk, n, z0, zn),
            (CompressedSnark::MicroSpartan(p), VerifierKey::MicroSpartan(vk)) => p.verify(vk, n, z0, zn),
            _ => Err(FoldError::Rejected(format!(
                "the proof is compressed with {}, the verifying key is for {}",
                self.compression().name(),
                vk.compression().name()
            ))),
        }
    }

    /// [`CompressedSnark::verify`] with the states from `states`, run beside
    /// the proof's own checks, and `beside`, a check of the statement the
    /// states do not wait for (zkstep-fold's `CompressedProof::verify_with`):
    /// `Err(x)` is `beside`'s error, else `states`', `Ok(r)` the proof's verdict.
    pub fn verify_with<X: Send>(
        &self,
        vk: &VerifierKey,
        num_steps: usize,
        states: impl FnOnce() -> Result<(Vec<Fr>, Vec<Fr>), X> + Send,
        beside: impl FnOnce() -> Result<(), X> + Send,
    ) -> Result<Result<(), FoldError>, X> {
        let n = num_steps as u64;
        match (self, vk) {
            (CompressedSnark::Spartan(p), VerifierKey::Spartan(vk)) => p.verify_with(vk, n, states, beside),
            (CompressedSnark::MicroSpartan(p), VerifierKey::MicroSpartan(vk)) => p.verify_with(vk, n, states, beside),
            _ => Ok(Err(FoldError::Rejected(format!(
                "the proof is compressed with {}, the verifying key is for {}",
                self.compression().name(),
                vk.compression().name()
            )))),
        }
    }

    /// The compression of this proof.
    pub fn compression(&self) -> Compression {
        match self {
            CompressedSnark::Spartan(_) => Compression::Spartan,
            CompressedSnark::MicroSpartan(_) => Compression::MicroSpartan,
        }
    }
}
