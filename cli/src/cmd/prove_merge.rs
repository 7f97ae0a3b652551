//! `zkstep prove-merge`: prove that a round's global checkpoint is the merge
//! of its nodes' checkpoints (π_merge, docs/SEMANTICS.md §7): the statement
//! names every input's commitment, the reputations, τ, which nodes the
//! outlier rule zeroed, and the previous and new global commitments.

use crate::args::ProveMergeArgs;
use crate::error::{CliError, Result};
use crate::util::{merge_round, path_json, print_json, read_round, refuse_existing};
use serde_json::json;
use std::time::Instant;
use zkstep_core::format::{read_checkpoint, read_input, write_atomic, write_new, Input};
use zkstep_core::merge::Round;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::{Checkpoint, ModelSpec};
use zkstep_prover::merge::{
    merge_proof_bytes, prove_merge, read_merge_proving_key, MERGE_PROVING_KEY_FILE, MERGE_VERIFYING_KEY_FILE,
};
use zkstep_verifier::merge::{read_merge_key, read_merge_proof, verify_merge_proof};

/// Run `zkstep prove-merge`.
pub fn run(a: ProveMergeArgs) -> Result<()> {
    let s = ModelSpec::from_file(&a.spec)?;
    let round = Round::from_file(&a.round)?;
    refuse_existing(&a.out, a.force)?;
    let pk_path = a.keys.join(MERGE_PROVING_KEY_FILE);
    let keys = read_merge_proving_key(&pk_path)?;
    if keys.layout.spec_digest != s.digest() {
        return Err(CliError::KeysForAnotherSpec {
            path: pk_path,
            keys_digest: fr_to_hex(&keys.layout.spec_digest),
            spec_digest: fr_to_hex(&s.digest()),
        });
    }
    if keys.layout.nodes != round.nodes.len() {
        return Err(CliError::BadFile {
            path: a.round.clone(),
            msg: format!(
                "{} nodes, the merge keys in {} are for {}",
                round.nodes.len(),
                a.keys.display(),
                keys.layout.nodes
            ),
        });
    }
    let (centre, ckpts) = read_round(&s, &round)?;
    let global = read_checkpoint(&a.global, &s)?;
    let m = merge_round(&s, &a.round, &round, &centre, &ckpts)?;
    if m.global != global {
        return Err(CliError::BadFile {
            path: a.global.clone(),
            msg: "not the merge of the round's checkpoints (run `zkstep merge` on the round file)".into(),
        });
    }
    let n = ckpts.len();
    let refs: Vec<&Checkpoint> = ckpts.iter().collect();
    let reputations: Vec<u64> = round.nodes.iter().map(|(_, r)| *r).collect();
    // the commitments under the keys: chains, or their points' hashes
    let stmt = keys.statement(&centre, &refs, &reputations, round.tau_fx, &m)?;
    if !a.json {
        eprintln!("proving the merge of {n} checkpoints ({} folds) …", keys.layout.num_folds());
    }
    let t = Instant::now();
    let (proof, times) = prove_merge(&keys, &s, &refs, &centre, &global, &stmt)?;
    let bytes = merge_proof_bytes(&keys, &proof, &stmt)?;
    let prove_s = t.elapsed().as_secs_f64();
    let check_s = if a.no_check {
        None
    } else {
        // what zkstep-verify will do with merge_verifying.key, before the file is written
        let t = Instant::now();
        let vk_path = a.keys.join(MERGE_VERIFYING_KEY_FILE);
        let vk_bytes = read_input(&vk_path, Input::VerifyingKey)?;
        let bad = |path: &std::path::Path, e: zkstep_verifier::VerifyError| CliError::BadFile {
            path: path.to_path_buf(),
            msg: e.to_string(),
        };
        let key = read_merge_key(&vk_bytes).map_err(|e| bad(&vk_path, e))?;
        let p = read_merge_proof(&bytes).map_err(|e| bad(&a.out, e))?;
        verify_merge_proof(&key, &p).map_err(|e| bad(&vk_path, e))?;
        Some(t.elapsed().as_secs_f64())
    };
    if a.force {
        write_atomic(&a.out, &bytes)?;
    } else {
        write_new(&a.out, &bytes)?;
    }
    let zeroed: Vec<usize> = (0..n).filter(|&i| m.zeroed(i)).collect();
    if a.json {
        print_json(&json!({"proof": path_json(&a.out), "bytes": bytes.len(), "nodes": n, "zeroed": zeroed,
                           "c_global": fr_to_hex(&stmt.c_global), "folds": proof.num_folds, "seconds": prove_s,
                           "timings": times, "check_seconds": check_s}));
    } else {
        crate::outln!(
            "wrote {} ({} bytes) in {prove_s:.1} s (folding {:.1} s, compression {:.1} s){}",
            a.out.display(),
            bytes.len(),
            times.fold_s,
            times.compress_s,
            check_s.map_or(String::new(), |c| format!("; checked with {MERGE_VERIFYING_KEY_FILE} in {c:.2} s"))
        );
        crate::outln!("{n} nodes, zeroed: {zeroed:?}; c_global {}", fr_to_hex(&stmt.c_global));
    }
    Ok(())
}
