//! `zkstep verify-run`: a whole run checked with only its verifying key.
//!
//! Every step of the manifest must have its proof file, and that proof must
//! verify against the manifest's statement for that step (spec, c_before,
//! c_after, c_batch, step); consecutive steps must chain (c_after(t) =
//! c_before(t+1)); the first and last checkpoints must commit to the chain's
//! ends. Every problem is named (a missing proof, a proof that does not
//! verify, a proof of another step: swapped, duplicated or misplaced), not
//! only the first, and any problem exits 1.

use crate::args::VerifyRunArgs;
use crate::error::{CliError, Result};
use crate::run::{proof_name, statement, RunManifest, MANIFEST};
use crate::util::print_json;
use serde_json::json;
use zkstep_core::commit::commit_params;
use zkstep_core::format::{read_checkpoint, read_input, Input};
use zkstep_core::poseidon::fr_to_hex;
use zkstep_verifier::{read_proof, read_verifying_key, verify};

/// Run `zkstep verify-run`.
pub fn run(a: VerifyRunArgs) -> Result<()> {
    let run = a.run.as_path();
    let mpath = run.join(MANIFEST);
    let m = RunManifest::read(&mpath)?;
    let s = m.spec(run, &mpath)?;
    let vk = read_verifying_key(&read_input(&a.vk, Input::VerifyingKey)?).map_err(|e| {
        CliError::BadFile {
            path: a.vk.clone(),
            msg: e.to_string(),
        }
    })?;
    if vk.layout.spec_digest != s.digest() {
        return Err(CliError::KeyForAnotherSpec {
            vk: a.vk.clone(),
            spec: run.join("spec.toml"),
        });
    }
    let mut problems: Vec<String> = vec![];
    for w in m.steps.windows(2) {
        if w[0].step.checked_add(1) != Some(w[1].step) {
            problems.push(format!(
                "steps {} and {}: not consecutive (a gap or a reordering in the manifest)",
                w[0].step, w[1].step
            ));
        } else if w[0].c_after != w[1].c_before {
            problems.push(format!(
                "steps {} and {}: c_after of the first is not c_before of the second",
                w[0].step, w[1].step
            ));
        }
    }
    // the chain's ends are the run's first and last checkpoints
    if let (Some(first), Some(last)) = (m.steps.first(), m.steps.last()) {
        for (file, want, what) in [
            (&first.before, &first.c_before, "c_before of the first step"),
            (&last.after, &last.c_after, "c_after of the last step"),
        ] {
            let path = run.join(file);
            match read_checkpoint(&path, &s) {
                Ok(ck) if fr_to_hex(&commit_params(&s, &ck)) == *want => {}
                Ok(_) => problems.push(format!(
                    "{}: does not commit to the manifest's {what}",
                    path.display()
                )),
                Err(e) => problems.push(e.to_string()),
            }
        }
    }
    let mut steps = vec![];
    for e in &m.steps {
        let want = statement(&s, &mpath, e)?;
        let path = run.join(proof_name(e.step));
        let verdict = match read_input(&path, Input::Proof) {
            Err(_) if !path.exists() => Err(format!("no proof ({} is missing)", path.display())),
            Err(err) => Err(err.to_string()),
            Ok(bytes) => match read_proof(&bytes) {
                Err(err) => Err(format!("{}: not a proof: {err}", path.display())),
                Ok(p) => {
                    let got = p.statement();
                    match verify(&vk, &p, Some(&want)) {
                        Ok((_, dt)) => Ok(dt.as_secs_f64() * 1e3),
                        Err(_) if got.step != e.step || got.c_before != want.c_before => {
                            Err(format!(
                                "{} is a proof of step {}, not of step {} (swapped, duplicated or misplaced)",
                                path.display(),
                                got.step,
                                e.step
                            ))
                        }
                        Err(err) => Err(format!("{} does not verify: {err}", path.display())),
                    }
                }
            },
        };
        match verdict {
            Ok(ms) => steps.push(json!({"step": e.step, "verified": true, "verify_ms": ms})),
            Err(msg) => {
                problems.push(format!("step {}: {msg}", e.step));
                steps.push(json!({"step": e.step, "verified": false, "problem": msg}));
            }
        }
    }
    let (t0, t1) = (
        m.steps.first().map_or(0, |e| e.step),
        m.steps.last().map_or(0, |e| e.step + 1),
    );
    if a.json {
        print_json(&json!({
            "run": mpath, "from": t0, "to": t1, "steps": steps,
            "problems": problems, "verified": problems.is_empty(),
        }));
    } else {
        for p in &problems {
            eprintln!("REJECTED: {p}");
        }
        if problems.is_empty() {
            crate::outln!(
                "ACCEPTED: {} steps, θ_{t0} → θ_{t1}, every proof verifies and the commitments chain",
                m.steps.len()
            );
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(CliError::RunRejected {
            run: run.to_path_buf(),
            count: problems.len(),
        })
    }
}
