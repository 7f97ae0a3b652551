//! End-to-end on real data: train a 64-32-10 MLP on the UCI digits with
//! softmax cross-entropy and Adam, with the reference executor, write the
//! run (checkpoints, batches) and report loss and accuracy, beside the same
//! steps on the same batches in float64 (PyTorch's arithmetic): both loss
//! curves and the largest weight difference.
//!
//! `cargo run --release -p zkstep-examples --example digits -- [STEPS] [OUT_DIR] [prove]`
//!
//! With `prove`, it then makes dev keys, proves the last step and verifies the
//! proof with only the verifier crate (BENCHMARKS.md has the time and memory).
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use zkstep_core::commit::commit_params;
use zkstep_core::data::make_batch;
use zkstep_core::exec::predict;
use zkstep_core::format::{read_dataset_for, write_batch, write_checkpoint};
use zkstep_core::model::random_salt;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::{step, Checkpoint, ModelSpec};
use zkstep_examples::float64;

const SPEC: &str = "batch_size = 32\nloss = \"cross_entropy\"\n[optimizer]\nkind = \"adam\"\nlr = 0.005\n[[layers]]\ninputs = 64\noutputs = 32\nactivation = \"relu\"\n[[layers]]\ninputs = 32\noutputs = 10\n";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // halo2curves prints debug lines when it checks G2 points: keep stdout for ours
    zkstep_cli::out::init();
    let _quiet = gag::Gag::stdout().ok();
    let mut args = std::env::args().skip(1);
    let steps: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(300);
    let out: Option<PathBuf> = args.next().map(PathBuf::from);
    let spec = ModelSpec::from_toml_str(SPEC)?;
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/digits.safetensors");
    let ds = read_dataset_for(&data, &spec)?;
    zkstep_cli::outln!(
        "digits: {} samples, quantised with max |error| {:.2e}",
        ds.x.rows,
        ds.report.max_abs_err
    );
    let (xs, ys) = (float64::rows(&ds.x), float64::rows(&ds.y));
    let argmax = |r: &[f64]| (0..r.len()).fold(0, |b, j| if r[j] > r[b] { j } else { b });
    // (loss, accuracy) of float64 outputs over the whole dataset
    let score = |o: &[Vec<f64>]| -> (f64, f64) {
        let correct = o
            .iter()
            .zip(&ys)
            .filter(|(a, b)| argmax(a) == argmax(b))
            .count();
        (
            float64::loss(&spec, o, &ys),
            correct as f64 / o.len() as f64,
        )
    };
    let eval = |ck: &Checkpoint| -> Result<(f64, f64), zkstep_core::CoreError> {
        Ok(score(&float64::rows(&predict(&spec, ck, &ds.x)?)))
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
    let mut real = float64::Model::from_checkpoint(&spec, &ck);
    let every = (steps / 10).max(1);
    zkstep_cli::outln!("step   loss (fixed point)   loss (float64)   max |Δθ|   one step's max |Δθ|");
    let t0 = std::time::Instant::now();
    // one step from the same checkpoint and batch in both arithmetics: the
    // drift a single fixed-point step adds (SEMANTICS §5)
    let (mut one_step_worst, mut own_worst) = (0f64, 0f64);
    for t in 0..steps {
        let batch = make_batch(&ds, spec.batch_size, t, 1, random_salt(&mut rand_salt()));
        let tr = step(&spec, &ck, &batch)?;
        let mut from_here = float64::Model::from_checkpoint(&spec, &ck);
        float64::step(
            &spec,
            &mut from_here,
            &float64::rows(&batch.x),
            &float64::rows(&batch.y),
        );
        let one_step = from_here.max_diff(&tr.after);
        one_step_worst = one_step_worst.max(one_step);
        own_worst = own_worst.max(float64::adam_own_error(&spec, &ck, &tr).unwrap_or(0.0));
        let real_loss = float64::step(
            &spec,
            &mut real,
            &float64::rows(&batch.x),
            &float64::rows(&batch.y),
        );
        let next = tr.after;
        if t % every == 0 || t + 1 == steps {
            zkstep_cli::outln!(
                "{t:>4}   {:>17.6}   {real_loss:>14.6}   {:.3e}   {one_step:.3e}",
                tr.loss.loss,
                real.max_diff(&next)
            );
        }
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
    let (lr, ar) = score(&float64::predict(&spec, &real, &xs));
    zkstep_cli::outln!(
        "after {steps} steps ({:.2?}): loss {l1:.5}, accuracy {:.1}% (float64: loss {lr:.5}, accuracy {:.1}%); largest weight difference {:.3e}",
        t0.elapsed(),
        100.0 * a1,
        100.0 * ar,
        real.max_diff(&ck)
    );
    zkstep_cli::outln!(
        "one step from the same checkpoint and batch: largest |fixed − float64| over the {steps} steps {one_step_worst:.3e}; the optimizer's own (the same gradient in both) {own_worst:.3e}"
    );
    zkstep_cli::outln!(
        "Commit(θ_{steps}) = {}",
        fr_to_hex(&commit_params(&spec, &ck))
    );
    if let (true, Some((before, after, batch))) = (prove_last, last) {
        let t = std::time::Instant::now();
        // the defaults a user gets from `zkstep keygen --spec` with no flag
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
