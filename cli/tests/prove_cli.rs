//! Proving through the `zkstep` binary: three consecutive steps of a run are
//! proven by `prove-run`, each verifies (with the verifier crate and the
//! written verifying key), and c_after(t) = c_before(t+1); a second
//! `prove-run` skips them, and refuses to replace a proof file that is not
//! its step's without `--force`; bad inputs to `prove` are clear errors.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;
use zkstep_core::poseidon::fr_from_hex;
use zkstep_core::ModelSpec;
use zkstep_verifier::{read_proof, read_verifying_key, verify, Statement};

const SPEC: &str = "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 3\nactivation = \"relu\"\n[[layers]]\ninputs = 3\noutputs = 1\n";

fn run(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_zkstep"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The statement run.json's entry `e` (step t) records.
fn manifest_statement(spec: &ModelSpec, e: &serde_json::Value, t: usize) -> Statement {
    let h = |k: &str| fr_from_hex(e[k].as_str().unwrap()).unwrap();
    Statement {
        spec_digest: spec.digest(),
        c_before: h("c_before"),
        c_after: h("c_after"),
        c_batch: h("c_batch"),
        step: t as u64,
    }
}

/// `zkstep keygen` of `d/spec.toml` into `d/keys` with 2 rows a tile, and `extra` flags.
fn keygen(d: &std::path::Path, extra: &[&str]) -> (bool, String, String) {
    let p = |n: &str| -> String { d.join(n).display().to_string() };
    let (spec, keys) = (p("spec.toml"), p("keys"));
    let mut args = vec!["keygen", "--spec", &spec, "--out", &keys, "--rows", "2"];
    args.extend_from_slice(extra);
    run(&args)
}

/// Write `spec` and a 20-sample dataset into `d`, then `init` and `train` `steps` steps into `d/run`.
fn trained_run(d: &std::path::Path, spec: &str, steps: u64) {
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

/// `init`, `train` (checkpoints with m and v), `keygen`, `prove-run` for
/// Adam with cross-entropy (labels as class indices) and AdamW with MSE;
/// each proof verifies with the verifier crate against the run's
/// statements, and the after-checkpoint's moments are committed.
#[test]
fn adam_and_adamw_runs_prove_and_verify() {
    let ce = SPEC
        .replace("[optimizer]", "loss = \"cross_entropy\"\n[optimizer]")
        .replace("inputs = 3\noutputs = 1", "inputs = 3\noutputs = 2");
    for (kind, name, spec) in [
        (
            "kind = \"adam\"\nlr = 0.01\nweight_decay = 0.01",
            "adam + cross_entropy",
            ce.as_str(),
        ),
        ("kind = \"adamw\"\nlr = 0.01", "adamw + mse", SPEC),
    ] {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| -> String { d.path().join(n).display().to_string() };
        let text = spec.replace("lr = 0.1", kind);
        trained_run(d.path(), &text, 2);
        let spec = ModelSpec::from_toml_str(&text).unwrap();
        let ck =
            zkstep_core::format::read_checkpoint(&d.path().join("run/ckpt_2.safetensors"), &spec)
                .unwrap();
        assert!(
            ck.layers[0].state[1].w.data.iter().any(|&v| v > 0),
            "{name}: v"
        );
        let (ok, _, err) = keygen(d.path(), &[]);
        assert!(ok, "{name}: {err}");
        let (ok, _, err) = run(&["prove-run", "--run", &p("run"), "--keys", &p("keys")]);
        assert!(ok, "{name}: {err}");
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(p("run/run.json")).unwrap()).unwrap();
        let vk = read_verifying_key(&std::fs::read(p("keys/verifying.key")).unwrap()).unwrap();
        for (t, e) in m["steps"].as_array().unwrap().iter().enumerate() {
            let want = manifest_statement(&spec, e, t);
            let proof =
                read_proof(&std::fs::read(p(&format!("run/proof_{t}.zkstep"))).unwrap()).unwrap();
            verify(&vk, &proof, Some(&want)).unwrap();
        }
        let last = zkstep_core::commit::commit_params(&spec, &ck);
        assert_eq!(
            m["steps"][1]["c_after"].as_str().unwrap(),
            zkstep_core::poseidon::fr_to_hex(&last)
        );
    }
}

#[test]
fn three_chained_steps_prove_and_verify() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| -> String { d.path().join(n).display().to_string() };
    trained_run(d.path(), SPEC, 3);
    let (ok, out, err) = keygen(d.path(), &["--json"]);
    assert!(ok, "{err}");
    let kv: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(kv["params"], "dev");
    let (ok, out, err) = run(&[
        "prove-run",
        "--run",
        &p("run"),
        "--keys",
        &p("keys"),
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["proofs"].as_array().unwrap().len(), 3);
    // each proof verifies against the manifest's statement; the steps chain
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p("run/run.json")).unwrap()).unwrap();
    let spec = ModelSpec::from_toml_str(SPEC).unwrap();
    let vk = read_verifying_key(&std::fs::read(p("keys/verifying.key")).unwrap()).unwrap();
    let steps = m["steps"].as_array().unwrap();
    for (t, e) in steps.iter().enumerate() {
        let want = manifest_statement(&spec, e, t);
        let proof = |t: usize| {
            read_proof(&std::fs::read(p(&format!("run/proof_{t}.zkstep"))).unwrap()).unwrap()
        };
        verify(&vk, &proof(t), Some(&want)).unwrap();
        if t > 0 {
            assert_eq!(e["c_before"], steps[t - 1]["c_after"]);
            // and step t−1's proof does not verify as step t's statement
            assert!(verify(&vk, &proof(t - 1), Some(&want)).is_err());
        }
    }
    // `zkstep prove` with the given spec and files, writing bad.zkstep
    let prove_bad = |spec: &str, before: &str, after: &str, batch: &str| {
        run(&[
            "prove",
            "--spec",
            &p(spec),
            "--keys",
            &p("keys"),
            "--before",
            &p(before),
            "--after",
            &p(after),
            "--batch",
            &p(batch),
            "--out",
            &p("bad.zkstep"),
        ])
    };
    // a second run skips every step
    let (ok, out, _) = run(&[
        "prove-run",
        "--run",
        &p("run"),
        "--keys",
        &p("keys"),
        "--json",
    ]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["proofs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["skipped"] == true));

    // verify-run: the whole run with only the verifying key
    let verify_run = || {
        run(&[
            "verify-run",
            "--run",
            &p("run"),
            "--vk",
            &p("keys/verifying.key"),
        ])
    };
    let (ok, out, err) = verify_run();
    assert!(ok && out.contains("ACCEPTED: 3 steps"), "{out}{err}");
    let proof = |t: usize| d.path().join(format!("run/proof_{t}.zkstep"));
    let saved: Vec<Vec<u8>> = (0..3).map(|t| std::fs::read(proof(t)).unwrap()).collect();
    let restore = || (0..3).for_each(|t| std::fs::write(proof(t), &saved[t]).unwrap());
    // a swapped pair, a missing step, a duplicate, a forged proof: each named
    type Case<'a> = (&'a str, &'a dyn Fn(), &'a [&'a str]);
    let cases: [Case; 4] = [
        (
            "swapped",
            &|| {
                std::fs::write(proof(0), &saved[1]).unwrap();
                std::fs::write(proof(1), &saved[0]).unwrap();
            },
            &[
                "step 0: ",
                "is a proof of step 1",
                "step 1: ",
                "is a proof of step 0",
            ],
        ),
        (
            "missing",
            &|| std::fs::remove_file(proof(2)).unwrap(),
            &["step 2: no proof"],
        ),
        (
            "duplicate",
            &|| std::fs::write(proof(2), &saved[1]).unwrap(),
            &["step 2: ", "is a proof of step 1"],
        ),
        (
            "forged",
            &|| {
                let mut b = saved[1].clone();
                let n = b.len() - 100;
                b[n] ^= 4;
                std::fs::write(proof(1), b).unwrap();
            },
            &["step 1: ", "proof_1.zkstep"],
        ),
    ];
    for (what, edit, want) in cases {
        edit();
        let (ok, _, err) = verify_run();
        assert!(!ok, "{what}: accepted");
        for w in want {
            assert!(err.contains(w), "{what}: {err}");
        }
        assert!(err.contains("problem(s) found"), "{what}: {err}");
        restore();
    }
    // prove: an after-checkpoint that is not the declared step
    let (ok, _, err) = prove_bad(
        "spec.toml",
        "run/ckpt_0.safetensors",
        "run/ckpt_2.safetensors",
        "run/batch_0.safetensors",
    );
    assert!(!ok);
    assert!(
        err.contains("differs from the declared step at layer"),
        "{err}"
    );
    assert!(!d.path().join("bad.zkstep").exists());
    // prove: a batch of another step
    let (ok, _, err) = prove_bad(
        "spec.toml",
        "run/ckpt_0.safetensors",
        "run/ckpt_1.safetensors",
        "run/batch_1.safetensors",
    );
    assert!(!ok);
    assert!(
        err.contains("batch_1.safetensors") && err.contains("step 1"),
        "{err}"
    );
    // prove: keys of another spec
    std::fs::write(p("other.toml"), SPEC.replace("lr = 0.1", "lr = 0.3")).unwrap();
    let (ok, _, err) = prove_bad(
        "other.toml",
        "run/ckpt_0.safetensors",
        "run/ckpt_1.safetensors",
        "run/batch_0.safetensors",
    );
    assert!(!ok);
    assert!(
        err.contains("ckpt_0.safetensors") || err.contains("another spec"),
        "{err}"
    );
    // keygen refuses to overwrite keys
    let (ok, _, err) = keygen(d.path(), &[]);
    assert!(!ok && err.contains("already exists"), "{err}");
    // prove-run does not replace a proof file that is not its step's proof
    // (here not a proof at all) without --force
    std::fs::write(p("run/proof_0.zkstep"), b"not a proof").unwrap();
    let (ok, _, err) = run(&["prove-run", "--run", &p("run"), "--keys", &p("keys")]);
    assert!(
        !ok && err.contains("proof_0.zkstep") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(p("run/proof_0.zkstep")).unwrap(),
        b"not a proof"
    );
}
