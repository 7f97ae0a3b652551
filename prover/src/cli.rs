//! The `zkstep` command line: argument parsing (clap) and the subcommands.
//!
//! Every failure prints `error: …` naming the file and the problem and exits
//! with status 1 (clap's usage errors exit with 2); nothing here panics on
//! user input, and nothing of the user's is overwritten without `--force`.

use crate::error::{ProverError, Result};
use crate::run::{train, StepEntry, TrainOptions, MANIFEST};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;
use zkstep_core::commit::{commit_batch, commit_params};
use zkstep_core::fixed::to_real;
use zkstep_core::format::{self, read_dataset, StFile, BATCH_FORMAT, CHECKPOINT_FORMAT};
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::spec::DEMO_SPEC_TOML;
use zkstep_core::{Checkpoint, ModelSpec};

/// zkstep: zero-knowledge proofs of neural-network training steps.
#[derive(Parser, Debug)]
#[command(name = "zkstep", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// A checkpoint file to write, with the flags every writing command shares.
#[derive(clap::Args, Debug)]
pub struct OutFile {
    /// Checkpoint file to write (safetensors).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace `--out` if it exists.
    #[arg(long)]
    pub force: bool,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create a random initial checkpoint (He-uniform for ReLU layers, Xavier for identity) for a spec.
    Init {
        /// Model spec (TOML).
        #[arg(long)]
        spec: PathBuf,
        /// Seed of the random initialisation.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Output file and flags.
        #[command(flatten)]
        out: OutFile,
    },
    /// Import a float (f32/f16/bf16/f64) safetensors checkpoint, e.g. a PyTorch state_dict, by quantisation.
    Import {
        /// Model spec (TOML).
        #[arg(long)]
        spec: PathBuf,
        /// Float safetensors file: tensors `l1.w`, `l1.b`, … or PyTorch's `<prefix>.weight`, `<prefix>.bias`.
        #[arg(long = "in")]
        input: PathBuf,
        /// Output file and flags.
        #[command(flatten)]
        out: OutFile,
    },
    /// Train with the reference executor, writing every checkpoint, batch and a run.json manifest.
    Train {
        /// Model spec (TOML).
        #[arg(long)]
        spec: PathBuf,
        /// Starting checkpoint (from `zkstep init` or `zkstep import`).
        #[arg(long)]
        ckpt: PathBuf,
        /// Dataset: safetensors with `X` [N, inputs] and `Y` [N, outputs], float (quantised) or i64 fixed point.
        #[arg(long)]
        data: PathBuf,
        /// Number of steps.
        #[arg(long)]
        steps: u64,
        /// Directory for ckpt_{t}.safetensors, batch_{t}.safetensors and run.json.
        #[arg(long)]
        out_dir: PathBuf,
        /// Seed of the batch schedule (batch salts are always fresh random values).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Replace an existing run in `--out-dir`.
        #[arg(long)]
        force: bool,
        /// Print a JSON summary instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print the commitment of a checkpoint (Commit(θ)) or a batch (Commit(batch, salt)).
    Commit {
        /// A zkstep checkpoint or batch file.
        file: PathBuf,
        /// The spec the file was made for.
        #[arg(long)]
        spec: PathBuf,
        /// Print a JSON object instead of the bare hex.
        #[arg(long)]
        json: bool,
    },
    /// Show a safetensors file: metadata, tensors, shapes, value ranges (and its commitment with --spec).
    Inspect {
        /// Any safetensors file.
        file: PathBuf,
        /// The spec, to also print the commitment.
        #[arg(long)]
        spec: Option<PathBuf>,
        /// Print a JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Make proving and verifying keys for a spec (writes proving.key and verifying.key).
    Keygen {
        /// Model spec (TOML).
        #[arg(long)]
        spec: PathBuf,
        /// Directory for the keys.
        #[arg(long)]
        out: PathBuf,
        /// Directory of `ppot_pruned_NN.ptau` files from a powers-of-tau ceremony. Without it the
        /// keys use dev params: a fresh random tau, sound only for whoever ran keygen.
        #[arg(long)]
        ptau_dir: Option<PathBuf>,
        /// Output units per fold (default: as many as fit --fold-budget).
        #[arg(long)]
        rows: Option<usize>,
        /// Bound on one fold's constraints (prover memory is about 2.7 KB per constraint).
        #[arg(long, default_value_t = zkstep_circuits::DEFAULT_FOLD_BUDGET)]
        fold_budget: usize,
        /// Replace existing keys.
        #[arg(long)]
        force: bool,
        /// Print a JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Prove one training step: AFTER = Step(BEFORE, BATCH) under SPEC.
    Prove {
        /// Model spec (TOML).
        #[arg(long)]
        spec: PathBuf,
        /// Keys directory (from `zkstep keygen`).
        #[arg(long)]
        keys: PathBuf,
        /// Checkpoint θ_t.
        #[arg(long)]
        before: PathBuf,
        /// Checkpoint θ_{t+1}.
        #[arg(long)]
        after: PathBuf,
        /// The batch of this step.
        #[arg(long)]
        batch: PathBuf,
        /// Proof file to write.
        #[arg(long)]
        out: PathBuf,
        /// Replace `--out` if it exists.
        #[arg(long)]
        force: bool,
        /// MSM backend: auto (GPU when present and the MSM is large), cpu or gpu.
        #[arg(long, default_value = "auto")]
        msm: zkstep_msm::Backend,
        /// Print a JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Prove every step of a run (run.json), skipping steps whose proof exists and verifies.
    ProveRun {
        /// Run directory (from `zkstep train`).
        #[arg(long)]
        run: PathBuf,
        /// Keys directory (from `zkstep keygen`).
        #[arg(long)]
        keys: PathBuf,
        /// MSM backend: auto (GPU when present and the MSM is large), cpu or gpu.
        #[arg(long, default_value = "auto")]
        msm: zkstep_msm::Backend,
        /// Print a JSON summary instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print the built-in demo spec (a starting point for your own).
    ExampleSpec,
    /// Measure what proving one step costs per layer width (each width in its own process):
    /// constraints, keygen/prove/verify time, proof size, peak memory, native step, MSM cost.
    Bench {
        /// Layer widths (every layer width → width).
        #[arg(long, value_delimiter = ',', default_value = "16,32,64,128,256,512")]
        widths: Vec<usize>,
        /// Batch size.
        #[arg(long, default_value_t = 32)]
        batch: usize,
        /// Dense layers (ReLU between them, identity last).
        #[arg(long, default_value_t = 1)]
        layers: usize,
        /// Bound on one fold's constraints.
        #[arg(long, default_value_t = zkstep_circuits::DEFAULT_FOLD_BUDGET)]
        fold_budget: usize,
        /// MSM backend: auto (GPU when present and the MSM is large), cpu or gpu.
        #[arg(long, default_value = "auto")]
        msm: zkstep_msm::Backend,
        /// Skip widths whose estimated peak memory exceeds this (GiB; default: what is available now).
        #[arg(long)]
        mem_limit_gib: Option<f64>,
        /// Write the full report (machine, configuration, every field of every width) as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write one CSV row per width.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Write an SVG plot of prove time, verify time, peak memory and proof size against width.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Write the table into this Markdown file between its
        /// `<!-- zkstep-bench:begin -->` and `<!-- zkstep-bench:end -->` markers.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Replace existing --json/--csv/--plot files.
        #[arg(long)]
        force: bool,
        /// Only synthesise each width's fold and estimate its memory; prove nothing.
        #[arg(long)]
        dry_run: bool,
        /// Run nothing: re-render the table, CSV, plot and Markdown from a saved --json report.
        #[arg(long, conflicts_with_all = ["json", "dry_run"])]
        from_json: Option<PathBuf>,
    },
    /// One width of `zkstep bench` (run by it in a child process; prints one JSON line).
    #[command(hide = true)]
    BenchPoint {
        /// Layer width.
        #[arg(long)]
        width: usize,
        /// Batch size.
        #[arg(long)]
        batch: usize,
        /// Layers.
        #[arg(long)]
        layers: usize,
        /// Fold budget.
        #[arg(long)]
        fold_budget: usize,
        /// MSM backend: auto (GPU when present and the MSM is large), cpu or gpu.
        #[arg(long, default_value = "auto")]
        msm: zkstep_msm::Backend,
        /// Memory limit (GiB).
        #[arg(long)]
        mem_limit_gib: f64,
        /// Estimate only.
        #[arg(long)]
        dry_run: bool,
    },
    /// Run the built-in demo: train a 2-16-16-1 MLP on two moons, then keygen (dev params),
    /// prove the last step and verify the proof.
    Demo {
        /// Number of training steps.
        #[arg(long, default_value_t = 60)]
        steps: u64,
        /// Also write the run (checkpoints, batches, run.json, keys, proof) to this directory.
        #[arg(long)]
        out_dir: Option<PathBuf>,
        /// Only train; skip keygen, proving and verifying.
        #[arg(long)]
        no_prove: bool,
        /// Print a JSON summary instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Run the CLI; returns the process exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    crate::out::init();
    // silence fd 1 for the run (see `out`); our own output goes around it
    let _quiet = gag::Gag::stdout().ok();
    match run(cli) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

/// Refuse to overwrite `path` unless `force`.
pub fn refuse_existing(path: &Path, force: bool) -> Result<()> {
    if path.exists() && !force {
        return Err(ProverError::Exists(path.to_path_buf()));
    }
    Ok(())
}

/// Print a JSON value, pretty.
pub fn print_json(v: &serde_json::Value) {
    crate::outln!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
    );
}

/// Execute one parsed command.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Init {
            spec,
            seed,
            out: OutFile { out, force, json },
        } => {
            let s = ModelSpec::from_file(&spec)?;
            refuse_existing(&out, force)?;
            let ck = Checkpoint::init(&s, seed);
            format::write_checkpoint(&out, &s, &ck)?;
            let c = fr_to_hex(&commit_params(&s, &ck));
            if json {
                print_json(
                    &json!({"file": out, "params": s.num_params(), "commitment": c, "spec_digest": fr_to_hex(&s.digest())}),
                );
            } else {
                crate::outln!(
                    "wrote {} ({} parameters)\ncommitment {c}",
                    out.display(),
                    s.num_params()
                );
            }
        }
        Command::Import {
            spec,
            input,
            out: OutFile { out, force, json },
        } => {
            let s = ModelSpec::from_file(&spec)?;
            refuse_existing(&out, force)?;
            let (ck, rep) = format::import_checkpoint(&input, &s)?;
            format::write_checkpoint(&out, &s, &ck)?;
            let c = fr_to_hex(&commit_params(&s, &ck));
            if json {
                print_json(&json!({"file": out, "quantisation": rep, "commitment": c}));
            } else {
                crate::outln!(
                    "quantised {} values at scale 10^9: max |error| {:.3e}, mean |error| {:.3e}\nwrote {}\ncommitment {c}",
                    rep.count,
                    rep.max_abs_err,
                    rep.mean_abs_err,
                    out.display()
                );
            }
        }
        Command::Train {
            spec,
            ckpt,
            data,
            steps,
            out_dir,
            seed,
            force,
            json,
        } => {
            let s = ModelSpec::from_file(&spec)?;
            let start = format::read_checkpoint(&ckpt, &s)?;
            let ds = read_dataset(&data, s.value_range)?;
            std::fs::create_dir_all(&out_dir).map_err(|e| ProverError::io(&out_dir, e))?;
            refuse_existing(&out_dir.join(MANIFEST), force)?;
            if ds.report.count > 0 && !json {
                crate::outln!(
                    "{}: quantised {} values: max |error| {:.3e}, mean |error| {:.3e}",
                    data.display(),
                    ds.report.count,
                    ds.report.max_abs_err,
                    ds.report.mean_abs_err
                );
            }
            let pb = progress(steps, json);
            let opts = TrainOptions {
                steps,
                seed,
                out_dir: Some(out_dir.clone()),
                salt_seed: None,
                data_name: data.display().to_string(),
            };
            let t = Instant::now();
            let res = train(&s, &start, &ds, &opts, |e: &StepEntry| {
                pb.inc(1);
                if !json {
                    pb.println(format!("step {:>5}  loss {:.6}", e.step, e.loss));
                }
            });
            pb.finish_and_clear();
            let (_, done) = res?;
            if json {
                print_json(
                    &json!({"run": out_dir.join(MANIFEST), "steps": done, "seconds": t.elapsed().as_secs_f64()}),
                );
            } else {
                crate::outln!(
                    "wrote {} steps to {} in {:.2?}",
                    done.len(),
                    out_dir.display(),
                    t.elapsed()
                );
                if let Some(last) = done.last() {
                    crate::outln!("final commitment {}", last.c_after);
                }
            }
        }
        Command::Commit { file, spec, json } => {
            let s = ModelSpec::from_file(&spec)?;
            let (kind, c) = commitment_of(&file, &s)?;
            if json {
                print_json(
                    &json!({"file": file, "kind": kind, "commitment": fr_to_hex(&c), "spec_digest": fr_to_hex(&s.digest())}),
                );
            } else {
                crate::outln!("{}", fr_to_hex(&c));
            }
        }
        Command::Inspect { file, spec, json } => inspect(&file, spec.as_deref(), json)?,
        Command::ExampleSpec => crate::out::line(DEMO_SPEC_TOML.trim_end()),
        Command::Demo {
            steps,
            out_dir,
            json,
            no_prove,
        } => crate::commands::demo(steps, out_dir.as_deref(), json, no_prove)?,
        Command::Keygen {
            spec,
            out,
            ptau_dir,
            rows,
            fold_budget,
            force,
            json,
        } => crate::commands::keygen(
            &spec,
            &out,
            ptau_dir.as_deref(),
            rows,
            fold_budget,
            force,
            json,
        )?,
        Command::Prove {
            spec,
            keys,
            before,
            after,
            batch,
            out,
            force,
            msm,
            json,
        } => {
            set_msm(msm)?;
            crate::commands::prove(&spec, &keys, &before, &after, &batch, &out, force, json)?
        }
        Command::ProveRun {
            run,
            keys,
            msm,
            json,
        } => {
            set_msm(msm)?;
            crate::commands::prove_run(&run, &keys, json)?
        }
        Command::Bench {
            widths,
            batch,
            layers,
            fold_budget,
            msm,
            mem_limit_gib,
            json,
            csv,
            plot,
            markdown,
            force,
            dry_run,
            from_json,
        } => {
            set_msm(msm)?;
            let cfg = crate::bench::BenchConfig {
                widths,
                batch,
                layers,
                fold_budget,
                msm: msm.name().into(),
                mem_limit_gib: mem_limit_gib
                    .unwrap_or_else(|| crate::bench::available_bytes() / 1073741824.0),
                dry_run,
            };
            let outs = crate::commands::BenchOutputs {
                json,
                csv,
                plot,
                markdown,
                force,
            };
            crate::commands::bench(&cfg, &outs, from_json.as_deref())?
        }
        Command::BenchPoint {
            width,
            batch,
            layers,
            fold_budget,
            msm,
            mem_limit_gib,
            dry_run,
        } => {
            set_msm(msm)?;
            let p = crate::bench::run_point(
                width,
                batch,
                layers,
                fold_budget,
                mem_limit_gib * 1073741824.0,
                dry_run,
            )?;
            crate::outln!(
                "{}",
                serde_json::to_string(&p).map_err(|e| ProverError::Invalid(e.to_string()))?
            );
        }
    }
    Ok(())
}

/// Choose the MSM backend for this process; `gpu` without one is an error.
fn set_msm(b: zkstep_msm::Backend) -> Result<()> {
    zkstep_msm::set_backend(b).map_err(|e| ProverError::Invalid(format!("--msm {}: {e}", b.name())))
}

/// A progress bar over `n` steps (hidden when `hidden`).
pub fn progress(n: u64, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(n);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} steps ({eta})",
    ) {
        pb.set_style(style);
    }
    pb
}

/// The commitment of a checkpoint or batch file, by its `format` metadata.
pub fn commitment_of(file: &Path, s: &ModelSpec) -> Result<(&'static str, zkstep_core::Fr)> {
    let bytes = format::read_file(file)?;
    let f = StFile::parse(file, &bytes)?;
    match f.meta("format") {
        Some(BATCH_FORMAT) => {
            let (b, _) = format::parse_batch(file, &bytes, s)?;
            Ok(("batch", commit_batch(s, &b)))
        }
        _ => {
            let ck = format::parse_checkpoint(file, &bytes, s)?;
            Ok(("checkpoint", commit_params(s, &ck)))
        }
    }
}

fn inspect(file: &Path, spec: Option<&Path>, json: bool) -> Result<()> {
    let bytes = format::read_file(file)?;
    let f = StFile::parse(file, &bytes)?;
    let mut tensors = vec![];
    for name in f.names() {
        let (dtype, shape) = f.info(&name)?;
        let (min, max) = if dtype == safetensors_dtype_i64() {
            let v = f.i64_tensor(&name, &shape)?;
            let (lo, hi) = (
                v.iter().min().copied().unwrap_or(0),
                v.iter().max().copied().unwrap_or(0),
            );
            (to_real(lo), to_real(hi))
        } else {
            match f.float_tensor(&name) {
                Ok((_, v)) => (
                    v.iter().copied().fold(f64::INFINITY, f64::min),
                    v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ),
                Err(e) => return Err(e.into()),
            }
        };
        tensors.push(json!({"name": name, "dtype": format!("{dtype:?}"), "shape": shape, "min": min, "max": max}));
    }
    let mut meta: Vec<(String, String)> = f
        .metadata()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    meta.sort();
    let commitment = match spec {
        Some(sp) => {
            let s = ModelSpec::from_file(sp)?;
            Some(fr_to_hex(&commitment_of(file, &s)?.1))
        }
        None => None,
    };
    let file_digest = format!("0x{}", hex_sha3(&bytes));
    if json {
        print_json(
            &json!({"file": file, "bytes": bytes.len(), "sha3_256": file_digest, "metadata": meta.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect::<serde_json::Map<_, _>>(), "tensors": tensors, "commitment": commitment}),
        );
        return Ok(());
    }
    crate::outln!(
        "{}  ({} bytes, sha3-256 {file_digest})",
        file.display(),
        bytes.len()
    );
    match f.meta("format") {
        Some(CHECKPOINT_FORMAT) | Some(BATCH_FORMAT) => {}
        _ => {
            crate::outln!(
                "  not a zkstep checkpoint/batch (no zkstep metadata): values shown as stored"
            )
        }
    }
    for (k, v) in &meta {
        crate::outln!("  meta {k} = {v}");
    }
    for t in &tensors {
        crate::outln!(
            "  {:<8} {:<4} {:<14} min {:>14.6}  max {:>14.6}",
            t["name"].as_str().unwrap_or(""),
            t["dtype"].as_str().unwrap_or(""),
            t["shape"].to_string(),
            t["min"].as_f64().unwrap_or(0.0),
            t["max"].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(c) = commitment {
        crate::outln!("  commitment {c}");
    }
    Ok(())
}

fn safetensors_dtype_i64() -> zkstep_core::format::Dtype {
    zkstep_core::format::Dtype::I64
}

fn hex_sha3(bytes: &[u8]) -> String {
    zkstep_core::format::sha3_hex(bytes)
}
