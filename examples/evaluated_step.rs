//! `zkstep bench`'s model (one dense layer WIDTH → WIDTH, batch B, SGD)
//! proven at a chosen number of rows a fold, with checkpoints bound by KZG
//! points (`CommitScheme::Evaluation`, docs/design/kzg-checkpoints.md: the
//! prove includes both points and their opening at ζ) or by the Poseidon
//! chains: a sweep over rows that `zkstep bench` (whose sizing picks the
//! rows) does not do.
//!
//!     cargo run --release -p zkstep-examples --features tools --example evaluated_step -- WIDTH BATCH ROWS [chain|evaluated [spartan|microspartan]]
//!
//! `chain` proves the same layout under today's chains instead (the
//! baseline at the same rows); the compression defaults to keygen's
//! choice. Prints seconds, sizes and peak RSS.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Instant;
use zkstep_circuits::layout::CommitScheme;
use zkstep_circuits::Layout;
use zkstep_cli::bench::measure::{bench_batch, bench_spec};
use zkstep_core::commit::{evaluate, param_coefficients};
use zkstep_core::{step, Checkpoint};
use zkstep_prover::ivc::{keygen_layout, proof_bytes, prove, verifying_key_bytes, Setup};

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
            l.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(f64::NAN, |k| k / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |k: usize, d: usize| args.get(k).map_or(d, |a| a.parse().expect("WIDTH BATCH ROWS"));
    let (width, batch, rows) = (num(0, 128), num(1, 8), num(2, 4));
    let scheme = match args.get(3).map(String::as_str) {
        Some("chain") => CommitScheme::Chain,
        _ => CommitScheme::Evaluation,
    };
    let spec = bench_spec(width, batch, 1, "sgd", "mse").unwrap();
    let layout = Layout::new(&spec, rows).unwrap().with_commit_scheme(scheme);
    let stats = zkstep_circuits::sizing::shape_stats(&layout).unwrap();
    let compression = match args.get(4).map(String::as_str) {
        Some("microspartan") => zkstep_circuits::engine::Compression::MicroSpartan,
        Some("spartan") => zkstep_circuits::engine::Compression::Spartan,
        _ => zkstep_circuits::sizing::compression_for(&layout).unwrap(),
    };
    println!(
        "width {width} batch {batch} rows {rows} {scheme:?}: {} folds, {} constraints a fold ({:.1} a weight), {} non-zeros, {}",
        layout.num_folds(),
        stats.constraints,
        stats.constraints as f64 / (rows * width) as f64,
        stats.nonzeros,
        compression.name()
    );
    let t = Instant::now();
    let keys = keygen_layout(Arc::new(layout), compression, Setup::Dev).unwrap();
    println!("keygen {:.2} s", t.elapsed().as_secs_f64());
    let vk_bytes = verifying_key_bytes(&keys).unwrap().len();

    let before = Checkpoint::init(&spec, 1);
    let batch_data = bench_batch(&spec, width, batch).unwrap();
    let after = step(&spec, &before, &batch_data).unwrap().after;
    let t = Instant::now();
    let (proof, tm) = prove(&keys, &before, &after, &batch_data, &mut |_| {}).unwrap();
    let fold_total = t.elapsed().as_secs_f64();

    let st = proof.statement;
    if let Some(o) = &proof.theta {
        // the statement names the points' hashes; the opening's values are
        // the checkpoints' evaluations at the proof's ζ
        let zeta = keys.layout.zeta(&proof.challenges, [st.c_before, st.c_after]);
        let (cb, ca) = (param_coefficients(&spec, &before), param_coefficients(&spec, &after));
        assert_eq!((o.y_start, o.y_end), (evaluate(&cb, zeta), evaluate(&ca, zeta)));
    }
    let t = Instant::now();
    zkstep_circuits::verify::verify_payload(&keys.layout, keys.step_keys().unwrap(), keys.layout.spec_digest, &proof, None)
        .unwrap();
    let verify_ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "prove {fold_total:.2} s (witness and points {:.2}, folding {:.2}, compression and opening {:.2}); N = {} coefficients",
        tm.witness_s,
        tm.fold_s,
        tm.compress_s,
        zkstep_core::commit::coefficient_count(&spec)
    );
    println!(
        "verify {verify_ms:.0} ms in-process; proof {} B, verifying key {:.1} MB; peak RSS {:.0} MiB",
        proof_bytes(&keys, &proof).unwrap().len(),
        vk_bytes as f64 / 1e6,
        peak_rss_mib()
    );
}
