//! `zkstep bench-point` (hidden): one width of `zkstep bench`, measured in
//! this process; prints the point as one JSON line for the parent.

use crate::args::BenchPointArgs;
use crate::bench::measure::{run_point, PointConfig};
use crate::error::{CliError, Result};
use crate::util::set_msm;

/// Run `zkstep bench-point`.
pub fn run(a: BenchPointArgs) -> Result<()> {
    set_msm(a.msm)?;
    let p = run_point(PointConfig {
        width: a.width,
        batch: a.batch,
        layers: a.layers,
        budget: a.fold_budget,
        mem_limit_gib: a.mem_limit_gib,
        dry_run: a.dry_run,
        compression: a.compression.0,
        scheme: a.commit_scheme,
        optimizer: a.optimizer,
        loss: a.loss,
    })?;
    crate::outln!(
        "{}",
        serde_json::to_string(&p).map_err(CliError::encode("bench point"))?
    );
    Ok(())
}
