//! Helpers of the CLI's end-to-end tests: run the `zkstep` binary, make
//! keys, and train a short run from a small dataset.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;
use zkstep_core::poseidon::fr_from_hex;
use zkstep_core::ModelSpec;
use zkstep_verifier::Statement;

/// A 2-3-1 ReLU MLP, batch 2, SGD.
pub const SPEC: &str = "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 3\nactivation = \"relu\"\n[[layers]]\ninputs = 3\noutputs = 1\n";

pub fn run(args: &[&str]) -> (bool, String, String) {
    let (code, out, err) = run_code(args);
    (code == Some(0), out, err)
}

/// [`run`] with the exit code (None: killed by a signal).
pub fn run_code(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_zkstep"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The statement run.json's entry `e` (step t) records.
pub fn manifest_statement(spec: &ModelSpec, e: &serde_json::Value, t: usize) -> Statement {
    let h = |k: &str| fr_from_hex(e[k].as_str().unwrap()).unwrap();
    Statement {
        spec_digest: spec.digest(),
        c_before: h("c_before"),
        c_after: h("c_after"),
        c_batch: h("c_batch"),
        step: t as u64,
    }
}

/// The statement a proof of run.json's entry `e` (step t) of the run in
/// `d/run` proves under the keys in `d/keys`: the manifest's, its
/// checkpoints' commitments made with the points file where the keys are
/// on KZG points (the manifest holds chain digests of the files).
pub fn run_statement(d: &std::path::Path, spec: &ModelSpec, e: &serde_json::Value, t: usize) -> Statement {
    let mut st = manifest_statement(spec, e, t);
    let vk = zkstep_verifier::read_verifying_key(&std::fs::read(d.join("keys/verifying.key")).unwrap()).unwrap();
    if vk.theta.is_some() {
        let points = zkstep_verifier::read_points(&std::fs::read(d.join("keys/points.key")).unwrap(), &vk).unwrap();
        let c = |k: &str| {
            let ck = zkstep_core::format::read_checkpoint(&d.join("run").join(e[k].as_str().unwrap()), spec).unwrap();
            points.commitment(spec, &ck).unwrap()
        };
        (st.c_before, st.c_after) = (c("before"), c("after"));
    }
    st
}

/// `zkstep keygen` of `d/spec.toml` into `d/keys` with 2 rows a tile, and `extra` flags.
pub fn keygen(d: &std::path::Path, extra: &[&str]) -> (bool, String, String) {
    let p = |n: &str| -> String { d.join(n).display().to_string() };
    let (spec, keys) = (p("spec.toml"), p("keys"));
    let mut args = vec!["keygen", "--spec", &spec, "--out", &keys, "--rows", "2"];
    args.extend_from_slice(extra);
    run(&args)
}

/// Write `spec` and a 20-sample dataset into `d`, then `init` and `train` `steps` steps into `d/run`.
pub fn trained_run(d: &std::path::Path, spec: &str, steps: u64) {
    let p = |n: &str| -> String { d.join(n).display().to_string() };
    std::fs::write(p("spec.toml"), spec).unwrap();
    let x: Vec<f32> = (0..40)
        .map(|i| ((i * 37) % 17) as f32 / 17.0 - 0.5)
        .collect();
    let y: Vec<f32> = (0..20).map(|i| (i % 2) as f32).collect();
    zkstep_core::format::write_float_dataset(
        &PathBuf::from(p("data.safetensors")),
        &x,
        [20, 2],
        &y,
        [20, 1],
    )
    .unwrap();
    assert!(
        run(&[
            "init",
            "--spec",
            &p("spec.toml"),
            "--out",
            &p("c0.safetensors")
        ])
        .0
    );
    assert!(
        run(&[
            "train",
            "--spec",
            &p("spec.toml"),
            "--ckpt",
            &p("c0.safetensors"),
            "--data",
            &p("data.safetensors"),
            "--steps",
            &steps.to_string(),
            "--out-dir",
            &p("run")
        ])
        .0
    );
}

/// `zkstep verify-run` of `d/run` with `d/keys/verifying.key`.
pub fn verify_run(d: &std::path::Path) -> (bool, String, String) {
    let (code, out, err) = verify_run_code(d);
    (code == Some(0), out, err)
}

/// [`verify_run`] with the exit code.
pub fn verify_run_code(d: &std::path::Path) -> (Option<i32>, String, String) {
    let p = |n: &str| -> String { d.join(n).display().to_string() };
    run_code(&[
        "verify-run",
        "--run",
        &p("run"),
        "--vk",
        &p("keys/verifying.key"),
    ])
}

/// What [`proved_run`] made once: `keygen --json`'s and `prove-run --json`'s output.
pub struct Proved {
    pub keygen: String,
    pub prove_run: String,
}

/// A run of [`SPEC`] trained 4 steps, its keys (`keygen --rows 2`) and
/// every step's proof (`prove-run`), made once per test binary (keygen and
/// proving are what cost time) and copied into `d`: each test edits its own copy.
pub fn proved_run(d: &std::path::Path) -> &'static Proved {
    static MADE: std::sync::OnceLock<(PathBuf, Proved)> = std::sync::OnceLock::new();
    let (src, proved) = MADE.get_or_init(|| {
        // under the target's scratch folder, not /tmp: a static is never dropped
        let src = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("proved_run_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&src);
        std::fs::create_dir_all(&src).unwrap();
        trained_run(&src, SPEC, 4);
        let (ok, keygen_out, err) = keygen(&src, &["--json"]);
        assert!(ok, "{err}");
        let p = |n: &str| src.join(n).display().to_string();
        let (ok, prove_run, err) = run(&["prove-run", "--run", &p("run"), "--keys", &p("keys"), "--json"]);
        assert!(ok, "{err}");
        (src, Proved { keygen: keygen_out, prove_run })
    });
    copy_dir(src, d);
    proved
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}
