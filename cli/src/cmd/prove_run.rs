//! `zkstep prove-run`: every step of a run, checked against its manifest;
//! a step whose proof exists and verifies is skipped.

use crate::args::ProveRunArgs;
use crate::error::{CliError, Result};
use crate::proving::{load_keys, prove_with_bar, report};
use crate::run::{RunManifest, MANIFEST};
use crate::util::{print_json, set_msm};
use serde_json::json;
use std::path::Path;
use zkstep_circuits::files::{self, FileKind, ProofPayload, Statement};
use zkstep_core::commit::commit_params;
use zkstep_core::format::{read_batch, read_checkpoint, write_atomic};
use zkstep_core::poseidon::{fr_from_hex, fr_to_hex};
use zkstep_core::ModelSpec;
use zkstep_prover::ivc::{proof_bytes, Keys};

fn parse_hex(s: &str, what: &'static str, manifest: &Path) -> Result<zkstep_core::Fr> {
    fr_from_hex(s).ok_or_else(|| CliError::ManifestHex {
        path: manifest.to_path_buf(),
        what,
        value: s.to_string(),
    })
}

/// Does `path` hold a proof of exactly `expected` that verifies under `keys`?
fn existing_proof_verifies(keys: &Keys, path: &Path, expected: &Statement) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
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

/// Run `zkstep prove-run`.
pub fn run(a: ProveRunArgs) -> Result<()> {
    set_msm(a.msm)?;
    let (run, json) = (a.run.as_path(), a.json);
    let mpath = run.join(MANIFEST);
    let m = RunManifest::read(&mpath)?;
    let s = ModelSpec::from_file(&run.join(&m.spec))?;
    if fr_to_hex(&s.digest()) != m.spec_digest {
        return Err(CliError::ManifestSpec {
            path: mpath,
            spec: run.join(&m.spec),
        });
    }
    let keys = load_keys(&a.keys, &s)?;
    for w in m.steps.windows(2) {
        if w[0].c_after != w[1].c_before {
            return Err(CliError::RunNotChained {
                path: mpath,
                step: w[0].step,
                next: w[1].step,
            });
        }
    }
    let mut out = vec![];
    for e in &m.steps {
        let path = run.join(format!("proof_{}.zkstep", e.step));
        let expected = Statement {
            spec_digest: s.digest(),
            c_before: parse_hex(&e.c_before, "c_before", &mpath)?,
            c_after: parse_hex(&e.c_after, "c_after", &mpath)?,
            c_batch: parse_hex(&e.c_batch, "c_batch", &mpath)?,
            step: e.step,
        };
        if existing_proof_verifies(&keys, &path, &expected) {
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
        let b0 = read_checkpoint(&run.join(&e.before), &s)?;
        let b1 = read_checkpoint(&run.join(&e.after), &s)?;
        let (bt, _) = read_batch(&run.join(&e.batch), &s)?;
        for (what, got, want) in [
            ("c_before", commit_params(&s, &b0), expected.c_before),
            ("c_after", commit_params(&s, &b1), expected.c_after),
        ] {
            if got != want {
                return Err(CliError::ManifestCommitment {
                    path: mpath,
                    step: e.step,
                    what,
                });
            }
        }
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
