//! `zkstep bench`: what proving one training step costs per layer width.
//!
//! The parent runs every width in a child process (`zkstep bench-point`, a
//! hidden subcommand) so that each width's peak RSS is its own and one
//! width running out of memory cannot take the others down. Before keygen
//! the child synthesises the fold's shape, estimates the prover's peak
//! memory from it, and skips the width with a note when that exceeds the
//! memory available. Each point reports the circuit's size, every phase's
//! time, the proof, the verification (with the standalone verifier crate),
//! the native reference step and the MSM cost on this machine.

use crate::error::{ProverError, Result};
use crate::ivc::{keygen, proof_bytes, prove, verifying_key_bytes, Setup};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use zkstep_circuits::sizing::shape_stats;
use zkstep_circuits::Layout;
use zkstep_core::format::write_atomic;
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};

/// Peak RSS per element of MicroSpartan's padded instance (bytes), fitted
/// to this project's width sweep (keygen + prove + verify in one process):
/// 2²¹ → 4.0 GiB, 2²² → 7.6 GiB, 2²³ → 15 GiB; rounded up.
pub const BYTES_PER_PADDED_ELEMENT: f64 = 2.0 * 1024.0;
/// Nova's augmented circuit on top of ours: constraints, variables and
/// matrix non-zeros. The non-zeros are the only term that decides the
/// padding in practice; 300k is the value the sweep's 2²¹/2²² split pins
/// down (between 291k and 303k).
pub const NOVA_OVERHEAD: (usize, usize, usize) = (10_600, 10_700, 300_000);

/// One width's measurements. Every field is present in the JSON; the
/// measured ones are `null` when the width was skipped or failed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct BenchPoint {
    /// Layer width n (every layer n → n).
    pub width: usize,
    /// Batch size.
    pub batch: usize,
    /// Dense layers.
    pub layers: usize,
    /// `ok`, `skipped` or `failed`.
    pub status: String,
    /// Why a width was skipped or failed.
    pub note: Option<String>,
    /// Output units per fold.
    pub rows_per_fold: Option<usize>,
    /// Folds (IVC steps).
    pub folds: Option<usize>,
    /// Nova's primary circuit per fold (ours + the augmented circuit).
    pub constraints_per_fold: Option<usize>,
    /// Nova's secondary circuit per fold.
    pub secondary_constraints_per_fold: Option<usize>,
    /// Witness variables per fold (primary).
    pub variables_per_fold: Option<usize>,
    /// Non-zeros of our step circuit's matrices (memory follows these).
    pub nonzeros_per_fold: Option<usize>,
    /// Constraints per fold times folds.
    pub total_constraints: Option<usize>,
    /// Weights of the model (Σ n·n).
    pub weights: usize,
    /// Total constraints ÷ weights.
    pub constraints_per_weight: Option<f64>,
    /// Total constraints ÷ multiply-accumulates of the forward pass (weights × batch).
    pub constraints_per_mac: Option<f64>,
    /// One fold's witness in bytes (32 per variable).
    pub witness_bytes: Option<usize>,
    /// Estimated peak RSS before running (MiB).
    pub estimated_peak_mib: Option<f64>,
    /// Keygen (dev params), seconds.
    pub keygen_s: Option<f64>,
    /// Reference executor + witness generation, seconds.
    pub witness_s: Option<f64>,
    /// All folds, seconds.
    pub fold_s: Option<f64>,
    /// Compression, seconds.
    pub compress_s: Option<f64>,
    /// witness + fold + compress, seconds.
    pub prove_s: Option<f64>,
    /// Verification with the verifier crate, median of 5 after a warm-up (ms).
    pub verify_ms: Option<f64>,
    /// Whether the proof verified.
    pub verified: bool,
    /// Proof file size in bytes.
    pub proof_bytes: Option<usize>,
    /// Peak RSS of the child process (MiB).
    pub peak_rss_mib: Option<f64>,
    /// One native reference step of the same model, seconds.
    pub native_step_s: Option<f64>,
    /// prove_s ÷ native_step_s.
    pub overhead: Option<f64>,
    /// MSM backend the prover ran with (`cpu` or `gpu`).
    pub msm_backend: String,
    /// Points of the MSM timed (= variables per fold).
    pub msm_points: Option<usize>,
    /// Measured MSM cost at that size, random full-width scalars (ns/point).
    pub msm_ns_per_point: Option<f64>,
    /// The MSMs every fold must do (its witness W and cross term T) at that cost, times folds (s).
    pub msm_limit_s: Option<f64>,
    /// fold_s ÷ msm_limit_s: how far folding is from the MSM limit.
    pub fold_over_msm_limit: Option<f64>,
}

/// The machine a benchmark ran on.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Logical cores available.
    pub cores: usize,
    /// Total memory (GiB).
    pub memory_gib: f64,
    /// GPU used for MSMs, if any.
    pub gpu: Option<String>,
}

impl Machine {
    /// This machine.
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

    /// One line for reports.
    pub fn describe(&self) -> String {
        format!(
            "{} ({} logical cores), {:.0} GiB RAM, {}",
            self.cpu,
            self.cores,
            self.memory_gib,
            self.gpu.as_deref().unwrap_or("no GPU")
        )
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

/// The benchmark model: `layers` dense layers width → width (ReLU between,
/// identity last), MSE, SGD with lr 0.01.
pub fn bench_spec(width: usize, batch: usize, layers: usize) -> Result<ModelSpec> {
    let mut toml = format!("batch_size = {batch}\n[optimizer]\nlr = 0.01\n");
    for l in 0..layers {
        let act = if l + 1 == layers { "identity" } else { "relu" };
        toml +=
            &format!("[[layers]]\ninputs = {width}\noutputs = {width}\nactivation = \"{act}\"\n");
    }
    Ok(ModelSpec::from_toml_str(&toml)?)
}

/// Deterministic inputs in [−1, 1) and targets in [0, 1) for the bench model.
pub fn bench_batch(width: usize, batch: usize) -> Result<Batch> {
    let shape = || ProverError::Invalid(format!("no {batch}×{width} batch"));
    let x = Matrix::from_vec(
        batch,
        width,
        (0..batch * width)
            .map(|i| ((i * 7919) % 2001) as i64 * 1_000_000 - 1_000_000_000)
            .collect(),
    )
    .ok_or_else(shape)?;
    let y = Matrix::from_vec(
        batch,
        width,
        (0..batch * width)
            .map(|i| ((i * 104729) % 1001) as i64 * 1_000_000)
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
/// of two of max(non-zeros, 2·variables, constraints) of Nova's circuit.
pub fn estimate_peak_bytes(s: &zkstep_circuits::sizing::ShapeStats) -> f64 {
    let (c, v, nz) = NOVA_OVERHEAD;
    let n = (s.nonzeros + nz)
        .max(2 * (s.variables + v))
        .max(s.constraints + c)
        .next_power_of_two();
    n as f64 * BYTES_PER_PADDED_ELEMENT
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Everything a child measures for one width (runs in this process).
pub fn run_point(
    width: usize,
    batch: usize,
    layers: usize,
    budget: usize,
    mem_limit_bytes: f64,
    dry_run: bool,
) -> Result<BenchPoint> {
    let spec = bench_spec(width, batch, layers)?;
    let weights = width * width * layers;
    let mut p = BenchPoint {
        width,
        batch,
        layers,
        weights,
        status: "ok".into(),
        msm_backend: zkstep_msm::route(1 << 20).name().into(),
        ..Default::default()
    };
    // a layout within the budget, or one unit per fold when even that is over
    let layout = match zkstep_circuits::sizing::fit(&spec, budget) {
        Ok(l) => l,
        Err(_) => Layout::new(&spec, 1)?,
    };
    let stats = shape_stats(&layout)?;
    let est = estimate_peak_bytes(&stats);
    p.rows_per_fold = Some(layout.rows);
    p.folds = Some(layout.num_folds());
    p.nonzeros_per_fold = Some(stats.nonzeros);
    p.estimated_peak_mib = Some(est / 1048576.0);
    if dry_run {
        p.status = "estimated".into();
        p.note = Some(format!(
            "dry run: {} constraints, {} variables, {} non-zeros in the step circuit; peak ≈ {:.1} GiB",
            stats.constraints,
            stats.variables,
            stats.nonzeros,
            est / 1073741824.0
        ));
        return Ok(p);
    }
    if est > mem_limit_bytes {
        p.status = "skipped".into();
        p.note = Some(format!(
            "needs about {:.1} GiB by estimate ({} output units per fold, {} constraints and {} non-zeros in the step circuit), more than the {:.1} GiB available",
            est / 1073741824.0,
            layout.rows,
            stats.constraints,
            stats.nonzeros,
            mem_limit_bytes / 1073741824.0
        ));
        return Ok(p);
    }
    let before = Checkpoint::init(&spec, 1);
    let b = bench_batch(width, batch)?;
    // native reference step: at least 5 runs and 0.2 s
    let t = Instant::now();
    let mut reps = 0u32;
    let mut after = None;
    while reps < 5 || t.elapsed().as_secs_f64() < 0.2 {
        after = Some(step(&spec, &before, &b)?.after);
        reps += 1;
    }
    let native = t.elapsed().as_secs_f64() / reps as f64;
    let after = after.ok_or_else(|| ProverError::Invalid("no reference step ran".into()))?;
    p.native_step_s = Some(native);

    eprintln!("  width {width}: keygen (dev params) …");
    let t = Instant::now();
    let keys = keygen(&spec, Some(layout.rows), budget, Setup::Dev)?;
    p.keygen_s = Some(t.elapsed().as_secs_f64());
    let (c1, c2) = keys.pp.num_constraints();
    let (v1, _) = keys.pp.num_variables();
    let folds = keys.layout.num_folds();
    p.constraints_per_fold = Some(c1);
    p.secondary_constraints_per_fold = Some(c2);
    p.variables_per_fold = Some(v1);
    p.witness_bytes = Some(v1 * 32);
    p.total_constraints = Some(c1 * folds);
    p.constraints_per_weight = Some((c1 * folds) as f64 / weights as f64);
    p.constraints_per_mac = Some((c1 * folds) as f64 / (weights * batch) as f64);

    eprintln!("  width {width}: proving {folds} folds …");
    let (proof, tm) = prove(&keys, &before, &after, &b, true)?;
    let prove_s = tm.witness_s + tm.fold_s + tm.compress_s;
    p.witness_s = Some(tm.witness_s);
    p.fold_s = Some(tm.fold_s);
    p.compress_s = Some(tm.compress_s);
    p.prove_s = Some(prove_s);
    p.overhead = Some(prove_s / native);

    eprintln!("  width {width}: verifying …");
    let pbytes = proof_bytes(&keys, &proof)?;
    p.proof_bytes = Some(pbytes.len());
    let vk = zkstep_verifier::read_verifying_key(&verifying_key_bytes(&keys)?)
        .map_err(|e| ProverError::Invalid(format!("own verifying key: {e}")))?;
    let pf = zkstep_verifier::read_proof(&pbytes)
        .map_err(|e| ProverError::Invalid(format!("own proof: {e}")))?;
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

/// What `zkstep bench` was asked to do.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchConfig {
    /// Widths, in order.
    pub widths: Vec<usize>,
    /// Batch size.
    pub batch: usize,
    /// Layers.
    pub layers: usize,
    /// Fold budget (constraints of one step circuit).
    pub fold_budget: usize,
    /// MSM backend asked for.
    pub msm: String,
    /// Memory limit used to skip widths (GiB).
    pub mem_limit_gib: f64,
    /// Only estimate each width's size and memory; prove nothing.
    pub dry_run: bool,
}

/// The whole report: machine, configuration, one point per width.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchReport {
    /// zkstep version.
    pub zkstep_version: String,
    /// When (UTC, seconds since the epoch).
    pub unix_time: u64,
    /// Where.
    pub machine: Machine,
    /// What.
    pub config: BenchConfig,
    /// Results.
    pub points: Vec<BenchPoint>,
}

/// Memory available for a width now (bytes): MemAvailable less 0.5 GiB.
pub fn available_bytes() -> f64 {
    meminfo_kib("MemAvailable:").map_or(f64::INFINITY, |k| k as f64 * 1024.0 - 536870912.0)
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
            .args(["--fold-budget", &cfg.fold_budget.to_string()])
            .args(["--msm", &cfg.msm])
            .args(["--mem-limit-gib", &cfg.mem_limit_gib.to_string()])
            .args(cfg.dry_run.then_some("--dry-run"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .output();
        let failed = |note: String| BenchPoint {
            width: w,
            batch: cfg.batch,
            layers: cfg.layers,
            weights: w * w * cfg.layers,
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

fn f(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |x| format!("{x:.digits$}"))
}
fn u(v: Option<usize>) -> String {
    v.map_or("–".into(), group_thousands)
}
fn group_thousands(n: usize) -> String {
    let s = n.to_string();
    let mut o = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            o.push(',');
        }
        o.push(c);
    }
    o
}
fn time_s(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(x) if x < 1e-3 => format!("{:.0} µs", x * 1e6),
        Some(x) if x < 1.0 => format!("{:.1} ms", x * 1e3),
        Some(x) => format!("{x:.1} s"),
    }
}

/// Column headers and one row of cells per point (table, CSV and Markdown share them).
pub fn table(points: &[BenchPoint]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let head = vec![
        "width",
        "batch",
        "layers",
        "status",
        "rows/fold",
        "folds",
        "constraints/fold",
        "total constraints",
        "per weight",
        "per MAC",
        "witness/fold",
        "keygen",
        "witness",
        "fold",
        "compress",
        "verify ms",
        "proof B",
        "peak RSS GiB",
        "native step",
        "prove ÷ native",
        "MSM ns/pt",
        "fold ÷ MSM limit",
    ];
    let rows = points
        .iter()
        .map(|p| {
            vec![
                p.width.to_string(),
                p.batch.to_string(),
                p.layers.to_string(),
                p.status.clone(),
                u(p.rows_per_fold),
                u(p.folds),
                u(p.constraints_per_fold),
                u(p.total_constraints),
                f(p.constraints_per_weight, 0),
                f(p.constraints_per_mac, 1),
                p.witness_bytes
                    .map_or("–".into(), |b| format!("{:.1} MB", b as f64 / 1e6)),
                time_s(p.keygen_s),
                time_s(p.witness_s),
                time_s(p.fold_s),
                time_s(p.compress_s),
                f(p.verify_ms, 1),
                u(p.proof_bytes),
                f(p.peak_rss_mib.map(|m| m / 1024.0), 1),
                time_s(p.native_step_s),
                p.overhead.map_or("–".into(), |o| format!("{o:.2e}")),
                f(p.msm_ns_per_point, 0),
                f(p.fold_over_msm_limit, 1),
            ]
        })
        .collect();
    (head, rows)
}

/// The terminal table (aligned columns) and notes for skipped/failed widths.
pub fn render_terminal(points: &[BenchPoint]) -> String {
    let (head, rows) = table(points);
    let mut wid: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            wid[i] = wid[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:>w$}", w = wid[i]))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut s = line(head.iter().map(|h| h.to_string()).collect()) + "\n";
    for r in rows {
        s += &(line(r) + "\n");
    }
    for p in points.iter().filter(|p| p.note.is_some()) {
        s += &format!(
            "width {}: {}: {}\n",
            p.width,
            p.status,
            p.note.as_deref().unwrap_or("")
        );
    }
    s
}

/// CSV: every field of [`BenchPoint`], one row per width.
pub fn render_csv(points: &[BenchPoint]) -> Result<String> {
    let mut s = String::new();
    for (i, p) in points.iter().enumerate() {
        let v = serde_json::to_value(p).map_err(|e| ProverError::Invalid(e.to_string()))?;
        let obj = v
            .as_object()
            .ok_or_else(|| ProverError::Invalid("bench point is not an object".into()))?;
        if i == 0 {
            s += &obj.keys().cloned().collect::<Vec<_>>().join(",");
            s.push('\n');
        }
        let cells: Vec<String> = obj
            .values()
            .map(|x| match x {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(t) => format!("\"{}\"", t.replace('"', "\"\"")),
                o => o.to_string(),
            })
            .collect();
        s += &cells.join(",");
        s.push('\n');
    }
    Ok(s)
}

/// The seed's self-reported GPU figures: (width, prove s, memory GB, proof KB).
pub const SEED_FIGURES: [(usize, f64, f64, f64); 4] = [
    (512, 1.2, 16.0, 45.0),
    (1024, 2.4, 32.0, 90.0),
    (2048, 4.8, 64.0, 180.0),
    (4096, 9.6, 128.0, 360.0),
];

/// The Markdown section BENCHMARKS.md carries between its markers.
pub fn render_markdown(report: &BenchReport, command: &str, plot: Option<&str>) -> String {
    let (head, rows) = table(&report.points);
    let mut s = format!(
        "Measured by `{command}` on **{}**, zkstep {}.\n\n",
        report.machine.describe(),
        report.zkstep_version
    );
    s += &format!("| {} |\n", head.join(" | "));
    s += &format!("|{}\n", " ---: |".repeat(head.len()));
    for r in rows {
        s += &format!("| {} |\n", r.join(" | "));
    }
    for p in report.points.iter().filter(|p| p.note.is_some()) {
        s += &format!(
            "\n- width {} {}: {}",
            p.width,
            p.status,
            p.note.as_deref().unwrap_or("")
        );
    }
    s += "\n\n";
    if let Some(pl) = plot {
        s += &format!(
            "![prove time, verify time, peak memory and proof size against width]({pl})\n\n"
        );
    }
    s += "Beside them, **seed 002's figures: theirs, self-reported, on an unnamed GPU, not reproduced here**:\n\n";
    s += "| width | prove (theirs) | memory (theirs) | proof (theirs) | prove (ours) | peak RSS (ours) | proof (ours) |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (w, t, m, k) in SEED_FIGURES {
        let ours = report
            .points
            .iter()
            .find(|p| p.width == w && p.status == "ok");
        s += &format!(
            "| {w} | {t} s | {m} GB | {k} KB | {} | {} | {} |\n",
            ours.map_or("not run here".into(), |p| time_s(p.prove_s)),
            ours.map_or("–".into(), |p| f(p.peak_rss_mib.map(|m| m / 1024.0), 1)
                + " GiB"),
            ours.map_or("–".into(), |p| format!(
                "{:.1} KB",
                p.proof_bytes.unwrap_or(0) as f64 / 1000.0
            )),
        );
    }
    s
}

/// Check that `path` can take [`splice_markdown`] (readable, both markers).
pub fn splice_check(path: &Path) -> Result<()> {
    splice(path, "", false)
}

/// Replace the text between `<!-- zkstep-bench:begin -->` and
/// `<!-- zkstep-bench:end -->` in `path` (which must have both markers).
pub fn splice_markdown(path: &Path, section: &str) -> Result<()> {
    splice(path, section, true)
}

fn splice(path: &Path, section: &str, write: bool) -> Result<()> {
    const BEGIN: &str = "<!-- zkstep-bench:begin -->";
    const END: &str = "<!-- zkstep-bench:end -->";
    let text = std::fs::read_to_string(path).map_err(|e| ProverError::io(path, e))?;
    let (Some(a), Some(b)) = (text.find(BEGIN), text.find(END)) else {
        return Err(ProverError::Invalid(format!(
            "{}: has no `{BEGIN}` … `{END}` markers to write the results between",
            path.display()
        )));
    };
    if b < a {
        return Err(ProverError::Invalid(format!(
            "{}: the end marker comes before the begin marker",
            path.display()
        )));
    }
    if write {
        let new = format!("{}{BEGIN}\n{section}\n{}", &text[..a], &text[b..]);
        write_atomic(path, new.as_bytes())?;
    }
    Ok(())
}

/// An SVG with four panels against width: prove time, verify time, peak
/// RSS and proof size (completed widths only).
pub fn render_svg(report: &BenchReport) -> Result<String> {
    use plotters::prelude::*;
    let pts: Vec<&BenchPoint> = report.points.iter().filter(|p| p.status == "ok").collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, 760)).into_drawing_area();
        let err = |e: &dyn std::fmt::Display| ProverError::Invalid(format!("plot: {e}"));
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let root = root
            .titled(
                &format!(
                    "zkstep: one training step, batch {}, {} layer(s) — {}",
                    report.config.batch,
                    report.config.layers,
                    report.machine.describe()
                ),
                ("sans-serif", 16),
            )
            .map_err(|e| err(&e))?;
        let panels = root.split_evenly((2, 2));
        type Getter = fn(&BenchPoint) -> Option<f64>;
        let series: [(&str, Getter); 4] = [
            ("prove time (s)", |p| p.prove_s),
            ("verify time (ms)", |p| p.verify_ms),
            ("peak RSS (GiB)", |p| p.peak_rss_mib.map(|m| m / 1024.0)),
            ("proof size (KB)", |p| {
                p.proof_bytes.map(|b| b as f64 / 1000.0)
            }),
        ];
        for (area, (name, get)) in panels.iter().zip(series) {
            // x is log₂(width), labelled with the width itself
            let data: Vec<(f64, f64)> = pts
                .iter()
                .filter_map(|p| get(p).map(|y| ((p.width as f64).log2(), y)))
                .collect();
            let xmax = data.iter().map(|d| d.0).fold(1.0, f64::max) + 0.5;
            let xmin = data.iter().map(|d| d.0).fold(xmax, f64::min) - 0.5;
            let ymax = data.iter().map(|d| d.1).fold(0.0, f64::max) * 1.15 + 1e-9;
            let mut chart = ChartBuilder::on(area)
                .caption(name, ("sans-serif", 15))
                .margin(12)
                .x_label_area_size(34)
                .y_label_area_size(56)
                .build_cartesian_2d(xmin..xmax, 0.0..ymax)
                .map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .x_desc("layer width")
                .x_labels((xmax - xmin).ceil() as usize + 1)
                .x_label_formatter(&|x| {
                    if (x - x.round()).abs() < 1e-6 {
                        format!("{:.0}", 2f64.powf(x.round()))
                    } else {
                        String::new()
                    }
                })
                .draw()
                .map_err(|e| err(&e))?;
            chart
                .draw_series(LineSeries::new(data.iter().copied(), &BLUE))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(
                    data.iter()
                        .map(|&(x, y)| Circle::new((x, y), 4, BLUE.filled())),
                )
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BenchPoint {
        BenchPoint {
            width: 16,
            batch: 4,
            layers: 1,
            weights: 256,
            status: "ok".into(),
            prove_s: Some(1.5),
            verify_ms: Some(60.0),
            peak_rss_mib: Some(4096.0),
            proof_bytes: Some(14000),
            msm_backend: "cpu".into(),
            ..Default::default()
        }
    }

    #[test]
    fn csv_has_every_field_once() {
        let csv = render_csv(&[sample()]).expect("csv");
        let head: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
        let v = serde_json::to_value(sample()).expect("json");
        assert_eq!(head.len(), v.as_object().expect("object").len());
        assert_eq!(csv.lines().count(), 2);
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group_thousands(1234567), "1,234,567");
        assert_eq!(group_thousands(999), "999");
    }

    #[test]
    fn estimate_grows_with_the_padded_instance() {
        let s = |nonzeros| zkstep_circuits::sizing::ShapeStats {
            constraints: 100_000,
            variables: 50_000,
            nonzeros,
        };
        assert!(estimate_peak_bytes(&s(200_000)) < estimate_peak_bytes(&s(300_000)));
        assert_eq!(estimate_peak_bytes(&s(1)), estimate_peak_bytes(&s(2)));
    }
}
