//! Proving helpers shared by `prove`, `prove-run`, `demo` and `bench`:
//! keys checked against a spec, one step proven under a fold progress bar,
//! and the report of a written proof.

use crate::error::{CliError, Result};
use crate::util::FoldBar;
use serde_json::json;
use std::path::Path;
use zkstep_circuits::files::{ProofPayload, SegmentPayload};
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::{Batch, Checkpoint, ModelSpec};
use zkstep_prover::ivc::{read_proving_key, Keys, ProveEvent, Timings, PROVING_KEY_FILE};

/// Read `dir/proving.key` and insist that it was made for `spec`.
pub fn load_keys(dir: &Path, spec: &ModelSpec) -> Result<Keys> {
    let path = dir.join(PROVING_KEY_FILE);
    let keys = read_proving_key(&path)?;
    if keys.layout.spec_digest != spec.digest() {
        return Err(CliError::KeysForAnotherSpec {
            path,
            keys_digest: fr_to_hex(&keys.layout.spec_digest),
            spec_digest: fr_to_hex(&spec.digest()),
        });
    }
    Ok(keys)
}

/// Prove θ_after = Step(θ_before, batch), with a progress bar over the
/// folds on stderr when `show`.
pub fn prove_with_bar(
    keys: &Keys,
    before: &Checkpoint,
    after: &Checkpoint,
    batch: &Batch,
    show: bool,
) -> Result<(ProofPayload, Timings)> {
    with_bar(show, |p| {
        zkstep_prover::ivc::prove(keys, before, after, batch, p)
    })
}

/// Prove k consecutive steps as one segment (`checkpoints` k + 1, `batches`
/// k), with a progress bar over all their folds on stderr when `show`.
pub fn prove_segment_with_bar(
    keys: &Keys,
    checkpoints: &[Checkpoint],
    batches: &[Batch],
    show: bool,
) -> Result<(SegmentPayload, Timings)> {
    with_bar(show, |p| {
        zkstep_prover::ivc::prove_segment(keys, checkpoints, batches, p)
    })
}

/// Run a prover call with a fold progress bar (drawn when `show`).
fn with_bar<T>(
    show: bool,
    f: impl FnOnce(&mut dyn FnMut(ProveEvent)) -> zkstep_prover::Result<T>,
) -> Result<T> {
    let mut bar = FoldBar::new(show);
    Ok(f(&mut |e| bar.on(e))?)
}

/// The JSON report of a segment proof written to `path` (printed as text too unless `json`).
pub fn segment_report(
    proof: &SegmentPayload,
    t: &Timings,
    bytes: usize,
    path: &Path,
    json: bool,
) -> serde_json::Value {
    let st = &proof.statement;
    let v = json!({"step": st.step, "steps": st.steps, "c_start": fr_to_hex(&st.c_start),
        "c_end": fr_to_hex(&st.c_end), "batches": fr_to_hex(&st.batches)});
    let what = format!("steps {}..{}", st.step, st.step + st.steps);
    written(v, &what, proof.num_folds, t, bytes, path, json)
}

/// The JSON report of a proof written to `path` (printed as text too unless `json`).
pub fn report(
    proof: &ProofPayload,
    t: &Timings,
    bytes: usize,
    path: &Path,
    json: bool,
) -> serde_json::Value {
    let st = &proof.statement;
    let v = json!({"step": st.step, "c_before": fr_to_hex(&st.c_before),
        "c_after": fr_to_hex(&st.c_after), "c_batch": fr_to_hex(&st.c_batch)});
    written(
        v,
        &format!("step {}", st.step),
        proof.num_folds,
        t,
        bytes,
        path,
        json,
    )
}

/// `v` with the file, size, folds and timings added; one line of text unless `json`.
fn written(
    mut v: serde_json::Value,
    what: &str,
    folds: u64,
    t: &Timings,
    bytes: usize,
    path: &Path,
    json: bool,
) -> serde_json::Value {
    for (k, x) in [
        ("proof", crate::util::path_json(path)),
        ("bytes", json!(bytes)),
        ("folds", json!(folds)),
        ("witness_s", json!(t.witness_s)),
        ("fold_s", json!(t.fold_s)),
        ("compress_s", json!(t.compress_s)),
    ] {
        v[k] = x;
    }
    if !json {
        crate::outln!(
            "wrote {} ({bytes} bytes): {what}, {folds} folds; witness {:.2} s, folding {:.2} s, compression {:.2} s",
            path.display(),
            t.witness_s,
            t.fold_s,
            t.compress_s
        );
    }
    v
}
