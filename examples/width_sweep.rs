//! One point of the per-width measurement (run once per width, in its own
//! process, so peak RSS is per width):
//! `cargo run --release -p zkstep-examples --example width_sweep -- WIDTH BATCH [BUDGET]`
//!
//! One dense layer WIDTH → WIDTH (identity, MSE, SGD) at batch BATCH: keygen
//! (dev params), native reference step, prove (witness, folding,
//! compression), verify; prints one JSON line.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Instant;
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};
use zkstep_prover::ivc::{keygen, proof_bytes, prove, verifying_key_bytes, Setup};
use zkstep_verifier::{read_proof, read_verifying_key, verify};

fn main() {
    // keep stdout for the JSON line (halo2curves prints debug lines when it checks G2 points)
    zkstep_prover::out::init();
    let _quiet = gag::Gag::stdout().ok();
    let a: Vec<String> = std::env::args().collect();
    let width: usize = a.get(1).map(|s| s.parse().unwrap()).unwrap_or(16);
    let batch: usize = a.get(2).map(|s| s.parse().unwrap()).unwrap_or(8);
    let budget: usize = a
        .get(3)
        .map(|s| s.parse().unwrap())
        .unwrap_or(zkstep_circuits::DEFAULT_FOLD_BUDGET);
    let spec = ModelSpec::from_toml_str(&format!("batch_size = {batch}\n[optimizer]\nlr = 0.01\n[[layers]]\ninputs = {width}\noutputs = {width}\n")).unwrap();
    let before = Checkpoint::init(&spec, 1);
    let x = Matrix::from_vec(
        batch,
        width,
        (0..batch * width)
            .map(|i| ((i * 7919) % 2001) as i64 * 1_000_000 - 1_000_000_000)
            .collect(),
    )
    .unwrap();
    let y = Matrix::from_vec(
        batch,
        width,
        (0..batch * width)
            .map(|i| ((i * 104729) % 1001) as i64 * 1_000_000)
            .collect(),
    )
    .unwrap();
    let b = Batch {
        x,
        y,
        salt: seeded_salt(1, 0),
    };
    let t = Instant::now();
    let reps = 20;
    let mut after = None;
    for _ in 0..reps {
        after = Some(step(&spec, &before, &b).unwrap().after);
    }
    let native_s = t.elapsed().as_secs_f64() / reps as f64;
    let after = after.unwrap();
    let rows = zkstep_circuits::Layout::new(&spec, None, budget)
        .map(|_| None)
        .unwrap_or(Some(1));
    let t = Instant::now();
    let keys = keygen(&spec, rows, budget, Setup::Dev).unwrap();
    let keygen_s = t.elapsed().as_secs_f64();
    let (c1, c2) = keys.pp.num_constraints();
    let (v1, _) = keys.pp.num_variables();
    let (proof, tm) = prove(&keys, &before, &after, &b, true).unwrap();
    let pbytes = proof_bytes(&keys, &proof).unwrap();
    let vk = read_verifying_key(&verifying_key_bytes(&keys).unwrap()).unwrap();
    let p = read_proof(&pbytes).unwrap();
    verify(&vk, &p, None).unwrap();
    let mut ms = vec![];
    for _ in 0..5 {
        ms.push(verify(&vk, &p, None).unwrap().1.as_secs_f64() * 1e3);
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    let weights = width * width;
    let folds = keys.layout.num_folds();
    let total = c1 * folds;
    let prove_s = tm.witness_s + tm.fold_s + tm.compress_s;
    zkstep_prover::outln!(
        "{}",
        serde_json::json!({"width": width, "batch": batch, "rows_per_fold": keys.layout.rows, "folds": folds, "constraints_per_fold": c1,
            "secondary_constraints_per_fold": c2, "variables_per_fold": v1, "total_constraints": total,
            "constraints_per_weight": total as f64 / weights as f64, "constraints_per_mac": total as f64 / (weights * batch) as f64,
            "keygen_s": keygen_s, "witness_s": tm.witness_s, "fold_s": tm.fold_s, "compress_s": tm.compress_s, "prove_s": prove_s,
            "verify_ms_median": ms[2], "proof_bytes": pbytes.len(), "native_step_s": native_s, "overhead": prove_s / native_s})
    );
}
