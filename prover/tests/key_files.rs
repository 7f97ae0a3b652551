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

/// One small spec's keys, made once for the tests below.
struct Written {
    spec: zkstep_core::ModelSpec,
    keys: zkstep_prover::ivc::Keys,
}

fn written() -> &'static Written {
    use zkstep_prover::ivc::{keygen, Setup};
    static W: std::sync::OnceLock<Written> = std::sync::OnceLock::new();
    W.get_or_init(|| {
        let spec = zkstep_core::ModelSpec::from_toml_str(
            "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 3\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 2\n",
        )
        .unwrap();
        let keys = keygen(&spec, Some(2), usize::MAX, Setup::Dev).unwrap();
        Written { spec, keys }
    })
}

/// The honest key file (written into `dir`), its header and payload.
fn honest_key(dir: &Path) -> (std::path::PathBuf, Header, Vec<u8>) {
    zkstep_prover::ivc::write_keys(dir, &written().keys).unwrap();
    let path = dir.join(zkstep_prover::ivc::PROVING_KEY_FILE);
    let bytes = std::fs::read(&path).unwrap();
    let (h, body) = files::open(&bytes, FileKind::ProvingKey).unwrap();
    (path, h, body.to_vec())
}

/// A proving key changed after keygen and re-sealed (so the envelope's
/// checksum passes) is refused when read, by name, before any work: its
/// layout's rows changed (the circuit its shapes hold is another), and bits
/// flipped inside its primary shape (the parameters' digest is not the one
/// the shapes give); the honest key reads back (issue 30, finding 6).
#[test]
fn a_changed_proving_key_is_refused_as_corrupt() {
    use zkstep_circuits::files::ProvingKeyPayload;
    let dir = tempfile::tempdir().unwrap();
    let (path, h, body) = honest_key(dir.path());
    read_proving_key(&path).unwrap();
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

/// A proving key whose secondary commitment key was cut to half its
/// generators and re-sealed (the shapes' digest does not cover the keys) is
/// refused when read, by name, where proving with it would have panicked
/// in the commitment engine's length assert.
#[test]
fn a_proving_key_with_a_short_commitment_key_is_refused() {
    use nova_snark::traits::commitment::{CommitmentEngineTrait, Len};
    use nova_snark::traits::Engine;
    use zkstep_circuits::engine::E2;
    use zkstep_fold::rawkey::LazyKey;
    let dir = tempfile::tempdir().unwrap();
    let (_, h, body) = honest_key(dir.path());
    let ck2 = written().keys.pp.secondary_key();
    let honest = postcard::to_stdvec(&LazyKey::<E2>::of(ck2).unwrap()).unwrap();
    let at = body
        .windows(honest.len())
        .position(|w| w == honest.as_slice())
        .expect("the secondary key is in the proving key");
    // a key of half the generators (RowEngine's setup takes a vector's length)
    let short = <E2 as Engine>::CE::setup(b"ck", ck2.length() * zkstep_fold::rows::ROWS / 2).unwrap();
    assert_eq!(short.length() * 2, ck2.length());
    let short = postcard::to_stdvec(&LazyKey::<E2>::of(&short).unwrap()).unwrap();
    let b = [&body[..at], &short[..], &body[at + honest.len()..]].concat();
    let p = dir.path().join("short.key");
    std::fs::write(&p, files::seal(h, &b)).unwrap();
    let e = err(&p);
    assert!(
        e.contains("short.key") && e.contains("proving key corrupt") && e.contains("secondary commitment key"),
        "{e}"
    );
}

/// Fuzzing proving keys beside the verifier's fuzzing of proofs and keys:
/// random bit flips anywhere in the key, re-sealed. None may panic or abort
/// reading the key or proving with it, and a proof made with a changed key
/// that is read is never accepted unless it is a proof of the step (a flip
/// in bytes proving does not use changes nothing). Cases: `ZKSTEP_FUZZ_CASES`
/// / 8 (8 by default).
#[test]
fn fuzzed_proving_keys_never_panic_and_never_prove_a_false_step() {
    use rand::{Rng, SeedableRng};
    use zkstep_core::{Batch, Checkpoint, Matrix};
    let w = written();
    let dir = tempfile::tempdir().unwrap();
    let (_, h, body) = honest_key(dir.path());
    let before = Checkpoint::init(&w.spec, 3);
    let batch = Batch {
        x: Matrix { rows: 2, cols: 3, data: vec![500_000_000, -250_000_000, 125_000_000, 0, 1_000_000_000, -750_000_000] },
        y: Matrix { rows: 2, cols: 2, data: vec![1_000_000_000, 0, 0, 1_000_000_000] },
        salt: Fr::from(11u64),
    };
    let after = zkstep_core::step(&w.spec, &before, &batch).unwrap().after;
    let vk = w.keys.step_keys().unwrap();
    let cases: usize = std::env::var("ZKSTEP_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(8, |c: usize| c / 8);
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x706b);
    let (mut refused, mut failed, mut proved) = (0, 0, 0);
    for case in 0..cases {
        let mut b = body.clone();
        let i = rng.gen_range(0..b.len());
        b[i] ^= 1 << rng.gen_range(0..8);
        let p = dir.path().join(format!("fuzzed{case}.key"));
        std::fs::write(&p, files::seal(h, &b)).unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let keys = match read_proving_key(&p) {
                Ok(k) => k,
                Err(e) => {
                    assert!(e.to_string().contains(&format!("fuzzed{case}.key")), "{e}");
                    return 0;
                }
            };
            match zkstep_prover::ivc::prove(&keys, &before, &after, &batch, &mut |_| {}) {
                Err(_) => 1,
                Ok((proof, _)) => {
                    // whatever it proved, it is this step or nothing
                    if let Ok(st) = zkstep_circuits::verify::verify_payload(&w.keys.layout, vk, w.keys.layout.spec_digest, &proof, None) {
                        assert_eq!(st.c_after, zkstep_core::commit::commit_params(&w.spec, &after));
                    }
                    2
                }
            }
        }));
        match r {
            Ok(0) => refused += 1,
            Ok(1) => failed += 1,
            Ok(_) => proved += 1,
            Err(_) => panic!("case {case}: byte {i} flipped made reading or proving panic"),
        }
    }
    eprintln!("proving-key fuzz: {refused} refused when read, {failed} failed to prove, {proved} proved");
    assert_eq!(refused + failed + proved, cases);
}

/// Keys written without replacing (`keygen` without `--force`) never
/// replace a key file that appeared meanwhile (another keygen's), and leave
/// no proving key beside a verifying key it does not match; with `replace`
/// both are written.
#[test]
fn keys_written_without_replace_keep_what_another_keygen_wrote() {
    use zkstep_prover::ivc::{write_keys_as, PROVING_KEY_FILE, VERIFYING_KEY_FILE};
    let keys = &written().keys;
    for theirs in [VERIFYING_KEY_FILE, PROVING_KEY_FILE] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(theirs), b"another keygen's").unwrap();
        let e = write_keys_as(dir.path(), keys, false).unwrap_err().to_string();
        assert!(e.contains(theirs), "{theirs}: {e}");
        assert_eq!(std::fs::read(dir.path().join(theirs)).unwrap(), b"another keygen's");
        // only their file is there (no temporary file, no half of a pair)
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from(theirs)], "{theirs}");
        write_keys_as(dir.path(), keys, true).unwrap();
        assert!(read_proving_key(&dir.path().join(PROVING_KEY_FILE)).is_ok());
    }
}
