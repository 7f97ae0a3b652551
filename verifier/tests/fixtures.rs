//! The verifier on stored fixtures (params/fixtures, made by
//! `cargo run --release -p zkstep-examples --features tools --example make_fixtures`), without
//! the prover: accepts the honest proof, rejects every wrong statement, and
//! calls malformed files malformed.
#![allow(
    clippy::unwrap_used,
    clippy::type_complexity,
    clippy::needless_range_loop
)]

use std::path::PathBuf;
use zkstep_circuits::files;

#[path = "../../testing/within.rs"]
mod within;
use std::process::Command;
use zkstep_core::commit::{commit_batch, commit_params};
use zkstep_core::format::{read_batch, read_checkpoint};
use zkstep_core::ModelSpec;
use zkstep_verifier::{read_proof, read_verifying_key, verify, VerifyError};

fn fx(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../params/fixtures")
        .join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(fx(name)).unwrap()
}

#[test]
fn honest_proof_is_accepted_and_binds_the_files() {
    let vk = read_verifying_key(&bytes("verifying.key")).unwrap();
    let p = read_proof(&bytes("proof.zkstep")).unwrap();
    let (st, _) = verify(&vk, &p, None).unwrap();
    let spec = ModelSpec::from_file(&fx("spec.toml")).unwrap();
    assert_eq!(
        st.c_before,
        commit_params(
            &spec,
            &read_checkpoint(&fx("before.safetensors"), &spec).unwrap()
        )
    );
    assert_eq!(
        st.c_after,
        commit_params(
            &spec,
            &read_checkpoint(&fx("after.safetensors"), &spec).unwrap()
        )
    );
    assert_eq!(
        st.c_batch,
        commit_batch(
            &spec,
            &read_batch(&fx("batch.safetensors"), &spec).unwrap().0
        )
    );
}

#[test]
fn wrong_statements_are_rejected() {
    let vk = read_verifying_key(&bytes("verifying.key")).unwrap();
    let honest = read_proof(&bytes("proof.zkstep")).unwrap();
    let one = zkstep_core::Fr::from(1u64);
    let cases: Vec<(&str, Box<dyn Fn(&mut zkstep_verifier::Proof)>)> = vec![
        (
            "c_before",
            Box::new(move |p| p.payload.statement.c_before += one),
        ),
        (
            "c_after",
            Box::new(move |p| p.payload.statement.c_after += one),
        ),
        (
            "c_batch",
            Box::new(move |p| p.payload.statement.c_batch += one),
        ),
        ("step", Box::new(|p| p.payload.statement.step += 1)),
        ("challenge", Box::new(move |p| p.rho_bump(one))),
        ("second challenge", Box::new(move |p| p.gamma_bump(one))),
        ("folds", Box::new(|p| p.payload.num_folds += 1)),
    ];
    for (name, mutate) in cases {
        let mut p = read_proof(&bytes("proof.zkstep")).unwrap();
        mutate(&mut p);
        assert!(
            matches!(verify(&vk, &p, None), Err(VerifyError::Rejected(_))),
            "a proof with another {name} was not rejected"
        );
    }
    // expected statement differs from the proof's
    let mut want = honest.statement();
    want.c_after += one;
    assert!(matches!(
        verify(&vk, &honest, Some(&want)),
        Err(VerifyError::Rejected(_))
    ));
}

trait Bump {
    fn rho_bump(&mut self, d: zkstep_core::Fr);
    fn gamma_bump(&mut self, d: zkstep_core::Fr);
}
impl Bump for zkstep_verifier::Proof {
    fn rho_bump(&mut self, d: zkstep_core::Fr) {
        self.payload.challenges.rho += d;
    }
    fn gamma_bump(&mut self, d: zkstep_core::Fr) {
        self.payload.challenges.gamma += d;
    }
}

#[test]
fn proof_for_spec_a_is_rejected_by_spec_b_key() {
    let mut vk_b = read_verifying_key(&bytes("other_verifying.key")).unwrap();
    let p = read_proof(&bytes("proof.zkstep")).unwrap();
    // the proof names the key it was made for
    match verify(&vk_b, &p, None) {
        Err(VerifyError::Rejected(m)) => assert!(m.contains("another verifying key"), "{m}"),
        other => panic!("expected rejection, got {:?}", other.map(|_| ())),
    }
    // and a key that claims to be that one is still another spec's
    vk_b.checksum = p.payload.vk_checksum;
    match verify(&vk_b, &p, None) {
        Err(VerifyError::Rejected(m)) => assert!(m.contains("spec"), "{m}"),
        other => panic!("expected rejection, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn malformed_files_are_malformed() {
    let p = bytes("proof.zkstep");
    assert!(matches!(
        read_proof(&p[..p.len() - 7]),
        Err(VerifyError::Malformed(_))
    ));
    let mut flipped = p.clone();
    let at = flipped.len() / 2;
    flipped[at] ^= 0x10;
    assert!(matches!(
        read_proof(&flipped),
        Err(VerifyError::Malformed(_))
    ));
    assert!(
        matches!(
            read_proof(&bytes("verifying.key")),
            Err(VerifyError::Malformed(_))
        ),
        "a key is not a proof"
    );
    assert!(
        matches!(read_verifying_key(&p), Err(VerifyError::Malformed(_))),
        "a proof is not a key"
    );
    assert!(matches!(
        read_verifying_key(b"not a key"),
        Err(VerifyError::Malformed(_))
    ));
}

fn verify_bin(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_zkstep-verify"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn binary_exit_codes_and_file_checks() {
    let s = |n: &str| fx(n).display().to_string();
    let (rc, out, _) = verify_bin(&[
        "--vk",
        &s("verifying.key"),
        "--proof",
        &s("proof.zkstep"),
        "--json",
    ]);
    assert_eq!(rc, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["accepted"], true);
    assert_eq!(v["params"], "dev");
    // the command's whole time includes the proof check
    assert!(v["total_ms"].as_f64().unwrap() >= v["verify_ms"].as_f64().unwrap());
    // the proof against the user's files
    let with_spec = |extra: &[&str]| {
        let (vk, proof, spec) = (s("verifying.key"), s("proof.zkstep"), s("spec.toml"));
        let mut args = vec!["--vk", &vk, "--proof", &proof, "--spec", &spec];
        args.extend_from_slice(extra);
        verify_bin(&args)
    };
    let (b0, b1, x0) = (
        s("before.safetensors"),
        s("after.safetensors"),
        s("batch.safetensors"),
    );
    let (rc, out, _) = with_spec(&["--before", &b0, "--after", &b1, "--batch", &x0]);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("ACCEPTED in") && out.contains("proof check"), "{out}");
    // the same batch relabelled for another step (same contents, so the same
    // commitment): refused as prove refuses it
    let dir = tempfile_dir();
    let relabelled = dir.join("batch_step_3.safetensors");
    {
        let spec = zkstep_core::ModelSpec::from_file(&fx("spec.toml")).unwrap();
        let (b, _) = zkstep_core::format::read_batch(&fx("batch.safetensors"), &spec).unwrap();
        zkstep_core::format::write_batch(&relabelled, &spec, &b, 3).unwrap();
    }
    let (rc, _, err) = with_spec(&["--batch", &relabelled.display().to_string()]);
    assert_eq!(rc, 1, "{err}");
    assert!(
        err.contains("REJECTED") && err.contains("batch_step_3.safetensors") && err.contains("for step 3"),
        "{err}"
    );
    // files whose names are not UTF-8 (legal on Linux), with --json and
    // without: accepted and reported, never a panic (issue 30, finding 3)
    #[cfg(unix)]
    for json in [true, false] {
        use std::os::unix::ffi::OsStrExt;
        let odd = |n: &[u8]| dir.join(std::ffi::OsStr::from_bytes(n));
        let (vk, proof, before) = (odd(b"vk\xff.key"), odd(b"proof\xff.zkstep"), odd(b"before\xff.safetensors"));
        std::fs::copy(fx("verifying.key"), &vk).unwrap();
        std::fs::copy(fx("proof.zkstep"), &proof).unwrap();
        std::fs::copy(fx("before.safetensors"), &before).unwrap();
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_zkstep-verify"));
        c.arg("--vk").arg(&vk).arg("--proof").arg(&proof).arg("--spec").arg(fx("spec.toml")).arg("--before").arg(&before);
        if json {
            c.arg("--json");
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.code() == Some(0) && !err.contains("panicked"), "json {json}: {err}");
        if json {
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(v["accepted"], true);
        }
    }
    // the after-checkpoint given as the before one
    let (rc, _, err) = with_spec(&["--before", &b1]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("REJECTED"));
    // another spec's key
    let (rc, _, err) = verify_bin(&[
        "--vk",
        &s("other_verifying.key"),
        "--proof",
        &s("proof.zkstep"),
    ]);
    assert_eq!(rc, 1, "{err}");
    // a checkpoint file for the key's spec, but the spec flag names another
    let (rc, _, err) = verify_bin(&[
        "--vk",
        &s("verifying.key"),
        "--proof",
        &s("proof.zkstep"),
        "--spec",
        &s("other_spec.toml"),
        "--before",
        &s("before.safetensors"),
    ]);
    assert_eq!(rc, 1, "{err}");
    // malformed: a truncated proof, a missing file
    let dir = tempfile_dir();
    let cut = dir.join("cut.zkstep");
    let p = bytes("proof.zkstep");
    std::fs::write(&cut, &p[..100]).unwrap();
    let (rc, _, err) = verify_bin(&[
        "--vk",
        &s("verifying.key"),
        "--proof",
        &cut.display().to_string(),
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("cut.zkstep") && err.contains("truncated"),
        "{err}"
    );
    let (rc, _, err) = verify_bin(&["--vk", &s("nope.key"), "--proof", &s("proof.zkstep")]);
    assert_eq!(rc, 2);
    assert!(err.contains("nope.key"), "{err}");
    assert!(!err.contains("panicked"));
}

fn tempfile_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("zkstep-verify-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A segment proof of two steps (θ_0 → θ_2 over batch, then batch2): the
/// binary accepts it against the user's files, given in order, and rejects
/// the batches in the other order, another end, or one batch short.
#[test]
fn segment_proof_binds_its_checkpoints_and_batches_in_order() {
    let s = |n: &str| fx(n).display().to_string();
    let seg = |extra: &[&str]| {
        let (vk, proof, spec) = (s("verifying.key"), s("segment.zkstep"), s("spec.toml"));
        let mut args = vec!["--vk", &vk, "--proof", &proof, "--spec", &spec, "--json"];
        args.extend_from_slice(extra);
        verify_bin(&args)
    };
    let (b0, b1, b2) = (
        s("before.safetensors"),
        s("after.safetensors"),
        s("after2.safetensors"),
    );
    let (x0, x1) = (s("batch.safetensors"), s("batch2.safetensors"));
    let (rc, out, err) = seg(&[
        "--before", &b0, "--after", &b2, "--batch", &x0, "--batch", &x1,
    ]);
    assert_eq!(rc, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["kind"].as_str(), v["step"].as_u64(), v["steps"].as_u64()),
        (Some("segment"), Some(0), Some(2))
    );
    for (what, extra) in [
        ("batches swapped", vec!["--batch", &x1, "--batch", &x0]),
        ("another end", vec!["--after", &b1]),
        ("one batch short", vec!["--batch", &x0]),
        ("another start", vec!["--before", &b1]),
    ] {
        let (rc, _, err) = seg(&extra);
        assert_eq!(rc, 1, "{what}: {err}");
        assert!(err.contains("REJECTED"), "{what}: {err}");
    }
    // the library: a statement with another range does not verify
    use zkstep_verifier::{read_any_proof, verify_segment, AnyProof};
    let vk = read_verifying_key(&bytes("verifying.key")).unwrap();
    let AnyProof::Segment(mut p) = read_any_proof(&bytes("segment.zkstep")).unwrap() else {
        panic!("not a segment proof")
    };
    verify_segment(&vk, &p, None).unwrap();
    p.payload.statement.step = 1;
    assert!(matches!(
        verify_segment(&vk, &p, None),
        Err(VerifyError::Rejected(_))
    ));
    // a one-step proof's bytes read as a segment by its kind byte: refused
    assert!(matches!(
        read_any_proof(&bytes("proof.zkstep")),
        Ok(AnyProof::Step(_))
    ));
    // a crafted segment claiming 2³² steps (and as many folds), re-sealed:
    // the binary rejects it without work that grows with the claim (issue
    // 30, finding 11); 30 s is a hang detector, not a timing
    let (h, mut crafted): (files::Header, files::SegmentPayload) =
        files::decode(&bytes("segment.zkstep"), files::FileKind::SegmentProof).unwrap();
    crafted.statement.steps = 1 << 32;
    crafted.num_folds = crafted.num_folds / 2 * (1 << 32);
    let path = tempfile_dir().join("claims_2_32_steps.zkstep");
    std::fs::write(&path, files::encode(h, &crafted).unwrap()).unwrap();
    let o = within::output_within(
        Command::new(env!("CARGO_BIN_EXE_zkstep-verify")).arg("--vk").arg(fx("verifying.key")).arg("--proof").arg(&path),
        30,
        "a segment claiming 2^32 steps",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("REJECTED"), "{err}");
    assert!(err.contains("at most 65536"), "{err}");
}

/// The stored proof under keys on KZG points (`kzg_verifying.key`): accepted
/// alone, with its batch, and with its checkpoint files committed by the
/// keys' points file (`--points`); its commitments are not the chain's
/// Commit(θ) of the same checkpoints; another checkpoint is rejected; a
/// missing points file, or one changed since keygen, is malformed input
/// named by its path; it rejects the chain keys' proof of the same step.
#[test]
fn a_kzg_proof_binds_its_checkpoint_files_through_the_points_file() {
    let s = |n: &str| fx(n).display().to_string();
    let vk = read_verifying_key(&bytes("kzg_verifying.key")).unwrap();
    assert!(vk.theta.is_some());
    let (st, _) = verify(&vk, &read_proof(&bytes("kzg_proof.zkstep")).unwrap(), None).unwrap();
    let spec = ModelSpec::from_file(&fx("spec.toml")).unwrap();
    let before = read_checkpoint(&fx("before.safetensors"), &spec).unwrap();
    assert_ne!(st.c_before, commit_params(&spec, &before));
    let points = zkstep_verifier::read_points(&bytes("kzg_points.key"), &vk).unwrap();
    assert_eq!(points.commitment(&spec, &before).unwrap(), st.c_before);
    let (kvk, kproof, spec_p, pts) =
        (s("kzg_verifying.key"), s("kzg_proof.zkstep"), s("spec.toml"), s("kzg_points.key"));
    let run = |extra: &[&str]| {
        let mut args = vec!["--vk", &kvk, "--proof", &kproof, "--spec", &spec_p];
        args.extend_from_slice(extra);
        verify_bin(&args)
    };
    let (b0, b1, b2, x0) = (
        s("before.safetensors"),
        s("after.safetensors"),
        s("after2.safetensors"),
        s("batch.safetensors"),
    );
    let (rc, out, err) = verify_bin(&["--vk", &kvk, "--proof", &kproof]);
    assert_eq!(rc, 0, "{out}{err}");
    let (rc, out, err) = run(&["--points", &pts, "--before", &b0, "--after", &b1, "--batch", &x0]);
    assert_eq!(rc, 0, "{out}{err}");
    let (rc, _, err) = run(&["--points", &pts, "--before", &b0, "--after", &b2]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("REJECTED") && err.contains("c_after"), "{err}");
    // points.key beside the verifying key is the default: none there
    let (rc, _, err) = run(&["--before", &b0]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("points.key") && err.contains("--points"), "{err}");
    // a points file changed since keygen (re-sealed: its own checksum holds)
    let raw = bytes("kzg_points.key");
    let (h, body) = files::open(&raw, files::FileKind::Points).unwrap();
    let mut body = body.to_vec();
    let n = body.len();
    body[n - 40] ^= 1;
    let dir = tempfile_dir();
    let bad = dir.join("kzg_points_changed.key");
    std::fs::write(&bad, files::seal(h, &body)).unwrap();
    let bad_s = bad.display().to_string();
    let (rc, _, err) = run(&["--points", &bad_s, "--before", &b0]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("not the points file of this verifying key") && err.contains(&bad_s), "{err}");
    // the chain keys' proof of the same step names another key
    assert!(verify(&vk, &read_proof(&bytes("proof.zkstep")).unwrap(), None).is_err());
    // and --points with chain keys is a usage error, not ignored
    let (vk_chain, proof_chain) = (s("verifying.key"), s("proof.zkstep"));
    let (rc, _, err) = verify_bin(&["--vk", &vk_chain, "--proof", &proof_chain, "--points", &pts]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("--points is for keys on KZG points"), "{err}");
}
