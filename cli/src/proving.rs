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

/// What a proof is checked against before it is written.
pub enum Claim<'a> {
    /// One step's statement.
    Step(&'a zkstep_verifier::Statement),
    /// A segment's.
    Segment(&'a zkstep_verifier::SegmentStatement),
}

/// The proof's bytes, about to be written, read back and verified as
/// `zkstep-verify` would (issue 30, finding 6): a proving key changed on
/// disk proves statements that do not verify, and its user would learn it
/// only from whoever verifies. The key is `dir/verifying.key` when there is
/// one (what the proof's verifiers use: a pair that does not match fails
/// too), else the one the proving key derives. Returns the seconds it took.
/// `skip` (`--no-check`) does nothing and returns None.
pub fn check_before_writing(
    keys: &Keys,
    dir: &Path,
    bytes: &[u8],
    claim: Claim,
    skip: bool,
) -> Result<Option<f64>> {
    if skip {
        return Ok(None);
    }
    use zkstep_core::format::Input;
    use zkstep_verifier::{read_any_proof, read_verifying_key, verify, verify_segment, AnyProof};
    let t = std::time::Instant::now();
    let vk_path = dir.join(zkstep_prover::ivc::VERIFYING_KEY_FILE);
    let corrupt = |why: String| CliError::ProvingKeyCorrupt {
        path: dir.join(PROVING_KEY_FILE),
        why,
    };
    let (vk, source) = match std::fs::metadata(&vk_path) {
        Ok(m) if m.is_file() => {
            let bytes = zkstep_core::format::read_input(&vk_path, Input::VerifyingKey)?;
            let vk = read_verifying_key(&bytes)
                .map_err(|e| corrupt(format!("{}: {e}", vk_path.display())))?;
            (vk, vk_path.display().to_string())
        }
        _ => {
            // the file keygen would have written beside it
            let bytes = zkstep_prover::ivc::verifying_key_bytes(keys)?;
            let vk = read_verifying_key(&bytes).map_err(|e| corrupt(e.to_string()))?;
            (vk, "the verifying key it derives".to_string())
        }
    };
    let verdict = match (read_any_proof(bytes), claim) {
        (Ok(AnyProof::Step(p)), Claim::Step(want)) => verify(&vk, &p, Some(want)).map(|_| ()),
        (Ok(AnyProof::Segment(p)), Claim::Segment(want)) => {
            verify_segment(&vk, &p, Some(want)).map(|_| ())
        }
        (Ok(_), _) => Err(zkstep_verifier::VerifyError::Malformed("a proof of the other kind".into())),
        (Err(e), _) => Err(e),
    };
    verdict.map_err(|e| {
        corrupt(format!("the proof it just made does not verify under {source} ({e})"))
    })?;
    Ok(Some(t.elapsed().as_secs_f64()))
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
    check_s: Option<f64>,
    bytes: usize,
    path: &Path,
    json: bool,
) -> serde_json::Value {
    let st = &proof.statement;
    let v = json!({"step": st.step, "steps": st.steps, "c_start": fr_to_hex(&st.c_start),
        "c_end": fr_to_hex(&st.c_end), "batches": fr_to_hex(&st.batches)});
    let what = format!("steps {}..{}", st.step, st.step + st.steps);
    written(v, &what, proof.num_folds, (t, check_s), bytes, path, json)
}

/// The JSON report of a proof written to `path` (printed as text too unless `json`).
pub fn report(
    proof: &ProofPayload,
    t: &Timings,
    check_s: Option<f64>,
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
        (t, check_s),
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
    (t, check_s): (&Timings, Option<f64>),
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
        ("check_s", json!(check_s)),
    ] {
        v[k] = x;
    }
    if !json {
        crate::outln!(
            "wrote {} ({bytes} bytes): {what}, {folds} folds; witness {:.2} s, folding {:.2} s, compression {:.2} s; {}",
            path.display(),
            t.witness_s,
            t.fold_s,
            t.compress_s,
            match check_s {
                Some(c) => format!("verified before writing in {c:.2} s"),
                None => "not verified (--no-check)".into(),
            }
        );
    }
    v
}
