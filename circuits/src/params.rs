//! Ceremony parameters: Nova's public parameters for a layout from a
//! directory of `ppot_pruned_NN.ptau` files (powers of τ from a public
//! ceremony), and the compression keys made from them.
//!
//! [`ceremony_keys`] is the one place this is done: `zkstep keygen
//! --ptau-dir` calls it to make a ceremony key, and `zkstep-verify --ptau`
//! calls it to re-derive the verifying key of a key file that says
//! "ceremony" and compare it with the file's. Everything except the primary
//! commitment key is deterministic (the secondary curve's generators and the
//! blinding generators come from labels; the R1CS shapes from the layout),
//! so one spec, one `rows` and one ceremony always give the same verifying
//! key, byte for byte; the `pp_digest` inside it covers the commitment key
//! and both shapes, and its HyperKZG part holds τ·H. Which file of the
//! directory is read does not matter: nova-snark takes the first n powers
//! from the smallest `ppot_pruned_NN.ptau` with enough of them.

use crate::engine::{CompressedSnark, Compression, ProverKey, PublicParams, VerifierKey};
use zkstep_fold::FoldError;
use crate::{Layout, TileCircuit};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why ceremony keys could not be made or checked.
#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    /// The ceremony directory cannot be used: missing, not a directory, no
    /// `ppot_pruned_NN.ptau` file with enough powers, or a file that does
    /// not read as one (truncated, corrupted).
    #[error("{}: {msg}", path.display())]
    Ptau {
        /// The directory given.
        path: PathBuf,
        /// What is wrong with it.
        msg: String,
    },
    /// The compression keys could not be made from the parameters.
    #[error("compression keys: {0}")]
    Setup(String),
}

/// Public parameters and compression keys made from ceremony files.
pub struct CeremonyKeys {
    /// Nova public parameters (primary commitment key from the ceremony).
    pub pp: PublicParams,
    /// Compression prover key.
    pub pk: ProverKey,
    /// Compression verifier key.
    pub vk: VerifierKey,
}

/// The `ppot_pruned_*.ptau` files in `dir`, for error messages.
fn ptau_files(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".ptau"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    if names.is_empty() {
        "no .ptau files there".into()
    } else {
        format!("files there: {}", names.join(", "))
    }
}

/// Every `ppot_*.ptau` entry of `dir` must be a regular file (through
/// symlinks): nova-snark opens the one it picks with a plain `File::open`,
/// and opening a FIFO blocks until a writer comes, which may be never.
fn refuse_unreadable(dir: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list the ceremony directory: {e}"))?;
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("ppot_") && name.ends_with(".ptau")) {
            continue;
        }
        match std::fs::metadata(e.path()) {
            Ok(m) if m.is_file() => {}
            Ok(_) => {
                return Err(format!(
                    "{name} is not a regular file (a FIFO, a device or a directory cannot be a ceremony file)"
                ))
            }
            Err(err) => return Err(format!("{name}: {err}")),
        }
    }
    Ok(())
}

/// Nova's public parameters for `layout` from the ceremony files in `dir`,
/// then the compression keys. Never panics: nova-snark's ptau reader
/// asserts on some malformed files, and that is reported as
/// [`ParamsError::Ptau`] naming `dir`.
pub fn ceremony_keys(
    layout: Arc<Layout>,
    compression: Compression,
    dir: &Path,
) -> Result<CeremonyKeys, ParamsError> {
    let bad = |msg: String| ParamsError::Ptau {
        path: dir.to_path_buf(),
        msg,
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(bad(
                "not a directory (expected a directory of ppot_pruned_NN.ptau files)".into(),
            ))
        }
        Err(e) => return Err(bad(format!("cannot open the ceremony directory: {e}"))),
    }
    refuse_unreadable(dir).map_err(bad)?;
    let floor = crate::theta::ck_floor(&layout, compression.ck_floor());
    let shape = TileCircuit::shape(layout);
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        PublicParams::setup_with_ptau_dir(
            &shape,
            crate::engine::CHALLENGES,
            &*floor,
            &*Compression::ck_floor_secondary(),
            dir,
        )
    }));
    let pp = match made {
        Ok(Ok(pp)) => pp,
        Ok(Err(FoldError::Ptau(m))) => {
            return Err(bad(format!(
                "cannot make parameters from the ceremony files: {m} ({})",
                ptau_files(dir)
            )))
        }
        Ok(Err(e)) => return Err(ParamsError::Setup(format!("public parameters: {e}"))),
        Err(_) => {
            return Err(bad(format!(
                "a ceremony file is malformed (the ptau reader gave up on it; {})",
                ptau_files(dir)
            )))
        }
    };
    let (pk, vk) =
        CompressedSnark::setup(&pp, compression).map_err(|e| ParamsError::Setup(e.to_string()))?;
    Ok(CeremonyKeys { pp, pk, vk })
}
