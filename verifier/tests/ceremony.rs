//! `zkstep-verify --ptau DIR`: a ceremony key is re-derived from its spec,
//! its rows and the ceremony files and accepted only if it is the same key.
//! The ceremony files here are test files in the ceremony format, from a τ
//! drawn from a fixed seed (`ppot_pruned_20.ptau`: 64 MiB, about 20 s to make
//! on 2 cores, so each is made once into the target's temporary folder and
//! shared with later runs); the ceremony key is made once per run, with the
//! same function keygen uses (`zkstep_circuits::params::ceremony_keys`), the
//! prover being no dependency of the verifier. The dev key is the stored
//! fixture.
#![allow(clippy::unwrap_used)]

#[path = "../../testing/within.rs"]
mod within;
#[path = "../../testing/ptau.rs"]
mod ptau;
use ptau::{ptau_dir, ptau_name};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use zkstep_circuits::engine::Compression;
use zkstep_circuits::files::{self, FileKind, Header, ParamsKind, VerifyingKeyRef};
use zkstep_circuits::params::ceremony_keys;
use zkstep_circuits::Layout;
use zkstep_core::ModelSpec;

fn fx(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../params/fixtures")
        .join(name)
}

struct Fixture {
    /// The ceremony files the key is made from.
    ptau: PathBuf,
    /// Ceremony files of another τ.
    other: PathBuf,
    /// Holds the key files.
    dir: tempfile::TempDir,
    /// A ceremony verifying key from `ptau`.
    vk: PathBuf,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let (ptau, other) = (ptau_dir(1), ptau_dir(2));
        let spec = ModelSpec::from_toml_str(
            "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 2\n",
        )
        .unwrap();
        let layout = Arc::new(Layout::new(&spec, 2).unwrap());
        let keys = ceremony_keys(layout.clone(), Compression::Spartan, &ptau).unwrap();
        // what keygen writes (zkstep_prover::ivc::verifying_key_bytes)
        let toml = spec.to_toml();
        let payload = VerifyingKeyRef {
            spec_toml: &toml,
            rows: 2,
            segments: 1,
            vk: &keys.vk,
            theta: None,
        };
        let header = Header {
            kind: FileKind::VerifyingKey,
            spec_digest: spec.digest(),
            params: ParamsKind::Ceremony,
        };
        let dir = tempfile::tempdir().unwrap();
        let vk = dir.path().join("verifying.key");
        std::fs::write(&vk, files::encode(header, &payload).unwrap()).unwrap();
        Fixture {
            ptau,
            other,
            dir,
            vk,
        }
    })
}

/// Run `zkstep-verify`; returns (status, stdout, stderr).
fn verify_bin(args: &[&Path]) -> (i32, String, String) {
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

fn p(s: &str) -> &Path {
    Path::new(s)
}

/// `path` as the verifier names it.
fn named(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn a_ceremony_key_checks_against_its_own_ceremony_files() {
    let f = fixture();
    let t = Instant::now();
    let (rc, out, err) = verify_bin(&[p("--vk"), &f.vk, p("--ptau"), &f.ptau]);
    eprintln!(
        "zkstep-verify --ptau (key only) took {:.1} s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("KEY CHECKED"), "{out}");
    assert!(
        out.contains(&format!("ceremony, checked against {}", named(&f.ptau))),
        "{out}"
    );
}

#[test]
fn a_key_from_another_tau_is_rejected() {
    let f = fixture();
    let (rc, out, err) = verify_bin(&[p("--vk"), &f.vk, p("--ptau"), &f.other]);
    assert_eq!(rc, 1, "{out}{err}");
    assert!(
        err.contains("REJECTED") && err.contains(&named(&f.vk)) && err.contains(&named(&f.other)),
        "{err}"
    );
    assert!(!out.contains("KEY CHECKED"), "{out}");
}

#[test]
fn a_dev_key_relabelled_ceremony_is_unchecked_without_ptau_and_rejected_with_it() {
    let f = fixture();
    // the stored fixture key and proof are dev; relabelled "ceremony" (the
    // params byte is covered by the checksum, which anyone can recompute)
    let relabel = |name: &str, kind: FileKind| {
        let (h, body) = files::open(&std::fs::read(fx(name)).unwrap(), kind)
            .map(|(h, b)| (h, b.to_vec()))
            .unwrap();
        let out = f.dir.path().join(format!("relabelled-{name}"));
        let h = Header {
            params: ParamsKind::Ceremony,
            ..h
        };
        std::fs::write(&out, files::seal(h, &body)).unwrap();
        out
    };
    let vk = relabel("verifying.key", FileKind::VerifyingKey);
    let proof = relabel("proof.zkstep", FileKind::Proof);
    // the proof names the key it was made for: relabelling the key alone is
    // refused; a forger names the relabelled key in the proof as well
    let (rc, _, err) = verify_bin(&[p("--vk"), &vk, p("--proof"), &proof]);
    assert!(rc == 1 && err.contains("another verifying key"), "{err}");
    let vk_sum = files::envelope_checksum(&std::fs::read(&vk).unwrap()).unwrap();
    let (h, mut payload): (Header, files::ProofPayload) =
        files::decode(&std::fs::read(&proof).unwrap(), FileKind::Proof).unwrap();
    payload.vk_checksum = vk_sum;
    std::fs::write(&proof, files::encode(h, &payload).unwrap()).unwrap();
    let (rc, out, err) = verify_bin(&[p("--vk"), &vk, p("--proof"), &proof]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains(
            "ceremony (unchecked: pass --ptau DIR to check it against the ceremony files)"
        ),
        "{out}"
    );
    let (rc, out, err) = verify_bin(&[p("--vk"), &vk, p("--proof"), &proof, p("--ptau"), &f.ptau]);
    assert_eq!(rc, 1, "{out}{err}");
    assert!(
        err.contains("REJECTED") && err.contains(&named(&vk)) && err.contains(&named(&f.ptau)),
        "{err}"
    );
    assert!(!out.contains("ACCEPTED"), "{out}");
    // the dev key as it is: --ptau is a usage error saying the key is dev
    let (rc, _, err) = verify_bin(&[
        p("--vk"),
        &fx("verifying.key"),
        p("--proof"),
        &fx("proof.zkstep"),
        p("--ptau"),
        &f.ptau,
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("dev params") && err.contains("--ptau is for ceremony keys"),
        "{err}"
    );
}

#[test]
fn unusable_ceremony_directories_are_errors_naming_them() {
    let f = fixture();
    let bad = |dir: &Path, why: &str| {
        let (rc, out, err) = verify_bin(&[p("--vk"), &f.vk, p("--ptau"), dir]);
        assert_eq!(rc, 2, "--ptau {}: {out}{err}", dir.display());
        assert!(
            err.contains(&named(dir)) && err.contains(why) && !err.contains("panic"),
            "--ptau {}: {err}",
            dir.display()
        );
    };
    let tmp = tempfile::tempdir().unwrap();
    bad(
        &tmp.path().join("missing"),
        "cannot open the ceremony directory",
    );
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    bad(&file, "not a directory");
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    bad(&empty, "No suitable ptau file");
    // a truncated file
    let cut = tmp.path().join("truncated");
    std::fs::create_dir(&cut).unwrap();
    let mut head = vec![0u8; 4096];
    std::io::Read::read_exact(
        &mut std::fs::File::open(f.ptau.join(ptau_name())).unwrap(),
        &mut head,
    )
    .unwrap();
    std::fs::write(cut.join(ptau_name()), &head).unwrap();
    bad(&cut, &ptau_name());
    // sections nova-snark's reader asserts on (a panic there is an error)
    let odd = tmp.path().join("odd");
    std::fs::create_dir(&odd).unwrap();
    let mut b = b"ptau".to_vec();
    b.extend_from_slice(&1u32.to_le_bytes()); // version
    b.extend_from_slice(&3u32.to_le_bytes()); // 3 sections, none of them 1, 2 or 3
    for id in [7u32, 8, 9] {
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&0i64.to_le_bytes());
    }
    std::fs::write(odd.join(ptau_name()), &b).unwrap();
    bad(&odd, "malformed");
    // a FIFO named like a ceremony file (issue 30, finding 1): refused by its
    // type, never opened (opening one waits for a writer forever); 30 s is a
    // hang detector, not a timing (it takes milliseconds)
    let fifo = tmp.path().join("fifo");
    std::fs::create_dir(&fifo).unwrap();
    assert!(Command::new("mkfifo").arg(fifo.join(ptau_name())).status().unwrap().success());
    let o = within::output_within(
        Command::new(env!("CARGO_BIN_EXE_zkstep-verify")).args([p("--vk"), &f.vk, p("--ptau"), &fifo]),
        30,
        "zkstep-verify --ptau with a FIFO",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&ptau_name()) && err.contains("not a regular file"), "{err}");
}

#[test]
fn ptau_without_a_proof_checks_only_the_key_and_checkpoints_need_a_proof() {
    let f = fixture();
    let (rc, _, err) = verify_bin(&[p("--vk"), &f.vk]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("--proof"), "{err}");
    let (rc, _, err) = verify_bin(&[
        p("--vk"),
        &f.vk,
        p("--ptau"),
        &f.ptau,
        p("--spec"),
        &fx("spec.toml"),
        p("--batch"),
        &fx("batch.safetensors"),
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("--proof"), "{err}");
}
