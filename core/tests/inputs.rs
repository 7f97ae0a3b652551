//! Every file zkstep reads from a user is read with a size limit and only
//! if it is a regular file: a device or a FIFO is refused before it is
//! opened (it would never end, or block forever), an oversized file before
//! a byte is read, each with an error naming the file.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use zkstep_core::format::{read_input, Input};
use zkstep_core::input::peek;
use zkstep_core::ModelSpec;

#[test]
fn devices_fifos_and_directories_are_refused_without_reading() {
    let e = read_input(Path::new("/dev/zero"), Input::Proof)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let e = ModelSpec::from_file(Path::new("/dev/zero"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/dev/zero") && e.contains("regular file"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let e = read_input(dir.path(), Input::Safetensors)
        .unwrap_err()
        .to_string();
    assert!(e.contains("directory"), "{e}");
    // a FIFO with no writer: opening it would block forever
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.map(|s| s.success()).unwrap_or(false) {
        let e = read_input(&fifo, Input::VerifyingKey)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("fifo") && e.contains("not a regular file"),
            "{e}"
        );
    }
}

#[test]
fn a_file_over_its_kinds_limit_is_refused_naming_size_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.toml");
    let limit = Input::Spec.limit();
    std::fs::write(&p, vec![b'#'; limit as usize + 1]).unwrap();
    let e = ModelSpec::from_file(&p).unwrap_err().to_string();
    assert!(
        e.contains("big.toml")
            && e.contains(&format!("{}", limit + 1))
            && e.contains(&format!("{limit}")),
        "{e}"
    );
    // at the limit it is read (and then parsed: a spec of comments is no spec)
    std::fs::write(&p, vec![b'#'; limit as usize]).unwrap();
    assert_eq!(read_input(&p, Input::Spec).unwrap().len() as u64, limit);
}

#[test]
fn peek_reads_the_head_only_and_refuses_what_read_input_refuses() {
    let dir = tempfile::tempdir().unwrap();
    // a sparse file far over the verifying-key limit: its head is still read
    let p = dir.path().join("huge.key");
    let f = std::fs::File::create(&p).unwrap();
    std::io::Write::write_all(&mut &f, b"ZKSTEP\0\x03").unwrap();
    f.set_len(Input::VerifyingKey.limit() * 4).unwrap();
    assert_eq!(
        peek(&p, 8, Input::VerifyingKey).unwrap(),
        b"ZKSTEP\0\x03".to_vec()
    );
    assert!(read_input(&p, Input::VerifyingKey).is_err());
    // a shorter file gives what it has
    let short = dir.path().join("short");
    std::fs::write(&short, b"abc").unwrap();
    assert_eq!(peek(&short, 8, Input::Proof).unwrap(), b"abc".to_vec());
    let e = peek(Path::new("/dev/zero"), 8, Input::Proof)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
}

/// `write_new` never replaces: a file that appeared at the path while the
/// caller worked (another prover with the same `--out`) is kept, the error
/// names it, and no temporary file is left; `write_atomic` replaces.
#[test]
fn write_new_never_replaces_and_leaves_no_temporary_file() {
    use zkstep_core::format::{write_atomic, write_new};
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("proof.zkstep");
    write_new(&p, b"first").unwrap();
    let e = write_new(&p, b"second").unwrap_err().to_string();
    assert!(e.contains("proof.zkstep") && e.contains("nothing was replaced"), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"first");
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    write_atomic(&p, b"third").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"third");
}

/// What a writer killed mid-write (kill -9) leaves is removed by the next
/// write in that directory: a temporary file whose writer's process is gone,
/// and one without a process id once a day old; a live writer's file, a
/// directory and a link with the prefix are kept.
#[test]
fn leftovers_of_killed_writers_are_swept_and_live_ones_kept() {
    use zkstep_core::format::{write_atomic, TMP_PREFIX};
    let d = tempfile::tempdir().unwrap();
    let at = |n: &str| d.path().join(format!("{TMP_PREFIX}{n}"));
    // pid 4194304 is past Linux's pid_max: no such process
    let dead = at("4194304-x1y2z3");
    let mine = at(&format!("{}-a1b2c3", std::process::id()));
    let fresh_legacy = at("Qw3rTy");
    for p in [&dead, &mine, &fresh_legacy] {
        std::fs::write(p, b"partial").unwrap();
    }
    let dir_like = at("4194304-dir");
    std::fs::create_dir(&dir_like).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&mine, at("4194304-link")).unwrap();
    write_atomic(&d.path().join("ckpt.safetensors"), b"ok").unwrap();
    assert_eq!(dead.exists(), !std::path::Path::new("/proc/self").exists());
    assert!(mine.exists() && fresh_legacy.exists() && dir_like.is_dir());
    #[cfg(unix)]
    assert!(std::fs::symlink_metadata(at("4194304-link")).is_ok());
    assert_eq!(std::fs::read(d.path().join("ckpt.safetensors")).unwrap(), b"ok");
}

/// A hostile safetensors file is refused having read at most its header:
/// bytes past the tensors its header declares (a 2 GiB sparse file with a
/// small header), tensors larger than a checkpoint or batch of the spec can
/// hold (a sparse 1 GiB tensor), and a header longer than zkstep reads.
/// Each error names the file; none reads the bulk of it.
#[test]
fn hostile_safetensors_are_refused_from_their_header() {
    use zkstep_core::format::{read_batch, read_checkpoint};
    let spec = ModelSpec::from_toml_str(
        "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 1\n",
    )
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let file = |name: &str, header: &str, total: u64| {
        let p = d.path().join(name);
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        std::fs::write(&p, &bytes).unwrap();
        // sparse: the length without the bytes
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(total).unwrap();
        p
    };
    let small = r#"{"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}"#;
    let trailing = file("trailing.safetensors", small, 2 << 30);
    let e = read_checkpoint(&trailing, &spec).unwrap_err().to_string();
    assert!(e.contains("trailing.safetensors") && e.contains("declares 8 bytes"), "{e}");
    let big = format!(r#"{{"w":{{"dtype":"I64","shape":[{}],"data_offsets":[0,{}]}}}}"#, 1 << 27, 1u64 << 30);
    let huge = file("huge.safetensors", &big, 8 + big.len() as u64 + (1 << 30));
    for e in [
        read_checkpoint(&huge, &spec).unwrap_err().to_string(),
        read_batch(&huge, &spec).map(|_| ()).unwrap_err().to_string(),
        zkstep_core::format::read_checkpoint_or_batch(&huge, &spec).unwrap_err().to_string(),
    ] {
        assert!(e.contains("huge.safetensors") && e.contains("more than the"), "{e}");
    }
    let p = d.path().join("long-header.safetensors");
    std::fs::write(&p, u64::MAX.to_le_bytes()).unwrap();
    let e = read_checkpoint(&p, &spec).unwrap_err().to_string();
    assert!(e.contains("long-header.safetensors") && e.contains("a header of"), "{e}");
}

#[test]
fn the_same_checkpoint_is_written_byte_for_byte_the_same() {
    // the metadata is a hash map: its order changed from one write to the next
    let spec = ModelSpec::from_toml_str(
        "batch_size = 2\n[optimizer]\nkind = \"adam\"\n[[layers]]\ninputs = 3\noutputs = 2\n",
    )
    .unwrap();
    let ck = zkstep_core::model::Checkpoint::init(&spec, 7);
    let path = Path::new("ckpt.safetensors");
    let first = zkstep_core::format::checkpoint_bytes(path, &spec, &ck).unwrap();
    for _ in 0..16 {
        assert_eq!(zkstep_core::format::checkpoint_bytes(path, &spec, &ck).unwrap(), first);
    }
    // still a valid file with its keys in order
    let back = zkstep_core::format::parse_checkpoint(path, &first, &spec).unwrap();
    assert_eq!(back, ck);
    let n = u64::from_le_bytes(first[..8].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&first[8..8 + n]).unwrap();
    assert!(header.starts_with("{\"__metadata__\":{\"format\":"), "{header}");
}

/// An Adam checkpoint written when the first moment was at 10⁹ (no
/// `moment_scale` in its metadata) is refused by name, not read with every
/// m a billion times too small.
#[test]
fn an_adam_checkpoint_with_the_old_moment_scale_is_refused() {
    let spec = ModelSpec::from_toml_str(
        "batch_size = 2\n[optimizer]\nkind = \"adam\"\n[[layers]]\ninputs = 3\noutputs = 2\n",
    )
    .unwrap();
    let ck = zkstep_core::model::Checkpoint::init(&spec, 7);
    let path = Path::new("old-adam.safetensors");
    let mut bytes = zkstep_core::format::checkpoint_bytes(path, &spec, &ck).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&bytes[8..8 + n]).unwrap().to_string();
    let key = "\"moment_scale\":\"1000000000000000000\",";
    assert!(header.contains(key), "{header}");
    // the same header without the key, blanked to keep every offset
    let old = header.replace(key, &" ".repeat(key.len()));
    bytes[8..8 + n].copy_from_slice(old.as_bytes());
    let e = zkstep_core::format::parse_checkpoint(path, &bytes, &spec).unwrap_err().to_string();
    assert!(e.contains("old-adam.safetensors") && e.contains("first moment") && e.contains("import it again"), "{e}");
}

#[test]
fn cross_entropy_targets_must_be_distributions() {
    use zkstep_core::format::{read_dataset_for, write_float_dataset};
    let dir = tempfile::tempdir().unwrap();
    let spec = ModelSpec::from_toml_str(
        "batch_size = 2\nloss = \"cross_entropy\"\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 3\n",
    )
    .unwrap();
    let x = [0.5f32, -0.5, 1.0, 0.25];
    let read = |y: [f32; 6]| {
        let p = dir.path().join("d.safetensors");
        write_float_dataset(&p, &x, [2, 2], &y, [2, 3]).unwrap();
        read_dataset_for(&p, &spec).map(|_| ()).map_err(|e| e.to_string())
    };
    // one-hot and soft targets, thirds included (rounding leaves 999999999)
    read([0.0, 1.0, 0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]).unwrap();
    let e = read([1.2, -0.2, 0.0, 0.0, 0.0, 1.0]).unwrap_err();
    assert!(e.contains("d.safetensors") && e.contains("at (0,1)") && e.contains("never negative"), "{e}");
    let e = read([0.0, 1.0, 0.0, 0.5, 0.0, 0.0]).unwrap_err();
    assert!(e.contains("row 1 sums to 0.5") && e.contains("distributions"), "{e}");
}
