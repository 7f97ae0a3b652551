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
    let (kind, mut c) = commitment_of(&a.file, &s)?;
    if let (Some(dir), "checkpoint") = (&a.keys, kind) {
        // under keys on KZG points Commit(θ) is the hash of θ's point
        let keys = crate::proving::load_keys(dir, &s)?;
        if keys.layout.commit_scheme == zkstep_circuits::state::CommitScheme::Evaluation {
            let ck = zkstep_core::format::read_checkpoint(&a.file, &s)?;
            c = keys.point_key().commitment(&s, &ck).map_err(crate::error::CliError::Internal)?.0;
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
