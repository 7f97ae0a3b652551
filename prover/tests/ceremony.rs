//! Ceremony params: keygen from a directory of `ppot_pruned_NN.ptau` files
//! (here test files written from a random τ, in the ceremony file format),
//! then prove and verify; the key says `ceremony`, and the function the
//! verifier's `--ptau` check re-derives it with
//! (`zkstep_circuits::params::ceremony_keys`) gives keygen's verifying key
//! again; unusable ceremony directories are errors naming them. The keys are
//! made once for the tests of this file, the ptau file once for every run.
#![allow(clippy::unwrap_used)]

#[path = "../../testing/ptau.rs"]
mod ptau;
use ptau::{ptau_dir, ptau_name};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use zkstep_circuits::engine::VerifierKey;
use zkstep_circuits::files::{self, FileKind, Header, ParamsKind};
use zkstep_circuits::params::{ceremony_keys, ParamsError};
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};
use zkstep_prover::ivc::{keygen, prove, Keys, Setup};

struct Fixture {
    /// Ceremony files the keys were made from.
    ptau: PathBuf,
    spec: ModelSpec,
    keys: Keys,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let ptau = ptau_dir(1);
        let spec = ModelSpec::from_toml_str(
            "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 2\n",
        )
        .unwrap();
        let keys = keygen(&spec, Some(2), usize::MAX, Setup::Ceremony(&ptau)).unwrap();
        Fixture { ptau, spec, keys }
    })
}

/// `vk`'s canonical (postcard) encoding, in an envelope.
fn bytes(vk: &VerifierKey) -> Vec<u8> {
    let h = Header {
        kind: FileKind::VerifyingKey,
        spec_digest: zkstep_core::Fr::from(0u64),
        params: ParamsKind::Ceremony,
    };
    files::encode(h, vk).unwrap()
}

#[test]
fn keygen_from_ptau_files_proves_and_verifies() {
    let f = fixture();
    let (spec, keys) = (&f.spec, &f.keys);
    assert_eq!(keys.params, ParamsKind::Ceremony);
    let before = Checkpoint::init(spec, 3);
    let batch = Batch {
        x: Matrix::from_vec(2, 2, vec![1, -2, 3, 4]).unwrap(),
        y: Matrix::from_vec(2, 2, vec![5, 6, 7, 8]).unwrap(),
        salt: seeded_salt(3, 0),
    };
    let after = step(spec, &before, &batch).unwrap().after;
    let (proof, _) = prove(keys, &before, &after, &batch, &mut |_| {}).unwrap();
    zkstep_circuits::verify::verify_payload(&keys.layout, keys.step_keys().unwrap(), spec.digest(), &proof, None)
        .unwrap();
}

#[test]
fn the_verifiers_rederivation_gives_keygens_key() {
    // the verifier's `--ptau` check compares these encodings (another τ
    // giving another key is tested there, verifier/tests/ceremony.rs)
    let f = fixture();
    let again = ceremony_keys(f.keys.layout.clone(), f.keys.compression(), &f.ptau).unwrap();
    assert!(
        bytes(&again.vk) == bytes(f.keys.vk().unwrap()),
        "same files, another key"
    );
}

#[test]
fn unusable_ceremony_directories_are_clear_errors() {
    let f = fixture();
    let keygen_err = |dir: &Path| match keygen(&f.spec, Some(2), usize::MAX, Setup::Ceremony(dir)) {
        Ok(_) => panic!("keygen from {} succeeded", dir.display()),
        Err(e) => e.to_string(),
    };
    // an empty directory: no ppot_pruned file
    let empty = tempfile::tempdir().unwrap();
    let e = keygen_err(empty.path());
    assert!(
        e.contains("ppot_pruned") && e.contains(&empty.path().display().to_string()),
        "{e}"
    );
    // missing, or a file
    let missing = empty.path().join("missing");
    let e = keygen_err(&missing);
    assert!(e.contains(&missing.display().to_string()), "{e}");
    let file = empty.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let e = keygen_err(&file);
    assert!(e.contains("not a directory"), "{e}");
    // truncated, and sections the ptau reader asserts on: errors, not panics
    let dir = tempfile::tempdir().unwrap();
    let name = ptau_name();
    let mut head = vec![0u8; 4096];
    std::io::Read::read_exact(
        &mut std::fs::File::open(f.ptau.join(&name)).unwrap(),
        &mut head,
    )
    .unwrap();
    std::fs::write(dir.path().join(&name), &head).unwrap();
    let e = keygen_err(dir.path());
    assert!(
        e.contains(&name) && e.contains(&dir.path().display().to_string()),
        "{e}"
    );
    // a FIFO named like a ceremony file: refused by its type, never opened
    // (opening it would block until a writer comes)
    let fifo_dir = tempfile::tempdir().unwrap();
    let fifo = fifo_dir.path().join(&name);
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (tx, rx) = std::sync::mpsc::channel();
    let (layout, compression, p) = (f.keys.layout.clone(), f.keys.compression(), fifo_dir.path().to_path_buf());
    std::thread::spawn(move || {
        let _ = tx.send(ceremony_keys(layout, compression, &p).err().map(|e| e.to_string()));
    });
    let e = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("a FIFO ceremony file hangs ceremony_keys")
        .expect("keys from a FIFO");
    assert!(e.contains(&name) && e.contains("not a regular file"), "{e}");
    let mut odd = b"ptau".to_vec();
    odd.extend_from_slice(&1u32.to_le_bytes()); // version
    odd.extend_from_slice(&3u32.to_le_bytes()); // 3 sections, none of them 1, 2, 3
    for id in [7u32, 8, 9] {
        odd.extend_from_slice(&id.to_le_bytes());
        odd.extend_from_slice(&0i64.to_le_bytes());
    }
    std::fs::write(dir.path().join(&name), &odd).unwrap();
    match ceremony_keys(f.keys.layout.clone(), f.keys.compression(), dir.path()) {
        Err(ParamsError::Ptau { path, msg }) => {
            assert_eq!(path, dir.path());
            assert!(msg.contains("malformed") && msg.contains(&name), "{msg}");
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("parameters from a malformed ptau file"),
    }
}

/// A proving key written and read back gives keygen's verifying key (derived
/// on first use); one re-sealed with its tiling past the bounds is refused
/// with the reason, before anything is built from it.
#[test]
fn proving_keys_read_back_and_their_tiling_is_bounded() {
    use zkstep_circuits::files::{ProvingKeyPayload, MAX_TILING};
    use zkstep_prover::ivc::{read_proving_key, write_keys, PROVING_KEY_FILE};
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    write_keys(dir.path(), &f.keys).unwrap();
    let path = dir.path().join(PROVING_KEY_FILE);
    let back = read_proving_key(&path).unwrap();
    assert!(bytes(back.vk().unwrap()) == bytes(f.keys.vk().unwrap()));
    let raw = std::fs::read(&path).unwrap();
    let (h, mut p): (Header, ProvingKeyPayload) = files::decode(&raw, FileKind::ProvingKey).unwrap();
    for (rows, segments) in [(u64::MAX, 1), (1 << 40, 1), (MAX_TILING + 1, 1), (0, 1), (2, 0), (2, u64::MAX)] {
        p.rows = rows;
        p.segments = segments;
        std::fs::write(&path, files::encode(h, &p).unwrap()).unwrap();
        let e = match read_proving_key(&path) {
            Ok(_) => panic!("rows {rows}, segments {segments}: read"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("proving.key") && e.contains("out of range"), "{e}");
    }
    // at the bound, and one past the widest layer: refused before a circuit
    // of that many rows is built (2²⁰ rows would never finish building)
    let widest = f.keys.layout.widest_layer();
    for rows in [MAX_TILING, widest as u64 + 1] {
        p.rows = rows;
        p.segments = 1;
        std::fs::write(&path, files::encode(h, &p).unwrap()).unwrap();
        let e = match read_proving_key(&path) {
            Ok(_) => panic!("rows {rows}: read"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("proving.key") && e.contains("more than the widest layer"), "{e}");
    }
}
