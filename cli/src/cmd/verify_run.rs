//! `zkstep verify-run`: a whole run checked with only its verifying key.
//!
//! Every step of the manifest must be covered by a proof that verifies
//! against the manifest: its own `proof_{t}.zkstep` (against the step's
//! statement: spec, c_before, c_after, c_batch, step) or a
//! `segment_{t}_{k}.zkstep` whose range holds it (against the statement the
//! manifest gives for steps t..t+k: the first c_before, the last c_after,
//! the chain of their batch commitments). Consecutive steps must chain
//! (c_after(t) = c_before(t+1)); the first and last checkpoints must commit
//! to the chain's ends. Under keys on KZG points the proofs carry the
//! checkpoints' commitments (the manifest holds chain digests of its
//! files): they must chain from the first checkpoint file's commitment to
//! the last's, both made with the keys' points file (`--points`, else
//! `points.key` beside `--vk`). Every problem is named (a missing proof, a proof
//! that does not verify, a proof of another step: swapped, duplicated or
//! misplaced; a segment claimed for another range), not only the first,
//! even where another proof covers the step, and any problem exits 1.

use crate::args::VerifyRunArgs;
use crate::error::{CliError, Result};
use crate::run::{RunManifest, MANIFEST};
use crate::runcheck::{check_run, Ends, RunCheck};
use crate::util::print_json;
use serde_json::json;
use zkstep_core::format::{read_input, Input};
use zkstep_verifier::read_verifying_key;

/// Run `zkstep verify-run`.
pub fn run(a: VerifyRunArgs) -> Result<()> {
    let run = a.run.as_path();
    let mpath = run.join(MANIFEST);
    let m = RunManifest::read(&mpath)?;
    // a run of no steps proves nothing: never "ACCEPTED: 0 steps"
    if m.steps.is_empty() {
        return Err(CliError::BadFile {
            path: mpath,
            msg: "the run lists no steps: there is nothing to verify".into(),
        });
    }
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
    let points = crate::util::points_for(&a.vk, a.points.as_deref(), &vk)?;
    let ends = points.as_ref().map_or(Ends::Manifest, Ends::Points);
    let RunCheck {
        problems,
        steps,
        segments: seg_report,
    } = check_run(run, &mpath, &m, &s, &vk, ends)?;
    let (t0, t1) = (
        m.steps.first().map_or(0, |e| e.step),
        m.steps.last().map_or(0, |e| e.step + 1),
    );
    if a.json {
        print_json(&json!({
            "run": crate::util::path_json(&mpath), "from": t0, "to": t1, "steps": steps, "segments": seg_report,
            "problems": problems, "verified": problems.is_empty(),
        }));
    } else {
        for p in &problems {
            eprintln!("REJECTED: {p}");
        }
        if problems.is_empty() {
            crate::outln!(
                "ACCEPTED: {} steps, θ_{t0} → θ_{t1}, every step proven ({} segment proofs), every proof verifies and the commitments chain",
                m.steps.len(),
                seg_report.len()
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
