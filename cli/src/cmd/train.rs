//! `zkstep train`: training with the reference executor, every checkpoint
//! and batch written with a `run.json` manifest (see [`crate::run`]); with
//! `--resume`, a run continued from its last completed step.

use crate::args::TrainArgs;
use crate::error::{CliError, Result};
use crate::run::{
    end_step, refuse_run_outputs, resume_point, train, RunLock, RunManifest, StepEntry,
    TrainOptions, MANIFEST,
};
use crate::util::{print_json, step_bar};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;
use zkstep_core::format::{self, read_dataset_for};
use zkstep_core::{Checkpoint, ModelSpec};

/// What a run starts from: a spec and checkpoint given on the command line,
/// or the run being resumed.
struct Start {
    spec: ModelSpec,
    ckpt: Checkpoint,
    data: PathBuf,
    resume: Option<RunManifest>,
}

/// Run `zkstep train`.
pub fn run(a: TrainArgs) -> Result<()> {
    let (dir, json) = (a.out_dir.as_path(), a.json);
    // held until this returns: no other train or prove-run writes this run
    let _lock;
    let start = if a.resume {
        if !dir.join(MANIFEST).is_file() {
            return Err(CliError::NoRunToResume(dir.to_path_buf()));
        }
        _lock = RunLock::acquire(dir)?;
        let r = resume_point(dir)?;
        Start {
            data: a
                .data
                .clone()
                .unwrap_or_else(|| PathBuf::from(&r.manifest.data)),
            spec: r.spec,
            ckpt: r.ckpt,
            resume: Some(r.manifest),
        }
    } else {
        // clap requires both without --resume
        let (Some(spec), Some(ckpt), Some(data)) = (&a.spec, &a.ckpt, &a.data) else {
            return Err(CliError::Internal(
                "--spec, --ckpt and --data are required without --resume".into(),
            ));
        };
        let spec_ = ModelSpec::from_file(spec)?;
        let ckpt = format::read_checkpoint(ckpt, &spec_)?;
        std::fs::create_dir_all(dir).map_err(|e| CliError::io(dir, e))?;
        _lock = RunLock::acquire(dir)?;
        Start {
            spec: spec_,
            ckpt,
            data: data.clone(),
            resume: None,
        }
    };
    let s = &start.spec;
    let t0 = start.ckpt.step;
    let end = end_step(t0, a.steps)?;
    refuse_run_outputs(dir, t0, end, start.resume.is_none(), a.force)?;
    let ds = read_dataset_for(&start.data, s).map_err(|e| match (&start.resume, &a.data) {
        (Some(m), None) => CliError::ResumeData {
            manifest: dir.join(MANIFEST),
            data: m.data.clone(),
            source: Box::new(e),
        },
        _ => e.into(),
    })?;
    if ds.report.count > 0 && !json {
        crate::outln!(
            "{}: quantised {} values: max |error| {:.3e}, mean |error| {:.3e}",
            start.data.display(),
            ds.report.count,
            ds.report.max_abs_err,
            ds.report.mean_abs_err
        );
    }
    let pb = step_bar(a.steps, json);
    let opts = TrainOptions {
        steps: a.steps,
        seed: start.resume.as_ref().map_or(a.seed, |m| m.seed),
        out_dir: Some(dir.to_path_buf()),
        salt_seed: None,
        data_name: start.data.display().to_string(),
        resume: start.resume,
    };
    let t = Instant::now();
    let res = train(s, &start.ckpt, &ds, &opts, |e: &StepEntry| {
        pb.inc(1);
        if !json {
            pb.println(format!("step {:>5}  loss {:.6}", e.step, e.loss));
        }
    });
    pb.finish_and_clear();
    let (_, done) = res?;
    if json {
        print_json(
            &json!({"run": crate::util::path_json(&dir.join(MANIFEST)), "steps": done, "seconds": t.elapsed().as_secs_f64()}),
        );
    } else {
        crate::outln!(
            "wrote {} steps to {} in {:.2?}",
            done.len(),
            dir.display(),
            t.elapsed()
        );
        if let Some(last) = done.last() {
            crate::outln!("final commitment {}", last.c_after);
        }
    }
    Ok(())
}
