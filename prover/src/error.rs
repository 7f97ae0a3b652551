//! The error type of zkstep-prover.

use zkstep_core::CoreError;

/// Result alias for zkstep-prover.
pub type Result<T, E = ProverError> = std::result::Result<T, E>;

/// Everything that can go wrong on the proving side.
#[derive(Debug, thiserror::Error)]
pub enum ProverError {
    /// From zkstep-core (already names the file / layer / tensor).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A file or directory operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The circuit layout or witness could not be built.
    #[error(transparent)]
    Circuit(#[from] zkstep_circuits::CircuitError),
    /// The folding layer failed (keygen, folding, compression).
    #[error("folding: {0}")]
    Fold(String),
    /// The statement is false: the after-checkpoint is not what the
    /// declared step gives from the before-checkpoint and the batch.
    #[error("{0}")]
    NotTheStep(String),
    /// Input that cannot be proven (a malformed key file, a segment without
    /// steps) or a file that cannot be encoded.
    #[error("{0}")]
    Invalid(String),
}

impl ProverError {
    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        ProverError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
