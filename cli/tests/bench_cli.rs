//! `zkstep bench` as CI runs it: the smoke run `--widths 8,16 --batch 4
//! --json F` must report every field for every width, and every proof must
//! have verified (at a fold budget of 2¹⁵, where both widths' folds are as
//! small as Nova's own circuit allows). Nothing here asserts a time. Also: re-rendering a saved
//! report into CSV, SVG and Markdown, and clear errors for bad report files
//! and Markdown files without markers.
#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

fn zkstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zkstep"))
        .args(args)
        .output()
        .expect("the zkstep binary runs")
}

/// `zkstep bench --widths 8 --batch 4 …`.
fn bench_w8(extra: &[&str]) -> Output {
    let mut args = vec!["bench", "--widths", "8", "--batch", "4"];
    args.extend_from_slice(extra);
    zkstep(&args)
}

/// The fields every point must carry (measured ones may be null only when
/// the width was skipped).
const FIELDS: &[&str] = &[
    "width",
    "batch",
    "layers",
    "status",
    "note",
    "rows_per_fold",
    "folds",
    "constraints_per_fold",
    "secondary_constraints_per_fold",
    "variables_per_fold",
    "nonzeros_per_fold",
    "total_constraints",
    "weights",
    "constraints_per_weight",
    "constraints_per_mac",
    "witness_bytes",
    "estimated_peak_mib",
    "keygen_s",
    "witness_s",
    "fold_s",
    "compress_s",
    "prove_s",
    "verify_ms",
    "verified",
    "proof_bytes",
    "peak_rss_mib",
    "native_step_s",
    "overhead",
    "msm_backend",
    "msm_points",
    "msm_ns_per_point",
    "msm_limit_s",
    "fold_over_msm_limit",
];

#[test]
fn smoke_run_reports_every_field_and_every_proof_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let o = zkstep(&[
        "bench",
        "--widths",
        "8,16",
        "--batch",
        "4",
        "--fold-budget",
        "32768",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "bench failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for key in ["machine", "config", "points", "zkstep_version"] {
        assert!(report.get(key).is_some(), "report lacks {key}");
    }
    let points = report["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, width) in points.iter().zip([8, 16]) {
        for f in FIELDS {
            assert!(p.get(f).is_some(), "width {width}: field {f} missing");
        }
        assert_eq!(p["width"], width);
        assert_eq!(p["status"], "ok", "width {width}: {}", p["note"]);
        assert_eq!(p["verified"], true, "width {width} did not verify");
        for f in FIELDS.iter().filter(|f| **f != "note") {
            assert!(!p[*f].is_null(), "width {width}: {f} is null");
        }
        // sizes are consistent with each other (not timings)
        let folds = p["folds"].as_u64().unwrap();
        let per_fold = p["constraints_per_fold"].as_u64().unwrap();
        assert_eq!(p["total_constraints"].as_u64().unwrap(), folds * per_fold);
        assert_eq!(p["weights"].as_u64().unwrap(), width * width);
        assert!(p["proof_bytes"].as_u64().unwrap() > 1000);
    }
    // the terminal table names both widths
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("constraints/fold"), "{table}");

    // re-render the saved report: CSV, SVG, Markdown
    let csv = dir.path().join("b.csv");
    let svg = dir.path().join("b.svg");
    let md = dir.path().join("B.md");
    std::fs::write(
        &md,
        "# keep me\n<!-- zkstep-bench:begin -->\nold\n<!-- zkstep-bench:end -->\ntail\n",
    )
    .unwrap();
    let o = zkstep(&[
        "bench",
        "--from-json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(c.lines().count(), 3);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let m = std::fs::read_to_string(&md).unwrap();
    assert!(m.starts_with("# keep me\n") && m.ends_with("tail\n"), "{m}");
    assert!(
        !m.contains("\nold\n") && m.contains("| 16 | 4 | 1 | ok |"),
        "{m}"
    );
    assert!(m.contains("b.svg") && m.contains("self-reported"), "{m}");
}

#[test]
fn bad_report_and_markdown_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"points\": 3").unwrap();
    let o = zkstep(&["bench", "--from-json", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.json") && err.contains("not a zkstep bench report"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    // a Markdown file without markers is refused before any width runs
    let md = dir.path().join("plain.md");
    std::fs::write(&md, "# no markers\n").unwrap();
    let o = bench_w8(&["--markdown", md.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("plain.md") && err.contains("markers"), "{err}");
    assert!(
        !err.contains("[1/1]"),
        "a width ran before the check: {err}"
    );
    assert_eq!(std::fs::read_to_string(&md).unwrap(), "# no markers\n");

    // an existing output file is not overwritten without --force
    let keep = dir.path().join("keep.csv");
    std::fs::write(&keep, "mine").unwrap();
    let o = bench_w8(&["--csv", keep.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "mine");
}

#[test]
fn dry_run_estimates_without_proving_and_skips_what_does_not_fit() {
    let o = bench_w8(&["--dry-run"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("estimated"), "{out}");
    // with a tiny memory limit the width is skipped with a note, not run
    let o = bench_w8(&["--mem-limit-gib", "0.1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("skipped") && out.contains("more than the 0.1 GiB available"),
        "{out}"
    );
}
