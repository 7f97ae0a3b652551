//! A proof that makes nova-snark panic during verification is a rejection
//! (exit 1, `error: REJECTED: <file>: …`), never a crash with status 101;
//! a panic while reading is malformed input.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;
use zkstep_circuits::files::{self, FileKind, Header, ProofPayload};
use zkstep_verifier::{guard, read_proof, read_verifying_key, verify, VerifyError};

fn fx(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../params/fixtures")
        .join(name)
}

/// The fixture proof with its secondary SNARK edited at `pointer` (under
/// the compression's variant, `engine::CompressedSnark`) by `edit`.
fn edited_proof(pointer: &str, edit: impl FnOnce(&mut Vec<serde_json::Value>)) -> Vec<u8> {
    let (h, mut p): (Header, ProofPayload) =
        files::decode(&std::fs::read(fx("proof.zkstep")).unwrap(), FileKind::Proof).unwrap();
    let mut j = serde_json::to_value(&p.snark).unwrap();
    let c = p.snark.compression();
    let v = j
        .pointer_mut(&format!("/{c:?}/snark2/{pointer}"))
        .and_then(|v| v.as_array_mut())
        .unwrap_or_else(|| panic!("the compressed proof's secondary SNARK has {pointer}"));
    edit(v);
    p.snark = serde_json::from_value(j).unwrap();
    files::encode(h, &p).unwrap()
}

/// The fixture proof with the first round polynomial of the secondary's
/// outer sum-check emptied: it still decodes, and nova-snark 0.76's
/// sum-check verifier (which zkstep's Spartan verifier calls) indexes past
/// the end of it.
fn crafted_proof() -> Vec<u8> {
    edited_proof("sc_proof_outer/compressed_polys/0/coeffs_except_linear_term", |v| v.clear())
}

/// One evaluation dropped from the secondary's `evals_batch`: nova-snark's
/// own verifier indexed past its end; zkstep's Spartan verifier checks the
/// count first, so it is a plain rejection.
#[test]
fn a_missing_batched_evaluation_is_rejected_without_a_panic() {
    let vk = read_verifying_key(&std::fs::read(fx("verifying.key")).unwrap()).unwrap();
    let bytes = edited_proof("evals_batch", |v| {
        v.pop();
    });
    let proof = read_proof(&bytes).unwrap();
    let r = zkstep_circuits::verify::verify_payload(&vk.layout, vk.keys(), proof.header.spec_digest, &proof.payload, None);
    assert!(r.is_err(), "accepted");
}

#[test]
fn a_panic_while_verifying_is_a_rejection() {
    let vk = read_verifying_key(&std::fs::read(fx("verifying.key")).unwrap()).unwrap();
    let bytes = crafted_proof();
    let proof = read_proof(&bytes).unwrap();
    // the premise: unguarded, this proof makes verification panic
    let unguarded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        zkstep_circuits::verify::verify_payload(
            &vk.layout,
            vk.keys(),
            proof.header.spec_digest,
            &proof.payload,
            None,
        )
    }));
    assert!(
        unguarded.is_err(),
        "the crafted proof no longer panics nova-snark"
    );
    match verify(&vk, &proof, None) {
        Err(VerifyError::Rejected(m)) => assert!(m.contains("panicked"), "{m}"),
        other => panic!("expected a rejection, got {:?}", other.map(|_| ())),
    }

    // the binary: status 1 and a message naming the file, no panic trace
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crafted.zkstep");
    std::fs::write(&path, &bytes).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_zkstep-verify"))
        .args(["--vk", fx("verifying.key").to_str().unwrap()])
        .args(["--proof", path.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error: REJECTED: ") && err.contains("crafted.zkstep"),
        "{err}"
    );
    assert!(!err.contains("panicked at"), "{err}");
}

#[test]
fn guard_maps_a_panic_to_the_given_kind() {
    let r: Result<(), _> = guard(VerifyError::Malformed, || panic!("boom {}", 7));
    match r {
        Err(VerifyError::Malformed(m)) => assert!(m.contains("boom 7"), "{m}"),
        other => panic!("expected malformed, got {other:?}"),
    }
    let r: Result<(), _> = guard(VerifyError::Rejected, || panic!("static"));
    assert!(matches!(r, Err(VerifyError::Rejected(m)) if m.contains("static")));
    // no panic: the closure's own result
    assert_eq!(guard(VerifyError::Rejected, || Ok(3)).unwrap(), 3);
}
