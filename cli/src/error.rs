//! The error type of the `zkstep` CLI: one enum for the whole crate.
//!
//! Every message names the file (or flag) and the problem; `main` prints it
//! after `error: ` and exits with [`CliError::exit_code`]: 1 where a claim
//! was checked and is false, 2 where the command could not do its work.

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
    /// A spec that no fold within the budget can prove (`init`), named.
    #[error("{}: {source}", path.display())]
    Unprovable {
        /// The spec file.
        path: PathBuf,
        /// Why.
        source: zkstep_circuits::CircuitError,
    },
    /// A file or directory operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Not enough memory for what was asked, said before starting it.
    #[error("{what} needs about {need_gib:.1} GiB of memory, {have_gib:.1} GiB is available here ({limit}); use a machine with more memory or a smaller spec")]
    NotEnoughMemory {
        /// What would need it.
        what: String,
        /// Its estimate (GiB).
        need_gib: f64,
        /// What the machine allows now (GiB).
        have_gib: f64,
        /// Which limit that is.
        limit: String,
    },
    /// Flags that do not make sense together or with this run.
    #[error("{0}")]
    Usage(String),
    /// Refusing to overwrite something of the user's.
    #[error("{}: already exists; refusing to overwrite it (pass --force to replace it)", .0.display())]
    Exists(PathBuf),
    /// A new run into a directory that holds one (its `run.json`).
    #[error("{}: a run is already here; refusing to replace it (pass --force to start over; `zkstep train --resume` continues it)", .0.display())]
    RunExists(PathBuf),
    /// A proof file that is not this step's proof under these keys.
    #[error("{}: exists but is not a proof of this step under these keys; refusing to replace it (pass --force to replace it)", .0.display())]
    StaleProof(PathBuf),
    /// Another zkstep command holds the run directory's lock.
    #[error("{}: another zkstep command is using this run directory (it holds the lock on {}); wait for it to finish", dir.display(), lock.display())]
    RunLocked {
        /// The run directory.
        dir: PathBuf,
        /// Its lock file.
        lock: PathBuf,
    },
    /// A run directory that does not exist.
    #[error("{}: no such run directory", .0.display())]
    NoRunDir(PathBuf),
    /// `train --resume` where there is no run.
    #[error("{}: no run to resume (no run.json); train without --resume first", .0.display())]
    NoRunToResume(PathBuf),
    /// `train --resume` without `--data`, where the run's dataset cannot be read.
    #[error("{}: the run's dataset {data:?} cannot be read ({source}); pass --data", manifest.display())]
    ResumeData {
        /// The run's manifest.
        manifest: PathBuf,
        /// The dataset it names.
        data: String,
        /// Why it cannot be read.
        source: Box<CoreError>,
    },
    /// `train --resume` on a run with no completed step.
    #[error("{}: the run has no completed step to resume from; start it over with --force", .0.display())]
    RunEmpty(PathBuf),
    /// The step numbers would pass the largest step number.
    #[error(
        "--steps {steps} from step {start} would go past step {}, the last step number",
        u64::MAX
    )]
    StepOverflow {
        /// The first step.
        start: u64,
        /// Steps asked for.
        steps: u64,
    },
    /// A checkpoint or batch of another step than the run needs there.
    #[error("{}: holds step {found}, the run needs step {want} here", path.display())]
    FileStep {
        /// The file.
        path: PathBuf,
        /// The step its metadata says.
        found: u64,
        /// The step the manifest says.
        want: u64,
    },
    /// A text file that is not UTF-8.
    #[error("{}: not UTF-8 text", .0.display())]
    NotUtf8(PathBuf),
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
    /// `zkstep verify-run` found problems (each printed).
    #[error("{}: {count} problem(s) found (listed above); the run is not verified", run.display())]
    RunRejected {
        /// The run directory.
        run: PathBuf,
        /// How many problems.
        count: usize,
    },
    /// `zkstep verify-round`: the first thing about the round that fails.
    #[error("REJECTED: {}: {why}", round.display())]
    RoundRejected {
        /// The round directory.
        round: PathBuf,
        /// What failed.
        why: String,
    },
    /// The verifying key is for another spec than the run's.
    #[error("{}: the verifying key is for another spec than the run's ({})", vk.display(), spec.display())]
    KeyForAnotherSpec {
        /// The key.
        vk: PathBuf,
        /// The run's spec.
        spec: PathBuf,
    },
    /// A file is not what it should be (the verifier's message).
    #[error("{}: {msg}", path.display())]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// Consecutive steps of the manifest do not chain.
    #[error("{}: step {step} and the entry after it (step {next}) do not chain: c_after(t) must be c_before(t+1), and the steps consecutive", path.display())]
    RunNotChained {
        /// The manifest.
        path: PathBuf,
        /// The earlier step.
        step: u64,
        /// The step after it.
        next: u64,
    },
    /// A commitment in the manifest is not that of the file it names.
    #[error("{}: step {step}'s {what} in the manifest does not match {}", path.display(), file.display())]
    ManifestCommitment {
        /// The manifest.
        path: PathBuf,
        /// The step.
        step: u64,
        /// Which commitment.
        what: &'static str,
        /// The file whose commitment it is not.
        file: PathBuf,
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
    /// A proof just made does not verify: the proving key (or its pair) changed on disk.
    #[error("{}: proving key corrupt: {why}; nothing was written (make the keys again with `zkstep keygen`)", path.display())]
    ProvingKeyCorrupt {
        /// The proving key.
        path: PathBuf,
        /// What failed.
        why: String,
    },
    /// The reference step failed while training (a value left its declared range).
    #[error("training step {step} (ckpt_{step} → ckpt_{}): {source}", step + 1)]
    TrainStep {
        /// The step that failed.
        step: u64,
        /// Why (names the layer, the tensor and the index).
        source: CoreError,
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
    /// The exit status, the same rule as `zkstep-verify`'s: **1** when a
    /// claim was checked and is false (`verify-run` found a problem or the
    /// key is for another spec; `prove` was handed an after-checkpoint the
    /// declared step does not give), **2** for everything else: input that
    /// cannot be used (a malformed, missing or hostile file, a file that
    /// would be overwritten, a corrupt key), a usage error, or what this
    /// machine refuses (memory, I/O); the message says which.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::RunRejected { .. }
            | CliError::RoundRejected { .. }
            | CliError::KeyForAnotherSpec { .. }
            | CliError::Prover(ProverError::NotTheStep(_)) => 1,
            _ => 2,
        }
    }

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
