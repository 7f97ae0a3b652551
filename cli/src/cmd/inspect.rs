//! `zkstep inspect`: any safetensors file's metadata, tensors, shapes and
//! value ranges, and its commitment when a spec is given.

use crate::args::InspectArgs;
use crate::error::Result;
use crate::util::{commitment_of, print_json};
use serde_json::json;
use zkstep_core::fixed::SCALE_SQ;
use zkstep_core::format::{self, Dtype, StFile, ValueSpan, BATCH_FORMAT, CHECKPOINT_FORMAT};
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::ModelSpec;

/// Run `zkstep inspect`.
pub fn run(a: InspectArgs) -> Result<()> {
    let file = a.file.as_path();
    let bytes = format::read_file(file)?;
    let f = StFile::parse(file, &bytes)?;
    // I64 values are fixed point at scale 10⁹ only where the file says so
    // (zkstep's files and fixed-point datasets carry `scale`); anything else
    // is shown exactly as stored
    let fixed_point = f.meta("scale") == Some(&zkstep_core::SCALE.to_string());
    // Adam's moments (`lN.mw`, `lN.mb`, `lN.vw`, `lN.vb`) are stored at
    // S² = 10¹⁸; momentum's velocity `v` (no `m` beside it) at S
    let names = f.names();
    let adam = f.meta("format") == Some(CHECKPOINT_FORMAT) && names.iter().any(|n| n.ends_with(".mw"));
    let at_s2 = |name: &str| {
        adam && [".mw", ".mb", ".vw", ".vb"].iter().any(|e| name.ends_with(e))
    };
    let mut tensors = vec![];
    for name in names {
        let (dtype, shape) = f.info(&name)?;
        let scale = if at_s2(&name) { SCALE_SQ as f64 } else { zkstep_core::SCALE as f64 };
        let (min, max) = match f.value_range(&name)? {
            Some(ValueSpan::Int(lo, hi)) if fixed_point => {
                (json!(lo as f64 / scale), json!(hi as f64 / scale))
            }
            Some(ValueSpan::Int(lo, hi)) => (json!(lo), json!(hi)),
            Some(ValueSpan::Float(lo, hi)) => (json!(lo), json!(hi)),
            None => (json!(null), json!(null)),
        };
        let mut t = json!({"name": name, "dtype": format!("{dtype:?}"), "shape": shape, "min": min, "max": max});
        if fixed_point && dtype == Dtype::I64 {
            t["scale"] = json!(if at_s2(&name) { "1e18" } else { "1e9" });
        }
        tensors.push(t);
    }
    let mut meta: Vec<(String, String)> = f
        .metadata()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    meta.sort();
    let commitment = match &a.spec {
        Some(sp) => {
            let s = ModelSpec::from_file(sp)?;
            Some(fr_to_hex(&commitment_of(file, &s)?.1))
        }
        None => None,
    };
    let file_digest = format!("0x{}", format::sha3_hex(&bytes));
    if a.json {
        print_json(
            &json!({"file": crate::util::path_json(file), "bytes": bytes.len(), "sha3_256": file_digest, "metadata": meta.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect::<serde_json::Map<_, _>>(), "tensors": tensors, "commitment": commitment}),
        );
        return Ok(());
    }
    crate::outln!(
        "{}  ({} bytes, sha3-256 {file_digest})",
        file.display(),
        bytes.len()
    );
    if !matches!(
        f.meta("format"),
        Some(CHECKPOINT_FORMAT) | Some(BATCH_FORMAT)
    ) {
        crate::outln!("  not a zkstep checkpoint/batch (no zkstep metadata)");
    }
    crate::outln!(
        "  {}",
        if fixed_point {
            if adam {
                "I64 values shown as reals (fixed point at scale 10^9, as the file's `scale` says; Adam's second moments v at 10^18)"
            } else {
                "I64 values shown as reals (fixed point at scale 10^9, as the file's `scale` says)"
            }
        } else {
            "values shown as stored"
        }
    );
    for (k, v) in &meta {
        crate::outln!("  meta {k} = {v}");
    }
    for t in &tensors {
        crate::outln!(
            "  {:<8} {:<4} {:<14} min {:>14}  max {:>14}",
            t["name"].as_str().unwrap_or(""),
            t["dtype"].as_str().unwrap_or(""),
            t["shape"].to_string(),
            show(&t["min"]),
            show(&t["max"])
        );
    }
    if let Some(c) = commitment {
        crate::outln!("  commitment {c}");
    }
    Ok(())
}

/// A value for the table: integers as stored, reals with six decimals (or
/// six significant digits when small).
fn show(v: &serde_json::Value) -> String {
    match (v.as_i64(), v.as_f64()) {
        (Some(i), _) => i.to_string(),
        // a second moment at 10^18 is far below 10^-6: keep its digits
        (None, Some(x)) if x != 0.0 && x.abs() < 1e-3 => format!("{x:.6e}"),
        (None, Some(x)) => format!("{x:.6}"),
        _ => String::new(),
    }
}
