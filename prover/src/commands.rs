//! The proving subcommands (`keygen`, `prove`, `prove-run`, `bench`) and the demo.

use crate::cli::{print_json, progress, refuse_existing};
use crate::error::{ProverError, Result};
use crate::ivc::{
    keygen as make_keys, proof_bytes, prove as prove_step, read_proving_key, verifying_key_bytes,
    write_keys, Keys, Setup, Timings, PROVING_KEY_FILE, VERIFYING_KEY_FILE,
};
use crate::run::{train, RunManifest, TrainOptions, MANIFEST};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;
use zkstep_circuits::files::{self, FileKind, Header, ProofPayload, Statement};
use zkstep_core::commit::commit_params;
use zkstep_core::data::{make_batch, two_moons};
use zkstep_core::fixed::to_real;
use zkstep_core::format::{read_batch, read_checkpoint, write_atomic, Dataset};
use zkstep_core::poseidon::{fr_from_hex, fr_to_hex};
use zkstep_core::spec::demo_spec;
use zkstep_core::{Checkpoint, ModelSpec};

/// `zkstep keygen`.
pub fn keygen(
    spec: &Path,
    out: &Path,
    ptau: Option<&Path>,
    rows: Option<usize>,
    budget: usize,
    force: bool,
    json: bool,
) -> Result<()> {
    let s = ModelSpec::from_file(spec)?;
    // fail on an unusable output directory before spending minutes on keygen
    std::fs::create_dir_all(out).map_err(|e| ProverError::io(out, e))?;
    refuse_existing(&out.join(PROVING_KEY_FILE), force)?;
    refuse_existing(&out.join(VERIFYING_KEY_FILE), force)?;
    if let Some(d) = ptau {
        if !d.is_dir() {
            return Err(ProverError::Invalid(format!(
                "{}: not a directory of ppot_pruned_NN.ptau files",
                d.display()
            )));
        }
    }
    if !json {
        eprintln!(
            "making keys ({}) …",
            if ptau.is_some() {
                "ceremony params"
            } else {
                "dev params"
            }
        );
    }
    let t = Instant::now();
    let keys = make_keys(&s, rows, budget, ptau.map_or(Setup::Dev, Setup::Ceremony))?;
    let secs = t.elapsed().as_secs_f64();
    write_keys(out, &keys)?;
    let (c1, c2) = keys.pp.num_constraints();
    if json {
        print_json(
            &json!({"keys": out, "params": format!("{:?}", keys.params).to_lowercase(), "rows_per_fold": keys.layout.rows, "folds": keys.layout.num_folds(), "constraints_per_fold": c1, "secondary_constraints": c2, "seconds": secs}),
        );
    } else {
        crate::outln!(
            "wrote {} and {} in {secs:.1} s",
            out.join(PROVING_KEY_FILE).display(),
            out.join(VERIFYING_KEY_FILE).display()
        );
        crate::outln!("params: {}", keys.params.describe());
        crate::outln!("{} folds per step, {} output units per fold, {c1} constraints per fold (+{c2} secondary)", keys.layout.num_folds(), keys.layout.rows);
    }
    Ok(())
}

fn load_keys(dir: &Path, spec: &ModelSpec) -> Result<Keys> {
    let keys = read_proving_key(&dir.join(PROVING_KEY_FILE))?;
    if keys.layout.spec_digest != spec.digest() {
        return Err(ProverError::Invalid(format!(
            "{}: these keys were made for another spec (digest {}, this spec's is {})",
            dir.join(PROVING_KEY_FILE).display(),
            fr_to_hex(&keys.layout.spec_digest),
            fr_to_hex(&spec.digest())
        )));
    }
    Ok(keys)
}

fn report(
    proof: &ProofPayload,
    t: &Timings,
    bytes: usize,
    path: &Path,
    json: bool,
) -> serde_json::Value {
    let st = &proof.statement;
    let v = json!({"proof": path, "bytes": bytes, "folds": proof.num_folds, "step": st.step,
        "c_before": fr_to_hex(&st.c_before), "c_after": fr_to_hex(&st.c_after), "c_batch": fr_to_hex(&st.c_batch),
        "witness_s": t.witness_s, "fold_s": t.fold_s, "compress_s": t.compress_s});
    if !json {
        crate::outln!("wrote {} ({bytes} bytes): step {}, {} folds; witness {:.2} s, folding {:.2} s, compression {:.2} s", path.display(), st.step, proof.num_folds, t.witness_s, t.fold_s, t.compress_s);
    }
    v
}

/// `zkstep prove`.
#[allow(clippy::too_many_arguments)]
pub fn prove(
    spec: &Path,
    keys_dir: &Path,
    before: &Path,
    after: &Path,
    batch: &Path,
    out: &Path,
    force: bool,
    json: bool,
) -> Result<()> {
    let s = ModelSpec::from_file(spec)?;
    refuse_existing(out, force)?;
    let b0 = read_checkpoint(before, &s)?;
    let b1 = read_checkpoint(after, &s)?;
    let (bt, bstep) = read_batch(batch, &s)?;
    if bstep != b0.step {
        return Err(ProverError::Invalid(format!(
            "{}: this batch is for step {bstep}, the before-checkpoint is step {}",
            batch.display(),
            b0.step
        )));
    }
    let keys = load_keys(keys_dir, &s)?;
    let (proof, t) = prove_step(&keys, &b0, &b1, &bt, !json)?;
    let bytes = proof_bytes(&keys, &proof)?;
    write_atomic(out, &bytes)?;
    let v = report(&proof, &t, bytes.len(), out, json);
    if json {
        print_json(&v);
    }
    Ok(())
}

fn parse_hex(s: &str, what: &str, manifest: &Path) -> Result<zkstep_core::Fr> {
    fr_from_hex(s).ok_or_else(|| {
        ProverError::Invalid(format!("{}: malformed {what} {s:?}", manifest.display()))
    })
}

/// Does `path` hold a proof of exactly `expected` that verifies under `keys`?
fn existing_proof_verifies(keys: &Keys, path: &Path, expected: &Statement) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let Ok((h, p)) = files::decode::<ProofPayload>(&bytes, FileKind::Proof) else {
        return false;
    };
    zkstep_circuits::verify::verify_payload(&keys.layout, &keys.vk, h.spec_digest, &p, Some(expected)).is_ok()
}

/// `zkstep prove-run`.
pub fn prove_run(run: &Path, keys_dir: &Path, json: bool) -> Result<()> {
    let mpath = run.join(MANIFEST);
    let m = RunManifest::read(&mpath)?;
    let s = ModelSpec::from_file(&run.join(&m.spec))?;
    if fr_to_hex(&s.digest()) != m.spec_digest {
        return Err(ProverError::Invalid(format!(
            "{}: the manifest's spec digest does not match {}",
            mpath.display(),
            run.join(&m.spec).display()
        )));
    }
    let keys = load_keys(keys_dir, &s)?;
    for w in m.steps.windows(2) {
        if w[0].c_after != w[1].c_before {
            return Err(ProverError::Invalid(format!(
                "{}: step {}'s c_after is not step {}'s c_before: the run does not chain",
                mpath.display(),
                w[0].step,
                w[1].step
            )));
        }
    }
    let mut out = vec![];
    for e in &m.steps {
        let path = run.join(format!("proof_{}.zkstep", e.step));
        let expected = Statement {
            spec_digest: s.digest(),
            c_before: parse_hex(&e.c_before, "c_before", &mpath)?,
            c_after: parse_hex(&e.c_after, "c_after", &mpath)?,
            c_batch: parse_hex(&e.c_batch, "c_batch", &mpath)?,
            step: e.step,
        };
        if existing_proof_verifies(&keys, &path, &expected) {
            if !json {
                crate::outln!(
                    "step {}: {} exists and verifies, skipped",
                    e.step,
                    path.display()
                );
            }
            out.push(json!({"step": e.step, "proof": path, "skipped": true}));
            continue;
        }
        let b0 = read_checkpoint(&run.join(&e.before), &s)?;
        let b1 = read_checkpoint(&run.join(&e.after), &s)?;
        let (bt, _) = read_batch(&run.join(&e.batch), &s)?;
        for (name, got, want) in [
            ("c_before", commit_params(&s, &b0), expected.c_before),
            ("c_after", commit_params(&s, &b1), expected.c_after),
        ] {
            if got != want {
                return Err(ProverError::Invalid(format!(
                    "{}: step {}'s {name} in the manifest does not match its file",
                    mpath.display(),
                    e.step
                )));
            }
        }
        let (proof, t) = prove_step(&keys, &b0, &b1, &bt, !json)?;
        let bytes = proof_bytes(&keys, &proof)?;
        write_atomic(&path, &bytes)?;
        let mut v = report(&proof, &t, bytes.len(), &path, json);
        v["skipped"] = json!(false);
        out.push(v);
    }
    if json {
        print_json(&json!({"run": mpath, "proofs": out}));
    } else {
        crate::outln!(
            "{} steps proven or verified in {}",
            out.len(),
            run.display()
        );
    }
    Ok(())
}

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

/// `zkstep demo`: train, then keygen (dev), prove the last step and verify it.
pub fn demo(steps: u64, out_dir: Option<&Path>, json: bool, no_prove: bool) -> Result<()> {
    let s = demo_spec();
    let ds = two_moons(256, 0.1, 42);
    let start = Checkpoint::init(&s, 1);
    if let Some(d) = out_dir {
        std::fs::create_dir_all(d).map_err(|e| ProverError::io(d, e))?;
        refuse_existing(&d.join(MANIFEST), false)?;
    }
    if !json {
        crate::outln!("zkstep demo: 2-16-16-1 ReLU MLP, MSE, SGD lr 0.1, batch 8, on 256 two-moons points (scale 10^9, round half up)");
        crate::outln!("spec digest {}", fr_to_hex(&s.digest()));
        crate::outln!("c_before(step 0) {}", fr_to_hex(&commit_params(&s, &start)));
    }
    let opts = TrainOptions {
        steps,
        seed: 7,
        out_dir: out_dir.map(Path::to_path_buf),
        salt_seed: Some(7),
        data_name: "built-in two moons (256 points, seed 42)".into(),
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
        return Err(ProverError::Invalid(
            "internal error: commitments do not chain".into(),
        ));
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
    if !no_prove && steps > 0 {
        // Re-run the last step to get θ_{t}, θ_{t+1} and its batch.
        let last = steps - 1;
        let mut ck = start.clone();
        for t in 0..last {
            ck = zkstep_core::step(
                &s,
                &ck,
                &make_batch(
                    &ds,
                    s.batch_size,
                    t,
                    7,
                    zkstep_core::model::seeded_salt(7, t),
                ),
            )?
            .after;
        }
        let batch = make_batch(
            &ds,
            s.batch_size,
            last,
            7,
            zkstep_core::model::seeded_salt(7, last),
        );
        let after = zkstep_core::step(&s, &ck, &batch)?.after;
        if !json {
            crate::outln!("\nkeygen: dev params — a fresh random tau made here; sound for whoever ran keygen, not for public verification");
        }
        let tk = Instant::now();
        // a small budget keeps the demo's compression near 4 GB of memory
        let keys = make_keys(&s, None, 1 << 16, Setup::Dev)?;
        let keygen_s = tk.elapsed().as_secs_f64();
        let (c1, _) = keys.pp.num_constraints();
        if !json {
            crate::outln!(
                "keys in {keygen_s:.1} s: {} folds per step, {c1} constraints per fold",
                keys.layout.num_folds()
            );
            crate::outln!("proving step {last} …");
        }
        let (proof, tm) = prove_step(&keys, &ck, &after, &batch, !json)?;
        let bytes = proof_bytes(&keys, &proof)?;
        let tv = Instant::now();
        let verified = zkstep_circuits::verify::verify_payload(
            &keys.layout,
            &keys.vk,
            keys.layout.spec_digest,
            &proof,
            Some(&proof.statement),
        );
        let verify_ms = tv.elapsed().as_secs_f64() * 1e3;
        if let Some(d) = out_dir {
            write_keys(&d.join("keys"), &keys)?;
            write_atomic(&d.join(format!("proof_{last}.zkstep")), &bytes)?;
        }
        let _ = verifying_key_bytes; // the verifying key is written with the keys above
        summary["proof"] = json!({"step": last, "bytes": bytes.len(), "folds": proof.num_folds, "constraints_per_fold": c1, "keygen_s": keygen_s,
            "witness_s": tm.witness_s, "fold_s": tm.fold_s, "compress_s": tm.compress_s, "verify_ms": verify_ms, "verified": verified.is_ok(), "params": "dev"});
        if !json {
            crate::outln!("proof of step {last}: {} bytes; witness {:.2} s, folding {:.2} s, compression {:.2} s", bytes.len(), tm.witness_s, tm.fold_s, tm.compress_s);
            match &verified {
                Ok(_) => crate::outln!(
                    "verified: ACCEPTED in {verify_ms:.1} ms (c_before {}…, c_after {}…)",
                    &fr_to_hex(&proof.statement.c_before)[..18],
                    &fr_to_hex(&proof.statement.c_after)[..18]
                ),
                Err(r) => crate::outln!("verified: REJECTED: {}", r.0),
            }
            if let Some(d) = out_dir {
                crate::outln!(
                    "check it yourself: zkstep-verify --vk {} --proof {} --spec {} --before {} --after {}",
                    d.join("keys").join(VERIFYING_KEY_FILE).display(),
                    d.join(format!("proof_{last}.zkstep")).display(),
                    d.join("spec.toml").display(),
                    d.join(format!("ckpt_{last}.safetensors")).display(),
                    d.join(format!("ckpt_{steps}.safetensors")).display()
                );
            }
        }
        if let Err(r) = verified {
            return Err(ProverError::Invalid(format!(
                "internal error: the demo's own proof was rejected: {}",
                r.0
            )));
        }
    }
    if json {
        print_json(&summary);
    }
    let _ = (
        Header {
            kind: FileKind::Proof,
            spec_digest: s.digest(),
            params: files::ParamsKind::Dev,
        },
        progress,
    );
    Ok(())
}

/// Where `zkstep bench` writes its results.
pub struct BenchOutputs {
    /// Full JSON report.
    pub json: Option<PathBuf>,
    /// CSV rows.
    pub csv: Option<PathBuf>,
    /// SVG plot.
    pub plot: Option<PathBuf>,
    /// Markdown file to splice the table into.
    pub markdown: Option<PathBuf>,
    /// Replace existing output files.
    pub force: bool,
}

/// `zkstep bench`: every width in a child process, then the table, files and plot.
pub fn bench(
    cfg: &crate::bench::BenchConfig,
    outs: &BenchOutputs,
    from_json: Option<&Path>,
) -> Result<()> {
    use crate::bench::*;
    for p in [&outs.json, &outs.csv, &outs.plot].into_iter().flatten() {
        refuse_existing(p, outs.force)?;
    }
    if let Some(m) = &outs.markdown {
        // fail now, not after the whole run, if the file cannot take the table
        splice_check(m)?;
    }
    if cfg.widths.is_empty() || cfg.batch == 0 || cfg.layers == 0 {
        return Err(ProverError::Invalid(
            "--widths, --batch and --layers must be non-empty and positive".into(),
        ));
    }
    let report = match from_json {
        Some(p) => read_report(p)?,
        None => run_report(cfg)?,
    };
    crate::outln!("{}", render_terminal(&report.points));
    write_bench_outputs(&report, outs)?;
    let failed: Vec<usize> = report
        .points
        .iter()
        .filter(|p| p.status == "failed")
        .map(|p| p.width)
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(ProverError::Invalid(format!(
            "widths {failed:?} failed (see the notes above); the others are reported"
        )))
    }
}

/// A saved `zkstep bench --json` report (an untrusted file: errors name it).
fn read_report(path: &Path) -> Result<crate::bench::BenchReport> {
    let text = std::fs::read_to_string(path).map_err(|e| ProverError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| {
        ProverError::Invalid(format!(
            "{}: not a zkstep bench report: {e}",
            path.display()
        ))
    })
}

/// Run every width of `cfg` in child processes.
fn run_report(cfg: &crate::bench::BenchConfig) -> Result<crate::bench::BenchReport> {
    use crate::bench::*;
    let exe = std::env::current_exe()
        .map_err(|e| ProverError::Invalid(format!("cannot find the zkstep executable: {e}")))?;
    let machine = Machine::here();
    eprintln!(
        "zkstep bench: widths {:?}, batch {}, {} layer(s), fold budget {}, MSM {}, memory limit {:.1} GiB\nmachine: {}",
        cfg.widths,
        cfg.batch,
        cfg.layers,
        cfg.fold_budget,
        cfg.msm,
        cfg.mem_limit_gib,
        machine.describe()
    );
    let points = run_children(&exe, cfg);
    Ok(BenchReport {
        zkstep_version: env!("CARGO_PKG_VERSION").into(),
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        machine,
        config: cfg.clone(),
        points,
    })
}

/// Write the JSON, CSV, SVG and Markdown a bench run asked for.
fn write_bench_outputs(report: &crate::bench::BenchReport, outs: &BenchOutputs) -> Result<()> {
    use crate::bench::*;
    let cfg = &report.config;
    let invalid = |e: serde_json::Error| ProverError::Invalid(e.to_string());
    if let Some(p) = &outs.json {
        let s = serde_json::to_string_pretty(report).map_err(invalid)?;
        write_atomic(p, s.as_bytes())?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(p) = &outs.csv {
        write_atomic(p, render_csv(&report.points)?.as_bytes())?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(p) = &outs.plot {
        write_atomic(p, render_svg(report)?.as_bytes())?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(m) = &outs.markdown {
        let plot_rel = outs.plot.as_ref().map(|pl| relative_to(pl, m));
        let command = format!(
            "zkstep bench --widths {} --batch {} --layers {}",
            cfg.widths
                .iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join(","),
            cfg.batch,
            cfg.layers
        );
        splice_markdown(m, &render_markdown(report, &command, plot_rel.as_deref()))?;
        eprintln!("updated {}", m.display());
    }
    Ok(())
}

/// `target` as a path relative to the directory of `from_file` (for links).
fn relative_to(target: &Path, from_file: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let t = abs(target);
    let base = abs(from_file);
    let base = base.parent().unwrap_or(Path::new("/"));
    match t.strip_prefix(base) {
        Ok(r) => r.display().to_string(),
        Err(_) => t.display().to_string(),
    }
}
