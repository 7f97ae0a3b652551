//! `zkstep keygen`: proving and verifying keys for a spec (dev params, or
//! ceremony params from `--ptau-dir`), or π_merge's keys (`--merge N`).

use crate::args::KeygenArgs;
use crate::error::{CliError, Result};
use crate::util::{print_json, refuse_existing};
use serde_json::json;
use std::time::Instant;
use zkstep_core::ModelSpec;
use zkstep_prover::ivc::{keygen_with, write_keys_as, Setup, PROVING_KEY_FILE, VERIFYING_KEY_FILE};
use zkstep_prover::merge::{
    merge_keygen_as, write_merge_keys, MERGE_POINTS_FILE, MERGE_PROVING_KEY_FILE, MERGE_VERIFYING_KEY_FILE,
};

/// Run `zkstep keygen`.
pub fn run(a: KeygenArgs) -> Result<()> {
    let (out, json) = (a.out.as_path(), a.json);
    let s = ModelSpec::from_file(&a.spec)?;
    // fail on an unusable output directory before spending minutes on keygen
    std::fs::create_dir_all(out).map_err(|e| CliError::io(out, e))?;
    if let Some(n) = a.merge {
        return merge_keys(&a, &s, n);
    }
    refuse_existing(&out.join(PROVING_KEY_FILE), a.force)?;
    refuse_existing(&out.join(VERIFYING_KEY_FILE), a.force)?;
    if a.commit_scheme == zkstep_circuits::state::CommitScheme::Evaluation {
        refuse_existing(&out.join(zkstep_prover::ivc::POINTS_FILE), a.force)?;
    }
    let ptau = a.ptau_dir.as_deref();
    if let Some(d) = ptau {
        if !d.is_dir() {
            return Err(CliError::NotPtauDir(d.to_path_buf()));
        }
    }
    if !json {
        eprintln!(
            "making keys ({}) …",
            if ptau.is_some() {
                "ceremony params"
            } else {
                "dev params"
            }
        );
    }
    let t = Instant::now();
    let keys = keygen_with(
        &s,
        a.rows,
        a.fold_budget,
        a.compression.0,
        a.commit_scheme,
        ptau.map_or(Setup::Dev, Setup::Ceremony),
    )?;
    let secs = t.elapsed().as_secs_f64();
    write_keys_as(out, &keys, a.force)?;
    let (c1, c2) = keys.pp.num_constraints();
    if json {
        print_json(
            &json!({"keys": crate::util::path_json(out), "params": format!("{:?}", keys.params).to_lowercase(), "rows_per_fold": keys.layout.rows, "segments_per_row": keys.layout.segments, "folds": keys.layout.num_folds(), "compression": keys.compression().name(), "constraints_per_fold": c1, "secondary_constraints": c2, "commit_scheme": keys.layout.commit_scheme.name(), "seconds": secs}),
        );
    } else {
        let points = match keys.layout.commit_scheme {
            zkstep_circuits::state::CommitScheme::Evaluation => format!(
                " (and {}, the points that commit checkpoints under these keys)",
                out.join(zkstep_prover::ivc::POINTS_FILE).display()
            ),
            zkstep_circuits::state::CommitScheme::Chain => String::new(),
        };
        crate::outln!(
            "wrote {} and {}{points} in {secs:.1} s",
            out.join(PROVING_KEY_FILE).display(),
            out.join(VERIFYING_KEY_FILE).display()
        );
        crate::outln!("params: {}", keys.params.describe());
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let tile = if keys.layout.segments > 1 {
            format!("each output unit cut into {} folds", keys.layout.segments)
        } else {
            format!("{} per fold", plural(keys.layout.rows, "output unit", "output units"))
        };
        crate::outln!(
            "{} per step, {tile}, {c1} constraints per fold (+{c2} secondary); compression: {}",
            plural(keys.layout.num_folds(), "fold", "folds"),
            keys.compression().name()
        );
    }
    Ok(())
}

/// `zkstep keygen --merge N`: π_merge's keys for merges of N checkpoints.
fn merge_keys(a: &KeygenArgs, s: &ModelSpec, n: usize) -> Result<()> {
    let out = a.out.as_path();
    refuse_existing(&out.join(MERGE_PROVING_KEY_FILE), a.force)?;
    refuse_existing(&out.join(MERGE_VERIFYING_KEY_FILE), a.force)?;
    let kzg = a.commit_scheme == zkstep_circuits::state::CommitScheme::Evaluation;
    if kzg {
        refuse_existing(&out.join(MERGE_POINTS_FILE), a.force)?;
    }
    if !a.json {
        eprintln!("making merge keys for {n} nodes (dev params) …");
    }
    let t = Instant::now();
    let keys = merge_keygen_as(s, n, a.fold_budget, a.commit_scheme)?;
    let secs = t.elapsed().as_secs_f64();
    write_merge_keys(out, &keys, a.force)?;
    let (c1, c2) = keys.pp.num_constraints();
    let lay = &keys.layout;
    if a.json {
        print_json(&json!({"keys": crate::util::path_json(out), "merge_nodes": n, "units_per_fold": lay.units_per_fold,
                           "folds": lay.num_folds(), "constraints_per_fold": c1, "secondary_constraints": c2,
                           "commit_scheme": lay.scheme.name(), "seconds": secs}));
    } else {
        crate::outln!(
            "wrote {} and {}{} in {secs:.1} s",
            out.join(MERGE_PROVING_KEY_FILE).display(),
            out.join(MERGE_VERIFYING_KEY_FILE).display(),
            if kzg { format!(" (and {}: checkpoints as KZG points)", out.join(MERGE_POINTS_FILE).display()) } else { String::new() }
        );
        crate::outln!(
            "merges of {n} checkpoints: {} folds of {} units, {c1} constraints per fold (+{c2} secondary); compression: spartan",
            lay.num_folds(),
            lay.units_per_fold
        );
    }
    Ok(())
}
