//! Fan-out on a real cluster engine: a Ray local cluster of two workers
//! proves a four-step run as two shards (`scripts/cluster/ray_prove.py`,
//! each task `zkstep prove-run --shard I/2 --segment 2`), and `verify-run`
//! accepts the result; and a federated round (`--round`: each node's run a
//! task, then the merge and its proof), which `verify-round` accepts. Needs
//! Python with Ray, which `.ci/run` installs and
//! then requires (`ZKSTEP_REQUIRE_RAY=1`); elsewhere, without Ray, the test
//! says so and does nothing.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::process::Command;

fn have_ray() -> bool {
    Command::new("python3")
        .args(["-c", "import ray"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether Ray is there; without it the test says so and does nothing,
/// unless `ZKSTEP_REQUIRE_RAY` is set (CI), where that fails it.
fn ray_or_skip() -> bool {
    if have_ray() {
        return true;
    }
    assert!(
        std::env::var_os("ZKSTEP_REQUIRE_RAY").is_none(),
        "ZKSTEP_REQUIRE_RAY is set but python3 cannot import ray"
    );
    eprintln!("skipped: python3 cannot import ray (python3 -m pip install ray)");
    false
}

#[test]
fn a_ray_cluster_of_two_workers_proves_a_run_that_verify_run_accepts() {
    if !ray_or_skip() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| -> String { d.path().join(n).display().to_string() };
    trained_run(d.path(), SPEC, 4);
    let (ok, _, err) = keygen(d.path(), &[]);
    assert!(ok, "{err}");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/cluster/ray_prove.py"
    );
    let o = Command::new("python3")
        .args([
            script,
            "--run",
            &p("run"),
            "--keys",
            &p("keys"),
            "--workers",
            "2",
            "--segment",
            "2",
            "--zkstep",
            env!("CARGO_BIN_EXE_zkstep"),
            "--json",
        ])
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["accepted"], true, "{v}");
    // two shards on two worker processes, each with its segment
    assert_eq!(v["shards"].as_array().unwrap().len(), 2);
    assert!(v["workers"].as_array().unwrap().len() >= 2, "{v}");
    for (i, seg) in ["segment_0_2.zkstep", "segment_2_2.zkstep"]
        .iter()
        .enumerate()
    {
        assert_eq!(v["shards"][i]["rc"], 0);
        assert!(d.path().join("run").join(seg).exists(), "{seg}");
    }
    assert_eq!(v["verify_run"]["verified"], true);
    // and verify-run on its own agrees
    let (ok, out, err) = verify_run(d.path());
    assert!(ok && out.contains("2 segment proofs"), "{out}{err}");
}

/// A whole round on the Ray cluster (`ray_prove.py --round`): two nodes'
/// runs from one global model proven as two tasks, then the merge and its
/// proof as a third, and `verify-round` accepts the round directory.
#[test]
fn a_ray_cluster_proves_a_round_that_verify_round_accepts() {
    if !ray_or_skip() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| -> String { d.path().join(n).display().to_string() };
    trained_run(d.path(), SPEC, 1);
    let (ok, _, err) = run(&["train", "--spec", &p("spec.toml"), "--ckpt", &p("c0.safetensors"), "--data",
                             &p("data.safetensors"), "--steps", "1", "--seed", "5", "--out-dir", &p("node1")]);
    assert!(ok, "{err}");
    let (ok, _, err) = keygen(d.path(), &[]);
    assert!(ok, "{err}");
    let (ok, _, err) = run(&["keygen", "--spec", &p("spec.toml"), "--out", &p("keys"), "--merge", "2"]);
    assert!(ok, "{err}");
    std::fs::write(
        p("round.toml"),
        "tau = 1000\nprevious = \"c0.safetensors\"\n[[nodes]]\ncheckpoint = \"run/ckpt_1.safetensors\"\nreputation = 1\n[[nodes]]\ncheckpoint = \"node1/ckpt_1.safetensors\"\nreputation = 2\n",
    )
    .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/cluster/ray_prove.py");
    let o = Command::new("python3")
        .args([script, "--round", &p(""), "--spec", &p("spec.toml"), "--workers", "2",
               "--zkstep", env!("CARGO_BIN_EXE_zkstep"), "--json"])
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["accepted"], true, "{v}");
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    assert!(nodes.iter().all(|n| n["rc"] == 0), "{v}");
    assert_eq!(v["merge"]["rc"], 0, "{v}");
    assert_eq!(v["verify_round"]["verified"], true);
    assert!(d.path().join("merge.zkstep").exists() && d.path().join("node1/proof_0.zkstep").exists());
}
