//! `zkstep prove-run` and `zkstep prove-segment`: a run's steps, checked
//! against its manifest, proven in *units* (a step, or a segment of k steps
//! with one proof); a unit whose proof exists and verifies is skipped.
//!
//! `--shard I/N` proves the units u with u mod N = I, so N workers (a
//! cluster's tasks sharing the run directory) prove a run between them:
//! they hold the run's lock shared and write disjoint files atomically.
//! Every unit's checkpoints and batches are checked against the manifest's
//! commitments before the (slow to read) proving key is loaded, and every
//! existing proof that would be replaced is found before the first proof is
//! made, so a bad run fails at once.
//!
//! Under keys on KZG points a proof's checkpoint commitments are hashes of
//! the checkpoints' points under the keys' powers, not the manifest's chain
//! digests: the files are checked against the manifest as before, and the
//! statement each proof is checked against before it is written takes its
//! checkpoints' commitments from those files.

use crate::args::{ProveRunArgs, ProveSegmentArgs, RunProving};
use crate::error::{CliError, Result};
use crate::proving::{
    check_before_writing, load_keys, prove_segment_with_bar, prove_with_bar, report, segment_report, Claim,
};
use crate::run::{
    check_commitment, check_file_step, end_step, proof_name, segment_name, segment_statement,
    statement, RunLock, RunManifest, StepEntry, MANIFEST,
};
use crate::util::{print_json, set_msm};
use serde_json::json;
use std::path::{Path, PathBuf};
use zkstep_circuits::files::{self, FileKind, ProofPayload, SegmentPayload, SegmentStatement, Statement};
use zkstep_core::commit::{commit_batch, commit_params};
use zkstep_core::format::{read_batch, read_checkpoint, read_input, write_as, Input};
use zkstep_circuits::state::CommitScheme;
use zkstep_core::poseidon::Fr;
use zkstep_core::{Batch, Checkpoint, ModelSpec};
use zkstep_prover::ivc::{proof_bytes, segment_proof_bytes, Keys};

/// Does `path` hold a proof of exactly `unit`'s statement (`ends`: its
/// checkpoints' commitments under keys on KZG points) that verifies under `keys`?
fn existing_proof_verifies(
    keys: &Keys,
    s: &ModelSpec,
    mpath: &Path,
    path: &Path,
    unit: &Unit,
    ends: Option<(Fr, Fr)>,
) -> Result<bool> {
    let Ok(bytes) = read_input(path, Input::Proof) else {
        return Ok(false);
    };
    let vk = keys.step_keys()?;
    let made_for = keys.vk_checksum()?;
    use zkstep_circuits::verify::{verify_payload, verify_segment_payload};
    Ok(if unit.segment {
        let want = unit_segment_statement(s, keys, mpath, unit, ends)?;
        files::decode::<SegmentPayload>(&bytes, FileKind::SegmentProof).is_ok_and(|(h, p)| {
            p.vk_checksum == made_for && verify_segment_payload(&keys.layout, vk, h.spec_digest, &p, Some(&want)).is_ok()
        })
    } else {
        let want = unit_statement(s, mpath, unit, ends)?;
        files::decode::<ProofPayload>(&bytes, FileKind::Proof).is_ok_and(|(h, p)| {
            p.vk_checksum == made_for && verify_payload(&keys.layout, vk, h.spec_digest, &p, Some(&want)).is_ok()
        })
    })
}

/// The statement of a one-step unit: the manifest's, with `ends` as its
/// checkpoints' commitments where given (keys on KZG points).
fn unit_statement(s: &ModelSpec, mpath: &Path, unit: &Unit, ends: Option<(Fr, Fr)>) -> Result<Statement> {
    let st = statement(s, mpath, &unit.entries[0])?;
    Ok(match ends {
        Some((c_before, c_after)) => Statement { c_before, c_after, ..st },
        None => st,
    })
}

/// The statement of a segment unit, likewise.
fn unit_segment_statement(
    s: &ModelSpec,
    keys: &Keys,
    mpath: &Path,
    unit: &Unit,
    ends: Option<(Fr, Fr)>,
) -> Result<SegmentStatement> {
    let st = segment_statement(s, &keys.layout, mpath, unit.entries)?;
    Ok(match ends {
        Some((c_start, c_end)) => SegmentStatement { c_start, c_end, ..st },
        None => st,
    })
}

/// Under keys on KZG points, the commitments of a unit's first and last
/// checkpoints (`first`, `last`, read and checked against the manifest) as
/// hashes of their points under the keys' powers; None under chain keys,
/// whose statements take the manifest's.
fn kzg_ends(keys: &Keys, s: &ModelSpec, first: &Checkpoint, last: &Checkpoint) -> Result<Option<(Fr, Fr)>> {
    if keys.layout.commit_scheme == CommitScheme::Chain {
        return Ok(None);
    }
    let pk = keys.point_key();
    let commit = |c: &Checkpoint| pk.commitment(s, c).map(|(c, _)| c).map_err(CliError::Internal);
    Ok(Some((commit(first)?, commit(last)?)))
}

/// A unit of proving: one step (its own proof file), or a segment of
/// consecutive steps (one segment proof).
struct Unit<'a> {
    entries: &'a [StepEntry],
    segment: bool,
}

impl Unit<'_> {
    fn file(&self) -> String {
        let t = self.entries[0].step;
        if self.segment {
            segment_name(t, self.entries.len() as u64)
        } else {
            proof_name(t)
        }
    }
}

/// Which units to prove and how.
struct Plan<'a> {
    run: &'a RunProving,
    /// Shard (i, n): the units u with u mod n = i.
    shard: (u64, u64),
    /// Steps per segment (None: a proof per step).
    segment: Option<u64>,
    /// Only the steps from .. from + steps (prove-segment).
    range: Option<(u64, u64)>,
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
    prove(Plan {
        run: &a.run,
        shard: a.shard.unwrap_or((0, 1)),
        segment: a.segment,
        range: None,
    })
}

/// Run `zkstep prove-segment`.
pub fn run_segment(a: ProveSegmentArgs) -> Result<()> {
    prove(Plan {
        run: &a.run,
        shard: (0, 1),
        segment: Some(a.steps),
        range: Some((a.from, a.steps)),
    })
}

fn prove(a: Plan) -> Result<()> {
    let r = a.run;
    set_msm(r.msm)?;
    let (run, json) = (r.run.as_path(), r.json);
    // shared with the run's other provers (shards), exclusive of `train`
    let _lock = RunLock::acquire_shared(run)?;
    let mpath = run.join(MANIFEST);
    let m = RunManifest::read(&mpath)?;
    let s = m.spec(run, &mpath)?;
    m.check_chain(&mpath)?;
    let steps: &[StepEntry] = match a.range {
        None => &m.steps,
        Some((from, k)) => {
            let end = end_step(from, k)?;
            let i = m.steps.iter().position(|e| e.step == from);
            match i.filter(|&i| i + k as usize <= m.steps.len()) {
                Some(i) => &m.steps[i..i + k as usize],
                None => {
                    return Err(CliError::Usage(format!(
                        "{}: steps {from}..{end} are not all in this run (it has steps {}..{})",
                        mpath.display(),
                        m.steps.first().map_or(0, |e| e.step),
                        m.steps.last().map_or(0, |e| e.step + 1)
                    )))
                }
            }
        }
    };
    let per = a.segment.map_or(1, |k| k as usize);
    let (si, sn) = a.shard;
    let units: Vec<Unit> = steps
        .chunks(per)
        .enumerate()
        .filter(|(u, _)| *u as u64 % sn == si)
        .map(|(_, entries)| Unit {
            entries,
            segment: a.segment.is_some(),
        })
        .collect();
    let statements = m
        .steps
        .iter()
        .map(|e| statement(&s, &mpath, e))
        .collect::<Result<Vec<_>>>()?;
    let st_of = |e: &StepEntry| -> &Statement {
        let i = (e.step - m.steps[0].step) as usize;
        &statements[i]
    };
    for u in &units {
        for e in u.entries {
            step_files(run, &mpath, &s, e, st_of(e))?;
        }
    }
    let keys = load_keys(&r.keys, &s)?;
    let mut verified = vec![];
    for u in &units {
        let path = run.join(u.file());
        let ends = match (keys.layout.commit_scheme, path.exists()) {
            (CommitScheme::Evaluation, true) => {
                let (first, last) = (&u.entries[0], &u.entries[u.entries.len() - 1]);
                let (b0, _, _) = step_files(run, &mpath, &s, first, st_of(first))?;
                let (_, b1, _) = step_files(run, &mpath, &s, last, st_of(last))?;
                kzg_ends(&keys, &s, &b0, &b1)?
            }
            _ => None,
        };
        let ok = existing_proof_verifies(&keys, &s, &mpath, &path, u, ends)?;
        if !ok && !r.force && path.exists() {
            return Err(CliError::StaleProof(path));
        }
        verified.push(ok);
    }
    let mut out = vec![];
    for (u, skip) in units.iter().zip(verified) {
        let path: PathBuf = run.join(u.file());
        let t = u.entries[0].step;
        if skip {
            if !json {
                crate::outln!(
                    "steps {t}..{}: {} exists and verifies, skipped",
                    t + u.entries.len() as u64,
                    path.display()
                );
            }
            out.push(json!({"step": t, "steps": u.entries.len(), "proof": crate::util::path_json(&path), "skipped": true}));
            continue;
        }
        // read again: what is proven is what is on disk now, checked again
        let mut cps: Vec<Checkpoint> = vec![];
        let mut batches: Vec<Batch> = vec![];
        for e in u.entries {
            let (b0, b1, bt) = step_files(run, &mpath, &s, e, st_of(e))?;
            if cps.is_empty() {
                cps.push(b0);
            }
            cps.push(b1);
            batches.push(bt);
        }
        let mut v = if u.segment {
            let (proof, t) = prove_segment_with_bar(&keys, &cps, &batches, !json)?;
            let bytes = segment_proof_bytes(&keys, &proof)?;
            let ends = kzg_ends(&keys, &s, &cps[0], &cps[cps.len() - 1])?;
            let want = unit_segment_statement(&s, &keys, &mpath, u, ends)?;
            let check_s = check_before_writing(&keys, &r.keys, &bytes, Claim::Segment(&want), r.no_check)?;
            // without --force, a proof another process wrote meanwhile is kept
            write_as(&path, &bytes, r.force)?;
            segment_report(&proof, &t, check_s, bytes.len(), &path, json)
        } else {
            let (proof, t) = prove_with_bar(&keys, &cps[0], &cps[1], &batches[0], !json)?;
            let bytes = proof_bytes(&keys, &proof)?;
            let ends = kzg_ends(&keys, &s, &cps[0], &cps[1])?;
            let want = unit_statement(&s, &mpath, u, ends)?;
            let check_s = check_before_writing(&keys, &r.keys, &bytes, Claim::Step(&want), r.no_check)?;
            // without --force, a proof another process wrote meanwhile is kept
            write_as(&path, &bytes, r.force)?;
            report(&proof, &t, check_s, bytes.len(), &path, json)
        };
        v["skipped"] = json!(false);
        out.push(v);
    }
    let shard = (sn > 1).then(|| format!("{si}/{sn}"));
    if json {
        print_json(&json!({"run": crate::util::path_json(&mpath), "shard": shard, "proofs": out}));
    } else {
        crate::outln!(
            "{} proofs made or verified in {}{}",
            out.len(),
            run.display(),
            shard.map_or(String::new(), |s| format!(" (shard {s})"))
        );
    }
    Ok(())
}
