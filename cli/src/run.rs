//! Training runs: the loop behind `zkstep train` and `zkstep demo`, and the
//! `run.json` manifest that `prove-run` will read.
//!
//! Files are written atomically and the manifest is rewritten (atomically)
//! only after a step's checkpoint and batch are on disk, so a failure mid-run
//! leaves the completed steps intact and no partial file behind.

use crate::error::{CliError, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use zkstep_core::commit::{commit_batch, commit_params};
use zkstep_core::data::make_batch;
use zkstep_core::format::{write_atomic, write_batch, write_checkpoint, Dataset};
use zkstep_core::poseidon::{fr_to_hex, Fr};
use zkstep_core::{step, Checkpoint, ModelSpec};

/// Manifest format name.
pub const RUN_FORMAT: &str = "zkstep-run";
/// Manifest file name inside a run directory.
pub const MANIFEST: &str = "run.json";
/// Copy of the spec inside a run directory.
pub const SPEC_FILE: &str = "spec.toml";

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
        let bytes = std::fs::read(path).map_err(|e| CliError::io(path, e))?;
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

    fn write(&self, path: &Path) -> Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(CliError::encode("manifest"))?;
        write_atomic(path, &json)?;
        Ok(())
    }
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
}

/// The salt of step t.
fn salt_for(opts: &TrainOptions, t: u64) -> Fr {
    match opts.salt_seed {
        Some(seed) => zkstep_core::model::seeded_salt(seed, t),
        None => zkstep_core::model::random_salt(&mut rand::thread_rng()),
    }
}

/// Train for `opts.steps` steps from `start`, calling `on_step` after each.
/// Returns the final checkpoint and the completed steps.
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
    let name = |t: u64| format!("ckpt_{t}.safetensors");
    let mut manifest = RunManifest {
        format: RUN_FORMAT.into(),
        version: 1,
        spec: SPEC_FILE.into(),
        spec_digest: fr_to_hex(&spec.digest()),
        data: opts.data_name.clone(),
        seed: opts.seed,
        steps: vec![],
    };
    if let Some(dir) = &opts.out_dir {
        write_atomic(&dir.join(SPEC_FILE), spec.to_toml().as_bytes())?;
        write_checkpoint(&dir.join(name(t0)), spec, start)?;
        manifest.write(&dir.join(MANIFEST))?;
    }
    let mut ck = start.clone();
    let mut c_before = commit_params(spec, &ck);
    for t in t0..t0 + opts.steps {
        let batch = make_batch(ds, spec.batch_size, t, opts.seed, salt_for(opts, t));
        let trace = step(spec, &ck, &batch)?;
        let c_after = commit_params(spec, &trace.after);
        let entry = StepEntry {
            step: t,
            before: name(t),
            after: name(t + 1),
            batch: format!("batch_{t}.safetensors"),
            c_before: fr_to_hex(&c_before),
            c_after: fr_to_hex(&c_after),
            c_batch: fr_to_hex(&commit_batch(spec, &batch)),
            loss: trace.loss.loss,
        };
        if let Some(dir) = &opts.out_dir {
            write_batch(&dir.join(&entry.batch), spec, &batch, t)?;
            write_checkpoint(&dir.join(&entry.after), spec, &trace.after)?;
            manifest.steps.push(entry.clone());
            manifest.write(&dir.join(MANIFEST))?;
        } else {
            manifest.steps.push(entry.clone());
        }
        on_step(&entry);
        ck = trace.after;
        c_before = c_after;
    }
    Ok((ck, manifest.steps))
}
