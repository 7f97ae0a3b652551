//! `zkstep commit`: the commitment of a checkpoint or a batch file.

use crate::args::CommitArgs;
use crate::error::{CliError, Result};
use crate::util::{commitment_of, print_json};
use serde_json::json;
use zkstep_core::poseidon::fr_to_hex;
use std::path::Path;
use zkstep_core::ModelSpec;

/// Run `zkstep commit`.
pub fn run(a: CommitArgs) -> Result<()> {
    let s = ModelSpec::from_file(&a.spec)?;
    let (kind, mut c) = commitment_of(&a.file, &s)?;
    if let (Some(dir), "checkpoint") = (&a.keys, kind) {
        // under keys on KZG points Commit(θ) is the hash of θ's point
        if let Some(points) = kzg_points(dir, &s)? {
            let ck = zkstep_core::format::read_checkpoint(&a.file, &s)?;
            c = points.commitment(&s, &ck).map_err(|e| CliError::BadFile {
                path: dir.join(zkstep_prover::ivc::POINTS_FILE),
                msg: e.to_string(),
            })?;
        }
    }
    if a.json {
        print_json(
            &json!({"file": crate::util::path_json(&a.file), "kind": kind, "commitment": fr_to_hex(&c), "spec_digest": fr_to_hex(&s.digest())}),
        );
    } else {
        crate::outln!("{}", fr_to_hex(&c));
    }
    Ok(())
}

/// The points of the keys in `dir` when they are on KZG points (read with
/// the verifying key that names them: the proving key is not needed), None
/// for chain keys.
fn kzg_points(dir: &Path, s: &ModelSpec) -> Result<Option<zkstep_verifier::Points>> {
    use zkstep_core::format::{read_input, Input};
    let vk_path = dir.join(zkstep_prover::ivc::VERIFYING_KEY_FILE);
    let vk = zkstep_verifier::read_verifying_key(&read_input(&vk_path, Input::VerifyingKey)?).map_err(|e| {
        CliError::BadFile {
            path: vk_path.clone(),
            msg: e.to_string(),
        }
    })?;
    if vk.layout.spec_digest != s.digest() {
        return Err(CliError::BadFile {
            path: vk_path,
            msg: "keys for another spec than --spec".into(),
        });
    }
    crate::util::points_for(&vk_path, None, &vk)
}
