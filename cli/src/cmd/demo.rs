//! `zkstep demo`: train the built-in 2-16-16-1 MLP on two moons, then
//! keygen (dev params, checkpoints as KZG points), prove the last step and
//! verify the proof.

use crate::args::DemoArgs;
use crate::error::{CliError, Result};
use crate::proving::prove_with_bar;
use crate::run::{
    ckpt_name, proof_name, refuse_run_outputs, train, RunLock, TrainOptions, SPEC_FILE,
};
use crate::util::{print_json, refuse_existing};
use serde_json::json;
use std::path::Path;
use std::time::Instant;
use zkstep_core::commit::commit_params;
use zkstep_core::data::{make_batch, two_moons};
use zkstep_core::fixed::to_real;
use zkstep_core::format::{write_as, Dataset};
use zkstep_core::model::seeded_salt;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::spec::demo_spec;
use zkstep_core::{step, Checkpoint, ModelSpec};
use zkstep_circuits::state::CommitScheme;
use zkstep_prover::ivc::{
    keygen_with, proof_bytes, write_keys, Setup, POINTS_FILE, PROVING_KEY_FILE, VERIFYING_KEY_FILE,
};

/// Seed of the demo's batch schedule and salts (the run is reproducible).
const SEED: u64 = 7;
/// The keys' directory inside `--out-dir`.
const KEYS_DIR: &str = "keys";

fn full_loss(spec: &ModelSpec, ck: &Checkpoint, ds: &Dataset) -> Result<f64> {
    let out = zkstep_core::exec::predict(spec, ck, &ds.x)?;
    Ok(out
        .data
        .iter()
        .zip(&ds.y.data)
        .map(|(&a, &y)| (to_real(a) - to_real(y)).powi(2))
        .sum::<f64>()
        / out.data.len() as f64)
}

/// Run `zkstep demo`.
pub fn run(a: DemoArgs) -> Result<()> {
    let (steps, json, out_dir) = (a.steps, a.json, a.out_dir.as_deref());
    let s = demo_spec();
    let ds = two_moons(256, 0.1, 42);
    let start = Checkpoint::init(&s, 1);
    let proving = !a.no_prove && steps > 0;
    // held until this returns: no other command writes this run meanwhile
    let _lock = match out_dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| CliError::io(d, e))?;
            let lock = RunLock::acquire(d)?;
            refuse_run_outputs(d, 0, steps, true, a.force)?;
            if proving {
                let keys = d.join(KEYS_DIR);
                refuse_existing(&keys.join(PROVING_KEY_FILE), a.force)?;
                refuse_existing(&keys.join(VERIFYING_KEY_FILE), a.force)?;
                refuse_existing(&keys.join(POINTS_FILE), a.force)?;
                refuse_existing(&d.join(proof_name(steps - 1)), a.force)?;
            }
            Some(lock)
        }
        None => None,
    };
    if !json {
        crate::outln!("zkstep demo: 2-16-16-1 ReLU MLP, MSE, SGD lr 0.1, batch 8, on 256 two-moons points (scale 10^9, round half up)");
        crate::outln!("spec digest {}", fr_to_hex(&s.digest()));
        crate::outln!("c_before(step 0) {}", fr_to_hex(&commit_params(&s, &start)));
    }
    let opts = TrainOptions {
        steps,
        seed: SEED,
        out_dir: out_dir.map(Path::to_path_buf),
        salt_seed: Some(SEED),
        data_name: "built-in two moons (256 points, seed 42)".into(),
        resume: None,
    };
    let t = Instant::now();
    let (end, done) = train(&s, &start, &ds, &opts, |e| {
        if !json && (e.step % 10 == 0 || e.step + 1 == steps) {
            crate::outln!(
                "step {:>4}  loss {:.6}  c_after {}…",
                e.step,
                e.loss,
                &e.c_after[..18]
            );
        }
    })?;
    let train_s = t.elapsed().as_secs_f64();
    let chained = done.windows(2).all(|w| w[0].c_after == w[1].c_before);
    if !chained {
        return Err(CliError::Internal("commitments do not chain".into()));
    }
    let (loss0, loss1) = (full_loss(&s, &start, &ds)?, full_loss(&s, &end, &ds)?);
    let mut summary = json!({"spec_digest": fr_to_hex(&s.digest()), "loss_before": loss0, "loss_after": loss1, "steps": done, "chained": chained,
        "final_commitment": fr_to_hex(&commit_params(&s, &end)), "train_seconds": train_s});
    if !json {
        crate::outln!("loss on all 256 points: {loss0:.6} before training, {loss1:.6} after {} steps ({train_s:.2} s)", done.len());
        crate::outln!(
            "commitments chain (c_after(t) = c_before(t+1)) across all {} steps: yes",
            done.len()
        );
    }
    if proving {
        // Re-run the last step to get θ_{t}, θ_{t+1} and its batch.
        let last = steps - 1;
        let batch_of = |t: u64| make_batch(&ds, s.batch_size, t, SEED, seeded_salt(SEED, t));
        let mut ck = start.clone();
        for t in 0..last {
            ck = step(&s, &ck, &batch_of(t))?.after;
        }
        let batch = batch_of(last);
        let after = step(&s, &ck, &batch)?.after;
        if !json {
            crate::outln!("\nkeygen: dev params — a fresh random tau made here; sound for whoever ran keygen, not for public verification");
        }
        let tk = Instant::now();
        let keys = keygen_with(&s, None, a.fold_budget, None, CommitScheme::Evaluation, Setup::Dev)?;
        let keygen_s = tk.elapsed().as_secs_f64();
        let (c1, _) = keys.pp.num_constraints();
        if !json {
            crate::outln!(
                "keys in {keygen_s:.1} s: {} folds per step, {c1} constraints per fold",
                keys.layout.num_folds()
            );
            crate::outln!("proving step {last} …");
        }
        let (proof, tm) = prove_with_bar(&keys, &ck, &after, &batch, !json)?;
        let bytes = proof_bytes(&keys, &proof)?;
        let tv = Instant::now();
        let verified = zkstep_circuits::verify::verify_payload(
            &keys.layout,
            keys.step_keys()?,
            keys.layout.spec_digest,
            &proof,
            Some(&proof.statement),
        );
        let verify_ms = tv.elapsed().as_secs_f64() * 1e3;
        if let Some(d) = out_dir {
            // the verifying key is written with the proving key
            write_keys(&d.join(KEYS_DIR), &keys)?;
            write_as(&d.join(proof_name(last)), &bytes, a.force)?;
        }
        summary["proof"] = json!({"step": last, "bytes": bytes.len(), "folds": proof.num_folds, "constraints_per_fold": c1, "keygen_s": keygen_s,
            "witness_s": tm.witness_s, "fold_s": tm.fold_s, "compress_s": tm.compress_s, "verify_ms": verify_ms, "verified": verified.is_ok(), "params": "dev"});
        if !json {
            crate::outln!("proof of step {last}: {} bytes; witness {:.2} s, folding {:.2} s, compression {:.2} s", bytes.len(), tm.witness_s, tm.fold_s, tm.compress_s);
            match &verified {
                Ok(_) => crate::outln!(
                    "verified: ACCEPTED in {verify_ms:.1} ms (c_before {}…, c_after {}…: hashes of the checkpoints' KZG points under these keys; run.json's are Poseidon-chain digests of the files)",
                    &fr_to_hex(&proof.statement.c_before)[..18],
                    &fr_to_hex(&proof.statement.c_after)[..18]
                ),
                Err(r) => crate::outln!("verified: REJECTED: {}", r.0),
            }
            if let Some(d) = out_dir {
                crate::outln!(
                    "check it yourself: zkstep-verify --vk {} --proof {} --spec {} --before {} --after {}",
                    d.join(KEYS_DIR).join(VERIFYING_KEY_FILE).display(),
                    d.join(proof_name(last)).display(),
                    d.join(SPEC_FILE).display(),
                    d.join(ckpt_name(last)).display(),
                    d.join(ckpt_name(steps)).display()
                );
            }
        }
        if let Err(r) = verified {
            return Err(CliError::Internal(format!(
                "the demo's own proof was rejected: {}",
                r.0
            )));
        }
    }
    if json {
        print_json(&summary);
    }
    Ok(())
}
