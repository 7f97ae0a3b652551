//! Measuring: the parent runs every width in a child process (`zkstep
//! bench-point`, a hidden subcommand) so that each width's peak RSS is its
//! own and one width running out of memory cannot take the others down.
//! Before keygen the child synthesises the fold's shape, estimates the
//! prover's peak memory from it, and skips the width with a note when that
//! exceeds the memory available. Each point reports the circuit's size,
//! every phase's time, the proof, the verification (with the standalone
//! verifier crate), the native reference step and the MSM cost on this
//! machine.

use super::report::{BenchConfig, BenchPoint, BenchReport, Machine};
use crate::error::{CliError, Result};
use crate::proving::prove_with_bar;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use zkstep_circuits::state::CommitScheme;
use zkstep_circuits::engine::Compression;
use zkstep_circuits::sizing::{shape_stats, ShapeStats};
use zkstep_circuits::Layout;
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};
use zkstep_prover::ivc::{keygen_with, proof_bytes, verifying_key_bytes, Setup};

/// Peak RSS per element of MicroSpartan's padded instance (bytes), fitted
/// to this project's width sweep (keygen + prove + verify in one process):
/// 2²¹ → 4.0 GiB, 2²² → 7.6 GiB, 2²³ → 15 GiB; rounded up.
pub const BYTES_PER_PADDED_ELEMENT: f64 = 2.0 * 1024.0;
/// The same for Spartan's compression, whose peak is the folding's and the
/// public parameters': 317 MiB at 2²⁰ (the demo) and 0.9 GiB at 2²² (width
/// 512, batch 8, one unit a fold) measured; rounded up.
pub const SPARTAN_BYTES_PER_PADDED_ELEMENT: f64 = 512.0;
const GIB: f64 = 1073741824.0;

impl Machine {
    /// This machine (from /proc and the MSM backend).
    pub fn here() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split(':').nth(1))
                    .map(|m| m.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_gib: meminfo_kib("MemTotal:").unwrap_or(0) as f64 / 1048576.0,
            gpu: zkstep_msm::gpu_status().ok(),
        }
    }
}

fn meminfo_kib(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let l = s.lines().find(|l| l.starts_with(key))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(l.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
}

/// Memory available for a width now (GiB): MemAvailable less 0.5 GiB.
pub fn available_gib() -> f64 {
    meminfo_kib("MemAvailable:").map_or(f64::INFINITY, |k| (k as f64 * 1024.0 - 536870912.0) / GIB)
}

/// Classes of the benchmark's cross-entropy head.
pub const BENCH_CLASSES: usize = 10;

/// The benchmark model: `layers` dense layers width → width (ReLU between,
/// identity last; with cross-entropy the last is a width → 10 head, since
/// softmax needs a sample's every output in one fold), the optimizer
/// (`sgd`, `momentum`: lr 0.01, μ 0.9; `adam`, `adamw`: PyTorch's defaults)
/// and the loss (`mse`, `cross_entropy`).
pub fn bench_spec(
    width: usize,
    batch: usize,
    layers: usize,
    optimizer: &str,
    loss: &str,
) -> Result<ModelSpec> {
    let opt = match optimizer {
        "momentum" => "kind = \"momentum\"\nlr = 0.01\nmu = 0.9",
        "adam" => "kind = \"adam\"",
        "adamw" => "kind = \"adamw\"",
        _ => "lr = 0.01",
    };
    let mut toml = format!("batch_size = {batch}\nloss = \"{loss}\"\n[optimizer]\n{opt}\n");
    for l in 0..layers {
        let act = if l + 1 == layers { "identity" } else { "relu" };
        toml += &format!(
            "[[layers]]\ninputs = {width}\noutputs = {}\nactivation = \"{act}\"\n",
            bench_outputs(width, l + 1 == layers, loss)
        );
    }
    Ok(ModelSpec::from_toml_str(&toml)?)
}

/// A layer's outputs in the benchmark model (the last is the head).
fn bench_outputs(width: usize, last: bool, loss: &str) -> usize {
    if last && loss == "cross_entropy" {
        BENCH_CLASSES
    } else {
        width
    }
}

/// Weights of the benchmark model.
pub fn bench_weights(width: usize, layers: usize, loss: &str) -> usize {
    (0..layers)
        .map(|l| width * bench_outputs(width, l + 1 == layers, loss))
        .sum()
}

/// Deterministic inputs in [−1, 1) and targets for the bench model of
/// `spec` (input width `width`): values in [0, 1) for MSE, one-hot rows
/// (sample i in class i mod outputs) for cross-entropy.
pub fn bench_batch(spec: &ModelSpec, width: usize, batch: usize) -> Result<Batch> {
    let shape = || CliError::BenchBatch { batch, width };
    let outputs = spec.output_width();
    let x = Matrix::from_vec(
        batch,
        width,
        (0..batch * width)
            .map(|i| ((i * 7919) % 2001) as i64 * 1_000_000 - 1_000_000_000)
            .collect(),
    )
    .ok_or_else(shape)?;
    let ce = spec.loss == zkstep_core::spec::Loss::CrossEntropy;
    let y = Matrix::from_vec(
        batch,
        outputs,
        (0..batch * outputs)
            .map(|n| match ce {
                true => i64::from(n % outputs == (n / outputs) % outputs) * 1_000_000_000,
                false => ((n * 104729) % 1001) as i64 * 1_000_000,
            })
            .collect(),
    )
    .ok_or_else(shape)?;
    Ok(Batch {
        x,
        y,
        salt: seeded_salt(1, 0),
    })
}

/// Estimated peak RSS (bytes) of keygen + prove + verify for a step circuit
/// of these statistics: MicroSpartan pads the instance to the next power
/// of two of max(non-zeros, 2·variables, constraints) of Nova's circuit;
/// Spartan's compression needs far less (measured below), so its peak is
/// the folding's.
pub fn estimate_peak_bytes(s: &ShapeStats, c: Compression) -> f64 {
    let per = match c {
        Compression::MicroSpartan => BYTES_PER_PADDED_ELEMENT,
        Compression::Spartan => SPARTAN_BYTES_PER_PADDED_ELEMENT,
    };
    zkstep_circuits::sizing::padded_size(s) as f64 * per
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// One width to measure in this process.
#[derive(Clone, Debug)]
pub struct PointConfig {
    /// Layer width.
    pub width: usize,
    /// Batch size.
    pub batch: usize,
    /// Layers.
    pub layers: usize,
    /// Fold budget.
    pub budget: usize,
    /// Skip the width when its estimated peak exceeds this (GiB).
    pub mem_limit_gib: f64,
    /// Estimate only.
    pub dry_run: bool,
    /// Compression (None: the default for the fold).
    pub compression: Option<Compression>,
    /// How proofs bind checkpoints.
    pub scheme: CommitScheme,
    /// Optimizer name.
    pub optimizer: String,
    /// Loss name.
    pub loss: String,
}

/// Everything a child measures for one width (runs in this process).
pub fn run_point(c: PointConfig) -> Result<BenchPoint> {
    let PointConfig {
        width,
        batch,
        layers,
        budget,
        mem_limit_gib,
        dry_run,
        ..
    } = c;
    let spec = bench_spec(width, batch, layers, &c.optimizer, &c.loss)?;
    let weights = bench_weights(width, layers, &c.loss);
    let mut p = BenchPoint {
        width,
        batch,
        layers,
        weights,
        status: "ok".into(),
        msm_backend: zkstep_msm::route(1 << 20).name().into(),
        ..Default::default()
    };
    // a layout within the budget, or the fewest units a fold when even that is over
    let layout = match zkstep_circuits::sizing::layout_for_as(&spec, None, budget, c.compression, c.scheme) {
        Ok(l) => l,
        Err(_) => Layout::new(&spec, 1)?.with_commit_scheme(c.scheme),
    };
    let stats = shape_stats(&layout)?;
    let compression = c
        .compression
        .unwrap_or_else(|| zkstep_circuits::sizing::default_compression(&stats));
    p.compression = Some(compression.name().into());
    let est = estimate_peak_bytes(&stats, compression);
    p.rows_per_fold = Some(layout.rows);
    p.segments_per_row = Some(layout.segments);
    p.folds = Some(layout.num_folds());
    p.nonzeros_per_fold = Some(stats.nonzeros);
    p.estimated_peak_mib = Some(est / 1048576.0);
    if dry_run {
        // the folding layer's circuits depend only on the arity
        let (own1, own2) = (stats.layer.primary_constraints, stats.layer.secondary_constraints);
        let c1 = stats.constraints + own1;
        count_per_weight(&mut p, c1, own2, layout.num_folds());
        p.status = "estimated".into();
        p.note = Some(format!(
            "dry run: {} constraints in the step circuit + {own1} the folding layer's = {c1} a fold (+{own2} secondary), {} variables, {} non-zeros in the step circuit; peak ≈ {:.1} GiB",
            stats.constraints,
            stats.variables,
            stats.nonzeros,
            est / GIB
        ));
        return Ok(p);
    }
    if est > mem_limit_gib * GIB {
        p.status = "skipped".into();
        p.note = Some(format!(
            "needs about {:.1} GiB by estimate ({} output units per fold, {} constraints and {} non-zeros in the step circuit), more than the {:.1} GiB available",
            est / GIB,
            layout.rows,
            stats.constraints,
            stats.nonzeros,
            mem_limit_gib
        ));
        return Ok(p);
    }
    let before = Checkpoint::init(&spec, 1);
    let b = bench_batch(&spec, width, batch)?;
    // native reference step: at least 5 runs and 0.2 s
    let t = Instant::now();
    let mut reps = 0u32;
    let mut after = None;
    while reps < 5 || t.elapsed().as_secs_f64() < 0.2 {
        after = Some(step(&spec, &before, &b)?.after);
        reps += 1;
    }
    let native = t.elapsed().as_secs_f64() / reps as f64;
    let after = after.ok_or_else(|| CliError::Internal("no reference step ran".into()))?;
    p.native_step_s = Some(native);

    eprintln!("  width {width}: keygen (dev params) …");
    let t = Instant::now();
    // the same layout (a segmented one is found again by the budget search)
    let rows = (layout.segments == 1).then_some(layout.rows);
    let keys = keygen_with(&spec, rows, budget, Some(compression), c.scheme, Setup::Dev)?;
    p.keygen_s = Some(t.elapsed().as_secs_f64());
    let (c1, c2) = keys.pp.num_constraints();
    let (v1, _) = keys.pp.num_variables();
    let folds = keys.layout.num_folds();
    count_per_weight(&mut p, c1, c2, folds);
    p.variables_per_fold = Some(v1);
    p.witness_bytes = Some(v1 * 32);

    eprintln!("  width {width}: proving {folds} folds …");
    let (proof, tm) = prove_with_bar(&keys, &before, &after, &b, true)?;
    let prove_s = tm.witness_s + tm.fold_s + tm.compress_s;
    p.witness_s = Some(tm.witness_s);
    p.fold_s = Some(tm.fold_s);
    p.compress_s = Some(tm.compress_s);
    p.prove_s = Some(prove_s);
    p.overhead = Some(prove_s / native);

    eprintln!("  width {width}: verifying …");
    let pbytes = proof_bytes(&keys, &proof)?;
    p.proof_bytes = Some(pbytes.len());
    let vk =
        zkstep_verifier::read_verifying_key(&verifying_key_bytes(&keys)?).map_err(|source| {
            CliError::SelfCheck {
                what: "own verifying key",
                source,
            }
        })?;
    let pf = zkstep_verifier::read_proof(&pbytes).map_err(|source| CliError::SelfCheck {
        what: "own proof",
        source,
    })?;
    let mut ms = vec![];
    let mut verified = true;
    for i in 0..6 {
        match zkstep_verifier::verify(&vk, &pf, None) {
            Ok((_, d)) if i > 0 => ms.push(d.as_secs_f64() * 1e3),
            Ok(_) => {}
            Err(e) => {
                verified = false;
                p.note = Some(format!("the proof did not verify: {e}"));
                break;
            }
        }
    }
    p.verified = verified;
    p.verify_ms = (!ms.is_empty()).then(|| median(ms));
    drop(keys);

    eprintln!("  width {width}: timing an MSM of {v1} random scalars …");
    let ns = zkstep_msm::measure_ns_per_point(v1, 3, width as u64);
    let limit = ns * 1e-9 * (v1 + c1) as f64 * folds as f64;
    p.msm_points = Some(v1);
    p.msm_ns_per_point = Some(ns);
    p.msm_limit_s = Some(limit);
    p.fold_over_msm_limit = Some(tm.fold_s / limit);
    p.peak_rss_mib = peak_rss_mib();
    if !verified {
        p.status = "failed".into();
    }
    Ok(p)
}

/// Run every width of `cfg` in child processes of this executable and
/// gather the report.
pub fn run_report(cfg: &BenchConfig) -> Result<BenchReport> {
    let exe = std::env::current_exe().map_err(CliError::NoExecutable)?;
    let machine = Machine::here();
    eprintln!(
        "zkstep bench: widths {:?}, batch {}, {} layer(s), {} with {}, fold budget {}, MSM {}, memory limit {:.1} GiB\nmachine: {}",
        cfg.widths,
        cfg.batch,
        cfg.layers,
        cfg.optimizer,
        cfg.loss,
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

/// Run every width in a child process of `exe` (`zkstep bench-point …`).
pub fn run_children(exe: &Path, cfg: &BenchConfig) -> Vec<BenchPoint> {
    let n = cfg.widths.len();
    let mut out = vec![];
    for (i, &w) in cfg.widths.iter().enumerate() {
        eprintln!(
            "[{}/{n}] width {w}, batch {}, {} layer(s) …",
            i + 1,
            cfg.batch,
            cfg.layers
        );
        let t = Instant::now();
        let child = Command::new(exe)
            .args(["bench-point", "--width", &w.to_string()])
            .args(["--batch", &cfg.batch.to_string()])
            .args(["--layers", &cfg.layers.to_string()])
            .args(["--optimizer", &cfg.optimizer, "--loss", &cfg.loss])
            .args(["--fold-budget", &cfg.fold_budget.to_string()])
            .args(["--msm", &cfg.msm])
            .args(["--mem-limit-gib", &cfg.mem_limit_gib.to_string()])
            .args(cfg.dry_run.then_some("--dry-run"))
            .args([
                "--compression",
                cfg.compression.as_deref().unwrap_or("auto"),
            ])
            .args(["--commit-scheme", &cfg.commit_scheme])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .output();
        let failed = |note: String| BenchPoint {
            width: w,
            batch: cfg.batch,
            layers: cfg.layers,
            weights: bench_weights(w, cfg.layers, &cfg.loss),
            status: "failed".into(),
            note: Some(note),
            msm_backend: cfg.msm.clone(),
            ..Default::default()
        };
        let p = match child {
            Err(e) => failed(format!("could not start {}: {e}", exe.display())),
            Ok(o) if o.status.success() => {
                let s = String::from_utf8_lossy(&o.stdout);
                match s.lines().rev().find_map(|l| serde_json::from_str(l).ok()) {
                    Some(p) => p,
                    None => failed("the child printed no result".into()),
                }
            }
            Ok(o) => failed(describe_exit(&o.status)),
        };
        match p.status.as_str() {
            "ok" => eprintln!(
                "[{}/{n}] width {w}: done in {:.0} s (prove {:.1} s, verify {:.1} ms, {} bytes)",
                i + 1,
                t.elapsed().as_secs_f64(),
                p.prove_s.unwrap_or(f64::NAN),
                p.verify_ms.unwrap_or(f64::NAN),
                p.proof_bytes.unwrap_or(0)
            ),
            s => eprintln!(
                "[{}/{n}] width {w}: {s}: {}",
                i + 1,
                p.note.as_deref().unwrap_or("")
            ),
        }
        out.push(p);
    }
    out
}

fn describe_exit(st: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (_, Some(9)) => {
            "the child was killed (SIGKILL), most likely by the out-of-memory killer".into()
        }
        (_, Some(s)) => format!("the child died of signal {s}"),
        (Some(c), _) => format!("the child exited with status {c} (its error is above)"),
        _ => "the child failed".into(),
    }
}

/// Constraints per fold (primary: step circuit + Nova's augmented circuit;
/// secondary), the step's total, per weight and per multiply-accumulate.
fn count_per_weight(p: &mut BenchPoint, c1: usize, c2: usize, folds: usize) {
    p.constraints_per_fold = Some(c1);
    p.secondary_constraints_per_fold = Some(c2);
    p.total_constraints = Some(c1 * folds);
    p.constraints_per_weight = Some((c1 * folds) as f64 / p.weights as f64);
    p.constraints_per_mac = Some((c1 * folds) as f64 / (p.weights * p.batch) as f64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_grows_with_the_padded_instance() {
        let s = |nonzeros| ShapeStats {
            constraints: 100_000,
            variables: 50_000,
            second_variables: 5_000,
            third_variables: 1_000,
            nonzeros,
            layer: zkstep_circuits::sizing::layer_overhead(47).unwrap(),
        };
        for c in [Compression::Spartan, Compression::MicroSpartan] {
            // 2¹⁸ against 2²⁰ with the layer's non-zeros (102,603 at arity 47 since format 28)
            assert!(estimate_peak_bytes(&s(100_000), c) < estimate_peak_bytes(&s(500_000), c));
            assert_eq!(estimate_peak_bytes(&s(1), c), estimate_peak_bytes(&s(2), c));
        }
        let s = s(300_000);
        assert!(
            estimate_peak_bytes(&s, Compression::Spartan)
                < estimate_peak_bytes(&s, Compression::MicroSpartan)
        );
    }
}
