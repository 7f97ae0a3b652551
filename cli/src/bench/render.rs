//! Rendering a bench report: the terminal table, CSV, the SVG plot
//! (plotters) and the Markdown section spliced between markers.

use super::report::{BenchPoint, BenchReport};
use crate::error::{CliError, Result};
use std::path::Path;
use zkstep_core::format::{read_input, write_atomic, Input};

/// Where the table starts in a Markdown file.
pub const BEGIN: &str = "<!-- zkstep-bench:begin -->";
/// Where it ends.
pub const END: &str = "<!-- zkstep-bench:end -->";

fn f(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |x| format!("{x:.digits$}"))
}
fn u(v: Option<usize>) -> String {
    v.map_or("–".into(), group_thousands)
}
fn group_thousands(n: usize) -> String {
    let s = n.to_string();
    let mut o = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            o.push(',');
        }
        o.push(c);
    }
    o
}
fn time_s(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(x) if x < 1e-3 => format!("{:.0} µs", x * 1e6),
        Some(x) if x < 1.0 => format!("{:.1} ms", x * 1e3),
        Some(x) => format!("{x:.1} s"),
    }
}

/// Column headers and one row of cells per point (table, CSV and Markdown share them).
pub fn table(points: &[BenchPoint]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let head = vec![
        "width",
        "batch",
        "layers",
        "status",
        "rows/fold",
        "compression",
        "folds",
        "constraints/fold",
        "total constraints",
        "per weight",
        "per MAC",
        "witness/fold",
        "keygen",
        "witness",
        "fold",
        "compress",
        "verify ms",
        "proof B",
        "peak RSS GiB",
        "native step",
        "prove ÷ native",
        "MSM ns/pt",
        "fold ÷ MSM limit",
    ];
    let rows = points
        .iter()
        .map(|p| {
            vec![
                p.width.to_string(),
                p.batch.to_string(),
                p.layers.to_string(),
                p.status.clone(),
                match (p.rows_per_fold, p.segments_per_row) {
                    (Some(r), Some(s)) if s > 1 => format!("{r}/{s}"),
                    (r, _) => u(r),
                },
                p.compression.clone().unwrap_or_else(|| "–".into()),
                u(p.folds),
                u(p.constraints_per_fold),
                u(p.total_constraints),
                f(p.constraints_per_weight, 0),
                f(p.constraints_per_mac, 1),
                p.witness_bytes
                    .map_or("–".into(), |b| format!("{:.1} MB", b as f64 / 1e6)),
                time_s(p.keygen_s),
                time_s(p.witness_s),
                time_s(p.fold_s),
                time_s(p.compress_s),
                f(p.verify_ms, 1),
                u(p.proof_bytes),
                f(p.peak_rss_mib.map(|m| m / 1024.0), 1),
                time_s(p.native_step_s),
                p.overhead.map_or("–".into(), |o| format!("{o:.2e}")),
                f(p.msm_ns_per_point, 0),
                f(p.fold_over_msm_limit, 1),
            ]
        })
        .collect();
    (head, rows)
}

/// The terminal table (aligned columns) and notes for skipped/failed widths.
pub fn render_terminal(points: &[BenchPoint]) -> String {
    let (head, rows) = table(points);
    let mut wid: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            wid[i] = wid[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:>w$}", w = wid[i]))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut s = line(head.iter().map(|h| h.to_string()).collect()) + "\n";
    for r in rows {
        s += &(line(r) + "\n");
    }
    for p in points.iter().filter(|p| p.note.is_some()) {
        s += &format!(
            "width {}: {}: {}\n",
            p.width,
            p.status,
            p.note.as_deref().unwrap_or("")
        );
    }
    s
}

/// CSV: every field of [`BenchPoint`], one row per width.
pub fn render_csv(points: &[BenchPoint]) -> Result<String> {
    let mut s = String::new();
    for (i, p) in points.iter().enumerate() {
        let v = serde_json::to_value(p).map_err(CliError::encode("bench point"))?;
        let obj = v
            .as_object()
            .ok_or_else(|| CliError::Internal("a bench point is not a JSON object".into()))?;
        if i == 0 {
            s += &obj.keys().cloned().collect::<Vec<_>>().join(",");
            s.push('\n');
        }
        let cells: Vec<String> = obj
            .values()
            .map(|x| match x {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(t) => format!("\"{}\"", t.replace('"', "\"\"")),
                o => o.to_string(),
            })
            .collect();
        s += &cells.join(",");
        s.push('\n');
    }
    Ok(s)
}

/// The seed's self-reported GPU figures: (width, prove s, memory GB, proof KB).
pub const SEED_FIGURES: [(usize, f64, f64, f64); 4] = [
    (512, 1.2, 16.0, 45.0),
    (1024, 2.4, 32.0, 90.0),
    (2048, 4.8, 64.0, 180.0),
    (4096, 9.6, 128.0, 360.0),
];

/// The Markdown section BENCHMARKS.md carries between its markers.
pub fn render_markdown(report: &BenchReport, command: &str, plot: Option<&str>) -> String {
    let (head, rows) = table(&report.points);
    let mut s = format!(
        "Measured by `{command}` on **{}**, zkstep {}.\n\n",
        report.machine.describe(),
        report.zkstep_version
    );
    s += &format!("| {} |\n", head.join(" | "));
    s += &format!("|{}\n", " ---: |".repeat(head.len()));
    for r in rows {
        s += &format!("| {} |\n", r.join(" | "));
    }
    for p in report.points.iter().filter(|p| p.note.is_some()) {
        s += &format!(
            "\n- width {} {}: {}",
            p.width,
            p.status,
            p.note.as_deref().unwrap_or("")
        );
    }
    s += "\n\n";
    if let Some(pl) = plot {
        s += &format!(
            "![prove time, verify time, peak memory and proof size against width]({pl})\n\n"
        );
    }
    s += "Beside them, **seed 002's figures: theirs, self-reported, on an unnamed GPU, not reproduced here**:\n\n";
    s += "| width | prove (theirs) | memory (theirs) | proof (theirs) | prove (ours) | peak RSS (ours) | proof (ours) |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (w, t, m, k) in SEED_FIGURES {
        let ours = report
            .points
            .iter()
            .find(|p| p.width == w && p.status == "ok");
        s += &format!(
            "| {w} | {t} s | {m} GB | {k} KB | {} | {} | {} |\n",
            ours.map_or("not run here".into(), |p| time_s(p.prove_s)),
            ours.map_or("–".into(), |p| f(p.peak_rss_mib.map(|m| m / 1024.0), 1)
                + " GiB"),
            ours.map_or("–".into(), |p| format!(
                "{:.1} KB",
                p.proof_bytes.unwrap_or(0) as f64 / 1000.0
            )),
        );
    }
    s
}

/// `target` as a path relative to the directory of `from_file` (for links).
pub fn relative_to(target: &Path, from_file: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let t = abs(target);
    let base = abs(from_file);
    let base = base.parent().unwrap_or(Path::new("/"));
    match t.strip_prefix(base) {
        Ok(r) => r.display().to_string(),
        Err(_) => t.display().to_string(),
    }
}

/// Check that `path` can take [`splice_markdown`] (readable, both markers).
pub fn splice_check(path: &Path) -> Result<()> {
    splice(path, "", false)
}

/// Replace the text between [`BEGIN`] and [`END`] in `path` (which must
/// have both markers).
pub fn splice_markdown(path: &Path, section: &str) -> Result<()> {
    splice(path, section, true)
}

fn splice(path: &Path, section: &str, write: bool) -> Result<()> {
    let text = String::from_utf8(read_input(path, Input::Markdown)?)
        .map_err(|_| CliError::NotUtf8(path.to_path_buf()))?;
    let (Some(a), Some(b)) = (text.find(BEGIN), text.find(END)) else {
        return Err(CliError::NoMarkers {
            path: path.to_path_buf(),
            begin: BEGIN,
            end: END,
        });
    };
    if b < a {
        return Err(CliError::MarkersReversed(path.to_path_buf()));
    }
    if write {
        let new = format!("{}{BEGIN}\n{section}\n{}", &text[..a], &text[b..]);
        write_atomic(path, new.as_bytes())?;
    }
    Ok(())
}

/// An SVG with four panels against width: prove time, verify time, peak
/// RSS and proof size (completed widths only).
pub fn render_svg(report: &BenchReport) -> Result<String> {
    use plotters::prelude::*;
    let pts: Vec<&BenchPoint> = report.points.iter().filter(|p| p.status == "ok").collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, 760)).into_drawing_area();
        let err = |e: &dyn std::fmt::Display| CliError::Plot(e.to_string());
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let root = root
            .titled(
                &format!(
                    "zkstep: one training step, batch {}, {} layer(s) — {}",
                    report.config.batch,
                    report.config.layers,
                    report.machine.describe()
                ),
                ("sans-serif", 16),
            )
            .map_err(|e| err(&e))?;
        let panels = root.split_evenly((2, 2));
        type Getter = fn(&BenchPoint) -> Option<f64>;
        let series: [(&str, Getter); 4] = [
            ("prove time (s)", |p| p.prove_s),
            ("verify time (ms)", |p| p.verify_ms),
            ("peak RSS (GiB)", |p| p.peak_rss_mib.map(|m| m / 1024.0)),
            ("proof size (KB)", |p| {
                p.proof_bytes.map(|b| b as f64 / 1000.0)
            }),
        ];
        for (area, (name, get)) in panels.iter().zip(series) {
            // x is log₂(width), labelled with the width itself
            let data: Vec<(f64, f64)> = pts
                .iter()
                .filter_map(|p| get(p).map(|y| ((p.width as f64).log2(), y)))
                .collect();
            let xmax = data.iter().map(|d| d.0).fold(1.0, f64::max) + 0.5;
            let xmin = data.iter().map(|d| d.0).fold(xmax, f64::min) - 0.5;
            let ymax = data.iter().map(|d| d.1).fold(0.0, f64::max) * 1.15 + 1e-9;
            let mut chart = ChartBuilder::on(area)
                .caption(name, ("sans-serif", 15))
                .margin(12)
                .x_label_area_size(34)
                .y_label_area_size(56)
                .build_cartesian_2d(xmin..xmax, 0.0..ymax)
                .map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .x_desc("layer width")
                .x_labels((xmax - xmin).ceil() as usize + 1)
                .x_label_formatter(&|x| {
                    if (x - x.round()).abs() < 1e-6 {
                        format!("{:.0}", 2f64.powf(x.round()))
                    } else {
                        String::new()
                    }
                })
                .draw()
                .map_err(|e| err(&e))?;
            chart
                .draw_series(LineSeries::new(data.iter().copied(), &BLUE))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(
                    data.iter()
                        .map(|&(x, y)| Circle::new((x, y), 4, BLUE.filled())),
                )
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BenchPoint {
        BenchPoint {
            width: 16,
            batch: 4,
            layers: 1,
            weights: 256,
            status: "ok".into(),
            prove_s: Some(1.5),
            verify_ms: Some(60.0),
            peak_rss_mib: Some(4096.0),
            proof_bytes: Some(14000),
            msm_backend: "cpu".into(),
            ..Default::default()
        }
    }

    #[test]
    fn csv_has_every_field_once() {
        let csv = render_csv(&[sample()]).expect("csv");
        let head: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
        let v = serde_json::to_value(sample()).expect("json");
        assert_eq!(head.len(), v.as_object().expect("object").len());
        assert_eq!(csv.lines().count(), 2);
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group_thousands(1234567), "1,234,567");
        assert_eq!(group_thousands(999), "999");
    }
}
