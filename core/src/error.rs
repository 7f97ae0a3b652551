//! The error type of zkstep-core: every failure names what it is about
//! (the file, the spec key, the layer/tensor/index) so that a user can act on it.

use std::path::PathBuf;

/// Result alias for zkstep-core.
pub type Result<T, E = CoreError> = std::result::Result<T, E>;

/// Everything that can go wrong in zkstep-core.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The model spec is not valid TOML or not a valid spec.
    #[error("invalid model spec: key `{key}`: {msg}")]
    Spec {
        /// The offending key (dotted path), or `<document>`.
        key: String,
        /// What is wrong with it.
        msg: String,
    },
    /// A value left the declared range, or an intermediate overflowed.
    #[error("value out of the declared range at layer {layer}, tensor {tensor}, index {index}: {detail}")]
    Range {
        /// 1-based layer index (0 for the loss / input).
        layer: usize,
        /// Tensor name, e.g. `dW`, `Z`, `W'`.
        tensor: &'static str,
        /// Index such as `(3,17)`.
        index: String,
        /// The value or the operation that overflowed.
        detail: String,
    },
    /// Tensor shapes do not match the spec.
    #[error("shape mismatch for {what}: expected {expected}, got {got}")]
    Shape {
        /// Which tensor.
        what: String,
        /// Expected shape.
        expected: String,
        /// Actual shape.
        got: String,
    },
    /// Reading or writing a file failed at the OS level.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file's contents are malformed or do not fit (wrong format, wrong spec, bad values).
    #[error("{}: {msg}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// A generic invalid argument (not tied to a file).
    #[error("{0}")]
    Invalid(String),
}

impl CoreError {
    /// Attach a file path to an error that did not know it.
    pub fn in_file(self, path: &std::path::Path) -> CoreError {
        match self {
            CoreError::Io { .. } | CoreError::File { .. } => self,
            other => CoreError::File {
                path: path.to_path_buf(),
                msg: other.to_string(),
            },
        }
    }

    /// Shorthand for a [`CoreError::Range`] error.
    pub fn range(
        layer: usize,
        tensor: &'static str,
        index: String,
        detail: impl Into<String>,
    ) -> Self {
        CoreError::Range {
            layer,
            tensor,
            index,
            detail: detail.into(),
        }
    }
}
