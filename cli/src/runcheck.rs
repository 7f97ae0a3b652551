//! The checks of a whole run (`zkstep verify-run`, and each node's run in
//! `zkstep verify-round`): every step covered by a proof that verifies
//! against the manifest (its own, or a segment's), consecutive steps
//! chained, the first and last checkpoints committing to the chain's ends.
//! Every problem is collected, not only the first.

use crate::error::Result;
use crate::run::{parse_segment_name, proof_name, segment_name, segment_statement, statement, RunManifest};
use crate::error::CliError;
use serde_json::json;
use std::path::Path;
use zkstep_core::commit::commit_params;
use zkstep_core::format::{read_checkpoint, read_input, Input};
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::ModelSpec;
use zkstep_verifier::{read_any_proof, read_proof, verify, verify_segment, AnyProof, VerifyingKey};

/// What the checks of a run found.
pub struct RunCheck {
    /// Every problem, in the order found (none: the run is proven).
    pub problems: Vec<String>,
    /// Per step: verified, by which proof, or the problem (JSON).
    pub steps: Vec<serde_json::Value>,
    /// Per segment proof found (JSON).
    pub segments: Vec<serde_json::Value>,
}

/// Check the run in `run` (manifest `m` at `mpath`, spec `s`) under `vk`.
pub fn check_run(run: &Path, mpath: &Path, m: &RunManifest, s: &ModelSpec, vk: &VerifyingKey) -> Result<RunCheck> {
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
            match read_checkpoint(&path, s) {
                Ok(ck) if fr_to_hex(&commit_params(s, &ck)) == *want => {}
                Ok(_) => problems.push(format!(
                    "{}: does not commit to the manifest's {what}",
                    path.display()
                )),
                Err(e) => problems.push(e.to_string()),
            }
        }
    }
    // segment proofs in the run directory, by their names' ranges
    let mut segments: Vec<(u64, u64)> = vec![];
    for entry in std::fs::read_dir(run).map_err(|e| CliError::io(run, e))? {
        let entry = entry.map_err(|e| CliError::io(run, e))?;
        if let Some(r) = entry.file_name().to_str().and_then(parse_segment_name) {
            segments.push(r);
        }
    }
    segments.sort();
    let base = m.steps.first().map_or(0, |e| e.step);
    let mut covered: Vec<Option<String>> = vec![None; m.steps.len()];
    let mut seg_report = vec![];
    for &(t, k) in &segments {
        let name = segment_name(t, k);
        let path = run.join(&name);
        let verdict = segment_verdict(s, vk, mpath, m, base, &path, t, k);
        match verdict {
            Ok(ms) => {
                for c in covered
                    .iter_mut()
                    .skip((t - base) as usize)
                    .take(k as usize)
                {
                    c.get_or_insert_with(|| name.clone());
                }
                seg_report.push(json!({"segment": name, "step": t, "steps": k, "verified": true, "verify_ms": ms}));
            }
            Err(msg) => {
                problems.push(format!("segment {t}..{}: {msg}", t.saturating_add(k)));
                seg_report.push(json!({"segment": name, "step": t, "steps": k, "verified": false, "problem": msg}));
            }
        }
    }
    let mut steps = vec![];
    for (i, e) in m.steps.iter().enumerate() {
        let want = statement(s, mpath, e)?;
        let path = run.join(proof_name(e.step));
        let verdict = match read_input(&path, Input::Proof) {
            Err(_) if !path.exists() => match &covered[i] {
                Some(seg) => Ok((None, seg.clone())),
                None => Err(format!(
                    "no proof ({} is missing, and no segment covers it)",
                    path.display()
                )),
            },
            Err(err) => Err(err.to_string()),
            Ok(bytes) => match read_proof(&bytes) {
                Err(err) => Err(format!("{}: not a proof: {err}", path.display())),
                Ok(p) => {
                    let got = p.statement();
                    match verify(vk, &p, Some(&want)) {
                        Ok((_, dt)) => Ok((Some(dt.as_secs_f64() * 1e3), proof_name(e.step))),
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
            Ok((ms, by)) => {
                steps.push(json!({"step": e.step, "verified": true, "by": by, "verify_ms": ms}))
            }
            Err(msg) => {
                problems.push(format!("step {}: {msg}", e.step));
                steps.push(json!({"step": e.step, "verified": false, "problem": msg}));
            }
        }
    }
    Ok(RunCheck {
        problems,
        steps,
        segments: seg_report,
    })
}

/// Verify the segment file `path`, named for steps t..t+k, against what the
/// manifest gives for those steps; Ok(verify ms) or the problem.
#[allow(clippy::too_many_arguments)]
fn segment_verdict(
    s: &zkstep_core::ModelSpec,
    vk: &zkstep_verifier::VerifyingKey,
    mpath: &std::path::Path,
    m: &RunManifest,
    base: u64,
    path: &std::path::Path,
    t: u64,
    k: u64,
) -> std::result::Result<f64, String> {
    let (lo, hi) = (t.checked_sub(base), t.checked_add(k));
    let entries = match (lo, hi) {
        (Some(lo), Some(_)) if k >= 1 && lo.saturating_add(k) <= m.steps.len() as u64 => {
            &m.steps[lo as usize..(lo + k) as usize]
        }
        _ => {
            return Err(format!(
                "{} names steps outside the run's {}..{}",
                path.display(),
                base,
                base + m.steps.len() as u64
            ))
        }
    };
    let want = segment_statement(s, &vk.layout, mpath, entries).map_err(|e| e.to_string())?;
    let bytes = read_input(path, Input::Proof).map_err(|e| e.to_string())?;
    let p = match read_any_proof(&bytes) {
        Ok(AnyProof::Segment(p)) => p,
        Ok(AnyProof::Step(_)) => {
            return Err(format!(
                "{} is a one-step proof, not a segment proof",
                path.display()
            ))
        }
        Err(e) => return Err(format!("{}: not a proof: {e}", path.display())),
    };
    let got = p.payload.statement;
    match verify_segment(vk, &p, Some(&want)) {
        Ok((_, dt)) => Ok(dt.as_secs_f64() * 1e3),
        Err(_) if (got.step, got.steps) != (t, k) => Err(format!(
            "{} is a proof of steps {}..{}, not of steps {t}..{} (a segment claimed for the wrong range)",
            path.display(),
            got.step,
            got.step.saturating_add(got.steps),
            t + k
        )),
        Err(e) => Err(format!("{} does not verify: {e}", path.display())),
    }
}
