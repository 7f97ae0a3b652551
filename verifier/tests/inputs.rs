//! What `zkstep-verify` reads: a device or a FIFO given as `--vk` or
//! `--proof` is malformed input (exit 2, at once, naming the file); a
//! proving key given as `--vk` is refused as the wrong kind by its header,
//! without reading the rest; a key that says "ceremony" is reported as
//! unchecked without `--ptau` (tests/ceremony.rs checks it with `--ptau`).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use zkstep_circuits::files::{self, FileKind, Header, ParamsKind};

fn fx(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../params/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Run `zkstep-verify`, killing it (and failing) if it takes over 60 s:
/// a FIFO read would block forever. Returns (status, stdout, stderr).
fn verify_bin(args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zkstep-verify"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("zkstep-verify {args:?} did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `--vk vk --proof proof` is malformed input naming `named`.
fn malformed(vk: &str, proof: &str, named: &str, why: &str) {
    let (rc, _, err) = verify_bin(&["--vk", vk, "--proof", proof]);
    assert_eq!(rc, 2, "--vk {vk} --proof {proof}: {err}");
    assert!(
        err.contains(named) && err.contains(why) && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn devices_and_fifos_are_malformed_input_at_once() {
    let (vk, proof) = (fx("verifying.key"), fx("proof.zkstep"));
    malformed(&vk, "/dev/zero", "/dev/zero", "not a regular file");
    malformed("/dev/zero", &proof, "/dev/zero", "not a regular file");
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo failed");
    let fifo = fifo.display().to_string();
    malformed(&vk, &fifo, &fifo, "not a regular file");
    malformed(&fifo, &proof, &fifo, "not a regular file");
}

/// A sparse file of `len` bytes that starts with a zkstep header of `kind`.
fn sparse_envelope(path: &Path, kind: FileKind, len: u64) {
    let header = Header {
        kind,
        spec_digest: zkstep_core::Fr::from(1u64),
        params: ParamsKind::Dev,
    };
    let f = std::fs::File::create(path).unwrap();
    std::io::Write::write_all(&mut &f, &files::seal(header, b"payload")).unwrap();
    f.set_len(len).unwrap();
}

#[test]
fn a_proving_key_given_as_vk_is_refused_as_the_wrong_kind() {
    let dir = tempfile::tempdir().unwrap();
    // larger than any verifying key: read whole, it would be refused for its
    // size; its header says what it is first
    let pk = dir.path().join("proving.key");
    sparse_envelope(&pk, FileKind::ProvingKey, 1 << 30);
    let pk = pk.display().to_string();
    malformed(
        &pk,
        &fx("proof.zkstep"),
        "proving.key",
        "is a zkstep proving key, expected a verifying key",
    );
    // and a key given as the proof
    malformed(
        &fx("verifying.key"),
        &fx("verifying.key"),
        "verifying.key",
        "is a zkstep verifying key, expected a proof",
    );
    // an oversized proof names its size and the limit
    let big = dir.path().join("big.zkstep");
    sparse_envelope(&big, FileKind::Proof, 1 << 30);
    malformed(
        &fx("verifying.key"),
        &big.display().to_string(),
        "big.zkstep",
        &format!("{}", zkstep_core::format::Input::Proof.limit()),
    );
}

#[test]
fn ceremony_is_reported_as_unchecked_without_ptau() {
    // the fixture key and proof are dev keys; relabelled "ceremony" (the
    // params byte is covered by the checksum, which anyone can recompute)
    // they still verify: without --ptau the label is not checked
    let dir = tempfile::tempdir().unwrap();
    let relabel = |name: &str, kind: FileKind| {
        let bytes = std::fs::read(fx(name)).unwrap();
        let (h, body) = files::open(&bytes, kind).unwrap();
        let out = dir.path().join(name);
        let h = Header {
            params: ParamsKind::Ceremony,
            ..h
        };
        std::fs::write(&out, files::seal(h, body)).unwrap();
        out.display().to_string()
    };
    let vk = relabel("verifying.key", FileKind::VerifyingKey);
    let proof = relabel("proof.zkstep", FileKind::Proof);
    // the proof names its key, so the forger names the relabelled one too
    let vk_sum = files::envelope_checksum(&std::fs::read(&vk).unwrap()).unwrap();
    let (h, mut payload): (Header, files::ProofPayload) =
        files::decode(&std::fs::read(&proof).unwrap(), FileKind::Proof).unwrap();
    payload.vk_checksum = vk_sum;
    std::fs::write(&proof, files::encode(h, &payload).unwrap()).unwrap();
    let (rc, out, err) = verify_bin(&["--vk", &vk, "--proof", &proof]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("ceremony")
            && out.contains("unchecked: pass --ptau DIR to check it against the ceremony files"),
        "{out}"
    );
}
