//! π_merge end to end: keys for three nodes of a small Adam spec, a proof of
//! a merge in which the outlier rule zeroes the farthest node, accepted for
//! its statement and rejected for every other (a reputation, a flag, the
//! global model's commitment, an input's commitment, the step); the key
//! files read back, and a key re-sealed for another fold size refused.
#![allow(clippy::unwrap_used, clippy::type_complexity)]

use zkstep_circuits::merge::MergeStatement;
use zkstep_core::commit::commit_params;
use zkstep_core::merge::{merge, MergeNode};
use zkstep_core::{Checkpoint, ModelSpec};
use zkstep_circuits::files;
use zkstep_prover::merge::{
    merge_keygen, prove_merge, read_merge_proving_key, verify_merge, write_merge_keys, MERGE_PROVING_KEY_FILE,
};

const SPEC: &str = "batch_size = 2\n[optimizer]\nkind = \"adam\"\n[[layers]]\ninputs = 3\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 2\n";

#[test]
fn a_merge_proof_verifies_for_its_statement_only() {
    let spec = ModelSpec::from_toml_str(SPEC).unwrap();
    let mut centre = Checkpoint::init(&spec, 1);
    centre.step = 4;
    let nodes: Vec<Checkpoint> = (0..3)
        .map(|i| {
            let mut c = Checkpoint::init(&spec, 10 + i);
            c.step = 5;
            c
        })
        .collect();
    let reps = [2u64, 7, 3];
    let mn: Vec<MergeNode> = nodes
        .iter()
        .zip(reps)
        .map(|(ckpt, reputation)| MergeNode { ckpt, reputation })
        .collect();
    // τ just below the farthest node's distance: that node is zeroed
    let far = merge(&spec, &centre, &mn, i64::MAX).unwrap().distance_sq;
    let tau = ((*far.iter().max().unwrap() as f64).sqrt() as i64) - 1;
    let m = merge(&spec, &centre, &mn, tau).unwrap();
    assert_eq!(m.weight.iter().filter(|&&w| w == 0).count(), 1);
    let refs: Vec<&Checkpoint> = nodes.iter().collect();
    let stmt = MergeStatement::of(&spec, &centre, &refs, &reps, tau, &m);
    let keys = merge_keygen(&spec, 3, zkstep_circuits::DEFAULT_FOLD_BUDGET).unwrap();
    let (proof, _) = prove_merge(&keys, &spec, &refs, &centre, &m.global, &stmt).unwrap();
    verify_merge(&keys, &proof, &stmt).unwrap();

    let kept = m.weight.iter().position(|&w| w != 0).unwrap();
    let zeroed = m.weight.iter().position(|&w| w == 0).unwrap();
    // z₀ carries the weights, flags, τ² and the chains' first links (so the
    // folded proof itself fails); the last state the commitments
    let edits: [(&str, &dyn Fn(&mut MergeStatement)); 6] = [
        ("a reputation", &|s| s.reputations[kept] += 1),
        ("a flag", &|s| s.zeroed[zeroed] = false),
        ("tau", &|s| s.tau_fx += 1),
        ("the step", &|s| s.step += 1),
        ("the global model", &|s| s.c_global = s.c_centre),
        ("the inputs' order", &|s| s.c_nodes.swap(0, 1)),
    ];
    for (what, edit) in edits {
        let mut s = stmt.clone();
        edit(&mut s);
        let e = verify_merge(&keys, &proof, &s).unwrap_err();
        assert!(e.contains("does not verify") || e.contains("last state"), "{what}: {e}");
    }
    // key files: written, read back, and a key re-sealed for another fold size refused
    let dir = tempfile::tempdir().unwrap();
    write_merge_keys(dir.path(), &keys, false).unwrap();
    let pk_path = dir.path().join(MERGE_PROVING_KEY_FILE);
    let read = read_merge_proving_key(&pk_path).unwrap();
    assert_eq!(read.layout.units_per_fold, keys.layout.units_per_fold);
    let bytes = std::fs::read(&pk_path).unwrap();
    let (h, mut p): (files::Header, files::MergeProvingKeyPayload) =
        files::decode(&bytes, files::FileKind::MergeProvingKey).unwrap();
    p.shape.units_per_fold = 1;
    std::fs::write(&pk_path, files::encode(h, &p).unwrap()).unwrap();
    let e = read_merge_proving_key(&pk_path).err().unwrap().to_string();
    assert!(e.contains("merge_proving.key") && e.contains("corrupt"), "{e}");
    // the prover refuses what the merge does not give
    let mut wrong = m.global.clone();
    wrong.layers[1].b[0] += 1;
    let mut s = stmt.clone();
    s.c_global = commit_params(&spec, &wrong);
    let e = prove_merge(&keys, &spec, &refs, &centre, &wrong, &s).err().unwrap().to_string();
    assert!(e.contains("not the merge of the inputs"), "{e}");
}
