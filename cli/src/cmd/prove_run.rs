//! `zkstep prove-run`: every step of a run, checked against its manifest;
//! a step whose proof exists and verifies is skipped.
//!
//! Every step's checkpoints and batch are checked against the manifest's
//! commitments before the (slow to read) proving key is loaded, and every
//! existing proof that would be replaced is found before the first proof is
//! made, so a bad run fails at once.

use crate::args::ProveRunArgs;
use crate::error::{CliError, Result};
use crate::proving::{load_keys, prove_with_bar, report};
use crate::run::{
    check_commitment, check_file_step, end_step, proof_name, statement, RunLock, RunManifest,
    StepEntry, MANIFEST,
};
use crate::util::{print_json, set_msm};
use serde_json::json;
use std::path::Path;
use zkstep_circuits::files::{self, FileKind, ProofPayload, Statement};
use zkstep_core::commit::{commit_batch, commit_params};
use zkstep_core::format::{read_batch, read_checkpoint, read_input, write_atomic, Input};
use zkstep_core::{Batch, Checkpoint, ModelSpec};
use zkstep_prover::ivc::{proof_bytes, Keys};

/// Does `path` hold a proof of exactly `expected` that verifies under `keys`?
fn existing_proof_verifies(keys: &Keys, path: &Path, expected: &Statement) -> bool {
    let Ok(bytes) = read_input(path, Input::Proof) else {
        return false;
    };
    let Ok((h, p)) = files::decode::<ProofPayload>(&bytes, FileKind::Proof) else {
        return false;
    };
    zkstep_circuits::verify::verify_payload(
        &keys.layout,
        &keys.vk,
        h.spec_digest,
        &p,
        Some(expected),
    )
    .is_ok()
}

/// Step `e`'s checkpoints and batch, each of the step the manifest says and
/// committing to the manifest's commitment.
fn step_files(
    run: &Path,
    mpath: &Path,
    s: &ModelSpec,
    e: &StepEntry,
    st: &Statement,
) -> Result<(Checkpoint, Checkpoint, Batch)> {
    let (p0, p1, pb) = (run.join(&e.before), run.join(&e.after), run.join(&e.batch));
    let b0 = read_checkpoint(&p0, s)?;
    check_commitment(
        mpath,
        e.step,
        "c_before",
        &p0,
        commit_params(s, &b0),
        st.c_before,
    )?;
    check_file_step(&p0, b0.step, e.step)?;
    let b1 = read_checkpoint(&p1, s)?;
    check_commitment(
        mpath,
        e.step,
        "c_after",
        &p1,
        commit_params(s, &b1),
        st.c_after,
    )?;
    check_file_step(&p1, b1.step, end_step(e.step, 1)?)?;
    let (bt, bstep) = read_batch(&pb, s)?;
    check_commitment(
        mpath,
        e.step,
        "c_batch",
        &pb,
        commit_batch(s, &bt),
        st.c_batch,
    )?;
    check_file_step(&pb, bstep, e.step)?;
    Ok((b0, b1, bt))
}

/// Run `zkstep prove-run`.
pub fn run(a: ProveRunArgs) -> Result<()> {
    set_msm(a.msm)?;
    let (run, json) = (a.run.as_path(), a.json);
    // held until this returns: no train writes this run while it is proven
    let _lock = RunLock::acquire(run)?;
    let mpath = run.join(MANIFEST);
    let m = RunManifest::read(&mpath)?;
    let s = m.spec(run, &mpath)?;
    m.check_chain(&mpath)?;
    let statements = m
        .steps
        .iter()
        .map(|e| statement(&s, &mpath, e))
        .collect::<Result<Vec<_>>>()?;
    for (e, st) in m.steps.iter().zip(&statements) {
        step_files(run, &mpath, &s, e, st)?;
    }
    let keys = load_keys(&a.keys, &s)?;
    let mut verified = vec![];
    for (e, st) in m.steps.iter().zip(&statements) {
        let path = run.join(proof_name(e.step));
        let ok = existing_proof_verifies(&keys, &path, st);
        if !ok && !a.force && path.exists() {
            return Err(CliError::StaleProof(path));
        }
        verified.push(ok);
    }
    let mut out = vec![];
    for ((e, st), skip) in m.steps.iter().zip(&statements).zip(verified) {
        let path = run.join(proof_name(e.step));
        if skip {
            if !json {
                crate::outln!(
                    "step {}: {} exists and verifies, skipped",
                    e.step,
                    path.display()
                );
            }
            out.push(json!({"step": e.step, "proof": path, "skipped": true}));
            continue;
        }
        // read again: what is proven is what is on disk now, checked again
        let (b0, b1, bt) = step_files(run, &mpath, &s, e, st)?;
        let (proof, t) = prove_with_bar(&keys, &b0, &b1, &bt, !json)?;
        let bytes = proof_bytes(&keys, &proof)?;
        write_atomic(&path, &bytes)?;
        let mut v = report(&proof, &t, bytes.len(), &path, json);
        v["skipped"] = json!(false);
        out.push(v);
    }
    if json {
        print_json(&json!({"run": mpath, "proofs": out}));
    } else {
        crate::outln!(
            "{} steps proven or verified in {}",
            out.len(),
            run.display()
        );
    }
    Ok(())
}
