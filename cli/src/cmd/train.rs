//! `zkstep train`: training with the reference executor, every checkpoint
//! and batch written with a `run.json` manifest (see [`crate::run`]).

use crate::args::TrainArgs;
use crate::error::{CliError, Result};
use crate::run::{train, StepEntry, TrainOptions, MANIFEST};
use crate::util::{print_json, refuse_existing, step_bar};
use serde_json::json;
use std::time::Instant;
use zkstep_core::format::{self, read_dataset};
use zkstep_core::ModelSpec;

/// Run `zkstep train`.
pub fn run(a: TrainArgs) -> Result<()> {
    let json = a.json;
    let s = ModelSpec::from_file(&a.spec)?;
    let start = format::read_checkpoint(&a.ckpt, &s)?;
    let ds = read_dataset(&a.data, s.value_range)?;
    std::fs::create_dir_all(&a.out_dir).map_err(|e| CliError::io(&a.out_dir, e))?;
    refuse_existing(&a.out_dir.join(MANIFEST), a.force)?;
    if ds.report.count > 0 && !json {
        crate::outln!(
            "{}: quantised {} values: max |error| {:.3e}, mean |error| {:.3e}",
            a.data.display(),
            ds.report.count,
            ds.report.max_abs_err,
            ds.report.mean_abs_err
        );
    }
    let pb = step_bar(a.steps, json);
    let opts = TrainOptions {
        steps: a.steps,
        seed: a.seed,
        out_dir: Some(a.out_dir.clone()),
        salt_seed: None,
        data_name: a.data.display().to_string(),
    };
    let t = Instant::now();
    let res = train(&s, &start, &ds, &opts, |e: &StepEntry| {
        pb.inc(1);
        if !json {
            pb.println(format!("step {:>5}  loss {:.6}", e.step, e.loss));
        }
    });
    pb.finish_and_clear();
    let (_, done) = res?;
    if json {
        print_json(
            &json!({"run": a.out_dir.join(MANIFEST), "steps": done, "seconds": t.elapsed().as_secs_f64()}),
        );
    } else {
        crate::outln!(
            "wrote {} steps to {} in {:.2?}",
            done.len(),
            a.out_dir.display(),
            t.elapsed()
        );
        if let Some(last) = done.last() {
            crate::outln!("final commitment {}", last.c_after);
        }
    }
    Ok(())
}
