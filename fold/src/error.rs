//! The crate's one error type.

use nova_snark::errors::NovaError;
use nova_snark::frontend::SynthesisError;

/// Why folding, compressing or verifying failed.
#[derive(Debug, thiserror::Error)]
pub enum FoldError {
    /// A circuit could not be synthesised (a missing value, an unsatisfiable
    /// gadget, an output of the wrong length).
    #[error("synthesis: {0}")]
    Synthesis(String),
    /// nova-snark refused something (a commitment key, a SNARK, a shape).
    #[error("nova-snark: {0}")]
    Nova(String),
    /// A powers-of-τ file could not be used for the commitment key.
    #[error("powers of tau: {0}")]
    Ptau(String),
    /// The arguments do not fit the parameters (arity, counts, lengths).
    #[error("invalid input: {0}")]
    Invalid(String),
    /// The step circuit's first phase gave other values once the challenges
    /// were known: its first phase depends on them, which breaks
    /// commit-then-challenge.
    #[error("fold {fold}: the first phase of the step circuit depends on its challenges")]
    PhaseDependsOnChallenge {
        /// The fold.
        fold: usize,
    },
    /// The step circuit's second phase gave other values (outside
    /// `after_late_challenges`) once the second round of challenges was
    /// known: W₂ depends on it, which breaks commit-then-challenge.
    #[error("fold {fold}: the second phase of the step circuit depends on its late challenges")]
    LatePhaseDependsOnChallenge {
        /// The fold.
        fold: usize,
    },
    /// A proof (or an IVC state) does not verify.
    #[error("rejected: {0}")]
    Rejected(String),
}

impl From<SynthesisError> for FoldError {
    fn from(e: SynthesisError) -> Self {
        FoldError::Synthesis(e.to_string())
    }
}

impl From<NovaError> for FoldError {
    fn from(e: NovaError) -> Self {
        match e {
            NovaError::PtauFileError(m) => FoldError::Ptau(m),
            e => FoldError::Nova(e.to_string()),
        }
    }
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, FoldError>;
