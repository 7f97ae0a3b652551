//! The error type of the `zkstep` CLI: one enum for the whole crate.
//!
//! Every message names the file (or flag) and the problem; `main` prints it
//! after `error: ` and exits with status 1.

use std::path::PathBuf;
use zkstep_core::CoreError;
use zkstep_prover::ProverError;

/// Result alias for the CLI.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// Everything a `zkstep` subcommand can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// From zkstep-core (already names the file / layer / tensor).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// From the prover library (keygen, proving, key files).
    #[error(transparent)]
    Prover(#[from] ProverError),
    /// A circuit layout could not be built (bench).
    #[error(transparent)]
    Circuit(#[from] zkstep_circuits::CircuitError),
    /// A file or directory operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Refusing to overwrite something of the user's.
    #[error("{}: already exists; refusing to overwrite it (pass --force to replace it)", .0.display())]
    Exists(PathBuf),
    /// `--msm` names a backend this process cannot use.
    #[error("--msm {backend}: {source}")]
    Msm {
        /// The backend asked for.
        backend: &'static str,
        /// Why it cannot be used.
        source: zkstep_msm::MsmError,
    },
    /// `--ptau-dir` is not a directory.
    #[error("{}: not a directory of ppot_pruned_NN.ptau files", .0.display())]
    NotPtauDir(PathBuf),
    /// The keys were made for another spec.
    #[error("{}: these keys were made for another spec (digest {keys_digest}, this spec's is {spec_digest})", path.display())]
    KeysForAnotherSpec {
        /// The proving key file.
        path: PathBuf,
        /// The keys' spec digest.
        keys_digest: String,
        /// The given spec's digest.
        spec_digest: String,
    },
    /// The batch file is for another step than the before-checkpoint.
    #[error("{}: this batch is for step {batch_step}, the before-checkpoint is step {before_step}", path.display())]
    BatchForAnotherStep {
        /// The batch file.
        path: PathBuf,
        /// The batch's step.
        batch_step: u64,
        /// The before-checkpoint's step.
        before_step: u64,
    },
    /// A run manifest that is not JSON of the right shape.
    #[error("{}: not a valid run manifest: {source}", path.display())]
    ManifestJson {
        /// The manifest.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// A manifest of another format or version.
    #[error("{}: not a zkstep run manifest (format {format:?}, version {version})", path.display())]
    ManifestFormat {
        /// The manifest.
        path: PathBuf,
        /// Its `format`.
        format: String,
        /// Its `version`.
        version: u32,
    },
    /// The manifest's spec digest is not its spec file's.
    #[error("{}: the manifest's spec digest does not match {}", path.display(), spec.display())]
    ManifestSpec {
        /// The manifest.
        path: PathBuf,
        /// The spec file it names.
        spec: PathBuf,
    },
    /// A commitment in the manifest is not a field element in hex.
    #[error("{}: malformed {what} {value:?}", path.display())]
    ManifestHex {
        /// The manifest.
        path: PathBuf,
        /// Which commitment.
        what: &'static str,
        /// The text found.
        value: String,
    },
    /// Consecutive steps of the manifest do not chain.
    #[error("{}: step {step}'s c_after is not step {next}'s c_before: the run does not chain", path.display())]
    RunNotChained {
        /// The manifest.
        path: PathBuf,
        /// The earlier step.
        step: u64,
        /// The step after it.
        next: u64,
    },
    /// A commitment in the manifest is not that of the file it names.
    #[error("{}: step {step}'s {what} in the manifest does not match its file", path.display())]
    ManifestCommitment {
        /// The manifest.
        path: PathBuf,
        /// The step.
        step: u64,
        /// Which commitment.
        what: &'static str,
    },
    /// The dataset's widths are not the spec's.
    #[error("{data}: the dataset has {inputs} inputs and {outputs} outputs per sample, the spec expects {want_inputs} and {want_outputs}")]
    DatasetShape {
        /// The dataset, as named.
        data: String,
        /// Its inputs per sample.
        inputs: usize,
        /// Its outputs per sample.
        outputs: usize,
        /// The spec's input width.
        want_inputs: usize,
        /// The spec's output width.
        want_outputs: usize,
    },
    /// `zkstep bench` with nothing to measure.
    #[error("--widths, --batch and --layers must be non-empty and positive")]
    BenchArgs,
    /// A `--from-json` file that is not a bench report.
    #[error("{}: not a zkstep bench report: {source}", path.display())]
    NotABenchReport {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// Some widths of a bench run failed.
    #[error("widths {0:?} failed (see the notes above); the others are reported")]
    BenchFailed(Vec<usize>),
    /// A Markdown file without the bench markers.
    #[error("{}: has no `{begin}` … `{end}` markers to write the results between", path.display())]
    NoMarkers {
        /// The Markdown file.
        path: PathBuf,
        /// The begin marker.
        begin: &'static str,
        /// The end marker.
        end: &'static str,
    },
    /// A Markdown file whose markers are in the wrong order.
    #[error("{}: the end marker comes before the begin marker", .0.display())]
    MarkersReversed(PathBuf),
    /// The bench's own key or proof did not read back.
    #[error("{what}: {source}")]
    SelfCheck {
        /// `own verifying key` or `own proof`.
        what: &'static str,
        /// The verifier's error.
        source: zkstep_verifier::VerifyError,
    },
    /// The bench model's batch could not be built.
    #[error("no {batch}×{width} batch")]
    BenchBatch {
        /// Batch size.
        batch: usize,
        /// Width.
        width: usize,
    },
    /// The running executable could not be found (bench's children).
    #[error("cannot find the zkstep executable: {0}")]
    NoExecutable(std::io::Error),
    /// The SVG plot could not be drawn.
    #[error("plot: {0}")]
    Plot(String),
    /// JSON that could not be encoded.
    #[error("cannot encode the {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// The serde error.
        source: serde_json::Error,
    },
    /// A check of the CLI's own work failed (a bug, not the user's input).
    #[error("internal error: {0}")]
    Internal(String),
}

impl CliError {
    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        CliError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A JSON encoding error while encoding `what`.
    pub fn encode(what: &'static str) -> impl Fn(serde_json::Error) -> Self {
        move |source| CliError::Encode { what, source }
    }
}
