//! Training runs: the loop behind `zkstep train` and `zkstep demo`, the
//! `run.json` manifest that `prove-run` will read, the lock a command holds
//! on a run directory, and the checks before a run is written or resumed.
//!
//! Files are written atomically and the manifest is rewritten (atomically)
//! only after a step's checkpoint and batch are on disk, so a failure mid-run
//! leaves the completed steps intact and no partial file behind; `train
//! --resume` continues from there.

use crate::error::{CliError, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use zkstep_circuits::files::Statement;
use zkstep_core::commit::{commit_batch, commit_params};
use zkstep_core::data::make_batch;
use zkstep_core::format::{
    read_checkpoint, read_input, write_atomic, write_batch, write_checkpoint, Dataset, Input,
};
use zkstep_core::poseidon::{fr_from_hex, fr_to_hex, Fr};
use zkstep_core::{step, Batch, Checkpoint, ModelSpec};

/// Manifest format name.
pub const RUN_FORMAT: &str = "zkstep-run";
/// Manifest file name inside a run directory.
pub const MANIFEST: &str = "run.json";
/// Copy of the spec inside a run directory.
pub const SPEC_FILE: &str = "spec.toml";
/// Lock file inside a run directory (see [`RunLock`]).
pub const LOCK_FILE: &str = ".zkstep.lock";

/// File of θ_t inside a run directory.
pub fn ckpt_name(t: u64) -> String {
    format!("ckpt_{t}.safetensors")
}

/// File of step t's batch inside a run directory.
pub fn batch_name(t: u64) -> String {
    format!("batch_{t}.safetensors")
}

/// File of step t's proof inside a run directory (`prove-run`, `demo`).
pub fn proof_name(t: u64) -> String {
    format!("proof_{t}.zkstep")
}

/// File of the segment proof of steps t .. t + k inside a run directory
/// (`prove-segment`, `prove-run --segment`).
pub fn segment_name(t: u64, k: u64) -> String {
    format!("segment_{t}_{k}.zkstep")
}

/// The (t, k) of a file name `segment_{t}_{k}.zkstep` (canonical decimals only).
pub fn parse_segment_name(name: &str) -> Option<(u64, u64)> {
    let (t, k) = name
        .strip_prefix("segment_")?
        .strip_suffix(".zkstep")?
        .split_once('_')?;
    let (a, b): (u64, u64) = (t.parse().ok()?, k.parse().ok()?);
    (a.to_string() == t && b.to_string() == k).then_some((a, b))
}

/// The step in a file name `{prefix}{t}.safetensors` (canonical decimal only).
fn numbered(name: &str, prefix: &str) -> Option<u64> {
    let digits = name.strip_prefix(prefix)?.strip_suffix(".safetensors")?;
    let t: u64 = digits.parse().ok()?;
    (t.to_string() == digits).then_some(t)
}

/// An exclusive advisory lock on a run directory, held while this lives:
/// two commands writing one run (two `train`s, `train` and `prove-run`)
/// would interleave their files and manifests.
pub struct RunLock {
    // closing the file releases the lock; the file itself stays (removing
    // it would let a third command lock a new file while one holds the old)
    _file: std::fs::File,
}

impl RunLock {
    /// Lock `dir` (which must exist), or fail at once if another holds it.
    pub fn acquire(dir: &Path) -> Result<RunLock> {
        RunLock::take(dir, false)
    }

    /// A shared lock on `dir`: any number of provers (the shards of one
    /// run, each writing its own proof files atomically) hold it together,
    /// and none while a `train` holds the exclusive one.
    pub fn acquire_shared(dir: &Path) -> Result<RunLock> {
        RunLock::take(dir, true)
    }

    fn take(dir: &Path, shared: bool) -> Result<RunLock> {
        let path = dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| {
                if dir.is_dir() {
                    CliError::io(&path, e)
                } else {
                    CliError::NoRunDir(dir.to_path_buf())
                }
            })?;
        let locked = if shared {
            file.try_lock_shared()
        } else {
            file.try_lock()
        };
        match locked {
            Ok(()) => Ok(RunLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(CliError::RunLocked {
                dir: dir.to_path_buf(),
                lock: path,
            }),
            Err(std::fs::TryLockError::Error(e)) => Err(CliError::io(&path, e)),
        }
    }
}

/// The step after `steps` steps from `start`, or an error if it would not
/// fit a step number.
pub fn end_step(start: u64, steps: u64) -> Result<u64> {
    start
        .checked_add(steps)
        .ok_or(CliError::StepOverflow { start, steps })
}

/// Refuse, unless `force`, to replace any existing file that training from
/// step `t0` to step `end` into `dir` would write: every checkpoint after
/// θ_{t0} and every batch, and for a new run (`fresh`) also θ_{t0},
/// `spec.toml` and `run.json` (a resumed run rewrites its own `run.json`).
/// Looks at the directory's entries, not at every name the steps would
/// take, so a long run costs no more to check than a short one.
pub fn refuse_run_outputs(dir: &Path, t0: u64, end: u64, fresh: bool, force: bool) -> Result<()> {
    if force {
        return Ok(());
    }
    if fresh && dir.join(MANIFEST).exists() {
        return Err(CliError::RunExists(dir.join(MANIFEST)));
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(CliError::io(dir, e)),
    };
    let writes = |name: &str| {
        if let Some(t) = numbered(name, "ckpt_") {
            (t > t0 || (fresh && t == t0)) && t <= end
        } else if let Some(t) = numbered(name, "batch_") {
            t0 <= t && t < end
        } else {
            fresh && name == SPEC_FILE
        }
    };
    let mut clash: Vec<PathBuf> = vec![];
    for entry in entries {
        let entry = entry.map_err(|e| CliError::io(dir, e))?;
        if entry.file_name().to_str().is_some_and(writes) {
            clash.push(entry.path());
        }
    }
    clash.sort();
    match clash.into_iter().next() {
        Some(path) => Err(CliError::Exists(path)),
        None => Ok(()),
    }
}

/// One completed step of a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StepEntry {
    /// Step index t (θ_t → θ_{t+1}).
    pub step: u64,
    /// File of θ_t, relative to the run directory.
    pub before: String,
    /// File of θ_{t+1}.
    pub after: String,
    /// File of the batch.
    pub batch: String,
    /// Commit(θ_t).
    pub c_before: String,
    /// Commit(θ_{t+1}).
    pub c_after: String,
    /// Commit(batch, salt).
    pub c_batch: String,
    /// MSE loss of θ_t on this batch.
    pub loss: f64,
}

/// `run.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunManifest {
    /// Always [`RUN_FORMAT`].
    pub format: String,
    /// Manifest version.
    pub version: u32,
    /// Spec file, relative to the run directory.
    pub spec: String,
    /// The spec's digest.
    pub spec_digest: String,
    /// The dataset the batches were drawn from, as given.
    pub data: String,
    /// Seed of the batch schedule.
    pub seed: u64,
    /// Completed steps, in order.
    pub steps: Vec<StepEntry>,
}

impl RunManifest {
    /// Read and check a manifest.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = read_input(path, Input::Json)?;
        let m: RunManifest =
            serde_json::from_slice(&bytes).map_err(|source| CliError::ManifestJson {
                path: path.to_path_buf(),
                source,
            })?;
        if m.format != RUN_FORMAT || m.version != 1 {
            return Err(CliError::ManifestFormat {
                path: path.to_path_buf(),
                format: m.format,
                version: m.version,
            });
        }
        Ok(m)
    }

    /// The run's spec (`dir/spec.toml`), which must be the one whose digest
    /// the manifest (at `mpath`) records.
    pub fn spec(&self, dir: &Path, mpath: &Path) -> Result<ModelSpec> {
        let s = ModelSpec::from_file(&dir.join(&self.spec))?;
        if fr_to_hex(&s.digest()) != self.spec_digest {
            return Err(CliError::ManifestSpec {
                path: mpath.to_path_buf(),
                spec: dir.join(&self.spec),
            });
        }
        Ok(s)
    }

    /// Insist that consecutive steps chain: c_after(t) = c_before(t+1).
    pub fn check_chain(&self, mpath: &Path) -> Result<()> {
        for w in self.steps.windows(2) {
            if w[0].c_after != w[1].c_before || w[0].step.checked_add(1) != Some(w[1].step) {
                return Err(CliError::RunNotChained {
                    path: mpath.to_path_buf(),
                    step: w[0].step,
                    next: w[1].step,
                });
            }
        }
        Ok(())
    }

    fn write(&self, path: &Path) -> Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(CliError::encode("manifest"))?;
        write_atomic(path, &json)?;
        Ok(())
    }
}

/// The statement the manifest (at `mpath`) records for step `e`.
pub fn statement(s: &ModelSpec, mpath: &Path, e: &StepEntry) -> Result<Statement> {
    Ok(Statement {
        spec_digest: s.digest(),
        c_before: manifest_fr(mpath, "c_before", &e.c_before)?,
        c_after: manifest_fr(mpath, "c_after", &e.c_after)?,
        c_batch: manifest_fr(mpath, "c_batch", &e.c_batch)?,
        step: e.step,
    })
}

/// The statement the manifest records for a segment of consecutive steps
/// (`entries`, non-empty): from the first's c_before to the last's c_after
/// over their batches, in order.
pub fn segment_statement(
    s: &ModelSpec,
    layout: &zkstep_circuits::Layout,
    mpath: &Path,
    entries: &[StepEntry],
) -> Result<zkstep_circuits::files::SegmentStatement> {
    let sts = entries
        .iter()
        .map(|e| statement(s, mpath, e))
        .collect::<Result<Vec<_>>>()?;
    let (Some(first), Some(last)) = (sts.first(), sts.last()) else {
        return Err(CliError::Usage("a segment of no steps".into()));
    };
    Ok(zkstep_circuits::files::SegmentStatement {
        spec_digest: s.digest(),
        c_start: first.c_before,
        c_end: last.c_after,
        batches: layout.batches_digest(&sts.iter().map(|st| st.c_batch).collect::<Vec<_>>()),
        step: first.step,
        steps: sts.len() as u64,
    })
}

/// A commitment of the manifest (at `mpath`) as a field element.
pub fn manifest_fr(mpath: &Path, what: &'static str, hex: &str) -> Result<Fr> {
    fr_from_hex(hex).ok_or_else(|| CliError::ManifestHex {
        path: mpath.to_path_buf(),
        what,
        value: hex.to_string(),
    })
}

/// Insist that `file`, named for step `step` in the manifest at `mpath`,
/// commits to what the manifest says (`want`, its `what`).
pub fn check_commitment(
    mpath: &Path,
    step: u64,
    what: &'static str,
    file: &Path,
    got: Fr,
    want: Fr,
) -> Result<()> {
    if got != want {
        return Err(CliError::ManifestCommitment {
            path: mpath.to_path_buf(),
            step,
            what,
            file: file.to_path_buf(),
        });
    }
    Ok(())
}

/// Insist that the file at `path` holds step `want` (by its metadata).
pub fn check_file_step(path: &Path, found: u64, want: u64) -> Result<()> {
    if found != want {
        return Err(CliError::FileStep {
            path: path.to_path_buf(),
            found,
            want,
        });
    }
    Ok(())
}

/// Where `train --resume` continues a run from.
pub struct ResumePoint {
    /// The run's spec.
    pub spec: ModelSpec,
    /// The run's last checkpoint.
    pub ckpt: Checkpoint,
    /// The run's manifest.
    pub manifest: RunManifest,
}

/// Read the run in `dir` for `train --resume`: its manifest, its spec (whose
/// digest the manifest records), its steps chained, and its last checkpoint,
/// which must be the step after the last completed one and commit to that
/// step's c_after.
pub fn resume_point(dir: &Path) -> Result<ResumePoint> {
    let mpath = dir.join(MANIFEST);
    let manifest = RunManifest::read(&mpath)?;
    let spec = manifest.spec(dir, &mpath)?;
    manifest.check_chain(&mpath)?;
    let Some(last) = manifest.steps.last() else {
        return Err(CliError::RunEmpty(mpath));
    };
    let path = dir.join(&last.after);
    let ckpt = read_checkpoint(&path, &spec)?;
    let want = end_step(last.step, 1)?;
    check_file_step(&path, ckpt.step, want)?;
    let c_after = manifest_fr(&mpath, "c_after", &last.c_after)?;
    check_commitment(
        &mpath,
        last.step,
        "c_after",
        &path,
        commit_params(&spec, &ckpt),
        c_after,
    )?;
    Ok(ResumePoint {
        spec,
        ckpt,
        manifest,
    })
}

/// How to run training.
pub struct TrainOptions {
    /// Number of steps.
    pub steps: u64,
    /// Seed of the batch schedule.
    pub seed: u64,
    /// Where to write files; `None` keeps everything in memory.
    pub out_dir: Option<PathBuf>,
    /// Salts: `None` draws fresh random salts (hiding); `Some(seed)` derives them (reproducible demos).
    pub salt_seed: Option<u64>,
    /// Name of the dataset, for the manifest.
    pub data_name: String,
    /// The run being continued (`train --resume`): its steps stay in
    /// `run.json`, and its spec and first checkpoint are not written again.
    /// `None` starts a new run.
    pub resume: Option<RunManifest>,
}

/// The salt of step t.
fn salt_for(opts: &TrainOptions, t: u64) -> Fr {
    match opts.salt_seed {
        Some(seed) => zkstep_core::model::seeded_salt(seed, t),
        None => zkstep_core::model::random_salt(&mut rand::thread_rng()),
    }
}

/// Train for `opts.steps` steps from `start`, calling `on_step` after each.
/// Returns the final checkpoint and the steps this call completed (a
/// resumed run's earlier steps stay in `run.json`).
pub fn train(
    spec: &ModelSpec,
    start: &Checkpoint,
    ds: &Dataset,
    opts: &TrainOptions,
    mut on_step: impl FnMut(&StepEntry),
) -> Result<(Checkpoint, Vec<StepEntry>)> {
    if ds.x.cols != spec.input_width() || ds.y.cols != spec.output_width() {
        return Err(CliError::DatasetShape {
            data: opts.data_name.clone(),
            inputs: ds.x.cols,
            outputs: ds.y.cols,
            want_inputs: spec.input_width(),
            want_outputs: spec.output_width(),
        });
    }
    start.validate(spec)?;
    let t0 = start.step;
    let end = end_step(t0, opts.steps)?;
    let fresh = opts.resume.is_none();
    let manifest = opts
        .resume
        .clone()
        .unwrap_or_else(|| RunWriter::fresh_manifest(spec, &opts.data_name, opts.seed));
    let earlier = manifest.steps.len();
    let mut writer = match &opts.out_dir {
        Some(dir) if fresh => Some(RunWriter::create(dir, spec, start, manifest)?),
        Some(dir) => Some(RunWriter::resume(dir, manifest)),
        None => None,
    };
    let mut kept = vec![];
    let mut ck = start.clone();
    let mut c_before = commit_params(spec, &ck);
    for t in t0..end {
        let batch = make_batch(ds, spec.batch_size, t, opts.seed, salt_for(opts, t));
        let trace = step(spec, &ck, &batch).map_err(|source| CliError::TrainStep { step: t, source })?;
        let c_after = commit_params(spec, &trace.after);
        let entry = StepEntry::new(spec, t, c_before, c_after, &batch, trace.loss.loss);
        match writer.as_mut() {
            Some(w) => w.push(spec, &entry, &batch, &trace.after)?,
            None => kept.push(entry.clone()),
        }
        on_step(&entry);
        ck = trace.after;
        c_before = c_after;
    }
    let steps = match writer {
        Some(w) => w.manifest.steps.into_iter().skip(earlier).collect(),
        None => kept,
    };
    Ok((ck, steps))
}

impl StepEntry {
    /// The entry of step t (file names from t, commitments as hex).
    pub fn new(spec: &ModelSpec, t: u64, c_before: Fr, c_after: Fr, batch: &Batch, loss: f64) -> Self {
        StepEntry {
            step: t,
            before: ckpt_name(t),
            after: ckpt_name(t + 1),
            batch: batch_name(t),
            c_before: fr_to_hex(&c_before),
            c_after: fr_to_hex(&c_after),
            c_batch: fr_to_hex(&commit_batch(spec, batch)),
            loss,
        }
    }
}

/// A run directory written one step at a time (`zkstep train`, and the
/// Python package's `Recorder`): each step's batch and checkpoint are on
/// disk before the manifest that names them is rewritten.
pub struct RunWriter {
    dir: PathBuf,
    /// The manifest as last written.
    pub manifest: RunManifest,
}

impl RunWriter {
    /// A new run in `dir`: the spec, the first checkpoint, then `manifest`
    /// (its steps, if any, are kept as they are).
    pub fn create(dir: &Path, spec: &ModelSpec, start: &Checkpoint, manifest: RunManifest) -> Result<Self> {
        write_atomic(&dir.join(SPEC_FILE), spec.to_toml().as_bytes())?;
        write_checkpoint(&dir.join(ckpt_name(start.step)), spec, start)?;
        manifest.write(&dir.join(MANIFEST))?;
        Ok(RunWriter {
            dir: dir.to_path_buf(),
            manifest,
        })
    }

    /// A fresh manifest for `spec` (no steps yet).
    pub fn fresh_manifest(spec: &ModelSpec, data: &str, seed: u64) -> RunManifest {
        RunManifest {
            format: RUN_FORMAT.into(),
            version: 1,
            spec: SPEC_FILE.into(),
            spec_digest: fr_to_hex(&spec.digest()),
            data: data.into(),
            seed,
            steps: vec![],
        }
    }

    /// Continue a run whose files and manifest are already in `dir`.
    pub fn resume(dir: &Path, manifest: RunManifest) -> Self {
        RunWriter {
            dir: dir.to_path_buf(),
            manifest,
        }
    }

    /// Record one step: its batch, θ_{t+1}, then the manifest with `entry`.
    pub fn push(&mut self, spec: &ModelSpec, entry: &StepEntry, batch: &Batch, after: &Checkpoint) -> Result<()> {
        write_batch(&self.dir.join(&entry.batch), spec, batch, entry.step)?;
        write_checkpoint(&self.dir.join(&entry.after), spec, after)?;
        self.manifest.steps.push(entry.clone());
        self.manifest.write(&self.dir.join(MANIFEST))
    }
}
