//! π_merge end to end: keys for three nodes of a small Adam spec, a proof of
//! a merge in which the outlier rule zeroes the farthest node, accepted for
//! its statement and rejected for every other (a reputation, a flag, the
//! global model's commitment, an input's commitment, the step); the key
//! files read back, and a key re-sealed for another fold size refused. On
//! keys on KZG points likewise, and every part of the opening is bound.
#![allow(clippy::unwrap_used, clippy::type_complexity)]

use zkstep_circuits::merge::MergeStatement;
use zkstep_core::commit::commit_params;
use zkstep_core::merge::{merge, MergeNode};
use zkstep_core::{Checkpoint, ModelSpec};
use zkstep_circuits::files;
use zkstep_prover::merge::{
    merge_keygen, merge_keygen_as, prove_merge, read_merge_proving_key, verify_merge, write_merge_keys,
    MERGE_POINTS_FILE, MERGE_PROVING_KEY_FILE,
};

const SPEC: &str = "batch_size = 2\n[optimizer]\nkind = \"adam\"\n[[layers]]\ninputs = 3\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 2\n";

/// Three nodes and a centre of [`SPEC`], merged with τ just below the
/// farthest node's distance (that node is zeroed).
fn round() -> (ModelSpec, Checkpoint, Vec<Checkpoint>, [u64; 3], i64, zkstep_core::merge::Merged) {
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
    let mn: Vec<MergeNode> = nodes.iter().zip(reps).map(|(ckpt, reputation)| MergeNode { ckpt, reputation }).collect();
    let far = merge(&spec, &centre, &mn, i64::MAX).unwrap().distance_sq;
    let tau = ((*far.iter().max().unwrap() as f64).sqrt() as i64) - 1;
    let m = merge(&spec, &centre, &mn, tau).unwrap();
    (spec, centre, nodes, reps, tau, m)
}

/// Each of six edits of `stmt` (a kept node's reputation, a zeroed node's
/// flag, τ, the step, the global model's commitment, the inputs' order) is
/// rejected by `verify`, which says the folds do not verify or `also`.
fn every_other_statement_is_rejected(
    m: &zkstep_core::merge::Merged,
    stmt: &MergeStatement,
    verify: &dyn Fn(&MergeStatement) -> Result<(), String>,
    also: &str,
) {
    let kept = m.weight.iter().position(|&w| w != 0).unwrap();
    let zeroed = m.weight.iter().position(|&w| w == 0).unwrap();
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
        let e = verify(&s).unwrap_err();
        assert!(e.contains("does not verify") || e.contains(also), "{what}: {e}");
    }
}

/// Merge keys on KZG points: the statement names each checkpoint by its
/// point's hash (not its chain), the proof verifies for it, and is
/// rejected for any other statement (a reputation, a flag, τ, the step,
/// the global model, the inputs' order) and with any part of its opening
/// changed (the value, a point, two points swapped, α, the quotient point,
/// none at all); chain
/// keys and KZG keys refuse each other's proofs; the key files keep the
/// scheme and write the points file.
#[test]
fn a_kzg_merge_proof_binds_every_checkpoint_by_its_point() {
    use zkstep_circuits::state::CommitScheme;
    let (spec, centre, nodes, reps, tau, m) = round();
    let refs: Vec<&Checkpoint> = nodes.iter().collect();
    let keys = merge_keygen_as(&spec, 3, zkstep_circuits::DEFAULT_FOLD_BUDGET, CommitScheme::Evaluation).unwrap();
    let stmt = keys.statement(&centre, &refs, &reps, tau, &m).unwrap();
    assert_ne!(stmt.c_global, commit_params(&spec, &m.global), "the point's hash, not the chain");
    assert_eq!(stmt.c_global, keys.point_key().commitment(&spec, &m.global).unwrap().0);
    let (mut proof, _) = prove_merge(&keys, &spec, &refs, &centre, &m.global, &stmt).unwrap();
    verify_merge(&keys, &proof, &stmt).unwrap();
    let o = proof.theta.clone().unwrap();
    assert_eq!(o.points.len(), 5);

    // the points hash the step and the checkpoint: another commitment or step fails there
    every_other_statement_is_rejected(&m, &stmt, &|s| verify_merge(&keys, &proof, s), "does not hash");
    let opening: [(&str, &dyn Fn(&mut zkstep_circuits::theta::MergeOpening)); 5] = [
        ("the value", &|o| o.value += zkstep_core::Fr::from(1u64)),
        ("the global model's point", &|o| o.points[4] = o.points[3]),
        ("two points swapped", &|o| o.points.swap(0, 2)),
        ("α", &|o| o.alpha += zkstep_core::Fr::from(1u64)),
        ("the quotient point", &|o| o.proof = o.points[0]),
    ];
    for (what, edit) in opening {
        let mut changed = o.clone();
        edit(&mut changed);
        proof.theta = Some(changed);
        assert!(verify_merge(&keys, &proof, &stmt).is_err(), "{what}");
    }
    proof.theta = None;
    let e = verify_merge(&keys, &proof, &stmt).unwrap_err();
    assert!(e.contains("no opening"), "{e}");
    // chain keys refuse a KZG merge's proof (an opening they have no key for)
    proof.theta = Some(o);
    let chain = merge_keygen(&spec, 3, zkstep_circuits::DEFAULT_FOLD_BUDGET).unwrap();
    let e = verify_merge(&chain, &proof, &MergeStatement::of(&spec, &centre, &refs, &reps, tau, &m)).unwrap_err();
    assert!(e.contains("opening of KZG points"), "{e}");
    // key files: the scheme kept, the points file written beside them
    let dir = tempfile::tempdir().unwrap();
    write_merge_keys(dir.path(), &keys, false).unwrap();
    assert!(dir.path().join(MERGE_POINTS_FILE).is_file());
    let read = read_merge_proving_key(&dir.path().join(MERGE_PROVING_KEY_FILE)).unwrap();
    assert_eq!(read.layout.scheme, CommitScheme::Evaluation);
    assert!(read.theta.is_some());
    assert_eq!(read.statement(&centre, &refs, &reps, tau, &m).unwrap(), stmt);
    // the prover refuses a statement of other checkpoints (here: chain commitments)
    let chain_stmt = MergeStatement::of(&spec, &centre, &refs, &reps, tau, &m);
    let e = prove_merge(&keys, &spec, &refs, &centre, &m.global, &chain_stmt).err().unwrap().to_string();
    assert!(e.contains("not the one the statement commits to"), "{e}");
}

#[test]
fn a_merge_proof_verifies_for_its_statement_only() {
    let (spec, centre, nodes, reps, tau, m) = round();
    assert_eq!(m.weight.iter().filter(|&&w| w == 0).count(), 1);
    let refs: Vec<&Checkpoint> = nodes.iter().collect();
    let stmt = MergeStatement::of(&spec, &centre, &refs, &reps, tau, &m);
    let keys = merge_keygen(&spec, 3, zkstep_circuits::DEFAULT_FOLD_BUDGET).unwrap();
    let (proof, _) = prove_merge(&keys, &spec, &refs, &centre, &m.global, &stmt).unwrap();
    verify_merge(&keys, &proof, &stmt).unwrap();

    // z₀ carries the weights, flags, τ² and the chains' first links (so the
    // folded proof itself fails); the last state the commitments
    every_other_statement_is_rejected(&m, &stmt, &|s| verify_merge(&keys, &proof, s), "last state");
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
