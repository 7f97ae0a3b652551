//! `zkstep inspect`: any safetensors file's metadata, tensors, shapes and
//! value ranges, and its commitment when a spec is given.

use crate::args::InspectArgs;
use crate::error::Result;
use crate::util::{commitment_of, print_json};
use serde_json::json;
use zkstep_core::fixed::to_real;
use zkstep_core::format::{self, Dtype, StFile, BATCH_FORMAT, CHECKPOINT_FORMAT};
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::ModelSpec;

/// Run `zkstep inspect`.
pub fn run(a: InspectArgs) -> Result<()> {
    let file = a.file.as_path();
    let bytes = format::read_file(file)?;
    let f = StFile::parse(file, &bytes)?;
    let mut tensors = vec![];
    for name in f.names() {
        let (dtype, shape) = f.info(&name)?;
        let (min, max) = if dtype == Dtype::I64 {
            let v = f.i64_tensor(&name, &shape)?;
            let (lo, hi) = (
                v.iter().min().copied().unwrap_or(0),
                v.iter().max().copied().unwrap_or(0),
            );
            (to_real(lo), to_real(hi))
        } else {
            let (_, v) = f.float_tensor(&name)?;
            (
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        };
        tensors.push(json!({"name": name, "dtype": format!("{dtype:?}"), "shape": shape, "min": min, "max": max}));
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
            &json!({"file": file, "bytes": bytes.len(), "sha3_256": file_digest, "metadata": meta.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect::<serde_json::Map<_, _>>(), "tensors": tensors, "commitment": commitment}),
        );
        return Ok(());
    }
    crate::outln!(
        "{}  ({} bytes, sha3-256 {file_digest})",
        file.display(),
        bytes.len()
    );
    match f.meta("format") {
        Some(CHECKPOINT_FORMAT) | Some(BATCH_FORMAT) => {}
        _ => {
            crate::outln!(
                "  not a zkstep checkpoint/batch (no zkstep metadata): values shown as stored"
            )
        }
    }
    for (k, v) in &meta {
        crate::outln!("  meta {k} = {v}");
    }
    for t in &tensors {
        crate::outln!(
            "  {:<8} {:<4} {:<14} min {:>14.6}  max {:>14.6}",
            t["name"].as_str().unwrap_or(""),
            t["dtype"].as_str().unwrap_or(""),
            t["shape"].to_string(),
            t["min"].as_f64().unwrap_or(0.0),
            t["max"].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(c) = commitment {
        crate::outln!("  commitment {c}");
    }
    Ok(())
}
