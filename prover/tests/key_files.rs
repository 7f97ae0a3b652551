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

/// A proving key changed after keygen and re-sealed (so the envelope's
/// checksum passes) is refused when read, by name, before any work: its
/// layout's rows changed (the circuit its shapes hold is another), and bits
/// flipped inside its primary shape (the parameters' digest is not the one
/// the shapes give); the honest key reads back (issue 30, finding 6).
#[test]
fn a_changed_proving_key_is_refused_as_corrupt() {
    use zkstep_circuits::files::ProvingKeyPayload;
    use zkstep_prover::ivc::{keygen, write_keys, Setup, PROVING_KEY_FILE};
    let spec = zkstep_core::ModelSpec::from_toml_str(
        "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 3\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 2\n",
    )
    .unwrap();
    let keys = keygen(&spec, Some(2), usize::MAX, Setup::Dev).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_keys(dir.path(), &keys).unwrap();
    let path = dir.path().join(PROVING_KEY_FILE);
    let honest = std::fs::read(&path).unwrap();
    read_proving_key(&path).unwrap();
    let (h, body) = files::open(&honest, FileKind::ProvingKey).unwrap();
    let body = body.to_vec();
    let write = |b: &[u8]| {
        let p = dir.path().join("changed.key");
        std::fs::write(&p, files::seal(h, b)).unwrap();
        p
    };
    // another row count: the layout is valid, its circuit is not the key's
    let mut p: ProvingKeyPayload = postcard::from_bytes(&body).unwrap();
    p.rows = 1;
    let changed = write(&postcard::to_stdvec(&p).unwrap());
    let e = err(&changed);
    assert!(e.contains("changed.key") && e.contains("proving key corrupt"), "{e}");
    // bits flipped in the primary shape's serialisation: refused, either as
    // undecodable or, where it still decodes, by the digest
    let shape = postcard::to_stdvec(p.pp.primary_shape()).unwrap();
    let at = body
        .windows(shape.len())
        .position(|w| w == shape.as_slice())
        .expect("the primary shape is in the key");
    let mut by_digest = 0;
    for k in 1..8 {
        let mut b = body.clone();
        b[at + k * shape.len() / 8] ^= 1;
        let e = err(&write(&b));
        assert!(e.contains("changed.key"), "{e}");
        by_digest += usize::from(e.contains("proving key corrupt"));
    }
    assert!(by_digest > 0, "no flip decoded: the digest check was not reached");
}
