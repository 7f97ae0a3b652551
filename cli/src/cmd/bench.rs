//! `zkstep bench`: every width measured in a child process (or a saved
//! report read back), then the table, JSON, CSV, plot and Markdown.

use crate::args::BenchArgs;
use crate::bench::measure::{available_gib, run_report};
use crate::bench::render::{
    relative_to, render_csv, render_markdown, render_svg, render_terminal, splice_check,
    splice_markdown,
};
use crate::bench::{BenchConfig, BenchReport};
use crate::error::{CliError, Result};
use crate::util::{refuse_existing, set_msm};
use zkstep_core::format::write_as;

/// Run `zkstep bench`.
pub fn run(a: BenchArgs) -> Result<()> {
    set_msm(a.msm)?;
    for p in [&a.json, &a.csv, &a.plot].into_iter().flatten() {
        refuse_existing(p, a.force)?;
    }
    if let Some(m) = &a.markdown {
        // fail now, not after the whole run, if the file cannot take the table
        splice_check(m)?;
    }
    if a.widths.is_empty() || a.batch == 0 || a.layers == 0 {
        return Err(CliError::BenchArgs);
    }
    let report = match &a.from_json {
        Some(p) => BenchReport::read(p)?,
        None => run_report(&BenchConfig {
            widths: a.widths.clone(),
            batch: a.batch,
            layers: a.layers,
            fold_budget: a.fold_budget,
            msm: a.msm.name().into(),
            mem_limit_gib: a.mem_limit_gib.unwrap_or_else(available_gib),
            dry_run: a.dry_run,
            compression: a.compression.0.map(|c| c.name().to_string()),
            commit_scheme: a.commit_scheme.name().into(),
            optimizer: a.optimizer.clone(),
            loss: a.loss.clone(),
        })?,
    };
    crate::outln!("{}", render_terminal(&report.points));
    crate::outln!("checkpoint commitments: {}", report.config.commit_scheme);
    write_outputs(&report, &a)?;
    let failed: Vec<usize> = report
        .points
        .iter()
        .filter(|p| p.status == "failed")
        .map(|p| p.width)
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::BenchFailed(failed))
    }
}

/// Write the JSON, CSV, SVG and Markdown the run asked for.
fn write_outputs(report: &BenchReport, a: &BenchArgs) -> Result<()> {
    let cfg = &report.config;
    if let Some(p) = &a.json {
        let s = serde_json::to_string_pretty(report).map_err(CliError::encode("bench report"))?;
        write_as(p, s.as_bytes(), a.force)?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(p) = &a.csv {
        write_as(p, render_csv(&report.points)?.as_bytes(), a.force)?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(p) = &a.plot {
        write_as(p, render_svg(report)?.as_bytes(), a.force)?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(m) = &a.markdown {
        let plot_rel = a.plot.as_ref().map(|pl| relative_to(pl, m));
        let command = format!(
            "zkstep bench --widths {} --batch {} --layers {} --optimizer {} --loss {}",
            cfg.widths
                .iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join(","),
            cfg.batch,
            cfg.layers,
            cfg.optimizer,
            cfg.loss
        );
        splice_markdown(m, &render_markdown(report, &command, plot_rel.as_deref()))?;
        eprintln!("updated {}", m.display());
    }
    Ok(())
}
