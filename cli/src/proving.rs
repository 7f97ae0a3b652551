//! Proving helpers shared by `prove`, `prove-run`, `demo` and `bench`:
//! keys checked against a spec, one step proven under a fold progress bar,
//! and the report of a written proof.

use crate::error::{CliError, Result};
use crate::util::FoldBar;
use serde_json::json;
use std::path::Path;
use zkstep_circuits::files::ProofPayload;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::{Batch, Checkpoint, ModelSpec};
use zkstep_prover::ivc::{read_proving_key, Keys, Timings, PROVING_KEY_FILE};

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
    let mut bar = FoldBar::new(show);
    Ok(zkstep_prover::ivc::prove(
        keys,
        before,
        after,
        batch,
        &mut |e| bar.on(e),
    )?)
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
    let v = json!({"proof": path, "bytes": bytes, "folds": proof.num_folds, "step": st.step,
        "c_before": fr_to_hex(&st.c_before), "c_after": fr_to_hex(&st.c_after), "c_batch": fr_to_hex(&st.c_batch),
        "witness_s": t.witness_s, "fold_s": t.fold_s, "compress_s": t.compress_s});
    if !json {
        crate::outln!("wrote {} ({bytes} bytes): step {}, {} folds; witness {:.2} s, folding {:.2} s, compression {:.2} s", path.display(), st.step, proof.num_folds, t.witness_s, t.fold_s, t.compress_s);
    }
    v
}
