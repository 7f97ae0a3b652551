//! The checks of a whole run (`zkstep verify-run`, and each node's run in
//! `zkstep verify-round`): every step covered by a proof that verifies
//! against the manifest (its own, or a segment's), consecutive steps
//! chained, the first and last checkpoints committing to the chain's ends.
//! Every problem is collected, not only the first.
//!
//! Under chain keys a proof's checkpoint commitments are the manifest's.
//! Under keys on KZG points they are hashes of the checkpoints' points,
//! which the manifest (Poseidon-chain digests of its files) does not hold:
//! each proof is checked against the manifest's batch and step with its
//! own checkpoint commitments, and the proofs must then form a chain of
//! equal commitments from the first checkpoint file's to the last's, both
//! committed under the keys' points file.

use crate::error::Result;
use crate::run::{parse_segment_name, proof_name, segment_name, segment_statement, statement, RunManifest};
use crate::error::CliError;
use serde_json::json;
use std::path::Path;
use zkstep_core::commit::commit_params;
use zkstep_core::format::{read_checkpoint, read_input, Input};
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::ModelSpec;
use zkstep_core::poseidon::Fr;
use zkstep_verifier::{
    read_any_proof, read_proof, verify, verify_segment, AnyProof, Points, SegmentStatement, Statement, VerifyingKey,
};

/// Where the commitments of a run's checkpoints come from.
#[derive(Clone, Copy)]
pub enum Ends<'a> {
    /// The manifest's (chain keys).
    Manifest,
    /// The proofs', the run's ends committed under these points (keys on KZG points).
    Points(&'a Points),
}

/// A proof that verified: checkpoint `from` to `to`, with the commitments it proved.
struct Edge {
    from: u64,
    to: u64,
    c_from: Fr,
    c_to: Fr,
}

/// What the checks of a run found.
pub struct RunCheck {
    /// Every problem, in the order found (none: the run is proven).
    pub problems: Vec<String>,
    /// Per step: verified, by which proof, or the problem (JSON).
    pub steps: Vec<serde_json::Value>,
    /// Per segment proof found (JSON).
    pub segments: Vec<serde_json::Value>,
}

/// Check the run in `run` (manifest `m` at `mpath`, spec `s`) under `vk`,
/// its checkpoints' commitments from `ends`.
pub fn check_run(
    run: &Path,
    mpath: &Path,
    m: &RunManifest,
    s: &ModelSpec,
    vk: &VerifyingKey,
    ends: Ends,
) -> Result<RunCheck> {
    let mut problems: Vec<String> = vec![];
    let mut edges: Vec<Edge> = vec![];
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
    let mut files: Vec<Option<Fr>> = vec![];
    if let (Some(first), Some(last)) = (m.steps.first(), m.steps.last()) {
        for (file, want, what) in [
            (&first.before, &first.c_before, "c_before of the first step"),
            (&last.after, &last.c_after, "c_after of the last step"),
        ] {
            let path = run.join(file);
            let c = match (read_checkpoint(&path, s), ends) {
                (Ok(ck), Ends::Manifest) if fr_to_hex(&commit_params(s, &ck)) == *want => {
                    crate::run::manifest_fr(mpath, "commitment", want).ok()
                }
                (Ok(_), Ends::Manifest) => {
                    problems.push(format!("{}: does not commit to the manifest's {what}", path.display()));
                    None
                }
                (Ok(ck), Ends::Points(p)) => match p.commitment(s, &ck) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        problems.push(format!("{}: {e}", path.display()));
                        None
                    }
                },
                (Err(e), _) => {
                    problems.push(e.to_string());
                    None
                }
            };
            files.push(c);
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
        let verdict = segment_verdict(s, vk, mpath, m, base, &path, t, k, ends);
        match verdict {
            Ok((ms, c_from, c_to)) => {
                edges.push(Edge { from: t, to: t + k, c_from, c_to });
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
        let manifest = statement(s, mpath, e)?;
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
                    let want = match ends {
                        Ends::Manifest => manifest,
                        Ends::Points(_) => Statement { c_before: got.c_before, c_after: got.c_after, ..manifest },
                    };
                    match verify(vk, &p, Some(&want)) {
                        Ok((_, dt)) => {
                            edges.push(Edge { from: e.step, to: e.step + 1, c_from: want.c_before, c_to: want.c_after });
                            Ok((Some(dt.as_secs_f64() * 1e3), proof_name(e.step)))
                        }
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
    if let ([Some(c0), Some(cn)], true) = (files.as_slice(), problems.is_empty()) {
        let (t0, tn) = (base, base + m.steps.len() as u64);
        let names = [run.join(&m.steps[0].before), run.join(&m.steps[m.steps.len() - 1].after)];
        if let Some(p) = chain_break(&edges, (t0, *c0), (tn, *cn), &names) {
            problems.push(p);
        }
    }
    Ok(RunCheck {
        problems,
        steps,
        segments: seg_report,
    })
}

/// None if the verified proofs (`edges`) chain from checkpoint `start` to
/// `end` with equal commitments where they meet, else what breaks: every
/// step may be proven and the proofs still not chain (keys on KZG points: a
/// proof of step t + 1 from another θ_{t+1} than step t's proof ended at;
/// either scheme: segments that overlap without meeting).
fn chain_break(edges: &[Edge], start: (u64, Fr), end: (u64, Fr), files: &[std::path::PathBuf; 2]) -> Option<String> {
    // reachable (checkpoint, commitment) pairs, in checkpoint order
    let mut reached: Vec<(u64, Fr)> = vec![start];
    let mut order: Vec<&Edge> = edges.iter().collect();
    order.sort_by_key(|e| (e.from, e.to));
    for e in order {
        if reached.contains(&(e.from, e.c_from)) && !reached.contains(&(e.to, e.c_to)) {
            reached.push((e.to, e.c_to));
        }
    }
    if reached.contains(&end) {
        return None;
    }
    let far = reached.iter().map(|r| r.0).max().unwrap_or(start.0);
    Some(if far == start.0 {
        format!(
            "{}: not the θ_{} that the proof of step {} starts from",
            files[0].display(),
            start.0,
            start.0
        )
    } else if far == end.0 {
        format!("{}: not the θ_{} that the proofs end at", files[1].display(), end.0)
    } else {
        format!(
            "the proofs do not chain at θ_{far}: no proof continues from the θ_{far} that the proofs before it end at (a proof made from another checkpoint)"
        )
    })
}

/// Verify the segment file `path`, named for steps t..t+k, against what the
/// manifest gives for those steps (under keys on KZG points, with its own
/// checkpoint commitments); Ok(verify ms and the commitments it proved
/// from and to) or the problem.
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
    ends: Ends,
) -> std::result::Result<(f64, Fr, Fr), String> {
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
    let manifest = segment_statement(s, &vk.layout, mpath, entries).map_err(|e| e.to_string())?;
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
    let want = match ends {
        Ends::Manifest => manifest,
        Ends::Points(_) => SegmentStatement { c_start: got.c_start, c_end: got.c_end, ..manifest },
    };
    match verify_segment(vk, &p, Some(&want)) {
        Ok((_, dt)) => Ok((dt.as_secs_f64() * 1e3, want.c_start, want.c_end)),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(from: u64, to: u64, c_from: u64, c_to: u64) -> Edge {
        Edge { from, to, c_from: Fr::from(c_from), c_to: Fr::from(c_to) }
    }

    #[test]
    fn proofs_chain_only_where_they_meet_with_equal_commitments() {
        let files = [std::path::PathBuf::from("ckpt_0"), std::path::PathBuf::from("ckpt_3")];
        let (s, e) = ((0, Fr::from(10)), (3, Fr::from(13)));
        // a step and a segment meeting at θ_1
        assert!(chain_break(&[edge(1, 3, 11, 13), edge(0, 1, 10, 11)], s, e, &files).is_none());
        // every step proven, but step 1 from another θ_1 than step 0 ended at
        let b = chain_break(&[edge(0, 1, 10, 11), edge(1, 2, 99, 12), edge(2, 3, 12, 13)], s, e, &files);
        assert!(b.unwrap().contains("do not chain at θ_1"));
        // overlapping segments that never meet cover every step and prove no chain
        let b = chain_break(&[edge(0, 2, 10, 12), edge(1, 3, 11, 13)], s, e, &files);
        assert!(b.unwrap().contains("θ_2"));
        // the ends: another first or last checkpoint than the proofs'
        let b = chain_break(&[edge(0, 3, 77, 13)], s, e, &files);
        assert!(b.unwrap().starts_with("ckpt_0: not the θ_0"));
        let b = chain_break(&[edge(0, 3, 10, 77)], s, e, &files);
        assert!(b.unwrap().starts_with("ckpt_3: not the θ_3"));
    }
}
