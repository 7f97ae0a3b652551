//! `zkstep verify-round DIR`: a whole federated round, with only the
//! verifying keys. Accepted iff the merge proof verifies and its statement
//! is the round file's (inputs, reputations, τ, the previous global model),
//! and every node's checkpoint in the round file is the last of a run
//! directory that `verify-run` accepts, which starts from the previous
//! global model and ends at the commitment the merge took as that node's
//! input. The first thing that fails is named (exit 1).
//!
//! Step keys and merge keys commit checkpoints each their own way (hash
//! chains, or KZG points under their own powers): each run's first and last
//! checkpoint files are the link, committed both ways (as the steps' keys
//! commit them, the ends of the run's chain of proofs; as the merge key
//! commits them, the merge's previous model and this node's input).

use crate::args::VerifyRoundArgs;
use crate::error::{CliError, Result};
use crate::run::{RunManifest, MANIFEST};
use crate::runcheck::{check_run, Ends};
use crate::util::{path_json, print_json};
use serde_json::json;
use std::path::{Path, PathBuf};
use zkstep_core::commit::commit_params;
use zkstep_core::format::{read_checkpoint, read_input, Input};
use zkstep_core::merge::Round;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::poseidon::Fr;
use zkstep_prover::merge::MERGE_POINTS_FILE;
use zkstep_verifier::merge::{read_merge_key, read_merge_points, read_merge_proof, verify_merge_proof};
use zkstep_verifier::{read_verifying_key, VerifyError};

/// The round file's name in a round directory.
pub const ROUND_FILE: &str = "round.toml";
/// The merge proof's default name in a round directory.
pub const MERGE_PROOF_FILE: &str = "merge.zkstep";

fn bad(path: &Path) -> impl Fn(VerifyError) -> CliError + '_ {
    move |e| CliError::BadFile {
        path: path.to_path_buf(),
        msg: e.to_string(),
    }
}

/// Run `zkstep verify-round`.
pub fn run(a: VerifyRoundArgs) -> Result<()> {
    let dir = a.dir.as_path();
    let or = |p: &Option<PathBuf>, d: &str| p.clone().unwrap_or_else(|| dir.join(d));
    let (vk_path, mvk_path, mp_path) = (
        or(&a.vk, "keys/verifying.key"),
        or(&a.merge_vk, "keys/merge_verifying.key"),
        or(&a.merge_proof, MERGE_PROOF_FILE),
    );
    let rpath = dir.join(ROUND_FILE);
    let round = Round::from_file(&rpath)?;
    let key = read_merge_key(&read_input(&mvk_path, Input::VerifyingKey)?).map_err(bad(&mvk_path))?;
    let vk = read_verifying_key(&read_input(&vk_path, Input::VerifyingKey)?).map_err(bad(&vk_path))?;
    let points = crate::util::points_for(&vk_path, a.points.as_deref(), &vk)?;
    let ends = points.as_ref().map_or(Ends::Manifest, Ends::Points);
    let spec = key.spec.clone();
    if vk.layout.spec_digest != spec.digest() {
        return Err(CliError::BadFile {
            path: vk_path,
            msg: format!("a key for another spec than the merge key {}", mvk_path.display()),
        });
    }
    let proof = read_merge_proof(&read_input(&mp_path, Input::Proof)?).map_err(bad(&mp_path))?;
    let reject = |why: String| CliError::RoundRejected {
        round: dir.to_path_buf(),
        why,
    };
    // the merge proof, and its statement against the round file
    let (st, merge_dt) = verify_merge_proof(&key, &proof)
        .map_err(|e| reject(format!("the merge proof {}: {e}", mp_path.display())))?;
    if round.nodes.len() != st.c_nodes.len() {
        return Err(reject(format!(
            "{} names {} nodes, the merge proof merged {}",
            rpath.display(),
            round.nodes.len(),
            st.c_nodes.len()
        )));
    }
    if round.tau_fx != st.tau_fx {
        return Err(reject(format!("{}: tau_fx {}, the merge proof's {}", rpath.display(), round.tau_fx, st.tau_fx)));
    }
    // a checkpoint's commitment as the merge names it: its chain, or under
    // merge keys on KZG points the hash of its point (merge_points.key)
    let merge_points = match key.on_points() {
        false => None,
        true => {
            let path = a.merge_points.clone().unwrap_or_else(|| mvk_path.with_file_name(MERGE_POINTS_FILE));
            Some(read_merge_points(&read_input(&path, Input::Points)?, &key).map_err(bad(&path))?)
        }
    };
    let merge_commit = |path: &Path| -> Result<Fr> {
        let c = read_checkpoint(path, &spec)?;
        match &merge_points {
            None => Ok(commit_params(&spec, &c)),
            Some(p) => p.commitment(&spec, &c).map_err(bad(path)),
        }
    };
    if merge_commit(&round.previous)? != st.c_centre {
        return Err(reject(format!(
            "{}: not the previous global model the merge was made around",
            round.previous.display()
        )));
    }
    let (c_prev, mut nodes) = (fr_to_hex(&st.c_centre), vec![]);
    for (i, (ckpt, rep)) in round.nodes.iter().enumerate() {
        if *rep != st.reputations[i] {
            return Err(reject(format!("node {i}: reputation {rep} in the round file, {} in the merge proof", st.reputations[i])));
        }
        let run = ckpt.parent().unwrap_or(dir);
        let mpath = run.join(MANIFEST);
        let m = RunManifest::read(&mpath).map_err(|e| reject(format!("node {i}: {e}")))?;
        let s = m.spec(run, &mpath).map_err(|e| reject(format!("node {i}: {e}")))?;
        if s.digest() != spec.digest() {
            return Err(reject(format!("node {i}: the run {} is of another spec than the merge", run.display())));
        }
        let (Some(first), Some(last)) = (m.steps.first(), m.steps.last()) else {
            return Err(reject(format!("node {i}: the run {} lists no steps", run.display())));
        };
        let check = check_run(run, &mpath, &m, &s, &vk, ends)?;
        if let Some(p) = check.problems.first() {
            return Err(reject(format!("node {i} ({}): {p}", run.display())));
        }
        // the run's proofs chain from its first checkpoint file to its last
        // (check_run); those files, committed as the merge commits, are its
        // previous model and this node's input
        let (first_file, last_file) = (run.join(&first.before), run.join(&last.after));
        if merge_commit(&first_file)? != st.c_centre {
            return Err(reject(format!(
                "node {i} ({}) did not start from the previous global model {}",
                run.display(),
                round.previous.display()
            )));
        }
        if merge_commit(&last_file)? != st.c_nodes[i] {
            return Err(reject(format!(
                "node {i} ({}): its run ends at {}, not at the checkpoint the merge took as its input",
                run.display(),
                last_file.display()
            )));
        }
        if merge_commit(ckpt)? != st.c_nodes[i] {
            return Err(reject(format!("node {i}: {} is not the merge's input", ckpt.display())));
        }
        nodes.push(json!({"node": i, "run": path_json(run), "from": first.step, "to": last.step + 1,
                          "reputation": rep, "zeroed": st.zeroed[i]}));
    }
    let zeroed: Vec<usize> = (0..st.zeroed.len()).filter(|&i| st.zeroed[i]).collect();
    if a.json {
        print_json(&json!({"round": path_json(dir), "verified": true, "nodes": nodes, "zeroed": zeroed,
                           "c_previous": c_prev, "c_global": fr_to_hex(&st.c_global),
                           "merge_verify_ms": merge_dt.as_secs_f64() * 1e3}));
    } else {
        crate::outln!(
            "ACCEPTED: round of {} nodes: every node's steps proven from the previous global model to its merge input; the merge proof verifies (zeroed: {zeroed:?})",
            round.nodes.len()
        );
        crate::outln!("c_global {}", fr_to_hex(&st.c_global));
    }
    Ok(())
}
