//! Helpers every subcommand may use: refusing to overwrite, JSON output,
//! progress bars, the MSM backend flag and file commitments.

use crate::error::{CliError, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use zkstep_core::commit::{commit_batch, commit_params};
use zkstep_core::format::{self, StFile, BATCH_FORMAT};
use zkstep_core::ModelSpec;
use zkstep_prover::ivc::ProveEvent;

/// Refuse to overwrite `path` unless `force`.
pub fn refuse_existing(path: &Path, force: bool) -> Result<()> {
    if path.exists() && !force {
        return Err(CliError::Exists(path.to_path_buf()));
    }
    Ok(())
}

/// A path as a JSON string (`json!` of a `Path` panics on a name that is
/// not UTF-8; this shows such bytes as U+FFFD, as `display` does).
pub fn path_json(p: &Path) -> serde_json::Value {
    serde_json::Value::String(p.display().to_string())
}

/// Print a JSON value, pretty.
pub fn print_json(v: &serde_json::Value) {
    crate::outln!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
    );
}

/// Choose the MSM backend for this process; `gpu` without one is an error.
pub fn set_msm(backend: zkstep_msm::Backend) -> Result<()> {
    zkstep_msm::set_backend(backend).map_err(|source| CliError::Msm {
        backend: backend.name(),
        source,
    })
}

/// A bar with `template`, or a hidden one.
fn bar(len: u64, template: &str, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style);
    }
    pb
}

/// A progress bar over `n` training steps (hidden when `hidden`).
pub fn step_bar(n: u64, hidden: bool) -> ProgressBar {
    bar(
        n,
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} steps ({eta})",
        hidden,
    )
}

/// A progress bar over one proof's folds, drawn from the prover's
/// [`ProveEvent`]s (the prover library draws nothing itself).
pub struct FoldBar {
    pb: ProgressBar,
    show: bool,
}

impl FoldBar {
    /// A bar that appears when the first pass starts, then one over the
    /// folds (never, unless `show`).
    pub fn new(show: bool) -> Self {
        FoldBar {
            pb: ProgressBar::hidden(),
            show,
        }
    }

    /// Follow one event of `zkstep_prover::ivc::prove`.
    pub fn on(&mut self, event: ProveEvent) {
        match event {
            ProveEvent::Committing { total, round } => {
                self.pb.finish_and_clear();
                let what = if round == 1 { "committing" } else { "committing W₂" };
                self.pb = bar(
                    total as u64,
                    &format!("{{spinner}} {what} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} folds ({{eta}})"),
                    !self.show,
                );
            }
            ProveEvent::Committed { index, .. } => self.pb.set_position(index as u64 + 1),
            ProveEvent::Folding { total } => {
                self.pb.finish_and_clear();
                self.pb = bar(
                    total as u64,
                    "{spinner} folding [{elapsed_precise}] {bar:30} {pos}/{len} folds ({eta}) {msg}",
                    !self.show,
                );
            }
            ProveEvent::Folded { index, desc, .. } => {
                self.pb.set_message(format!(
                    "layer {} rows {}..{}",
                    desc.layer,
                    desc.j0,
                    desc.j0 + desc.rows_active
                ));
                self.pb.set_position(index as u64 + 1);
            }
            ProveEvent::Compressing => self.pb.finish_and_clear(),
        }
    }
}

/// The commitment of a checkpoint or batch file, by its `format` metadata.
pub fn commitment_of(file: &Path, s: &ModelSpec) -> Result<(&'static str, zkstep_core::Fr)> {
    let bytes = format::read_checkpoint_or_batch(file, s)?;
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

pub use zkstep_core::input::memory_available;

/// Refuse, before starting, work that needs `need` bytes where less is
/// available ([`memory_available`]); nothing is refused where it cannot be read.
pub fn require_memory(what: impl Into<String>, need: u64) -> Result<()> {
    const GIB: f64 = (1u64 << 30) as f64;
    match memory_available() {
        Some((have, limit)) if need > have => Err(CliError::NotEnoughMemory {
            what: what.into(),
            need_gib: need as f64 / GIB,
            have_gib: have as f64 / GIB,
            limit,
        }),
        _ => Ok(()),
    }
}

/// A round file's checkpoints, read against `s`: the previous global model
/// and each node's (each error names its file).
pub fn read_round(
    s: &ModelSpec,
    round: &zkstep_core::merge::Round,
) -> Result<(zkstep_core::Checkpoint, Vec<zkstep_core::Checkpoint>)> {
    let centre = format::read_checkpoint(&round.previous, s)?;
    let nodes = round
        .nodes
        .iter()
        .map(|(p, _)| format::read_checkpoint(p, s))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((centre, nodes))
}

/// The reference merge of a round's checkpoints (errors name the round file).
pub fn merge_round(
    s: &ModelSpec,
    path: &Path,
    round: &zkstep_core::merge::Round,
    centre: &zkstep_core::Checkpoint,
    ckpts: &[zkstep_core::Checkpoint],
) -> Result<zkstep_core::merge::Merged> {
    let nodes: Vec<zkstep_core::merge::MergeNode> = ckpts
        .iter()
        .zip(&round.nodes)
        .map(|(ckpt, (_, reputation))| zkstep_core::merge::MergeNode { ckpt, reputation: *reputation })
        .collect();
    zkstep_core::merge::merge(s, centre, &nodes, round.tau_fx).map_err(|e| {
        zkstep_core::CoreError::File {
            path: path.to_path_buf(),
            msg: e.to_string(),
        }
        .into()
    })
}

/// The points file of keys on KZG points (`explicit`, else the keygen's
/// `points.key` beside the verifying key at `vk_path`), checked against the
/// verifying key; None for chain keys, which have none (an `explicit` one
/// with them is a usage error naming both files).
pub fn points_for(
    vk_path: &Path,
    explicit: Option<&Path>,
    vk: &zkstep_verifier::VerifyingKey,
) -> Result<Option<zkstep_verifier::Points>> {
    if vk.theta.is_none() {
        return match explicit {
            Some(p) => Err(CliError::Usage(format!(
                "{}: a points file is for keys on KZG points; {} binds checkpoints by hash chains",
                p.display(),
                vk_path.display()
            ))),
            None => Ok(None),
        };
    }
    let path = explicit.map_or_else(|| vk_path.with_file_name(zkstep_prover::ivc::POINTS_FILE), Path::to_path_buf);
    let bytes = format::read_input(&path, format::Input::Points)?;
    zkstep_verifier::read_points(&bytes, vk).map(Some).map_err(|e| CliError::BadFile {
        path,
        msg: e.to_string(),
    })
}
