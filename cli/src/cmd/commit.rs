//! `zkstep commit`: the commitment of a checkpoint or a batch file.

use crate::args::CommitArgs;
use crate::error::Result;
use crate::util::{commitment_of, print_json};
use serde_json::json;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::ModelSpec;

/// Run `zkstep commit`.
pub fn run(a: CommitArgs) -> Result<()> {
    let s = ModelSpec::from_file(&a.spec)?;
    let (kind, c) = commitment_of(&a.file, &s)?;
    if a.json {
        print_json(
            &json!({"file": crate::util::path_json(&a.file), "kind": kind, "commitment": fr_to_hex(&c), "spec_digest": fr_to_hex(&s.digest())}),
        );
    } else {
        crate::outln!("{}", fr_to_hex(&c));
    }
    Ok(())
}
