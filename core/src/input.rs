//! Reading a user's file: only a regular file (a FIFO or a device would
//! block or never end), only up to its kind's size limit, checked before a
//! byte is read and again while reading. A leaf module (it uses nothing of
//! the crate but its error type) so every parser can use it.

use crate::error::{CoreError, Result};
use std::path::Path;

fn ferr(path: &Path, msg: impl Into<String>) -> CoreError {
    CoreError::File {
        path: path.to_path_buf(),
        msg: msg.into(),
    }
}

/// The kinds of file zkstep reads from a user, each with a size limit
/// checked before a byte is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// A model spec (TOML).
    Spec,
    /// A safetensors file: checkpoint, batch, dataset or float import.
    Safetensors,
    /// A proof file.
    Proof,
    /// A verifying key.
    VerifyingKey,
    /// A proving key.
    ProvingKey,
    /// A JSON file of ours (run manifest, bench report).
    Json,
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

impl Input {
    /// The largest file of this kind zkstep reads. Safetensors and proving
    /// keys are bounded by what fits this class of machine (24 GiB); proofs
    /// are ≈15 KB and verifying keys ≈7 MB.
    pub fn limit(self) -> u64 {
        match self {
            Input::Spec => MIB,
            Input::Safetensors => 16 * GIB,
            Input::Proof => 16 * MIB,
            Input::VerifyingKey => 256 * MIB,
            Input::ProvingKey => 16 * GIB,
            Input::Json => 256 * MIB,
        }
    }

    /// How to name it in an error.
    pub fn name(self) -> &'static str {
        match self {
            Input::Spec => "spec",
            Input::Safetensors => "safetensors file",
            Input::Proof => "proof",
            Input::VerifyingKey => "verifying key",
            Input::ProvingKey => "proving key",
            Input::Json => "JSON file",
        }
    }
}

/// Read a user's file of kind `kind`: a regular file only (a FIFO or a
/// device would block or never end), no larger than the kind's limit
/// (checked before reading, and again while reading in case it grows).
pub fn read_input(path: &Path, kind: Input) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |source| CoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(ferr(
            path,
            format!(
                "is {what}; zkstep reads a {} only from a regular file",
                kind.name()
            ),
        ));
    }
    let limit = kind.limit();
    let too_big = |size: u64| {
        ferr(
            path,
            format!(
                "{size} bytes, more than the {limit}-byte limit for a {}",
                kind.name()
            ),
        )
    };
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .map_err(io)?
        .take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(io)?;
    if buf.len() as u64 > limit {
        return Err(too_big(buf.len() as u64));
    }
    Ok(buf)
}
