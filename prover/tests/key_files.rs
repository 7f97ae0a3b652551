//! `read_proving_key` reads only a regular file within the proving-key
//! limit, and refuses another kind of zkstep file by its header, before
//! reading the rest of it.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use zkstep_circuits::files::{self, FileKind, Header, ParamsKind};
use zkstep_core::Fr;
use zkstep_prover::ivc::read_proving_key;

fn err(path: &Path) -> String {
    match read_proving_key(path) {
        Ok(_) => panic!("{} was read as a proving key", path.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_verifying_key_is_refused_by_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("verifying.key");
    let header = Header {
        kind: FileKind::VerifyingKey,
        spec_digest: Fr::from(1u64),
        params: ParamsKind::Dev,
    };
    let f = std::fs::File::create(&p).unwrap();
    std::io::Write::write_all(&mut &f, &files::seal(header, b"payload")).unwrap();
    // sparse and larger than any proving key: read whole, it would be refused
    // for its size, not its kind
    f.set_len(zkstep_core::format::Input::ProvingKey.limit() + 1)
        .unwrap();
    let e = err(&p);
    assert!(
        e.contains("verifying.key")
            && e.contains("is a zkstep verifying key, expected a proving key"),
        "{e}"
    );
}

#[test]
fn devices_and_missing_files_are_named() {
    let e = err(Path::new("/dev/zero"));
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let e = err(Path::new("/nonexistent/proving.key"));
    assert!(e.contains("/nonexistent/proving.key"), "{e}");
}
