//! The `zkstep` binary as a user meets it: run as a process, on good and on
//! bad input. Bad input must give a clear error naming the file and the
//! problem, a non-zero exit, no panic, and leave the user's files alone.
#![allow(clippy::unwrap_used, clippy::needless_range_loop)]

#[path = "../../testing/within.rs"]
mod within;

use std::path::PathBuf;
use std::process::{Command, Output};
use zkstep_core::format::{write_checkpoint, write_float_dataset};
use zkstep_core::{Checkpoint, ModelSpec};

fn zkstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zkstep"))
        .args(args)
        .output()
        .expect("the zkstep binary runs")
}

fn ok(args: &[&str]) -> String {
    let o = zkstep(args);
    assert!(
        o.status.success(),
        "zkstep {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs, expects failure with status 2 (bad input: every use here) and no
/// panic; returns stderr.
fn fails(args: &[&str]) -> String {
    let o = zkstep(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        o.status.code(),
        Some(2),
        "zkstep {args:?} should fail with status 2; stderr: {err}"
    );
    assert!(!err.contains("panicked"), "zkstep {args:?} panicked: {err}");
    assert!(err.starts_with("error: "), "unexpected stderr: {err}");
    err
}

const SPEC: &str = "batch_size = 4\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 1\n";

struct Fx {
    dir: tempfile::TempDir,
}

impl Fx {
    fn new() -> Fx {
        let f = Fx {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::write(f.p("spec.toml"), SPEC).unwrap();
        let x: Vec<f32> = (0..40)
            .map(|i| ((i * 37) % 17) as f32 / 17.0 - 0.5)
            .collect();
        let y: Vec<f32> = (0..20).map(|i| (i % 2) as f32).collect();
        write_float_dataset(&f.p("data.safetensors"), &x, [20, 2], &y, [20, 1]).unwrap();
        f
    }
    fn p(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn s(&self, name: &str) -> String {
        self.p(name).display().to_string()
    }
    fn init(&self, out: &str) {
        ok(&[
            "init",
            "--spec",
            &self.s("spec.toml"),
            "--out",
            &self.s(out),
        ]);
    }
}

fn spec() -> ModelSpec {
    ModelSpec::from_toml_str(SPEC).unwrap()
}

#[test]
fn demo_runs_learns_and_proves() {
    // the hidden --fold-budget makes the demo's fold, hence keygen and
    // compression, as small as Nova allows
    let out = ok(&["demo", "--json", "--steps", "40", "--fold-budget", "32768"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["chained"], true);
    assert_eq!(v["steps"].as_array().unwrap().len(), 40);
    assert!(v["loss_after"].as_f64().unwrap() < v["loss_before"].as_f64().unwrap());
    assert_eq!(v["proof"]["step"], 39);
    assert_eq!(v["proof"]["verified"], true);
}

#[test]
fn init_train_commit_inspect_round_trip() {
    let f = Fx::new();
    f.init("c0.safetensors");
    let out = ok(&[
        "train",
        "--spec",
        &f.s("spec.toml"),
        "--ckpt",
        &f.s("c0.safetensors"),
        "--data",
        &f.s("data.safetensors"),
        "--steps",
        "3",
        "--out-dir",
        &f.s("run"),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(f.p("run/run.json")).unwrap()).unwrap();
    assert_eq!(m["steps"].as_array().unwrap().len(), 3);
    for (t, s) in steps.iter().enumerate() {
        let after = f.s(&format!("run/ckpt_{}.safetensors", t + 1));
        let batch = f.s(&format!("run/batch_{t}.safetensors"));
        assert_eq!(
            ok(&["commit", &after, "--spec", &f.s("spec.toml")]).trim(),
            s["c_after"].as_str().unwrap()
        );
        assert_eq!(
            ok(&["commit", &batch, "--spec", &f.s("spec.toml")]).trim(),
            s["c_batch"].as_str().unwrap()
        );
        if t > 0 {
            assert_eq!(s["c_before"], steps[t - 1]["c_after"]);
        }
    }
    let insp = ok(&[
        "inspect",
        &f.s("run/ckpt_3.safetensors"),
        "--spec",
        &f.s("spec.toml"),
        "--json",
    ]);
    let iv: serde_json::Value = serde_json::from_str(&insp).unwrap();
    assert_eq!(iv["metadata"]["step"], "3");
    assert_eq!(iv["commitment"], steps[2]["c_after"]);
    assert_eq!(iv["tensors"].as_array().unwrap().len(), 4);
    // the run's spec copy is the same spec
    assert_eq!(ModelSpec::from_file(&f.p("run/spec.toml")).unwrap(), spec());
}

#[test]
fn overflowing_value_is_a_clear_error() {
    let f = Fx::new();
    let mut ck = Checkpoint::init(&spec(), 1);
    ck.layers[0].w.data.iter_mut().for_each(|w| *w = i64::MAX);
    write_checkpoint(&f.p("big.safetensors"), &spec(), &ck).unwrap();
    let e = fails(&[
        "train",
        "--spec",
        &f.s("spec.toml"),
        "--ckpt",
        &f.s("big.safetensors"),
        "--data",
        &f.s("data.safetensors"),
        "--steps",
        "2",
        "--out-dir",
        &f.s("run"),
    ]);
    assert!(
        e.contains("out of the declared range at layer")
            && e.contains("tensor")
            && e.contains("index"),
        "{e}"
    );
}

#[test]
fn shape_mismatch_names_file_and_tensor() {
    let f = Fx::new();
    // right zkstep metadata for this spec, wrong shape of l1.w ([3, 2] instead of [4, 2])
    use safetensors::tensor::{Dtype, TensorView};
    let meta = std::collections::HashMap::from([
        ("format".to_string(), "zkstep-checkpoint".to_string()),
        ("version".to_string(), "1".to_string()),
        ("scale".to_string(), "1000000000".to_string()),
        ("step".to_string(), "0".to_string()),
        (
            "spec_digest".to_string(),
            zkstep_core::poseidon::fr_to_hex(&spec().digest()),
        ),
    ]);
    let (w, b4, w2, b1) = (
        vec![0u8; 8 * 6],
        vec![0u8; 8 * 4],
        vec![0u8; 8 * 4],
        vec![0u8; 8],
    );
    let views = vec![
        ("l1.w", TensorView::new(Dtype::I64, vec![3, 2], &w).unwrap()),
        ("l1.b", TensorView::new(Dtype::I64, vec![4], &b4).unwrap()),
        (
            "l2.w",
            TensorView::new(Dtype::I64, vec![1, 4], &w2).unwrap(),
        ),
        ("l2.b", TensorView::new(Dtype::I64, vec![1], &b1).unwrap()),
    ];
    std::fs::write(
        f.p("shape.safetensors"),
        safetensors::serialize(views, Some(meta)).unwrap(),
    )
    .unwrap();
    let e = fails(&[
        "commit",
        &f.s("shape.safetensors"),
        "--spec",
        &f.s("spec.toml"),
    ]);
    assert!(
        e.contains("shape.safetensors") && e.contains("l1.w") && e.contains("shape"),
        "{e}"
    );
}

#[test]
fn truncated_file_is_rejected() {
    let f = Fx::new();
    f.init("c0.safetensors");
    let b = std::fs::read(f.p("c0.safetensors")).unwrap();
    for cut in [4, 9, b.len() / 2, b.len() - 1] {
        std::fs::write(f.p("t.safetensors"), &b[..cut]).unwrap();
        let e = fails(&["commit", &f.s("t.safetensors"), "--spec", &f.s("spec.toml")]);
        assert!(
            e.contains("t.safetensors") && e.contains("not a valid safetensors file"),
            "{e}"
        );
    }
}

#[test]
fn non_safetensors_file_is_rejected() {
    let f = Fx::new();
    std::fs::write(
        f.p("junk.safetensors"),
        b"hello, this is not a tensor file at all",
    )
    .unwrap();
    let e = fails(&["inspect", &f.s("junk.safetensors")]);
    assert!(
        e.contains("junk.safetensors") && e.contains("not a valid safetensors"),
        "{e}"
    );
    // a huge header length must not make us allocate or panic
    let mut evil = (u64::MAX / 2).to_le_bytes().to_vec();
    evil.extend_from_slice(b"{}");
    std::fs::write(f.p("evil.safetensors"), &evil).unwrap();
    fails(&["inspect", &f.s("evil.safetensors")]);
}

#[test]
fn checkpoint_for_another_spec_is_rejected() {
    let f = Fx::new();
    f.init("c0.safetensors");
    std::fs::write(f.p("other.toml"), SPEC.replace("lr = 0.1", "lr = 0.2")).unwrap();
    let e = fails(&[
        "commit",
        &f.s("c0.safetensors"),
        "--spec",
        &f.s("other.toml"),
    ]);
    assert!(
        e.contains("c0.safetensors") && e.contains("another spec"),
        "{e}"
    );
    // and a batch is not a checkpoint
    ok(&[
        "train",
        "--spec",
        &f.s("spec.toml"),
        "--ckpt",
        &f.s("c0.safetensors"),
        "--data",
        &f.s("data.safetensors"),
        "--steps",
        "1",
        "--out-dir",
        &f.s("run"),
    ]);
    let e = fails(&[
        "train",
        "--spec",
        &f.s("spec.toml"),
        "--ckpt",
        &f.s("run/batch_0.safetensors"),
        "--data",
        &f.s("data.safetensors"),
        "--steps",
        "1",
        "--out-dir",
        &f.s("run2"),
    ]);
    assert!(
        e.contains("batch_0.safetensors") && e.contains("zkstep-batch"),
        "{e}"
    );
}

#[test]
fn nan_and_inf_in_float_imports_are_rejected() {
    let f = Fx::new();
    f.init("c0.safetensors");
    let mut x: Vec<f32> = vec![0.5; 40];
    x[13] = f32::NAN;
    write_float_dataset(&f.p("nan.safetensors"), &x, [20, 2], &[0.0; 20], [20, 1]).unwrap();
    let e = fails(&[
        "train",
        "--spec",
        &f.s("spec.toml"),
        "--ckpt",
        &f.s("c0.safetensors"),
        "--data",
        &f.s("nan.safetensors"),
        "--steps",
        "1",
        "--out-dir",
        &f.s("run"),
    ]);
    assert!(
        e.contains("nan.safetensors") && e.contains("NaN") && e.contains("13"),
        "{e}"
    );
    // a float checkpoint with an Inf (PyTorch naming)
    let w: Vec<f32> = vec![0.1, f32::INFINITY, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    let b: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    let zeros4: Vec<u8> = [0f32; 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    let zeros1: Vec<u8> = [0f32; 1].iter().flat_map(|v| v.to_le_bytes()).collect();
    use safetensors::tensor::{Dtype, TensorView};
    let views = vec![
        (
            "0.weight",
            TensorView::new(Dtype::F32, vec![4, 2], &b).unwrap(),
        ),
        (
            "0.bias",
            TensorView::new(Dtype::F32, vec![4], &zeros4).unwrap(),
        ),
        (
            "2.weight",
            TensorView::new(Dtype::F32, vec![1, 4], &zeros4).unwrap(),
        ),
        (
            "2.bias",
            TensorView::new(Dtype::F32, vec![1], &zeros1).unwrap(),
        ),
    ];
    std::fs::write(
        f.p("torch.safetensors"),
        safetensors::serialize(views, None).unwrap(),
    )
    .unwrap();
    let e = fails(&[
        "import",
        "--spec",
        &f.s("spec.toml"),
        "--in",
        &f.s("torch.safetensors"),
        "--out",
        &f.s("imp.safetensors"),
    ]);
    assert!(
        e.contains("torch.safetensors") && e.contains("inf") && e.contains("0.weight"),
        "{e}"
    );
    assert!(!f.p("imp.safetensors").exists());
}

#[test]
fn pytorch_import_quantises_with_a_report() {
    let f = Fx::new();
    let w: Vec<u8> = [0.1f32, -0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let b4: Vec<u8> = [0.01f32; 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    let b1: Vec<u8> = [0.5f32].iter().flat_map(|v| v.to_le_bytes()).collect();
    use safetensors::tensor::{Dtype, TensorView};
    let views = vec![
        (
            "net.0.weight",
            TensorView::new(Dtype::F32, vec![4, 2], &w).unwrap(),
        ),
        (
            "net.0.bias",
            TensorView::new(Dtype::F32, vec![4], &b4).unwrap(),
        ),
        (
            "net.2.weight",
            TensorView::new(Dtype::F32, vec![1, 4], &b4).unwrap(),
        ),
        (
            "net.2.bias",
            TensorView::new(Dtype::F32, vec![1], &b1).unwrap(),
        ),
    ];
    std::fs::write(
        f.p("torch.safetensors"),
        safetensors::serialize(views, None).unwrap(),
    )
    .unwrap();
    let out = ok(&[
        "import",
        "--spec",
        &f.s("spec.toml"),
        "--in",
        &f.s("torch.safetensors"),
        "--out",
        &f.s("imp.safetensors"),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["quantisation"]["count"], 17);
    let max = v["quantisation"]["max_abs_err"].as_f64().unwrap();
    assert!(max > 0.0 && max <= 0.5e-9 + 1e-15, "{max}"); // f32 0.1 is not 0.1: rounding at 1e-9 shows
    let ck = zkstep_core::format::read_checkpoint(&f.p("imp.safetensors"), &spec()).unwrap();
    assert_eq!(ck.layers[0].w.at(0, 1), -200_000_003); // f32(-0.2) = -0.200000003
}

/// A safetensors file of f32 tensors.
fn write_f32(path: &std::path::Path, tensors: &[(String, Vec<usize>, Vec<f32>)]) {
    use safetensors::tensor::{Dtype, TensorView};
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, _, v)| v.iter().flat_map(|x| x.to_le_bytes()).collect())
        .collect();
    let views: Vec<(String, TensorView)> = tensors
        .iter()
        .zip(&bytes)
        .map(|((n, s, _), b)| {
            (
                n.clone(),
                TensorView::new(Dtype::F32, s.clone(), b).unwrap(),
            )
        })
        .collect();
    std::fs::write(path, safetensors::serialize(views, None).unwrap()).unwrap();
}

/// `zkstep import --optimizer-state`: PyTorch's Adam state (exp_avg,
/// exp_avg_sq, step per parameter index) becomes the checkpoint's m, v and
/// step; a missing tensor, unequal steps and a negative second moment are
/// errors naming the file and the tensor.
#[test]
fn pytorch_adam_state_imports_with_its_step() {
    let f = Fx::new();
    std::fs::write(
        f.p("adam.toml"),
        SPEC.replace("lr = 0.1", "kind = \"adam\""),
    )
    .unwrap();
    let shapes = [vec![4, 2], vec![4], vec![1, 4], vec![1]];
    let params: Vec<(String, Vec<usize>, Vec<f32>)> = ["0.weight", "0.bias", "2.weight", "2.bias"]
        .iter()
        .zip(&shapes)
        .map(|(n, s)| {
            (
                format!("net.{n}"),
                s.clone(),
                vec![0.25; s.iter().product()],
            )
        })
        .collect();
    write_f32(&f.p("model.safetensors"), &params);
    let state = |step2: f32, sq: f32| -> Vec<(String, Vec<usize>, Vec<f32>)> {
        let mut t = vec![];
        for (i, s) in shapes.iter().enumerate() {
            let n: usize = s.iter().product();
            t.push((format!("state.{i}.exp_avg"), s.clone(), vec![-0.125; n]));
            t.push((format!("state.{i}.exp_avg_sq"), s.clone(), vec![sq; n]));
            let step = if i == 2 { step2 } else { 7.0 };
            t.push((format!("state.{i}.step"), vec![], vec![step]));
        }
        t
    };
    write_f32(&f.p("opt.safetensors"), &state(7.0, 0.0625));
    let import = |opt: &str, out: &str| {
        vec![
            "import".to_string(),
            "--spec".into(),
            f.s("adam.toml"),
            "--in".into(),
            f.s("model.safetensors"),
            "--optimizer-state".into(),
            f.s(opt),
            "--out".into(),
            f.s(out),
            "--json".into(),
        ]
    };
    let args = import("opt.safetensors", "imp.safetensors");
    let out = ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["step"], 7);
    let spec = ModelSpec::from_toml_str(&SPEC.replace("lr = 0.1", "kind = \"adam\"")).unwrap();
    let ck = zkstep_core::format::read_checkpoint(&f.p("imp.safetensors"), &spec).unwrap();
    assert_eq!(ck.step, 7);
    // both moments at S²: −0.125 and 0.0625
    assert_eq!(ck.layers[1].state[0].w.at(0, 3), -125_000_000_000_000_000);
    assert_eq!(ck.layers[0].state[1].b[2], 62_500_000_000_000_000);
                                                                    // the imported checkpoint trains on (the next step is update 8)
    assert!(zkstep_core::step(
        &spec,
        &ck,
        &zkstep_core::Batch {
            x: zkstep_core::Matrix::zeros(4, 2),
            y: zkstep_core::Matrix::zeros(4, 1),
            salt: zkstep_core::Fr::from(1u64),
        }
    )
    .is_ok());
    for (file, tensors, want) in [
        ("steps.safetensors", state(6.0, 0.0625), "state.2.step"),
        ("neg.safetensors", state(7.0, -1.0), "never negative"),
        (
            "missing.safetensors",
            state(7.0, 0.0)
                .into_iter()
                .filter(|t| t.0 != "state.3.exp_avg")
                .collect(),
            "missing tensor `state.3.exp_avg`",
        ),
    ] {
        write_f32(&f.p(file), &tensors);
        let args = import(file, "bad.safetensors");
        let e = fails(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(e.contains(file) && e.contains(want), "{e}");
        assert!(!f.p("bad.safetensors").exists());
    }
}

#[test]
fn missing_file_is_named() {
    let f = Fx::new();
    let e = fails(&[
        "commit",
        &f.s("nope.safetensors"),
        "--spec",
        &f.s("spec.toml"),
    ]);
    assert!(
        e.contains("nope.safetensors") && e.contains("No such file"),
        "{e}"
    );
    let e = fails(&[
        "commit",
        &f.s("nope.safetensors"),
        "--spec",
        &f.s("nospec.toml"),
    ]);
    assert!(e.contains("nospec.toml"), "{e}");
}

#[test]
fn bad_spec_names_the_key() {
    let f = Fx::new();
    std::fs::write(f.p("bad.toml"), SPEC.replace("inputs = 4", "inputs = 5")).unwrap();
    let e = fails(&[
        "init",
        "--spec",
        &f.s("bad.toml"),
        "--out",
        &f.s("c.safetensors"),
    ]);
    assert!(
        e.contains("bad.toml") && e.contains("layers[1].inputs"),
        "{e}"
    );
}

#[test]
fn unwritable_output_directory_is_a_clear_error() {
    let f = Fx::new();
    f.init("c0.safetensors");
    std::fs::write(f.p("plainfile"), b"x").unwrap();
    let e = fails(&[
        "train",
        "--spec",
        &f.s("spec.toml"),
        "--ckpt",
        &f.s("c0.safetensors"),
        "--data",
        &f.s("data.safetensors"),
        "--steps",
        "1",
        "--out-dir",
        &f.s("plainfile/run"),
    ]);
    assert!(e.contains("plainfile/run"), "{e}");
    let e = fails(&[
        "init",
        "--spec",
        &f.s("spec.toml"),
        "--out",
        &f.s("plainfile/c.safetensors"),
    ]);
    assert!(e.contains("plainfile/c.safetensors"), "{e}");
}

#[test]
fn existing_files_are_not_overwritten() {
    let f = Fx::new();
    f.init("c0.safetensors");
    let before = std::fs::read(f.p("c0.safetensors")).unwrap();
    let e = fails(&[
        "init",
        "--spec",
        &f.s("spec.toml"),
        "--out",
        &f.s("c0.safetensors"),
        "--seed",
        "9",
    ]);
    assert!(e.contains("already exists"), "{e}");
    assert_eq!(std::fs::read(f.p("c0.safetensors")).unwrap(), before);
    ok(&[
        "train",
        "--spec",
        &f.s("spec.toml"),
        "--ckpt",
        &f.s("c0.safetensors"),
        "--data",
        &f.s("data.safetensors"),
        "--steps",
        "1",
        "--out-dir",
        &f.s("run"),
    ]);
    let e = fails(&[
        "train",
        "--spec",
        &f.s("spec.toml"),
        "--ckpt",
        &f.s("c0.safetensors"),
        "--data",
        &f.s("data.safetensors"),
        "--steps",
        "1",
        "--out-dir",
        &f.s("run"),
    ]);
    assert!(e.contains("run.json") && e.contains("--force"), "{e}");
}

#[test]
fn failure_mid_run_keeps_completed_steps_and_leaves_no_partial_file() {
    let f = Fx::new();
    // a learning rate this large diverges and overflows after a few steps
    std::fs::write(f.p("wild.toml"), SPEC.replace("lr = 0.1", "lr = 100000")).unwrap();
    ok(&[
        "init",
        "--spec",
        &f.s("wild.toml"),
        "--out",
        &f.s("c0.safetensors"),
    ]);
    let e = fails(&[
        "train",
        "--spec",
        &f.s("wild.toml"),
        "--ckpt",
        &f.s("c0.safetensors"),
        "--data",
        &f.s("data.safetensors"),
        "--steps",
        "50",
        "--out-dir",
        &f.s("run"),
    ]);
    assert!(e.contains("out of the declared range"), "{e}");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(f.p("run/run.json")).unwrap()).unwrap();
    let done = m["steps"].as_array().unwrap();
    assert!(
        !done.is_empty() && done.len() < 50,
        "expected a failure after some steps, got {}",
        done.len()
    );
    // the error names the step that failed (the first not in the manifest)
    let t = done.len();
    assert!(
        e.contains(&format!("training step {t} (ckpt_{t} → ckpt_{})", t + 1)),
        "{e}"
    );
    // every completed step's files are intact and match the manifest
    for s in done {
        let after = f.s(&format!("run/{}", s["after"].as_str().unwrap()));
        assert_eq!(
            ok(&["commit", &after, "--spec", &f.s("wild.toml")]).trim(),
            s["c_after"].as_str().unwrap()
        );
    }
    // nothing for the failed step, and no temporary files
    let n = done.len();
    assert!(!f.p(&format!("run/ckpt_{}.safetensors", n + 1)).exists());
    assert!(!f.p(&format!("run/batch_{n}.safetensors")).exists());
    for e in std::fs::read_dir(f.p("run")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !name.starts_with(".zkstep-tmp"),
            "temporary file left behind: {name}"
        );
    }
}

#[test]
fn clap_usage_errors_exit_2() {
    let o = zkstep(&["train", "--spec"]);
    assert_eq!(o.status.code(), Some(2));
    let o = zkstep(&["init", "--help"]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("--seed"));
}

/// `inspect` on a file that is not zkstep's shows I64 values as stored (UCI
/// digit labels 0–9 are 0 and 9, not 0.000000), and zkstep's fixed-point
/// files as reals.
#[test]
fn inspect_shows_stored_values_as_stored() {
    use safetensors::tensor::{Dtype, TensorView};
    let f = Fx::new();
    let labels: Vec<u8> = (0i64..10).flat_map(|v| v.to_le_bytes()).collect();
    let bytes = safetensors::serialize(
        vec![(
            "labels",
            TensorView::new(Dtype::I64, vec![10], &labels).unwrap(),
        )],
        None,
    )
    .unwrap();
    std::fs::write(f.p("labels.safetensors"), bytes).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", &f.s("labels.safetensors"), "--json"])).unwrap();
    assert_eq!(v["tensors"][0]["min"], 0);
    assert_eq!(v["tensors"][0]["max"], 9);
    let text = ok(&["inspect", &f.s("labels.safetensors")]);
    assert!(
        text.contains("values shown as stored") && text.contains(" 9"),
        "{text}"
    );
    // a zkstep checkpoint: reals at scale 10⁹
    f.init("c0.safetensors");
    let text = ok(&["inspect", &f.s("c0.safetensors")]);
    assert!(text.contains("shown as reals"), "{text}");
}

impl Fx {
    /// `zkstep train` from `ckpt` into `dir` for `steps` steps, with `extra` flags.
    fn train_args(&self, ckpt: &str, dir: &str, steps: &str, extra: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = [
            "train",
            "--spec",
            &self.s("spec.toml"),
            "--ckpt",
            &self.s(ckpt),
            "--data",
            &self.s("data.safetensors"),
            "--steps",
            steps,
            "--out-dir",
            &self.s(dir),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    }
    fn train_ok(&self, ckpt: &str, dir: &str, steps: &str, extra: &[&str]) -> String {
        let args = self.train_args(ckpt, dir, steps, extra);
        ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }
    fn train_fails(&self, ckpt: &str, dir: &str, steps: &str, extra: &[&str]) -> String {
        let args = self.train_args(ckpt, dir, steps, extra);
        fails(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }
    fn manifest(&self, dir: &str) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.p(&format!("{dir}/run.json"))).unwrap()).unwrap()
    }
}

/// A run directory another command holds is refused at once, naming the
/// directory and its lock file; once the lock is released the run proceeds.
#[test]
fn a_locked_run_directory_is_refused_at_once() {
    let f = Fx::new();
    f.init("c0.safetensors");
    std::fs::create_dir(f.p("run")).unwrap();
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(f.p("run/.zkstep.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let t = std::time::Instant::now();
    let e = f.train_fails("c0.safetensors", "run", "2", &[]);
    assert!(
        e.contains(&f.s("run")) && e.contains(".zkstep.lock") && e.contains("another zkstep"),
        "{e}"
    );
    assert!(t.elapsed().as_secs() < 30, "train waited for the lock");
    assert!(!f.p("run/run.json").exists());
    // prove-run takes the same lock (before it looks for keys)
    let e = fails(&["prove-run", "--run", &f.s("run"), "--keys", &f.s("keys")]);
    assert!(e.contains(".zkstep.lock"), "{e}");
    drop(lock);
    f.train_ok("c0.safetensors", "run", "2", &[]);
    assert_eq!(f.manifest("run")["steps"].as_array().unwrap().len(), 2);
}

/// `train` and `demo --out-dir` refuse to replace any file they would write
/// (not only run.json), before training; `--force` replaces them.
#[test]
fn every_file_a_run_would_write_needs_force() {
    let f = Fx::new();
    f.init("c0.safetensors");
    std::fs::create_dir(f.p("run")).unwrap();
    std::fs::write(f.p("run/spec.toml"), "# my own notes\n").unwrap();
    let e = f.train_fails("c0.safetensors", "run", "2", &[]);
    assert!(
        e.contains("spec.toml") && e.contains("already exists") && e.contains("--force"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(f.p("run/spec.toml")).unwrap(),
        "# my own notes\n"
    );
    assert!(!f.p("run/ckpt_0.safetensors").exists() && !f.p("run/run.json").exists());
    f.train_ok("c0.safetensors", "run", "2", &["--force"]);
    assert_eq!(ModelSpec::from_file(&f.p("run/spec.toml")).unwrap(), spec());
    // a checkpoint where a later step would go
    std::fs::create_dir(f.p("run2")).unwrap();
    std::fs::write(f.p("run2/ckpt_2.safetensors"), b"keep me").unwrap();
    let e = f.train_fails("c0.safetensors", "run2", "2", &[]);
    assert!(e.contains("ckpt_2.safetensors"), "{e}");
    assert_eq!(
        std::fs::read(f.p("run2/ckpt_2.safetensors")).unwrap(),
        b"keep me"
    );
    // ... but not where this run does not reach
    f.train_ok("c0.safetensors", "run2", "1", &[]);
    assert_eq!(
        std::fs::read(f.p("run2/ckpt_2.safetensors")).unwrap(),
        b"keep me"
    );
    // demo --out-dir likewise
    std::fs::create_dir(f.p("demo")).unwrap();
    std::fs::write(f.p("demo/batch_1.safetensors"), b"mine").unwrap();
    let e = fails(&[
        "demo",
        "--no-prove",
        "--steps",
        "2",
        "--out-dir",
        &f.s("demo"),
    ]);
    assert!(
        e.contains("batch_1.safetensors") && e.contains("--force"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(f.p("demo/batch_1.safetensors")).unwrap(),
        b"mine"
    );
    ok(&[
        "demo",
        "--no-prove",
        "--steps",
        "2",
        "--out-dir",
        &f.s("demo"),
        "--force",
    ]);
    assert_eq!(f.manifest("demo")["steps"].as_array().unwrap().len(), 2);
}

/// `train --resume` continues a run from its last completed step: the
/// earlier steps stay as they were, the new ones chain on, and the files it
/// resumes from are checked against the manifest.
#[test]
fn resume_continues_a_run_from_its_last_step() {
    let f = Fx::new();
    f.init("c0.safetensors");
    f.train_ok("c0.safetensors", "run", "2", &[]);
    let before = f.manifest("run")["steps"].as_array().unwrap().clone();
    let dir = f.s("run");
    let resume = |steps: &str, extra: &[&str]| {
        let mut v = vec!["train", "--resume", "--out-dir", &dir, "--steps", steps];
        v.extend_from_slice(extra);
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| zkstep(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let o = run(resume("2", &["--json"]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["steps"].as_array().unwrap().len(), 2); // the steps it added
    let steps = f.manifest("run")["steps"].as_array().unwrap().clone();
    assert_eq!(steps.len(), 4);
    assert_eq!(&steps[..2], &before[..]);
    for (t, s) in steps.iter().enumerate() {
        assert_eq!(s["step"], t as u64);
        if t > 0 {
            assert_eq!(s["c_before"], steps[t - 1]["c_after"]);
        }
    }
    assert_eq!(
        ok(&[
            "commit",
            &f.s("run/ckpt_4.safetensors"),
            "--spec",
            &f.s("spec.toml")
        ])
        .trim(),
        steps[3]["c_after"].as_str().unwrap()
    );
    // a leftover file past the last step (as a crash leaves one) needs --force
    std::fs::copy(
        f.p("run/batch_3.safetensors"),
        f.p("run/batch_4.safetensors"),
    )
    .unwrap();
    let o = run(resume("1", &[]));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("batch_4.safetensors") && e.contains("--force"),
        "{e}"
    );
    assert!(run(resume("1", &["--force"])).status.success());
    assert_eq!(f.manifest("run")["steps"].as_array().unwrap().len(), 5);
    // a last checkpoint that is not the manifest's is refused, naming it
    let mut other = Checkpoint::init(&spec(), 9);
    other.step = 5;
    write_checkpoint(&f.p("run/ckpt_5.safetensors"), &spec(), &other).unwrap();
    let o = run(resume("1", &[]));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("ckpt_5.safetensors") && e.contains("step 4's c_after"),
        "{e}"
    );
    assert_eq!(f.manifest("run")["steps"].as_array().unwrap().len(), 5);
    // nothing to resume; the run supplies the spec and checkpoint
    let e = fails(&[
        "train",
        "--resume",
        "--out-dir",
        &f.s("none"),
        "--steps",
        "1",
    ]);
    assert!(e.contains("no run to resume"), "{e}");
    let o = run(resume("1", &["--spec", &f.s("spec.toml")]));
    assert_eq!(o.status.code(), Some(2));
    // without --resume an existing run needs --force, which starts over
    f.train_ok("c0.safetensors", "run", "1", &["--force"]);
    assert_eq!(f.manifest("run")["steps"].as_array().unwrap().len(), 1);
}

/// Step numbers that would pass u64::MAX are an error, not "wrote 0 steps".
#[test]
fn step_count_overflow_is_an_error() {
    let f = Fx::new();
    let mut ck = Checkpoint::init(&spec(), 1);
    ck.step = 58;
    write_checkpoint(&f.p("c58.safetensors"), &spec(), &ck).unwrap();
    let e = f.train_fails("c58.safetensors", "run", "18446744073709551615", &[]);
    assert!(
        e.contains("--steps 18446744073709551615 from step 58") && e.contains("last step"),
        "{e}"
    );
    assert!(!f.p("run/run.json").exists());
}

/// `zkstep merge` on a round of 4 nodes (round file: τ, the previous global
/// model, each node's checkpoint and reputation): the global model is
/// written and its commitment is `zkstep commit`'s; with τ between the
/// nodes' distances the farthest is zeroed and said so; bad rounds are
/// refused naming the file and the reason, and nothing is written.
#[test]
fn merge_averages_a_round_and_refuses_bad_ones() {
    let f = Fx::new();
    for seed in 0..5 {
        ok(&[
            "init",
            "--spec",
            &f.s("spec.toml"),
            "--out",
            &f.s(&format!("m{seed}.safetensors")),
            "--seed",
            &seed.to_string(),
        ]);
    }
    let round = |tau: &str, reps: &[&str]| {
        let mut t = format!("{tau}\nprevious = \"m0.safetensors\"\n");
        for (i, r) in reps.iter().enumerate() {
            t += &format!("[[nodes]]\ncheckpoint = \"m{}.safetensors\"\n{r}\n", i + 1);
        }
        t
    };
    let reps = ["reputation = 1", "reputation = 2", "reputation = 3", "reputation = 4"];
    let merge = |text: &str, out: &str| {
        std::fs::write(f.p("round.toml"), text).unwrap();
        zkstep(&[
            "merge",
            "--spec",
            &f.s("spec.toml"),
            "--round",
            &f.s("round.toml"),
            "--out",
            &f.s(out),
            "--json",
        ])
    };
    let o = merge(&round("tau = 1000", &reps), "g.safetensors");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    assert!(nodes.iter().all(|n| n["zeroed"] == false && n["weight"] == n["reputation"]));
    assert_eq!(
        ok(&["commit", &f.s("g.safetensors"), "--spec", &f.s("spec.toml")]).trim(),
        v["commitment"].as_str().unwrap()
    );
    // τ between the nearest and the farthest node: the farthest weighs nothing
    let d: Vec<f64> = nodes.iter().map(|n| n["distance"].as_f64().unwrap()).collect();
    let (lo, hi) = d.iter().fold((f64::MAX, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(lo < hi, "{d:?}");
    std::fs::write(f.p("round.toml"), round(&format!("tau = {}", (lo + hi) / 2.0), &reps)).unwrap();
    let text = ok(&[
        "merge",
        "--spec",
        &f.s("spec.toml"),
        "--round",
        &f.s("round.toml"),
        "--out",
        &f.s("g2.safetensors"),
    ]);
    assert!(text.contains("zeroed: ") && text.contains("more than tau"), "{text}");
    // an existing output is not replaced without --force
    let before = std::fs::read(f.p("g.safetensors")).unwrap();
    let o = merge(&round("tau = 1000", &reps), "g.safetensors");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(f.p("g.safetensors")).unwrap(), before);
    // bad rounds
    std::fs::write(f.p("other.toml"), SPEC.replace("outputs = 1", "outputs = 2")).unwrap();
    ok(&["init", "--spec", &f.s("other.toml"), "--out", &f.s("m9.safetensors")]);
    let zero = ["reputation = 0"; 4];
    let swapped = round("tau = 1000", &reps).replace("m4.safetensors", "m9.safetensors");
    let twice = round("tau = 1000", &reps).replace("m4.safetensors", "m1.safetensors");
    for (text, want) in [
        (round("tau = 1000", &zero), "every node's weight is zero"),
        (round("tau = 1000", &["reputation = 1", "reputation = -2", "reputation = 3", "reputation = 4"]), "nodes[1].reputation must be in"),
        (round("tau = 1000", &["reputaton = 1"; 4]), "reputaton"),
        (round("", &reps), "`tau`"),
        (swapped, "m9.safetensors"),
        (twice, "names the same checkpoint as nodes[0]"),
    ] {
        let o = merge(&text, "bad.safetensors");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{want}: {err}");
        assert!(err.contains(want) && !err.contains("panicked"), "{want}: {err}");
        if want != "m9.safetensors" {
            assert!(err.contains("round.toml"), "{want}: {err}");
        }
        assert!(!f.p("bad.safetensors").exists(), "{want}");
    }
}

/// A whole merge round through the CLI: `zkstep merge`, `zkstep keygen
/// --merge 4 --commit-scheme chain`, `zkstep prove-merge`; the proof verifies (the verifier crate,
/// as `zkstep-verify` runs it) with the global model's commitment, and a
/// global model that is not the round's merge, a round of another size or
/// an existing output are refused (exit 2) with nothing written.
#[test]
fn a_round_is_merged_proven_and_verified() {
    let f = Fx::new();
    for seed in 0..5 {
        let out = f.s(&format!("m{seed}.safetensors"));
        ok(&["init", "--spec", &f.s("spec.toml"), "--out", &out, "--seed", &seed.to_string()]);
    }
    let mut round = "tau = 1000\nprevious = \"m0.safetensors\"\n".to_string();
    for i in 1..5 {
        round += &format!("[[nodes]]\ncheckpoint = \"m{i}.safetensors\"\nreputation = {i}\n");
    }
    std::fs::write(f.p("round.toml"), &round).unwrap();
    std::fs::write(f.p("round3.toml"), round.split("[[nodes]]").take(4).collect::<Vec<_>>().join("[[nodes]]")).unwrap();
    let spec = f.s("spec.toml");
    ok(&["merge", "--spec", &spec, "--round", &f.s("round.toml"), "--out", &f.s("g.safetensors")]);
    // chain merge keys: the statement's commitments are what `zkstep commit` prints
    let text = ok(&["keygen", "--spec", &spec, "--out", &f.s("keys"), "--merge", "4", "--commit-scheme", "chain"]);
    assert!(text.contains("merge_verifying.key") && text.contains("merges of 4 checkpoints"), "{text}");
    assert!(!f.p("keys/merge_points.key").exists());
    let prove = |global: &str, round: &str, out: &str| {
        zkstep(&[
            "prove-merge", "--spec", &spec, "--keys", &f.s("keys"), "--round", &f.s(round), "--global", &f.s(global),
            "--out", &f.s(out), "--json",
        ])
    };
    let o = prove("g.safetensors", "round.toml", "merge.zkstep");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c_global = ok(&["commit", &f.s("g.safetensors"), "--spec", &spec]);
    assert_eq!(v["c_global"].as_str().unwrap(), c_global.trim());
    use zkstep_verifier::merge::{read_merge_key, read_merge_proof, verify_merge_proof};
    let key = read_merge_key(&std::fs::read(f.p("keys/merge_verifying.key")).unwrap()).unwrap();
    let proof = read_merge_proof(&std::fs::read(f.p("merge.zkstep")).unwrap()).unwrap();
    let (st, _) = verify_merge_proof(&key, &proof).unwrap();
    assert_eq!(zkstep_core::poseidon::fr_to_hex(&st.c_global), c_global.trim());
    assert_eq!(st.reputations, [1, 2, 3, 4]);
    // refusals: nothing written, the existing proof untouched
    let before = std::fs::read(f.p("merge.zkstep")).unwrap();
    for (global, round, out, want) in [
        ("m1.safetensors", "round.toml", "bad.zkstep", "not the merge of the round's checkpoints"),
        ("g.safetensors", "round3.toml", "bad.zkstep", "are for 4"),
        ("g.safetensors", "round.toml", "merge.zkstep", "merge.zkstep"),
    ] {
        let o = prove(global, round, out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{want}: {err}");
        assert!(err.contains(want) && !err.contains("panicked"), "{want}: {err}");
        assert!(!f.p("bad.zkstep").exists());
    }
    assert_eq!(std::fs::read(f.p("merge.zkstep")).unwrap(), before);
}

/// `init` refuses a spec that keygen could not key (a batch too large for
/// any fold within the budget), naming the file and the reason, before
/// anything is written; a larger `--fold-budget` is the user's to choose.
#[test]
fn init_refuses_a_spec_no_fold_can_prove() {
    let f = Fx::new();
    // 8192 samples: over the budget by arithmetic; 2048: by its fold's count
    for batch in [8192, 2048] {
        let spec = f.p(&format!("b{batch}.toml"));
        std::fs::write(&spec, SPEC.replace("batch_size = 4", &format!("batch_size = {batch}"))).unwrap();
        let e = fails(&["init", "--spec", &f.s(&format!("b{batch}.toml")), "--out", &f.s("c.safetensors")]);
        assert!(
            e.contains(&format!("b{batch}.toml")) && e.contains("cannot be proven") && e.contains("smaller batch_size"),
            "{e}"
        );
        assert!(!f.p("c.safetensors").exists());
    }
    ok(&[
        "init",
        "--spec",
        &f.s("b2048.toml"),
        "--out",
        &f.s("c.safetensors"),
        "--fold-budget",
        "2000000",
    ]);
    assert!(f.p("c.safetensors").exists());
}

/// `init` refuses a spec whose value_bits cannot hold the initial weights.
#[test]
fn init_refuses_weights_that_do_not_fit_value_bits() {
    let f = Fx::new();
    std::fs::write(f.p("narrow.toml"), format!("value_bits = 20\n{SPEC}")).unwrap();
    let e = fails(&[
        "init",
        "--spec",
        &f.s("narrow.toml"),
        "--out",
        &f.s("c.safetensors"),
    ]);
    assert!(
        e.contains("initial weights do not fit value_bits = 20"),
        "{e}"
    );
    assert!(!f.p("c.safetensors").exists());
}

/// `prove-run` checks every step's batch against the manifest's c_batch, as
/// it does the checkpoints, before it loads keys (none exist here).
#[test]
fn prove_run_refuses_a_batch_that_is_not_the_manifests() {
    let f = Fx::new();
    f.init("c0.safetensors");
    f.train_ok("c0.safetensors", "run", "2", &[]);
    // the same step of another run: same samples and step, another salt
    f.train_ok("c0.safetensors", "other", "2", &[]);
    // prove-run with `batch` in place of run/batch_1.safetensors
    let with_batch_1 = |batch: &str| {
        std::fs::copy(f.p(batch), f.p("run/batch_1.safetensors")).unwrap();
        fails(&["prove-run", "--run", &f.s("run"), "--keys", &f.s("no-keys")])
    };
    let e = with_batch_1("other/batch_1.safetensors");
    assert!(
        e.contains("step 1's c_batch") && e.contains("batch_1.safetensors"),
        "{e}"
    );
    assert!(!e.contains("no-keys"), "keys were looked at first: {e}");
    // another step's batch is refused too
    let e = with_batch_1("run/batch_0.safetensors");
    assert!(
        e.contains("batch_1.safetensors") && e.contains("step 1"),
        "{e}"
    );
}

/// File names that are not UTF-8 (legal on Linux) are written and reported
/// (shown with U+FFFD), never a panic after the output was written: `json!`
/// of such a path panics, so every report takes paths through `path_json`.
#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_are_reported_not_a_panic() {
    use std::ffi::{OsStr, OsString};
    use std::os::unix::ffi::OsStrExt;
    let f = Fx::new();
    let (spec, data) = (f.p("spec.toml"), f.p("data.safetensors"));
    let odd = |name: &str, json: bool| {
        let mut b = name.as_bytes().to_vec();
        b.extend_from_slice(if json { b"\xff" } else { b"\xfe" });
        f.dir.path().join(OsStr::from_bytes(&b))
    };
    let arg = |s: &str| OsString::from(s);
    // every subcommand that names a file in its report, with --json and
    // without (issue 30, finding 3); the proving ones are in prove_cli.rs
    for json in [true, false] {
        let (ck, run, ck2) = (odd("ck.safetensors", json), odd("run", json), odd("ck2", json));
        let (keys, demo, bench) = (odd("keys", json), odd("demo", json), odd("bench.json", json));
        let cases: Vec<(&str, Vec<OsString>)> = vec![
            ("init", vec![arg("init"), arg("--spec"), spec.clone().into(), arg("--out"), ck.clone().into()]),
            ("commit", vec![arg("commit"), ck.clone().into(), arg("--spec"), spec.clone().into()]),
            ("inspect", vec![arg("inspect"), ck.clone().into()]),
            (
                "train",
                vec![
                    arg("train"), arg("--spec"), spec.clone().into(), arg("--ckpt"), ck.clone().into(), arg("--data"),
                    data.clone().into(), arg("--steps"), arg("1"), arg("--out-dir"), run.into(),
                ],
            ),
            ("init again", vec![arg("init"), arg("--spec"), spec.clone().into(), arg("--out"), ck2.into(), arg("--seed"), arg("3")]),
            ("keygen", vec![arg("keygen"), arg("--spec"), spec.clone().into(), arg("--out"), keys.into()]),
            ("demo", vec![arg("demo"), arg("--steps"), arg("1"), arg("--no-prove"), arg("--out-dir"), demo.into()]),
            (
                "bench",
                vec![arg("bench"), arg("--dry-run"), arg("--widths"), arg("4"), arg("--batch"), arg("2"), arg("--json"), bench.into()],
            ),
        ];
        for (what, mut args) in cases {
            // bench's --json names its report file, not the output format
            if json && what != "bench" {
                args.push(arg("--json"));
            }
            let o = Command::new(env!("CARGO_BIN_EXE_zkstep")).args(&args).output().unwrap();
            let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            assert!(o.status.success() && !err.contains("panicked"), "{what} (json {json}): {err}");
            // the path is in the report, its odd byte shown as U+FFFD
            let shown = if json && what != "bench" {
                serde_json::from_str::<serde_json::Value>(&out).unwrap().to_string()
            } else {
                format!("{out}{err}")
            };
            // (text: `commit` prints the commitment alone, `demo` its own summary)
            if !matches!(what, "demo" | "commit") {
                assert!(shown.contains('\u{fffd}'), "{what} (json {json}): {shown}");
            }
        }
    }
}

/// `init` of a spec at the parameter limit under a 2 GiB address-space
/// limit (`ulimit -v`) says up front how much memory its checkpoint needs
/// and exits 2, instead of aborting when an allocation fails (issue 30,
/// finding 9); nothing is written.
#[test]
fn init_refuses_a_spec_that_does_not_fit_in_memory() {
    let f = Fx::new();
    std::fs::write(
        f.p("big.toml"),
        "batch_size = 1\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 16383\noutputs = 16384\n",
    )
    .unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 2097152 && exec '{}' init --spec '{}' --out '{}'",
            env!("CARGO_BIN_EXE_zkstep"),
            f.s("big.toml"),
            f.s("big.safetensors")
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("needs about") && err.contains("GiB") && err.contains("ulimit -v"),
        "{err}"
    );
    assert!(!f.p("big.safetensors").exists());
}

/// `keygen --ptau-dir` with a FIFO named like a ceremony file (issue 30,
/// finding 1): refused by its type with exit 2, naming it, never opened
/// (opening a FIFO waits for a writer forever). 30 s is a hang detector,
/// not a timing: it takes milliseconds.
#[test]
fn keygen_refuses_a_fifo_in_the_ceremony_directory() {
    let f = Fx::new();
    let dir = f.p("ptau");
    std::fs::create_dir(&dir).unwrap();
    let fifo = dir.join("ppot_pruned_20.ptau");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = within::output_within(
        Command::new(env!("CARGO_BIN_EXE_zkstep"))
            .args(["keygen", "--spec", &f.s("spec.toml"), "--out", &f.s("keys"), "--ptau-dir"])
            .arg(&dir),
        30,
        "keygen --ptau-dir with a FIFO",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("ppot_pruned_20.ptau") && err.contains("not a regular file"), "{err}");
    assert!(!f.dir.path().join("keys/proving.key").exists());
}

/// `train` killed with SIGKILL while it writes (issue 30, finding 10): the
/// run resumes, and the temporary files of dead writers (the kill's, if it
/// left one, and one planted for a writer that is certainly dead) are gone
/// after the resumed run's first write; the run is whole.
#[test]
fn a_killed_train_leaves_nothing_once_resumed() {
    let f = Fx::new();
    f.init("c0.safetensors");
    let args = f.train_args("c0.safetensors", "run", "100000", &[]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_zkstep")).args(&args).spawn().unwrap();
    // let it write a few steps, then kill it mid-run
    let start = std::time::Instant::now();
    while !f.p("run/ckpt_3.safetensors").exists() && start.elapsed() < std::time::Duration::from_secs(120) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // a leftover of a writer that no longer exists (a process that has exited)
    let dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    let mut dead = dead;
    dead.wait().unwrap();
    let planted = f.p(&format!("run/.zkstep-tmp-{pid}-planted"));
    std::fs::write(&planted, b"half a checkpoint").unwrap();
    let done = f.manifest("run")["steps"].as_array().unwrap().len();
    // the kill may land between a step's files and run.json naming them:
    // resume then names the leftover and wants --force to replace it
    let o = zkstep(&["train", "--resume", "--out-dir", &f.s("run"), "--steps", "2"]);
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("already exists") && err.contains("--force"), "{err}");
        ok(&["train", "--resume", "--out-dir", &f.s("run"), "--steps", "2", "--force"]);
    }
    let left: Vec<String> = std::fs::read_dir(f.p("run"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".zkstep-tmp"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // the run chains from its first checkpoint to its last
    let m = f.manifest("run");
    let steps = m["steps"].as_array().unwrap();
    assert!(done >= 2, "ckpt_3 was written, so steps 0 and 1 were complete: {done}");
    assert_eq!(steps.len(), done + 2);
    for (t, s) in steps.iter().enumerate() {
        assert_eq!(s["step"], t as u64);
    }
}

/// A safetensors file whose header declares a 1 GiB tensor (sparse on disk),
/// given to `inspect` and to `train --data` under a 1 GiB address-space
/// limit: refused up front with the memory it would take, exit 2, instead
/// of an allocation that aborts the process (issue 30, finding 9).
#[test]
fn a_file_declaring_more_than_fits_is_refused_with_the_figures() {
    let f = Fx::new();
    let gib: u64 = 1 << 30;
    let header = format!(
        "{{\"X\":{{\"dtype\":\"F32\",\"shape\":[{},2],\"data_offsets\":[0,{gib}]}}}}",
        gib / 8
    );
    let mut head = (header.len() as u64).to_le_bytes().to_vec();
    head.extend_from_slice(header.as_bytes());
    let big = f.p("big.safetensors");
    std::fs::write(&big, &head).unwrap();
    std::fs::OpenOptions::new().write(true).open(&big).unwrap().set_len(head.len() as u64 + gib).unwrap();
    f.init("c0.safetensors");
    for cmd in [
        format!("inspect '{}'", big.display()),
        format!(
            "train --spec '{}' --ckpt '{}' --data '{}' --steps 1 --out-dir '{}'",
            f.s("spec.toml"),
            f.s("c0.safetensors"),
            big.display(),
            f.s("run")
        ),
    ] {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v 1048576 && exec '{}' {cmd}", env!("CARGO_BIN_EXE_zkstep")))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains("big.safetensors") && err.contains("needs about") && err.contains("ulimit -v"),
            "{cmd}: {err}"
        );
    }
}
