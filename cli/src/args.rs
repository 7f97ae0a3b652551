//! The `zkstep` command line as clap parses it: one arguments struct per
//! subcommand. Nothing here runs anything; [`crate::cmd::dispatch`] does.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use zkstep_circuits::engine::Compression;
use zkstep_circuits::state::CommitScheme;
use zkstep_msm::Backend;

/// zkstep: zero-knowledge proofs of neural-network training steps.
#[derive(Parser, Debug)]
#[command(name = "zkstep", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create a random initial checkpoint (He-uniform for ReLU layers, Xavier for identity) for a spec.
    Init(InitArgs),
    /// Import a float (f32/f16/bf16/f64) safetensors checkpoint, e.g. a PyTorch state_dict, by quantisation.
    Import(ImportArgs),
    /// Train with the reference executor, writing every checkpoint, batch and a run.json manifest.
    Train(TrainArgs),
    /// Print the commitment of a checkpoint (Commit(θ): its Poseidon chain, what run.json records;
    /// with --keys, as proofs under those keys name it) or a batch (Commit(batch, salt)).
    Commit(CommitArgs),
    /// Show a safetensors file: metadata, tensors, shapes, value ranges (and its commitment with --spec).
    Inspect(InspectArgs),
    /// Make proving and verifying keys for a spec (writes proving.key and verifying.key).
    Keygen(KeygenArgs),
    /// Prove one training step: AFTER = Step(BEFORE, BATCH) under SPEC.
    Prove(ProveArgs),
    /// Prove every step of a run (run.json), skipping steps whose proof exists and verifies.
    ProveRun(ProveRunArgs),
    /// Prove k consecutive steps of a run as one segment proof (θ_t → θ_{t+k}
    /// over the k batches; the proof's size and verify time do not grow with k).
    ProveSegment(ProveSegmentArgs),
    /// Verify every proof of a run (run.json) against its manifest and the
    /// commitment chain from its first checkpoint to its last, naming every
    /// gap, forgery, duplicate or reordering.
    VerifyRun(VerifyRunArgs),
    /// Merge a federated round: the global model as the reputation-weighted mean of the nodes'
    /// checkpoints (a round file names τ, the previous global model and each node's checkpoint
    /// and reputation), models farther than τ from the previous global model weighted zero.
    Merge(MergeArgs),
    /// Prove a round's merge (π_merge): GLOBAL is the merge of the round file's checkpoints
    /// under their reputations and τ (keys from `zkstep keygen --merge N`).
    ProveMerge(ProveMergeArgs),
    /// Verify a whole federated round (DIR: round.toml, merge.zkstep, keys/): the merge proof,
    /// every node's run (each node's checkpoint in the round file is the last of a proven run
    /// directory) started from the previous global model and ending at the merge's input.
    VerifyRound(VerifyRoundArgs),
    /// Print the built-in demo spec (a starting point for your own).
    ExampleSpec,
    /// Measure what proving one step costs per layer width (each width in its own process):
    /// constraints, keygen/prove/verify time, proof size, peak memory, native step, MSM cost.
    Bench(BenchArgs),
    /// One width of `zkstep bench` (run by it in a child process; prints one JSON line).
    #[command(hide = true)]
    BenchPoint(BenchPointArgs),
    /// Run the built-in demo: train a 2-16-16-1 MLP on two moons, then keygen (dev params),
    /// prove the last step and verify the proof.
    Demo(DemoArgs),
}

/// A checkpoint file to write, with the flags every writing command shares.
#[derive(Args, Debug)]
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

/// `zkstep init`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// Model spec (TOML).
    #[arg(long)]
    pub spec: PathBuf,
    /// Seed of the random initialisation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The fold budget keygen will use (its --fold-budget): a spec that no fold within it can
    /// prove (a batch too large for one fold) is refused now, not at keygen after training.
    #[arg(long, default_value_t = zkstep_circuits::DEFAULT_FOLD_BUDGET)]
    pub fold_budget: usize,
    /// Output file and flags.
    #[command(flatten)]
    pub out: OutFile,
}

/// `zkstep merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Model spec (TOML) every checkpoint of the round is of.
    #[arg(long)]
    pub spec: PathBuf,
    /// Round file (TOML): `tau` (or `tau_fx`), `previous` (the previous global checkpoint) and
    /// `[[nodes]]` with `checkpoint` and `reputation`; paths relative to the round file.
    #[arg(long)]
    pub round: PathBuf,
    /// The global checkpoint to write, and flags.
    #[command(flatten)]
    pub out: OutFile,
}

/// `zkstep import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Model spec (TOML).
    #[arg(long)]
    pub spec: PathBuf,
    /// Float safetensors file: tensors `l1.w`, `l1.b`, … or PyTorch's `<prefix>.weight`, `<prefix>.bias`.
    #[arg(long = "in")]
    pub input: PathBuf,
    /// PyTorch optimizer state flattened to safetensors: `state.{i}.exp_avg`,
    /// `state.{i}.exp_avg_sq`, `state.{i}.step` (Adam/AdamW) or
    /// `state.{i}.momentum_buffer` (momentum), i the parameter's index in
    /// `model.parameters()`. Without it the state starts at zero, step 0.
    #[arg(long)]
    pub optimizer_state: Option<PathBuf>,
    /// Output file and flags.
    #[command(flatten)]
    pub out: OutFile,
}

/// `zkstep train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Model spec (TOML). Not with --resume (the run's spec.toml is used).
    #[arg(long, required_unless_present = "resume", conflicts_with = "resume")]
    pub spec: Option<PathBuf>,
    /// Starting checkpoint (from `zkstep init` or `zkstep import`). Not with
    /// --resume (the run's last checkpoint is used).
    #[arg(long, required_unless_present = "resume", conflicts_with = "resume")]
    pub ckpt: Option<PathBuf>,
    /// Dataset: safetensors with `X` [N, inputs] and `Y` [N, outputs], float (quantised) or i64
    /// fixed point. With --resume, default: the dataset the run's run.json names.
    #[arg(long, required_unless_present = "resume")]
    pub data: Option<PathBuf>,
    /// Number of steps to train (with --resume: this many more steps after the run's last).
    #[arg(long)]
    pub steps: u64,
    /// Directory for ckpt_{t}.safetensors, batch_{t}.safetensors and run.json.
    #[arg(long)]
    pub out_dir: PathBuf,
    /// Seed of the batch schedule (batch salts are always fresh random values).
    /// Not with --resume (the run's seed is used).
    #[arg(long, default_value_t = 0, conflicts_with = "resume")]
    pub seed: u64,
    /// Continue the run in --out-dir from its last completed step (after a crash, or
    /// to train longer): its last checkpoint and spec are checked against run.json,
    /// its earlier steps are kept, and --steps more steps are added.
    #[arg(long)]
    pub resume: bool,
    /// Replace existing files: without --resume, start over, replacing the run in
    /// --out-dir (spec.toml, checkpoints, batches, run.json); with --resume, replace
    /// files past the run's last completed step (e.g. left by a crash).
    #[arg(long)]
    pub force: bool,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `zkstep commit`.
#[derive(Args, Debug)]
pub struct CommitArgs {
    /// A zkstep checkpoint or batch file.
    pub file: PathBuf,
    /// The spec the file was made for.
    #[arg(long)]
    pub spec: PathBuf,
    /// A keys directory: a checkpoint's commitment as proofs under these keys name it (keys on
    /// KZG points: the hash of its point under the powers of the directory's points.key, which
    /// its verifying.key names; chain keys: the same as without).
    #[arg(long)]
    pub keys: Option<PathBuf>,
    /// Print a JSON object instead of the bare hex.
    #[arg(long)]
    pub json: bool,
}

/// `zkstep inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// Any safetensors file.
    pub file: PathBuf,
    /// The spec, to also print the commitment.
    #[arg(long)]
    pub spec: Option<PathBuf>,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `zkstep keygen`.
#[derive(Args, Debug)]
pub struct KeygenArgs {
    /// Model spec (TOML).
    #[arg(long)]
    pub spec: PathBuf,
    /// Directory for the keys.
    #[arg(long)]
    pub out: PathBuf,
    /// Directory of `ppot_pruned_NN.ptau` files from a powers-of-tau ceremony. Without it the
    /// keys use dev params: a fresh random tau, sound only for whoever ran keygen.
    #[arg(long)]
    pub ptau_dir: Option<PathBuf>,
    /// Output units per fold (default: the fold size with the shortest estimated proof within
    /// --fold-budget, rows cut into segments where one unit is over it).
    #[arg(long)]
    pub rows: Option<usize>,
    /// Bound on one fold's constraints (prover memory follows the fold: ≈ 1 GB at 2¹⁷ with Spartan, ≈ 4 GB with MicroSpartan).
    #[arg(long, default_value_t = zkstep_circuits::DEFAULT_FOLD_BUDGET)]
    pub fold_budget: usize,
    /// Compression of the folded proof: auto (Spartan, the fastest proof at every fold size;
    /// its verifying key holds the fold's matrices), spartan or microspartan (ten times the
    /// compression time, a verifying key without the matrices).
    #[arg(long, default_value = "auto", value_parser = parse_compression)]
    pub compression: CompressionChoice,
    /// How proofs bind checkpoints: kzg (Commit(θ) a hash of θ's KZG point under these keys'
    /// powers, the circuit evaluating θ at a challenge; keygen writes the powers a verifier
    /// commits checkpoint files with as points.key, merge_points.key with --merge) or chain
    /// (Commit(θ) a Poseidon chain the circuit recomputes: about twice the constraints).
    #[arg(long, default_value = "kzg", value_parser = parse_scheme)]
    pub commit_scheme: CommitScheme,
    /// Make π_merge's keys for merges of N checkpoints of the spec (merge_proving.key and
    /// merge_verifying.key, dev params, Spartan) instead of a step's keys.
    #[arg(long, value_name = "N", conflicts_with_all = ["ptau_dir", "rows"])]
    pub merge: Option<usize>,
    /// Replace existing keys.
    #[arg(long)]
    pub force: bool,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `zkstep verify-round`.
#[derive(Args, Debug)]
pub struct VerifyRoundArgs {
    /// Round directory: round.toml (its nodes' checkpoints each the last of a run directory
    /// proven by `prove-run`), merge.zkstep (from `prove-merge`) and keys/.
    pub dir: PathBuf,
    /// The steps' verifying key [default: DIR/keys/verifying.key].
    #[arg(long)]
    pub vk: Option<PathBuf>,
    /// The merge's verifying key [default: DIR/keys/merge_verifying.key].
    #[arg(long)]
    pub merge_vk: Option<PathBuf>,
    /// The merge proof [default: DIR/merge.zkstep].
    #[arg(long)]
    pub merge_proof: Option<PathBuf>,
    /// Step keys on KZG points: the points file that commits each run's first and last
    /// checkpoints [default: points.key beside the steps' verifying key].
    #[arg(long)]
    pub points: Option<PathBuf>,
    /// Merge keys on KZG points: the points file that commits the round's checkpoints
    /// [default: merge_points.key beside the merge verifying key].
    #[arg(long)]
    pub merge_points: Option<PathBuf>,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `zkstep prove-merge`.
#[derive(Args, Debug)]
pub struct ProveMergeArgs {
    /// Model spec (TOML) every checkpoint of the round is of.
    #[arg(long)]
    pub spec: PathBuf,
    /// Directory holding merge_proving.key (and merge_verifying.key) from `zkstep keygen --merge N`.
    #[arg(long)]
    pub keys: PathBuf,
    /// Round file (TOML), as `zkstep merge` reads it.
    #[arg(long)]
    pub round: PathBuf,
    /// The global checkpoint (`zkstep merge --out`).
    #[arg(long)]
    pub global: PathBuf,
    /// Merge proof file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace `--out` if it exists.
    #[arg(long)]
    pub force: bool,
    /// Do not verify the proof with merge_verifying.key before writing it.
    #[arg(long)]
    pub no_check: bool,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `zkstep prove`.
#[derive(Args, Debug)]
pub struct ProveArgs {
    /// Model spec (TOML).
    #[arg(long)]
    pub spec: PathBuf,
    /// Keys directory (from `zkstep keygen`).
    #[arg(long)]
    pub keys: PathBuf,
    /// Checkpoint θ_t.
    #[arg(long)]
    pub before: PathBuf,
    /// Checkpoint θ_{t+1}.
    #[arg(long)]
    pub after: PathBuf,
    /// The batch of this step.
    #[arg(long)]
    pub batch: PathBuf,
    /// Proof file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace `--out` if it exists.
    #[arg(long)]
    pub force: bool,
    /// Do not verify the proof before writing it. By default it is read
    /// back and verified as `zkstep-verify` would (0.1–0.2 s with Spartan
    /// keys, 0.3 s with MicroSpartan keys), so that a corrupt
    /// proving key is named instead of leaving a proof no one can verify.
    #[arg(long)]
    pub no_check: bool,
    /// MSM backend: auto (GPU when present and the MSM is large), cpu or gpu.
    #[arg(long, default_value = "auto")]
    pub msm: Backend,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `zkstep prove-run`.
#[derive(Args, Debug)]
pub struct ProveRunArgs {
    /// The run, the keys and the output flags.
    #[command(flatten)]
    pub run: RunProving,
    /// Prove only shard I of N (0 ≤ I < N): unit u of the run (a step, or a
    /// segment with --segment) belongs to shard u mod N. N workers given
    /// 0/N … N−1/N prove the whole run between them, each writing its own
    /// files; rerunning a shard skips what exists and verifies.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Prove segments of K steps (one proof each, `segment_{t}_{K}.zkstep`;
    /// the last may be shorter) instead of one proof per step.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub segment: Option<u64>,
}

/// The flags of every command that proves a run's steps.
#[derive(Args, Debug)]
pub struct RunProving {
    /// Run directory (from `zkstep train`).
    #[arg(long)]
    pub run: PathBuf,
    /// Keys directory (from `zkstep keygen`).
    #[arg(long)]
    pub keys: PathBuf,
    /// MSM backend: auto (GPU when present and the MSM is large), cpu or gpu.
    #[arg(long, default_value = "auto")]
    pub msm: Backend,
    /// Replace proof files in the run that exist but are not proofs of their
    /// steps under these keys (e.g. proofs made with other keys).
    #[arg(long)]
    pub force: bool,
    /// Do not verify the proof before writing it. By default it is read
    /// back and verified as `zkstep-verify` would (0.1–0.2 s with Spartan
    /// keys, 0.3 s with MicroSpartan keys), so that a corrupt
    /// proving key is named instead of leaving a proof no one can verify.
    #[arg(long)]
    pub no_check: bool,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `I/N` with 0 ≤ I < N.
fn parse_shard(s: &str) -> std::result::Result<(u64, u64), String> {
    let bad = || format!("{s:?}: expected I/N with 0 ≤ I < N (e.g. 0/4)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i < n {
        Ok((i, n))
    } else {
        Err(bad())
    }
}

/// `zkstep prove-segment`.
#[derive(Args, Debug)]
pub struct ProveSegmentArgs {
    /// The run, the keys and the output flags.
    #[command(flatten)]
    pub run: RunProving,
    /// First step t of the segment.
    #[arg(long)]
    pub from: u64,
    /// Steps k in the segment (θ_t → θ_{t+k}, one proof).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub steps: u64,
}

/// `zkstep verify-run`.
#[derive(Args, Debug)]
pub struct VerifyRunArgs {
    /// Run directory (from `zkstep train`, proven by `zkstep prove-run`).
    #[arg(long)]
    pub run: PathBuf,
    /// Verifying key (from `zkstep keygen`).
    #[arg(long)]
    pub vk: PathBuf,
    /// Keys on KZG points (`keygen --commit-scheme kzg`): the points file that commits the run's
    /// first and last checkpoints (default: points.key beside --vk).
    #[arg(long)]
    pub points: Option<PathBuf>,
    /// Print a JSON report instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `zkstep bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Layer widths (every layer width → width).
    #[arg(long, value_delimiter = ',', default_value = "16,32,64,128,256,512")]
    pub widths: Vec<usize>,
    /// Batch size.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Dense layers (ReLU between them, identity last).
    #[arg(long, default_value_t = 1)]
    pub layers: usize,
    /// Optimizer: sgd (lr 0.01), momentum (lr 0.01, μ 0.9), adam or adamw (PyTorch's defaults).
    #[arg(long, default_value = "sgd", value_parser = ["sgd", "momentum", "adam", "adamw"])]
    pub optimizer: String,
    /// Loss: mse, or cross_entropy (the last layer is then a 10-class head, width → 10).
    #[arg(long, default_value = "mse", value_parser = ["mse", "cross_entropy"])]
    pub loss: String,
    /// Bound on one fold's constraints.
    #[arg(long, default_value_t = zkstep_circuits::DEFAULT_FOLD_BUDGET)]
    pub fold_budget: usize,
    /// Compression of the folded proof: auto (Spartan, the fastest proof at every fold size;
    /// its verifying key holds the fold's matrices), spartan or microspartan (ten times the
    /// compression time, a verifying key without the matrices).
    #[arg(long, default_value = "auto", value_parser = parse_compression)]
    pub compression: CompressionChoice,
    /// How proofs bind checkpoints: kzg or chain (see `zkstep keygen --commit-scheme`).
    #[arg(long, default_value = "kzg", value_parser = parse_scheme)]
    pub commit_scheme: CommitScheme,
    /// MSM backend: auto (GPU when present and the MSM is large), cpu or gpu.
    #[arg(long, default_value = "auto")]
    pub msm: Backend,
    /// Skip widths whose estimated peak memory exceeds this (GiB; default: what is available now).
    #[arg(long)]
    pub mem_limit_gib: Option<f64>,
    /// Write the full report (machine, configuration, every field of every width) as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write one CSV row per width.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write an SVG plot of prove time, verify time, peak memory and proof size against width.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Write the table into this Markdown file between its
    /// `<!-- zkstep-bench:begin -->` and `<!-- zkstep-bench:end -->` markers.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Replace existing --json/--csv/--plot files.
    #[arg(long)]
    pub force: bool,
    /// Prove nothing: synthesise each width's fold, count constraints per fold and per weight
    /// (the folding layer's own circuit included) and estimate peak memory.
    #[arg(long)]
    pub dry_run: bool,
    /// Run nothing: re-render the table, CSV, plot and Markdown from a saved --json report.
    #[arg(long, conflicts_with_all = ["json", "dry_run"])]
    pub from_json: Option<PathBuf>,
}

/// `zkstep bench-point` (hidden).
#[derive(Args, Debug)]
pub struct BenchPointArgs {
    /// Layer width.
    #[arg(long)]
    pub width: usize,
    /// Batch size.
    #[arg(long)]
    pub batch: usize,
    /// Layers.
    #[arg(long)]
    pub layers: usize,
    /// Optimizer.
    #[arg(long, default_value = "sgd")]
    pub optimizer: String,
    /// Loss.
    #[arg(long, default_value = "mse")]
    pub loss: String,
    /// Fold budget.
    #[arg(long)]
    pub fold_budget: usize,
    /// Compression of the folded proof: auto (Spartan, the fastest proof at every fold size;
    /// its verifying key holds the fold's matrices), spartan or microspartan (ten times the
    /// compression time, a verifying key without the matrices).
    #[arg(long, default_value = "auto", value_parser = parse_compression)]
    pub compression: CompressionChoice,
    /// How proofs bind checkpoints (kzg or chain).
    #[arg(long, default_value = "kzg", value_parser = parse_scheme)]
    pub commit_scheme: CommitScheme,
    /// MSM backend: auto (GPU when present and the MSM is large), cpu or gpu.
    #[arg(long, default_value = "auto")]
    pub msm: Backend,
    /// Memory limit (GiB).
    #[arg(long)]
    pub mem_limit_gib: f64,
    /// Estimate only.
    #[arg(long)]
    pub dry_run: bool,
}

/// `zkstep demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Number of training steps.
    #[arg(long, default_value_t = 60)]
    pub steps: u64,
    /// Also write the run (checkpoints, batches, run.json, keys, proof) to this directory.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Only train; skip keygen, proving and verifying.
    #[arg(long)]
    pub no_prove: bool,
    /// Replace an existing run, keys and proof in --out-dir.
    #[arg(long)]
    pub force: bool,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
    /// Bound on one fold's constraints (for tests: a smaller fold proves faster).
    // 2^16 keeps the demo's compression near 4 GB of memory
    #[arg(long, default_value_t = 1 << 16, hide = true)]
    pub fold_budget: usize,
}

/// `--compression`: auto (None: each fold's default), spartan or microspartan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressionChoice(pub Option<Compression>);

fn parse_scheme(s: &str) -> Result<CommitScheme, String> {
    CommitScheme::parse(s).ok_or_else(|| format!("`{s}`: expected chain or kzg"))
}

fn parse_compression(s: &str) -> Result<CompressionChoice, String> {
    match s {
        "auto" => Ok(CompressionChoice(None)),
        _ => Compression::parse(s)
            .map(|c| CompressionChoice(Some(c)))
            .ok_or_else(|| format!("`{s}`: expected auto, spartan or microspartan")),
    }
}
