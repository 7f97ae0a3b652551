//! End-to-end on real data: train a 64-32-10 MLP on the UCI digits with the
//! reference executor, write the run (checkpoints, batches, run.json) and
//! report loss and accuracy.
//!
//! `cargo run --release -p zkstep-examples --example digits -- [STEPS] [OUT_DIR] [prove]`
//!
//! With `prove`, it then makes dev keys, proves the last step and verifies the
//! proof with only the verifier crate (a few minutes and about 8 GB on 2 cores).
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use zkstep_core::commit::commit_params;
use zkstep_core::data::make_batch;
use zkstep_core::exec::predict;
use zkstep_core::fixed::to_real;
use zkstep_core::format::{read_dataset, write_batch, write_checkpoint};
use zkstep_core::model::random_salt;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::{step, Checkpoint, ModelSpec};

const SPEC: &str = "batch_size = 32\n[optimizer]\nkind = \"momentum\"\nlr = 0.05\nmu = 0.9\n[[layers]]\ninputs = 64\noutputs = 32\nactivation = \"relu\"\n[[layers]]\ninputs = 32\noutputs = 10\n";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // halo2curves prints debug lines when it checks G2 points: keep stdout for ours
    zkstep_cli::out::init();
    let _quiet = gag::Gag::stdout().ok();
    let mut args = std::env::args().skip(1);
    let steps: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(300);
    let out: Option<PathBuf> = args.next().map(PathBuf::from);
    let spec = ModelSpec::from_toml_str(SPEC)?;
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/digits.safetensors");
    let ds = read_dataset(&data, spec.value_range)?;
    zkstep_cli::outln!(
        "digits: {} samples, quantised with max |error| {:.2e}",
        ds.x.rows,
        ds.report.max_abs_err
    );
    let eval = |ck: &Checkpoint| -> Result<(f64, f64), zkstep_core::CoreError> {
        let o = predict(&spec, ck, &ds.x)?;
        let mut correct = 0usize;
        let mut loss = 0.0;
        for i in 0..o.rows {
            let (r, y) = (o.row(i), ds.y.row(i));
            let p = (0..10).max_by_key(|&j| r[j]).unwrap_or(0);
            let t = (0..10).max_by_key(|&j| y[j]).unwrap_or(0);
            correct += usize::from(p == t);
            loss += r
                .iter()
                .zip(y)
                .map(|(&a, &b)| (to_real(a) - to_real(b)).powi(2))
                .sum::<f64>();
        }
        Ok((loss / (o.rows * 10) as f64, correct as f64 / o.rows as f64))
    };
    let prove_last = args.next().as_deref() == Some("prove");
    let mut ck = Checkpoint::init(&spec, 5);
    let mut last = None;
    if let Some(d) = &out {
        std::fs::create_dir_all(d)?;
        write_checkpoint(&d.join("ckpt_0.safetensors"), &spec, &ck)?;
    }
    let (l0, a0) = eval(&ck)?;
    zkstep_cli::outln!("before: loss {l0:.5}, accuracy {:.1}%", 100.0 * a0);
    let t0 = std::time::Instant::now();
    for t in 0..steps {
        let batch = make_batch(&ds, spec.batch_size, t, 1, random_salt(&mut rand_salt()));
        let next = step(&spec, &ck, &batch)?.after;
        if t + 1 == steps {
            last = Some((ck.clone(), next.clone(), batch.clone()));
        }
        ck = next;
        if let Some(d) = &out {
            write_batch(&d.join(format!("batch_{t}.safetensors")), &spec, &batch, t)?;
            write_checkpoint(&d.join(format!("ckpt_{}.safetensors", t + 1)), &spec, &ck)?;
        }
    }
    let (l1, a1) = eval(&ck)?;
    zkstep_cli::outln!(
        "after {steps} steps ({:.2?}): loss {l1:.5}, accuracy {:.1}%",
        t0.elapsed(),
        100.0 * a1
    );
    zkstep_cli::outln!(
        "Commit(θ_{steps}) = {}",
        fr_to_hex(&commit_params(&spec, &ck))
    );
    if let (true, Some((before, after, batch))) = (prove_last, last) {
        let t = std::time::Instant::now();
        let keys = zkstep_prover::ivc::keygen(
            &spec,
            None,
            zkstep_circuits::DEFAULT_FOLD_BUDGET,
            zkstep_prover::ivc::Setup::Dev,
        )?;
        zkstep_cli::outln!(
            "dev keys in {:.1?}: {} folds per step",
            t.elapsed(),
            keys.layout.num_folds()
        );
        let (proof, tm) =
            zkstep_cli::proving::prove_with_bar(&keys, &before, &after, &batch, true)?;
        let bytes = zkstep_prover::ivc::proof_bytes(&keys, &proof)?;
        zkstep_cli::outln!(
            "proof: {} bytes; folding {:.1} s, compression {:.1} s",
            bytes.len(),
            tm.fold_s,
            tm.compress_s
        );
        // verify with only the verifier crate, from bytes, as a third party would
        let vk =
            zkstep_verifier::read_verifying_key(&zkstep_prover::ivc::verifying_key_bytes(&keys)?)?;
        let (st, dt) = zkstep_verifier::verify(&vk, &zkstep_verifier::read_proof(&bytes)?, None)?;
        zkstep_cli::outln!(
            "verified step {} in {dt:.1?}: c_after = Commit(θ_{steps}) is {}",
            st.step,
            st.c_after == commit_params(&spec, &ck)
        );
    }
    Ok(())
}

fn rand_salt() -> impl rand::RngCore {
    rand::thread_rng()
}
