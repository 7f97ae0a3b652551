//! Proving through the `zkstep` binary: four consecutive steps of a run are
//! proven by `prove-run` (once per binary, `common::proved_run`; each test
//! works on its own copy), each verifies (with the verifier crate and the
//! written verifying key), and c_after(t) = c_before(t+1); a second
//! `prove-run` skips them, and refuses to replace a proof file that is not
//! its step's without `--force`; bad inputs to `prove` are clear errors.
#![allow(clippy::unwrap_used)]

use zkstep_core::ModelSpec;
use zkstep_verifier::{read_proof, read_verifying_key, verify, Statement};

use crate::common::*;

/// `init`, `train` (checkpoints with m and v), `keygen`, `prove-run` for
/// Adam with cross-entropy (labels as class indices, keys on KZG points, the
/// default) and AdamW with MSE (chain keys: the manifest's commitments are
/// the proofs'); each proof verifies with the verifier crate against the
/// run's statements, `verify-run` accepts the run, and the
/// after-checkpoint's moments are committed.
#[test]
fn adam_and_adamw_runs_prove_and_verify() {
    let ce = SPEC
        .replace("[optimizer]", "loss = \"cross_entropy\"\n[optimizer]")
        .replace("inputs = 3\noutputs = 1", "inputs = 3\noutputs = 2");
    for (kind, name, spec, scheme) in [
        (
            "kind = \"adam\"\nlr = 0.01\nweight_decay = 0.01",
            "adam + cross_entropy",
            ce.as_str(),
            "kzg",
        ),
        ("kind = \"adamw\"\nlr = 0.01", "adamw + mse", SPEC, "chain"),
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
        let (ok, _, err) = keygen(d.path(), &["--commit-scheme", scheme]);
        assert!(ok, "{name}: {err}");
        let (ok, _, err) = run(&["prove-run", "--run", &p("run"), "--keys", &p("keys")]);
        assert!(ok, "{name}: {err}");
        let (ok, out, err) = verify_run(d.path());
        assert!(ok && out.contains("ACCEPTED: 2 steps"), "{name}: {out}{err}");
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(p("run/run.json")).unwrap()).unwrap();
        let vk = read_verifying_key(&std::fs::read(p("keys/verifying.key")).unwrap()).unwrap();
        for (t, e) in m["steps"].as_array().unwrap().iter().enumerate() {
            let want = run_statement(d.path(), &spec, e, t);
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
fn four_chained_steps_prove_and_verify() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| -> String { d.path().join(n).display().to_string() };
    let made = proved_run(d.path());
    let kv: serde_json::Value = serde_json::from_str(&made.keygen).unwrap();
    assert_eq!(kv["params"], "dev");
    let out = &made.prove_run;
    let v: serde_json::Value = serde_json::from_str(out).unwrap();
    assert_eq!(v["proofs"].as_array().unwrap().len(), 4);
    // each proof verifies against the manifest's statement; the steps chain
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p("run/run.json")).unwrap()).unwrap();
    let spec = ModelSpec::from_toml_str(SPEC).unwrap();
    let vk = read_verifying_key(&std::fs::read(p("keys/verifying.key")).unwrap()).unwrap();
    let steps = m["steps"].as_array().unwrap();
    for (t, e) in steps.iter().enumerate() {
        let want = run_statement(d.path(), &spec, e, t);
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
    // (its exit code: 1 for a false claim, 2 for input it cannot use)
    let prove_bad = |spec: &str, before: &str, after: &str, batch: &str| {
        run_code(&[
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
    // a proof written to a name that is not UTF-8 (legal on Linux) is
    // reported, with and without --json, never a panic after it was written
    #[cfg(unix)]
    for (name, json) in [(&b"p\xff.zkstep"[..], true), (&b"q\xff.zkstep"[..], false)] {
        use std::os::unix::ffi::OsStrExt;
        let out_path = d.path().join(std::ffi::OsStr::from_bytes(name));
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_zkstep"));
        c.args(["prove", "--spec", &p("spec.toml"), "--keys", &p("keys")])
            .args(["--before", &p("run/ckpt_0.safetensors"), "--after", &p("run/ckpt_1.safetensors")])
            .args(["--batch", &p("run/batch_0.safetensors"), "--out"])
            .arg(&out_path);
        if json {
            c.arg("--json");
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && !err.contains("panicked"), "{err}");
        assert!(String::from_utf8_lossy(&o.stdout).contains('\u{fffd}'));
        let proof = read_proof(&std::fs::read(&out_path).unwrap()).unwrap();
        verify(&vk, &proof, Some(&run_statement(d.path(), &spec, &steps[0], 0))).unwrap();
    }
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
    let verify_run = || verify_run(d.path());
    let (ok, out, err) = verify_run();
    assert!(ok && out.contains("ACCEPTED: 4 steps"), "{out}{err}");
    let proof = |t: usize| d.path().join(format!("run/proof_{t}.zkstep"));
    let saved: Vec<Vec<u8>> = (0..4).map(|t| std::fs::read(proof(t)).unwrap()).collect();
    let restore = || (0..4).for_each(|t| std::fs::write(proof(t), &saved[t]).unwrap());
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
        let (code, _, err) = verify_run_code(d.path());
        assert_eq!(code, Some(1), "{what}: a rejection exits 1: {err}");
        for w in want {
            assert!(err.contains(w), "{what}: {err}");
        }
        assert!(err.contains("problem(s) found"), "{what}: {err}");
        restore();
    }
    // a manifest of no steps is refused, not accepted as proving nothing
    let mpath = d.path().join("run/run.json");
    let manifest = std::fs::read(&mpath).unwrap();
    let mut m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    m["steps"] = serde_json::json!([]);
    std::fs::write(&mpath, serde_json::to_vec(&m).unwrap()).unwrap();
    let (code, out, err) = verify_run_code(d.path());
    assert!(code == Some(2) && !out.contains("ACCEPTED"), "{out}{err}");
    assert!(err.contains("run.json") && err.contains("lists no steps"), "{err}");
    std::fs::write(&mpath, &manifest).unwrap();
    // prove: an after-checkpoint that is not the declared step
    let (code, _, err) = prove_bad(
        "spec.toml",
        "run/ckpt_0.safetensors",
        "run/ckpt_2.safetensors",
        "run/batch_0.safetensors",
    );
    assert_eq!(code, Some(1), "a false claim: {err}");
    assert!(
        err.contains("differs from the declared step at layer"),
        "{err}"
    );
    assert!(!d.path().join("bad.zkstep").exists());
    // prove: a batch of another step
    let (code, _, err) = prove_bad(
        "spec.toml",
        "run/ckpt_0.safetensors",
        "run/ckpt_1.safetensors",
        "run/batch_1.safetensors",
    );
    assert_eq!(code, Some(2), "bad input: {err}");
    assert!(
        err.contains("batch_1.safetensors") && err.contains("step 1"),
        "{err}"
    );
    // prove: keys of another spec
    std::fs::write(p("other.toml"), SPEC.replace("lr = 0.1", "lr = 0.3")).unwrap();
    let (code, _, err) = prove_bad(
        "other.toml",
        "run/ckpt_0.safetensors",
        "run/ckpt_1.safetensors",
        "run/batch_0.safetensors",
    );
    assert_eq!(code, Some(2), "bad input: {err}");
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

/// Issue 30 through the binary: `prove` verifies what it made before it
/// writes, so a proving key changed on disk (re-sealed: the envelope's
/// checksum passes and the read-time checks hold) is named "proving key
/// corrupt" and nothing is written (finding 6); two provers racing to one
/// `--out` leave one proof, the other exits 2 without replacing it (finding
/// 2); a manifest with a step taken out is refused with exit 1 (finding 4).
#[test]
fn corrupt_keys_racing_provers_and_gapped_runs_through_the_binary() {
    use zkstep_circuits::files::{self, FileKind};
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| -> String { d.path().join(n).display().to_string() };
    proved_run(d.path());
    let prove_args = |keys: &str, out: &str| -> Vec<String> {
        [
            "prove", "--spec", &p("spec.toml"), "--keys", &p(keys),
            "--before", &p("run/ckpt_0.safetensors"), "--after", &p("run/ckpt_1.safetensors"),
            "--batch", &p("run/batch_0.safetensors"), "--out", &p(out),
        ]
        .map(String::from)
        .to_vec()
    };
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    // finding 6: one bit, re-sealed, of the verifying key's checksum the
    // proving key ends with (8 bytes from the end) and of the compression's
    // prover key before it (the digests of the secondary's and of the
    // primary's verifier keys, 40 and 132 bytes from the end)
    let honest = std::fs::read(p("keys/proving.key")).unwrap();
    let (h, body) = files::open(&honest, FileKind::ProvingKey).unwrap();
    std::fs::create_dir(p("bad")).unwrap();
    std::fs::copy(p("keys/verifying.key"), p("bad/verifying.key")).unwrap();
    for from_end in [8, 40, 132] {
        let mut b = body.to_vec();
        let at = b.len() - from_end;
        b[at] ^= 1;
        std::fs::write(p("bad/proving.key"), files::seal(h, &b)).unwrap();
        let (code, _, err) = run_code(&args(&prove_args("bad", "x.zkstep")));
        assert_eq!(code, Some(2), "{from_end}: {err}");
        assert!(
            err.contains("bad/proving.key") && err.contains("proving key corrupt") && err.contains("nothing was written"),
            "{from_end}: {err}"
        );
        assert!(!d.path().join("x.zkstep").exists(), "{from_end}: a proof was written");
    }
    // the honest key proves, and says it checked
    let (code, out, err) = run_code(&args(&prove_args("keys", "ok.zkstep")));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("verified before writing"), "{out}");
    // finding 2: two provers, one --out, no --force: one proof, one refusal
    let kids: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(env!("CARGO_BIN_EXE_zkstep"))
                .args(prove_args("keys", "race.zkstep"))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = kids.into_iter().map(|k| k.wait_with_output().unwrap()).collect();
    let codes: Vec<_> = outs.iter().map(|o| o.status.code()).collect();
    assert!(codes.contains(&Some(0)) && codes.contains(&Some(2)), "{codes:?}");
    let loser = outs.iter().find(|o| o.status.code() == Some(2)).unwrap();
    let err = String::from_utf8_lossy(&loser.stderr);
    // refused before proving ("already exists") or at the end ("another process wrote it")
    assert!(
        err.contains("race.zkstep") && (err.contains("already exists") || err.contains("another process wrote it")),
        "{err}"
    );
    let winner = outs.iter().find(|o| o.status.success()).unwrap();
    let wrote = String::from_utf8_lossy(&winner.stdout);
    assert!(wrote.contains("race.zkstep"), "{wrote}");
    let spec = ModelSpec::from_toml_str(SPEC).unwrap();
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p("run/run.json")).unwrap()).unwrap();
    let vk = read_verifying_key(&std::fs::read(p("keys/verifying.key")).unwrap()).unwrap();
    let race = read_proof(&std::fs::read(p("race.zkstep")).unwrap()).unwrap();
    verify(&vk, &race, Some(&run_statement(d.path(), &spec, &m["steps"][0], 0))).unwrap();
    // finding 4: a manifest with its second step taken out
    let (code, out, err) = run_code(&["verify-run", "--run", &p("run"), "--vk", &p("keys/verifying.key")]);
    assert!(code == Some(0) && out.contains("ACCEPTED: 4 steps"), "{out}{err}");
    let mut gapped = m.clone();
    gapped["steps"].as_array_mut().unwrap().remove(1);
    std::fs::write(p("run/run.json"), serde_json::to_vec(&gapped).unwrap()).unwrap();
    let (code, out, err) = run_code(&["verify-run", "--run", &p("run"), "--vk", &p("keys/verifying.key")]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        !out.contains("ACCEPTED") && (err.contains("do not chain") || err.contains("steps 0 and 2: not consecutive")),
        "{out}{err}"
    );
    std::fs::write(p("run/run.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    // finding 3: a run and keys in directories whose names are not UTF-8,
    // under prove-run, verify-run and prove-segment, with --json and without:
    // reported (U+FFFD), never a panic
    #[cfg(unix)]
    {
        use std::ffi::{OsStr, OsString};
        use std::os::unix::ffi::OsStrExt;
        let odd_run = d.path().join(OsStr::from_bytes(b"run\xff"));
        let odd_keys = d.path().join(OsStr::from_bytes(b"keys\xff"));
        std::fs::rename(p("run"), &odd_run).unwrap();
        std::fs::rename(p("keys"), &odd_keys).unwrap();
        let a = |s: &str| OsString::from(s);
        for json in [true, false] {
            let cases: Vec<(&str, Vec<OsString>)> = vec![
                ("prove-run", vec![a("prove-run"), a("--run"), odd_run.clone().into(), a("--keys"), odd_keys.clone().into()]),
                (
                    "verify-run",
                    vec![a("verify-run"), a("--run"), odd_run.clone().into(), a("--vk"), odd_keys.join("verifying.key").into()],
                ),
                (
                    "prove-segment",
                    vec![
                        a("prove-segment"), a("--run"), odd_run.clone().into(), a("--keys"), odd_keys.clone().into(),
                        a("--from"), a("0"), a("--steps"), a("2"),
                    ],
                ),
            ];
            for (what, mut args) in cases {
                if json {
                    args.push(a("--json"));
                }
                let o = std::process::Command::new(env!("CARGO_BIN_EXE_zkstep")).args(&args).output().unwrap();
                let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
                assert!(o.status.success() && !err.contains("panicked"), "{what} (json {json}): {out}{err}");
                let shown = if json {
                    serde_json::from_str::<serde_json::Value>(&out).unwrap().to_string()
                } else {
                    format!("{out}{err}")
                };
                // (verify-run's text is its verdict alone)
                if json || what != "verify-run" {
                    assert!(shown.contains('\u{fffd}'), "{what} (json {json}): {shown}");
                }
            }
        }
    }
}

/// Segment proofs and shards: `prove-segment` proves four steps as one
/// proof, which verifies against the statement the manifest gives and is no
/// larger than a one-step proof; `verify-run` accepts a run covered by
/// segments and names a segment claimed for the wrong range, a forged one
/// and the steps a missing shard leaves unproven; two shards of
/// `prove-run --segment 2` prove the run between them.
#[test]
fn segments_and_shards_cover_a_run() {
    use zkstep_verifier::{read_any_proof, verify_segment, AnyProof, SegmentStatement};
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| -> String { d.path().join(n).display().to_string() };
    proved_run(d.path());
    let (ok, out, err) = run(&[
        "prove-segment",
        "--run",
        &p("run"),
        "--keys",
        &p("keys"),
        "--from",
        "0",
        "--steps",
        "4",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["proofs"][0]["steps"], 4);
    assert_eq!(v["proofs"][0]["folds"].as_u64().unwrap() % 4, 0);
    // the segment's statement, from the manifest
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p("run/run.json")).unwrap()).unwrap();
    let spec = ModelSpec::from_toml_str(SPEC).unwrap();
    let vk = read_verifying_key(&std::fs::read(p("keys/verifying.key")).unwrap()).unwrap();
    let sts: Vec<Statement> = m["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(t, e)| run_statement(d.path(), &spec, e, t))
        .collect();
    let want = SegmentStatement {
        spec_digest: spec.digest(),
        c_start: sts[0].c_before,
        c_end: sts[3].c_after,
        batches: vk
            .layout
            .batches_digest(&sts.iter().map(|s| s.c_batch).collect::<Vec<_>>()),
        step: 0,
        steps: 4,
    };
    let bytes = std::fs::read(p("run/segment_0_4.zkstep")).unwrap();
    let AnyProof::Segment(seg) = read_any_proof(&bytes).unwrap() else {
        panic!("not a segment proof")
    };
    verify_segment(&vk, &seg, Some(&want)).unwrap();
    // another order of batches, another range, another end: rejected
    let mut other = want;
    other.batches = vk.layout.batches_digest(&[
        sts[1].c_batch,
        sts[0].c_batch,
        sts[2].c_batch,
        sts[3].c_batch,
    ]);
    assert!(verify_segment(&vk, &seg, Some(&other)).is_err());
    let mut forged = seg;
    forged.payload.statement.steps = 3;
    forged.payload.statement.c_end = sts[2].c_after;
    assert!(verify_segment(&vk, &forged, None).is_err());
    forged.payload.statement = want;
    forged.payload.statement.step = 1;
    assert!(verify_segment(&vk, &forged, None).is_err());
    // a one-step proof beside it: a segment is no larger than 10% more
    let one = std::fs::metadata(p("run/proof_0.zkstep")).unwrap().len() as f64;
    assert!((bytes.len() as f64) < one * 1.1, "{} vs {one}", bytes.len());
    let verify_run = || verify_run(d.path());
    let (ok, out, err) = verify_run();
    assert!(ok && out.contains("ACCEPTED: 4 steps"), "{out}{err}");
    // only the segment covers the run
    for t in 0..4 {
        std::fs::remove_file(p(&format!("run/proof_{t}.zkstep"))).unwrap();
    }
    let (ok, out, err) = verify_run();
    assert!(ok && out.contains("1 segment proofs"), "{out}{err}");
    // a segment claimed for the wrong range
    std::fs::rename(p("run/segment_0_4.zkstep"), p("run/segment_1_3.zkstep")).unwrap();
    let (ok, _, err) = verify_run();
    assert!(!ok, "accepted a segment under another range");
    assert!(
        err.contains("segment 1..4") && err.contains("claimed for the wrong range"),
        "{err}"
    );
    assert!(err.contains("step 0: no proof"), "{err}");
    std::fs::remove_file(p("run/segment_1_3.zkstep")).unwrap();
    // two shards of segments of 2 steps prove the run between them
    for shard in ["0/2", "1/2"] {
        let (ok, out, err) = run(&[
            "prove-run",
            "--run",
            &p("run"),
            "--keys",
            &p("keys"),
            "--segment",
            "2",
            "--shard",
            shard,
        ]);
        assert!(ok, "{err}");
        assert!(out.contains(&format!("(shard {shard})")), "{out}");
    }
    assert!(d.path().join("run/segment_0_2.zkstep").exists());
    assert!(d.path().join("run/segment_2_2.zkstep").exists());
    let (ok, out, err) = verify_run();
    assert!(ok && out.contains("2 segment proofs"), "{out}{err}");
    // a forged segment, then a missing shard's steps
    let seg = p("run/segment_2_2.zkstep");
    let saved = std::fs::read(&seg).unwrap();
    let mut b = saved.clone();
    let n = b.len() - 100;
    b[n] ^= 4;
    std::fs::write(&seg, b).unwrap();
    let (ok, _, err) = verify_run();
    assert!(!ok && err.contains("segment 2..4"), "{err}");
    std::fs::remove_file(&seg).unwrap();
    let (ok, _, err) = verify_run();
    assert!(
        !ok && err.contains("step 2: no proof") && err.contains("step 3: no proof"),
        "{err}"
    );
    // a bad shard is a usage error
    let (ok, _, err) = run(&[
        "prove-run",
        "--run",
        &p("run"),
        "--keys",
        &p("keys"),
        "--shard",
        "2/2",
    ]);
    assert!(!ok && err.contains("I/N"), "{err}");
}

/// `zkstep verify-round`: two nodes' runs from one global model (the proven
/// run and a second run of another batch schedule, both 4 steps, the second
/// proven as one segment), merged,
/// the merge proven; the round directory is accepted, and each way it can
/// fail is named (exit 1): a node's step without a proof, a checkpoint in
/// the round file that is not the merge's input, a reputation changed, a
/// previous global model that is not the merge's centre.
#[test]
fn a_round_verifies_as_a_whole_and_names_what_fails() {
    let d = tempfile::tempdir().unwrap();
    proved_run(d.path());
    let p = |n: &str| -> String { d.path().join(n).display().to_string() };
    let zk = |args: &[&str]| {
        let (ok, out, err) = run(args);
        assert!(ok, "{args:?}: {err}");
        out
    };
    zk(&["train", "--spec", &p("spec.toml"), "--ckpt", &p("c0.safetensors"), "--data", &p("data.safetensors"),
         "--steps", "4", "--seed", "5", "--out-dir", &p("node1")]);
    // one segment proof for node 1's four steps (verify-run accepts either)
    zk(&["prove-segment", "--run", &p("node1"), "--keys", &p("keys"), "--from", "0", "--steps", "4"]);
    let round = "tau = 1000\nprevious = \"c0.safetensors\"\n[[nodes]]\ncheckpoint = \"run/ckpt_4.safetensors\"\nreputation = 1\n[[nodes]]\ncheckpoint = \"node1/ckpt_4.safetensors\"\nreputation = 3\n";
    std::fs::write(p("round.toml"), round).unwrap();
    zk(&["merge", "--spec", &p("spec.toml"), "--round", &p("round.toml"), "--out", &p("global.safetensors")]);
    zk(&["keygen", "--spec", &p("spec.toml"), "--out", &p("keys"), "--merge", "2"]);
    zk(&["prove-merge", "--spec", &p("spec.toml"), "--keys", &p("keys"), "--round", &p("round.toml"),
         "--global", &p("global.safetensors"), "--out", &p("merge.zkstep")]);
    let out = zk(&["verify-round", &p("")]);
    assert!(out.contains("ACCEPTED: round of 2 nodes"), "{out}");
    let rejected = |want: &str| {
        let (code, out, err) = run_code(&["verify-round", &p("")]);
        assert_eq!(code, Some(1), "{want}: {out}{err}");
        assert!(err.contains("REJECTED") && err.contains(want), "{want}: {err}");
    };
    // a node's steps without their proof
    let proof = d.path().join("node1/segment_0_4.zkstep");
    let kept = std::fs::read(&proof).unwrap();
    std::fs::remove_file(&proof).unwrap();
    rejected("node 1");
    std::fs::write(&proof, kept).unwrap();
    // the round file edited after the merge was proven
    for (edit, want) in [
        (round.replace("run/ckpt_4", "run/ckpt_3"), "is not the merge's input"),
        (round.replace("reputation = 3", "reputation = 2"), "reputation 2 in the round file"),
        (round.replace("\"c0.safetensors\"", "\"node1/ckpt_1.safetensors\""), "not the previous global model"),
    ] {
        std::fs::write(p("round.toml"), edit).unwrap();
        rejected(want);
    }
    std::fs::write(p("round.toml"), round).unwrap();
    let out = zk(&["verify-round", &p(""), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verified"], true);
    assert_eq!(v["nodes"].as_array().unwrap().len(), 2);
}

/// Keys on KZG points (the default) through the binary: keygen wrote
/// `points.key`, and a proof's statement names its checkpoints by what
/// `zkstep commit --keys` prints for their files, not by the chain's
/// Commit(θ), which `zkstep commit` prints alone.
#[test]
fn kzg_keys_prove_and_commit_through_the_binary() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| -> String { d.path().join(n).display().to_string() };
    proved_run(d.path());
    assert!(d.path().join("keys/points.key").is_file());
    let vk = read_verifying_key(&std::fs::read(p("keys/verifying.key")).unwrap()).unwrap();
    let (st, _) = verify(&vk, &read_proof(&std::fs::read(p("run/proof_0.zkstep")).unwrap()).unwrap(), None).unwrap();
    let commit = |file: &str, keys: bool| {
        let (spec, f, k) = (p("spec.toml"), p(file), p("keys"));
        let mut args = vec!["commit", "--spec", &spec, &f];
        if keys {
            args.extend_from_slice(&["--keys", &k]);
        }
        let (ok, out, err) = run(&args);
        assert!(ok, "{err}");
        out.trim().to_string()
    };
    let hex = zkstep_core::poseidon::fr_to_hex;
    assert_eq!(commit("run/ckpt_0.safetensors", true), hex(&st.c_before));
    assert_eq!(commit("run/ckpt_1.safetensors", true), hex(&st.c_after));
    assert_ne!(commit("run/ckpt_1.safetensors", false), hex(&st.c_after));
    assert_eq!(commit("run/batch_0.safetensors", true), hex(&st.c_batch));
}

/// A run under keys on KZG points (the default): `verify-run` accepts the
/// proven run through the points file beside the verifying key (the
/// proofs' checkpoint commitments are the files' points, not the
/// manifest's chain digests). Rejected: step 2 proven from another θ₂ than
/// step 1's proof ends at (every proof verifies, but they do not chain); a
/// last checkpoint file the proofs do not end at. Refused by path: a
/// missing points file.
#[test]
fn kzg_keys_prove_and_verify_a_run() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| -> String { d.path().join(n).display().to_string() };
    proved_run(d.path());
    let (run_dir, vk_path) = (p("run"), p("keys/verifying.key"));
    let verify_run = |extra: &[&str]| {
        let mut args = vec!["verify-run", "--run", &run_dir, "--vk", &vk_path];
        args.extend_from_slice(extra);
        run_code(&args)
    };
    let (code, out, err) = verify_run(&[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("ACCEPTED: 4 steps"), "{out}");

    // step 2 proven from θ_2 + one unit: its proof verifies, the chain breaks
    let spec = ModelSpec::from_toml_str(SPEC).unwrap();
    let read = |f: &str| zkstep_core::format::read_checkpoint(&d.path().join(f), &spec).unwrap();
    let mut other = read("run/ckpt_2.safetensors");
    other.layers[0].w.data[0] += 1;
    let (batch, _) = zkstep_core::format::read_batch(&d.path().join("run/batch_2.safetensors"), &spec).unwrap();
    let after = zkstep_core::step(&spec, &other, &batch).unwrap().after;
    zkstep_core::format::write_checkpoint(&d.path().join("other_2.safetensors"), &spec, &other).unwrap();
    zkstep_core::format::write_checkpoint(&d.path().join("other_3.safetensors"), &spec, &after).unwrap();
    let (ok, _, err) = run(&[
        "prove", "--spec", &p("spec.toml"), "--keys", &p("keys"),
        "--before", &p("other_2.safetensors"), "--after", &p("other_3.safetensors"),
        "--batch", &p("run/batch_2.safetensors"), "--out", &p("forged.zkstep"),
    ]);
    assert!(ok, "{err}");
    let honest = std::fs::read(p("run/proof_2.zkstep")).unwrap();
    std::fs::copy(p("forged.zkstep"), p("run/proof_2.zkstep")).unwrap();
    let (code, out, err) = verify_run(&[]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("do not chain at θ_2") && !err.contains("step 2:"), "{err}");
    std::fs::write(p("run/proof_2.zkstep"), honest).unwrap();
    // the last checkpoint file with one weight changed
    let mut last = read("run/ckpt_4.safetensors");
    last.layers[1].b[0] += 1;
    zkstep_core::format::write_checkpoint(&d.path().join("run/ckpt_4.safetensors"), &spec, &last).unwrap();
    let (code, _, err) = verify_run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("ckpt_4.safetensors: not the θ_4 that the proofs end at"), "{err}");
    // no points file: refused by its path
    let (code, _, err) = verify_run(&["--points", &p("nowhere.key")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("nowhere.key"), "{err}");
}
