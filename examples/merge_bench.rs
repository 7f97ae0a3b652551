//! π_merge's cost: N models of one spec (one SGD layer WIDTH × WIDTH, so
//! WIDTH² + WIDTH parameters) merged around a previous global model, proven
//! with the default fold budget and verified in process.
//!
//!     cargo run --release -p zkstep-examples --features tools --example merge_bench -- N [WIDTH] [--dry-run]
//!
//! Prints the layout (units a fold, folds, constraints a fold, constraints
//! per value × model), then, unless `--dry-run`, keygen, the prove's parts,
//! the proof's size and the verification. Peak memory: run it under
//! `/usr/bin/time -f %M`. `--evaluated`: merge keys on KZG points (the
//! checkpoints evaluated at ζ in the folds, their points opened at ζ; what
//! `zkstep keygen --merge N` makes by default); without it, the chains.
//! `--out DIR`: also write the merge verifying key and the proof file
//! there (`merge_verifying.key`, `merge.zkstep`), for a fresh
//! `zkstep-verify --vk DIR/merge_verifying.key --proof DIR/merge.zkstep`.

use std::time::Instant;
use zkstep_circuits::merge::MergeLayout;
use zkstep_core::merge::{merge, MergeNode};
use zkstep_core::{Checkpoint, ModelSpec};
use zkstep_prover::merge::{merge_keygen_with, prove_merge, verify_merge};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dry = args.iter().any(|a| a == "--dry-run");
    let out = args.iter().position(|a| a == "--out").map(|i| {
        std::path::PathBuf::from(args.get(i + 1).expect("--out DIR"))
    });
    let num: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--out"))
        .map(|(_, a)| a)
        .map(|a| a.parse().expect("numbers: N [WIDTH]"))
        .collect();
    let n = num.first().copied().unwrap_or(8);
    let width = num.get(1).copied().unwrap_or(128);
    let spec = ModelSpec::from_toml_str(&format!(
        "batch_size = 8\n[optimizer]\nlr = 0.01\n[[layers]]\ninputs = {width}\noutputs = {width}\n"
    ))
    .expect("a valid spec");
    let values = width * width + width;
    // a unit whose N + 2 records alone exceed the default budget: one a fold
    let scheme = match args.iter().any(|a| a == "--evaluated") {
        true => zkstep_circuits::layout::CommitScheme::Evaluation,
        false => zkstep_circuits::layout::CommitScheme::Chain,
    };
    let lay = MergeLayout::fit_in(&spec, n, zkstep_circuits::DEFAULT_FOLD_BUDGET, scheme)
        .or_else(|_| MergeLayout::new(&spec, n, 1).map(|l| l.with_commit_scheme(scheme)))
        .map_err(|e| e.to_string())
        .expect("a merge layout");
    let per_fold = lay.num_constraints().expect("a shape");
    let total = per_fold * lay.num_folds();
    println!(
        "N = {n}, {values} values a model: {} units a fold, {} folds of {per_fold} constraints (table 2^{}), {:.1} per value × model",
        lay.units_per_fold,
        lay.num_folds(),
        lay.limb_bits,
        total as f64 / (values * n) as f64
    );
    if dry {
        return;
    }
    let mut centre = Checkpoint::init(&spec, 1);
    centre.step = 9;
    let nodes: Vec<Checkpoint> = (0..n as u64)
        .map(|i| {
            let mut c = centre.clone();
            c.step = 10;
            let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (i + 1);
            let lp = &mut c.layers[0];
            for v in lp.w.data.iter_mut().chain(lp.b.iter_mut()) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *v += (x % 2_000_001) as i64 - 1_000_000;
            }
            c
        })
        .collect();
    let refs: Vec<&Checkpoint> = nodes.iter().collect();
    let reps: Vec<u64> = (0..n as u64).map(|i| 1 + i % 5).collect();
    let mn: Vec<MergeNode> = refs.iter().zip(&reps).map(|(&ckpt, &reputation)| MergeNode { ckpt, reputation }).collect();
    let tau = 1_000_000_000;
    let t = Instant::now();
    let m = merge(&spec, &centre, &mn, tau).expect("a merge");
    println!("native merge {:.3} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let keys = merge_keygen_with(&spec, lay).expect("keys");
    println!("keygen {:.1} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let stmt = keys.statement(&centre, &refs, &reps, tau, &m).expect("a statement");
    println!("statement (the commitments) {:.2} s", t.elapsed().as_secs_f64());
    let (primary, secondary) = keys.pp.num_constraints();
    println!(
        "with the folding layer's own circuit: {primary} constraints a fold (+{secondary} secondary), {:.1} per value × model",
        (primary * keys.layout.num_folds()) as f64 / (values * n) as f64
    );
    let (proof, times) = prove_merge(&keys, &spec, &refs, &centre, &m.global, &stmt).expect("a proof");
    println!(
        "prove {:.1} s (witness {:.1}, folding {:.1}, compression {:.1})",
        times.witness_s + times.fold_s + times.compress_s,
        times.witness_s,
        times.fold_s,
        times.compress_s
    );
    let bytes = postcard::to_allocvec(&proof.snark).expect("a proof's bytes");
    let vk = postcard::to_allocvec(&keys.vk).expect("a key's bytes");
    // the files a user keeps: the proof file (statement included) and the keys
    let file = zkstep_prover::merge::merge_proof_bytes(&keys, &proof, &stmt).expect("a proof file");
    println!("proof file {} bytes (N = {n}: the statement names every input)", file.len());
    println!("proof {} bytes, verifying key {} bytes", bytes.len(), vk.len());
    if let Some(dir) = &out {
        std::fs::create_dir_all(dir).expect("--out: a directory");
        let vk_file = zkstep_prover::merge::merge_verifying_key_bytes(&keys).expect("a key file");
        zkstep_core::format::write_atomic(&dir.join(zkstep_prover::merge::MERGE_VERIFYING_KEY_FILE), &vk_file)
            .expect("the key written");
        zkstep_core::format::write_atomic(&dir.join("merge.zkstep"), &file).expect("the proof written");
        println!("wrote {} ({} bytes) and merge.zkstep", zkstep_prover::merge::MERGE_VERIFYING_KEY_FILE, vk_file.len());
    }
    let t = Instant::now();
    verify_merge(&keys, &proof, &stmt).expect("the proof verifies");
    println!("verified in {:.1} ms (in process, key in memory)", t.elapsed().as_secs_f64() * 1e3);
}
