//! Regenerate the verifier's stored fixtures in `params/fixtures/`:
//! `cargo run --release -p zkstep-examples --features tools --example make_fixtures`
//!
//! A tiny spec (3-3-2, batch 2, SGD), one step, and a segment proof of two
//! steps (θ_0 → θ_2 over `batch` then `batch2`), dev params, and the first
//! step again under keys on KZG points (`kzg_verifying.key`,
//! `kzg_points.key`, `kzg_proof.zkstep`). The verifier's tests read these files and never run
//! the prover.
//!
//! With `--merge` it writes only the merge fixtures (`merge/`): three nodes'
//! checkpoints of the spec, the previous global model, a round file, the
//! global model, π_merge's verifying key and a merge proof.
#![allow(clippy::unwrap_used, missing_docs)]

use std::path::PathBuf;
use zkstep_core::format::{write_atomic, write_batch, write_checkpoint};
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};
use zkstep_prover::ivc::{
    keygen, proof_bytes, prove, prove_segment, segment_proof_bytes, verifying_key_bytes, Setup,
};

pub const SPEC: &str = "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 3\noutputs = 3\nactivation = \"relu\"\n[[layers]]\ninputs = 3\noutputs = 2\n";

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../params/fixtures");
    std::fs::create_dir_all(&dir).unwrap();
    if std::env::args().any(|a| a == "--merge") {
        merge_fixtures(&dir.join("merge"));
        return;
    }
    for (name, toml) in [
        ("spec.toml", SPEC.to_string()),
        ("other_spec.toml", SPEC.replace("lr = 0.1", "lr = 0.2")),
    ] {
        std::fs::write(dir.join(name), toml).unwrap();
    }
    let spec = ModelSpec::from_toml_str(SPEC).unwrap();
    let before = Checkpoint::init(&spec, 11);
    let x = Matrix::from_vec(
        2,
        3,
        vec![
            500_000_000,
            -250_000_000,
            1_000_000_000,
            0,
            750_000_000,
            -125_000_000,
        ],
    )
    .unwrap();
    let y = Matrix::from_vec(2, 2, vec![1_000_000_000, 0, 0, 1_000_000_000]).unwrap();
    let batch = Batch {
        x,
        y,
        salt: seeded_salt(11, 0),
    };
    let after = step(&spec, &before, &batch).unwrap().after;
    write_checkpoint(&dir.join("before.safetensors"), &spec, &before).unwrap();
    write_checkpoint(&dir.join("after.safetensors"), &spec, &after).unwrap();
    write_batch(&dir.join("batch.safetensors"), &spec, &batch, 0).unwrap();
    let keys = keygen(&spec, Some(2), usize::MAX, Setup::Dev).unwrap();
    let (proof, _) = prove(&keys, &before, &after, &batch, &mut |_| {}).unwrap();
    write_atomic(
        &dir.join("verifying.key"),
        &verifying_key_bytes(&keys).unwrap(),
    )
    .unwrap();
    write_atomic(
        &dir.join("proof.zkstep"),
        &proof_bytes(&keys, &proof).unwrap(),
    )
    .unwrap();
    // a second step on another batch, and the two as one segment proof
    let batch2 = Batch {
        x: Matrix::from_vec(2, 3, batch.x.data.iter().map(|v| -v / 2).collect()).unwrap(),
        y: batch.y.clone(),
        salt: seeded_salt(11, 1),
    };
    let after2 = step(&spec, &after, &batch2).unwrap().after;
    write_checkpoint(&dir.join("after2.safetensors"), &spec, &after2).unwrap();
    write_batch(&dir.join("batch2.safetensors"), &spec, &batch2, 1).unwrap();
    let (seg, _) = prove_segment(
        &keys,
        &[before.clone(), after.clone(), after2],
        &[batch.clone(), batch2],
        &mut |_| {},
    )
    .unwrap();
    write_atomic(
        &dir.join("segment.zkstep"),
        &segment_proof_bytes(&keys, &seg).unwrap(),
    )
    .unwrap();
    // the same step under keys on KZG points (`--commit-scheme kzg`)
    let kzg_keys = zkstep_prover::ivc::keygen_with(
        &spec,
        Some(2),
        usize::MAX,
        None,
        zkstep_circuits::state::CommitScheme::Evaluation,
        Setup::Dev,
    )
    .unwrap();
    let (kzg_proof, _) = prove(&kzg_keys, &before, &after, &batch, &mut |_| {}).unwrap();
    write_atomic(&dir.join("kzg_verifying.key"), &verifying_key_bytes(&kzg_keys).unwrap()).unwrap();
    write_atomic(&dir.join("kzg_proof.zkstep"), &proof_bytes(&kzg_keys, &kzg_proof).unwrap()).unwrap();
    let points = zkstep_prover::ivc::points_bytes(&kzg_keys).unwrap().unwrap();
    write_atomic(&dir.join("kzg_points.key"), &points).unwrap();
    let other = ModelSpec::from_toml_str(&SPEC.replace("lr = 0.1", "lr = 0.2")).unwrap();
    let other_keys = keygen(&other, Some(2), usize::MAX, Setup::Dev).unwrap();
    write_atomic(
        &dir.join("other_verifying.key"),
        &verifying_key_bytes(&other_keys).unwrap(),
    )
    .unwrap();
    println!("fixtures written to {}", dir.display());
}

/// The merge fixtures: three nodes near a previous global model, the
/// farthest beyond τ (zeroed), reputations 2, 3, 5; merge keys on KZG
/// points (their `merge_points.key` beside the verifying key).
fn merge_fixtures(dir: &std::path::Path) {
    use zkstep_core::merge::{merge, MergeNode};
    use zkstep_prover::merge::{merge_keygen_as, merge_proof_bytes, prove_merge, write_merge_keys};
    std::fs::create_dir_all(dir).unwrap();
    let spec = ModelSpec::from_toml_str(SPEC).unwrap();
    let mut centre = Checkpoint::init(&spec, 21);
    centre.step = 3;
    let nodes: Vec<Checkpoint> = (0..3)
        .map(|i| {
            let mut c = centre.clone();
            c.step = 4;
            let shift = [20_000_000, -30_000_000, 900_000_000][i];
            c.layers[0].w.data.iter_mut().for_each(|v| *v += shift);
            c.layers[1].b[i % 2] -= shift / 2;
            c
        })
        .collect();
    let reps = [2u64, 3, 5];
    let tau = 500_000_000;
    let mn: Vec<MergeNode> = nodes.iter().zip(reps).map(|(ckpt, reputation)| MergeNode { ckpt, reputation }).collect();
    let m = merge(&spec, &centre, &mn, tau).unwrap();
    assert_eq!(m.weight, [2, 3, 0]);
    write_checkpoint(&dir.join("previous.safetensors"), &spec, &centre).unwrap();
    let mut round = format!("tau_fx = {tau}\nprevious = \"previous.safetensors\"\n");
    for (i, c) in nodes.iter().enumerate() {
        write_checkpoint(&dir.join(format!("node{i}.safetensors")), &spec, c).unwrap();
        round += &format!("[[nodes]]\ncheckpoint = \"node{i}.safetensors\"\nreputation = {}\n", reps[i]);
    }
    std::fs::write(dir.join("round.toml"), round).unwrap();
    write_checkpoint(&dir.join("global.safetensors"), &spec, &m.global).unwrap();
    let refs: Vec<&Checkpoint> = nodes.iter().collect();
    // keys on KZG points (the default): merge_points.key beside the keys
    let scheme = zkstep_circuits::state::CommitScheme::Evaluation;
    let keys = merge_keygen_as(&spec, 3, zkstep_circuits::DEFAULT_FOLD_BUDGET, scheme).unwrap();
    let stmt = keys.statement(&centre, &refs, &reps, tau, &m).unwrap();
    write_merge_keys(dir, &keys, true).unwrap();
    // the proving key is the prover's; the verifier's tests need only the verifying key
    std::fs::remove_file(dir.join(zkstep_prover::merge::MERGE_PROVING_KEY_FILE)).unwrap();
    let (proof, _) = prove_merge(&keys, &spec, &refs, &centre, &m.global, &stmt).unwrap();
    write_atomic(&dir.join("merge.zkstep"), &merge_proof_bytes(&keys, &proof, &stmt).unwrap()).unwrap();
}
