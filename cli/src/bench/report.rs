//! What a `zkstep bench` run records: one [`BenchPoint`] per width, the
//! [`Machine`] and the [`BenchConfig`], together a [`BenchReport`] (the
//! `--json` file, which `--from-json` reads back).

use crate::error::{CliError, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use zkstep_core::format::{read_input, Input};

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
    /// Compression of the folded proof (`spartan`, `microspartan`).
    #[serde(default)]
    pub compression: Option<String>,
    /// Folds each output unit is cut into (absent or 1: whole units).
    #[serde(default)]
    pub segments_per_row: Option<usize>,
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
    /// Compression asked for (None: each width's default).
    #[serde(default)]
    pub compression: Option<String>,
    /// How proofs bind checkpoints (`chain` or `kzg`).
    #[serde(default = "default_scheme")]
    pub commit_scheme: String,
    /// Optimizer (`zkstep bench --optimizer`).
    #[serde(default = "default_optimizer")]
    pub optimizer: String,
    /// Loss (`zkstep bench --loss`).
    #[serde(default = "default_loss")]
    pub loss: String,
}

fn default_scheme() -> String {
    "chain".into()
}

fn default_optimizer() -> String {
    "sgd".into()
}

fn default_loss() -> String {
    "mse".into()
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

impl BenchReport {
    /// A saved `zkstep bench --json` report (an untrusted file: errors name it).
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = read_input(path, Input::Json)?;
        serde_json::from_slice(&bytes).map_err(|source| CliError::NotABenchReport {
            path: path.to_path_buf(),
            source,
        })
    }
}
