//! The error type of zkstep-circuits.

/// What can go wrong when laying out a proof or building its witness.
#[derive(Debug, thiserror::Error)]
pub enum CircuitError {
    /// The spec cannot be laid out (e.g. a row does not fit the fold budget).
    #[error("layout: {0}")]
    Layout(String),
    /// The trace does not match the checkpoints/batch it is supposed to describe.
    #[error("witness: {0}")]
    Witness(String),
}
