//! `zkstep init`: a random initial checkpoint for a spec.

use crate::args::{InitArgs, OutFile};
use crate::error::Result;
use crate::util::{print_json, refuse_existing};
use serde_json::json;
use zkstep_core::commit::commit_params;
use zkstep_core::format;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::{Checkpoint, ModelSpec};

/// Run `zkstep init`.
pub fn run(a: InitArgs) -> Result<()> {
    let OutFile { out, force, json } = a.out;
    let s = ModelSpec::from_file(&a.spec)?;
    refuse_existing(&out, force)?;
    // the checkpoint, its encoding and the file's bytes: three copies of
    // every parameter and its optimizer state, 8 bytes a value, said up
    // front rather than an abort when an allocation fails
    let tensors = 1 + s.optimizer.state_names().len() as u64;
    let need = (s.num_params() as u64).saturating_mul(8 * 3 * tensors);
    crate::util::require_memory(format!("a checkpoint of {} parameters", s.num_params()), need)?;
    // a spec keygen could not key is said now, before anything is trained
    zkstep_circuits::sizing::check_provable(&s, a.fold_budget).map_err(|source| {
        crate::error::CliError::Unprovable {
            path: a.spec.clone(),
            source,
        }
    })?;
    // a spec whose value_bits cannot hold the initial weights is an error,
    // not a checkpoint with weights silently set to 0
    let ck = Checkpoint::init_checked(&s, a.seed)?;
    // without --force, a file another process wrote meanwhile is never replaced
    format::write_checkpoint_as(&out, &s, &ck, force)?;
    let c = fr_to_hex(&commit_params(&s, &ck));
    if json {
        print_json(
            &json!({"file": crate::util::path_json(&out), "params": s.num_params(), "commitment": c, "spec_digest": fr_to_hex(&s.digest())}),
        );
    } else {
        crate::outln!(
            "wrote {} ({} parameters)\ncommitment {c}",
            out.display(),
            s.num_params()
        );
    }
    Ok(())
}
