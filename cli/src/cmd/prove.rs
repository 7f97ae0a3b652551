//! `zkstep prove`: one training step proven from its files.

use crate::args::ProveArgs;
use crate::error::{CliError, Result};
use crate::proving::{check_before_writing, load_keys, prove_with_bar, report, Claim};
use crate::util::{print_json, refuse_existing, set_msm};
use zkstep_core::format::{read_batch, read_checkpoint, write_as};
use zkstep_core::ModelSpec;
use zkstep_prover::ivc::{check_step, proof_bytes};

/// Run `zkstep prove`.
pub fn run(a: ProveArgs) -> Result<()> {
    set_msm(a.msm)?;
    let s = ModelSpec::from_file(&a.spec)?;
    refuse_existing(&a.out, a.force)?;
    let b0 = read_checkpoint(&a.before, &s)?;
    let b1 = read_checkpoint(&a.after, &s)?;
    let (bt, bstep) = read_batch(&a.batch, &s)?;
    if bstep != b0.step {
        return Err(CliError::BatchForAnotherStep {
            path: a.batch,
            batch_step: bstep,
            before_step: b0.step,
        });
    }
    // a wrong after-checkpoint fails here, before the slow read of the proving key
    check_step(&s, &b0, &b1, &bt)?;
    let keys = load_keys(&a.keys, &s)?;
    let (proof, t) = prove_with_bar(&keys, &b0, &b1, &bt, !a.json)?;
    let bytes = proof_bytes(&keys, &proof)?;
    let check_s = check_before_writing(&keys, &a.keys, &bytes, Claim::Step(&proof.statement), a.no_check)?;
    // without --force, a proof another process wrote meanwhile is never replaced
    write_as(&a.out, &bytes, a.force)?;
    let v = report(&proof, &t, check_s, bytes.len(), &a.out, a.json);
    if a.json {
        print_json(&v);
    }
    Ok(())
}
