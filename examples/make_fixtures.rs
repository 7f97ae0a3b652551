//! Regenerate the verifier's stored fixtures in `params/fixtures/`:
//! `cargo run --release -p zkstep-examples --example make_fixtures`
//!
//! A tiny spec (3-3-2, batch 2, SGD), one step, and a segment proof of two
//! steps (θ_0 → θ_2 over `batch` then `batch2`), dev params. The verifier's
//! tests read these files and never run the prover.
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
    let other = ModelSpec::from_toml_str(&SPEC.replace("lr = 0.1", "lr = 0.2")).unwrap();
    let other_keys = keygen(&other, Some(2), usize::MAX, Setup::Dev).unwrap();
    write_atomic(
        &dir.join("other_verifying.key"),
        &verifying_key_bytes(&other_keys).unwrap(),
    )
    .unwrap();
    println!("fixtures written to {}", dir.display());
}
