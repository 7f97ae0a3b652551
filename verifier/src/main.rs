//! `zkstep-verify`: the standalone verifier.
//!
//! Exit status: 0 accepted; 1 rejected; 2 malformed input or usage error.
//! Never 101: a panic while reading the key or proof is malformed input, one
//! while verifying is a rejection (both caught by `zkstep_verifier::guard`),
//! and any other panic is reported as an error with status 2.
//!
//! `--ptau DIR` checks a ceremony key against the ceremony files before
//! anything is verified (`zkstep_verifier::check_ceremony`): a key that is
//! not what DIR gives for its spec and rows is rejected (1); a DIR that
//! cannot be used (a panic in nova-snark's ptau reader included), or
//! `--ptau` with a dev key, is an error (2). With `--ptau` and no `--proof`
//! only the key is checked.

use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use zkstep_circuits::files::{self, FileError, FileKind, ParamsKind};
use zkstep_core::commit::commit_all;
use zkstep_core::format::{read_batch, read_checkpoint, read_input, Input};
use zkstep_core::input::peek;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::{Batch, Checkpoint, Fr, ModelSpec};
use zkstep_circuits::merge::MergeStatement;
use zkstep_core::merge::Round;
use zkstep_verifier::merge::{read_merge_key, read_merge_points, read_merge_proof, verify_merge_proof, MergeKey};
use zkstep_verifier::{
    check_ceremony, panic_message, read_any_proof, read_points, read_verifying_key, verify,
    verify_segment, AnyProof, Points, SegmentProof, Statement, VerifyError, VerifyingKey,
};

/// Verify a zkstep proof of one training step, or of a segment of steps.
#[derive(Parser, Debug)]
#[command(
    name = "zkstep-verify",
    version,
    about,
    after_help = "Exit status: 0 accepted (with --ptau and no --proof: the key checked); \
                  1 rejected (the proof, or a key that is not what the --ptau files give); \
                  2 malformed input or usage error (a --ptau DIR that cannot be used, \
                  --ptau with a dev key).\n\
                  A ceremony key's params are printed as \"ceremony, checked against DIR\" \
                  with --ptau DIR, else as unchecked: the params byte is one byte of the \
                  key file that anyone can change."
)]
struct Args {
    /// Verifying key file (from `zkstep keygen`).
    #[arg(long)]
    vk: PathBuf,
    /// Proof file (from `zkstep prove`); optional with --ptau (then only the key is checked).
    #[arg(long, required_unless_present = "ptau")]
    proof: Option<PathBuf>,
    /// Directory of `ppot_pruned_NN.ptau` ceremony files (what `zkstep keygen
    /// --ptau-dir` was given): re-derive the key from its spec, its rows and
    /// these files and reject it unless it is the same (ceremony keys only;
    /// takes seconds to minutes, as long as keygen's parameter setup). Without it a
    /// ceremony key's params are reported as unchecked.
    #[arg(long, value_name = "DIR")]
    ptau: Option<PathBuf>,
    /// Checkpoint θ_t: its commitment must be the proof's c_before (needs --spec).
    #[arg(long, requires = "spec", requires = "proof")]
    before: Option<PathBuf>,
    /// Checkpoint θ_{t+1}: its commitment must be the proof's c_after (needs --spec).
    #[arg(long, requires = "spec", requires = "proof")]
    after: Option<PathBuf>,
    /// Batch file: its commitment must be the proof's c_batch (needs --spec).
    /// For a segment proof, give one per step, in order (repeat the flag):
    /// their commitments must be the proof's batch chain.
    #[arg(long, requires = "spec", requires = "proof")]
    batch: Vec<PathBuf>,
    /// Merge proofs: the round file (TOML, as `zkstep merge` reads it): its
    /// checkpoints' commitments, reputations and τ must be the proof's (needs --spec).
    #[arg(long, requires = "spec", requires = "proof")]
    round: Option<PathBuf>,
    /// Merge proofs: the global checkpoint: its commitment must be the proof's (needs --spec).
    #[arg(long, requires = "spec", requires = "proof")]
    global: Option<PathBuf>,
    /// The model spec the checkpoints are for (must be the verifying key's).
    #[arg(long)]
    spec: Option<PathBuf>,
    /// Keys on KZG points (the default keys): the points file that commits --before/--after
    /// (default: points.key beside --vk), or a merge's --round and --global files (default:
    /// merge_points.key beside --vk); the verifying key names it by checksum.
    #[arg(long)]
    points: Option<PathBuf>,
    /// Print a JSON object.
    #[arg(long)]
    json: bool,
}

/// A batch file is used for the step its label names, as `zkstep prove`
/// requires (docs/SEMANTICS.md, "Batches and steps"): the batch commitment
/// binds the contents, not the label, so the label is checked here.
fn batch_for_step(path: &std::path::Path, label: u64, step: u64) -> Result<(), String> {
    if label == step {
        return Ok(());
    }
    Err(format!(
        "REJECTED: {}: this batch is for step {label}, used here for step {step}",
        path.display()
    ))
}

fn fail(code: u8, msg: String) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(code)
}

/// Standard output that survives the gag below.
static OUT: std::sync::OnceLock<std::sync::Mutex<Option<std::fs::File>>> =
    std::sync::OnceLock::new();

fn say(s: &str) {
    use std::io::Write;
    if let Some(Ok(mut g)) = OUT.get().map(|m| m.lock()) {
        if let Some(f) = g.as_mut() {
            if writeln!(f, "{s}").and_then(|_| f.flush()).is_ok() {
                return;
            }
        }
    }
    println!("{s}");
}

/// When `main` began: the time printed is the whole command's, not only the proof check.
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// "in T ms (proof check P ms)": T from the start of `main` (reading and
/// checking the key, proof and files included), P the proof check alone.
fn took(check: std::time::Duration) -> String {
    let total = STARTED.get().map_or(check, |t| t.elapsed());
    format!(
        "in {:.1} ms (proof check {:.1} ms; the rest reads and checks the key and files)",
        total.as_secs_f64() * 1e3,
        check.as_secs_f64() * 1e3
    )
}

/// Milliseconds since `main` began, for `--json`.
fn total_ms() -> f64 {
    STARTED.get().map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3)
}

fn main() -> ExitCode {
    let _ = STARTED.set(std::time::Instant::now());
    let a = Args::parse();
    // panics inside the SNARK library are caught and reported as errors
    // (see the header); keep their trace off stderr
    std::panic::set_hook(Box::new(|_| {}));
    // halo2curves 0.9.0 prints debug lines to stdout whenever it checks a G2
    // point (the verifying key's τ·H): silence fd 1 and write through a duplicate.
    use std::os::fd::AsFd;
    let _ = OUT.set(std::sync::Mutex::new(
        std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(std::fs::File::from),
    ));
    let _quiet = gag::Gag::stdout().ok();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&a))).unwrap_or_else(|p| {
        fail(
            2,
            format!(
                "unexpected panic (please report it): {}",
                panic_message(&*p)
            ),
        )
    })
}

/// The key's reading and the proof's side by side (decoding a proof is
/// mostly its points' square roots, a key's its matrices and generators);
/// the caller reports the key's error first. A panic in either is the
/// caller's (caught in `main`).
fn side_by_side<K, P: Send>(key: impl FnOnce() -> K, proof: impl FnOnce() -> P + Send) -> (K, P) {
    std::thread::scope(|s| {
        let p = s.spawn(proof);
        let k = key();
        (k, p.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    })
}

/// Read a key or proof file: a regular file within its kind's size limit;
/// another kind of zkstep file (a proving key given as `--vk`) is refused by
/// its 8-byte header before the rest of it is read.
fn read_envelope(path: &Path, input: Input, kind: FileKind) -> Result<Vec<u8>, String> {
    let head = peek(path, files::MAGIC.len() + 1, input).map_err(|e| e.to_string())?;
    if let Err(e @ (FileError::Kind { .. } | FileError::Magic)) = files::open(&head, kind) {
        return Err(format!("{}: {e}", path.display()));
    }
    read_input(path, input).map_err(|e| e.to_string())
}

/// The key's params kind for a person: "ceremony" is only what the key file
/// says (one byte anyone can change) unless `--ptau` checked it.
fn describe_params(params: ParamsKind, checked: Option<&Path>) -> String {
    match (params, checked) {
        (ParamsKind::Dev, _) => params.describe().to_string(),
        (ParamsKind::Ceremony, Some(dir)) => format!("ceremony, checked against {}", dir.display()),
        (ParamsKind::Ceremony, None) => {
            "ceremony (unchecked: pass --ptau DIR to check it against the ceremony files)".into()
        }
    }
}

/// `--ptau DIR`: check a ceremony key against DIR; `Err` is the exit status.
fn check_key(a: &Args, vk: &VerifyingKey, dir: &Path) -> Result<(), ExitCode> {
    if vk.params == ParamsKind::Dev {
        return Err(fail(
            2,
            format!(
                "{}: the key says dev params (a fresh random tau from keygen), so there are no \
                 ceremony files to check it against: --ptau is for ceremony keys",
                a.vk.display()
            ),
        ));
    }
    match check_ceremony(vk, dir) {
        Ok(()) => Ok(()),
        Err(VerifyError::Malformed(m)) => Err(fail(2, format!("--ptau {m}"))),
        Err(VerifyError::Rejected(m)) => Err(fail(
            1,
            format!(
                "REJECTED: {}: not the key the ceremony files in {} give: {m}",
                a.vk.display(),
                dir.display()
            ),
        )),
    }
}

/// Read, check and verify; returns the exit status.
fn run(a: &Args) -> ExitCode {
    // the Poseidon constants (zkstep's, and the folding layer's ROs') are
    // read while the files are
    std::thread::spawn(|| {
        zkstep_circuits::engine::warm_constants();
        zkstep_core::poseidon::constants();
    });
    if let Some(path) = &a.proof {
        if is_merge_proof(path) {
            return run_merge(a, path);
        }
    }
    if a.round.is_some() || a.global.is_some() {
        return fail(2, "--round and --global are for merge proofs".into());
    }
    let (vk, read) = side_by_side(
        || {
            read_envelope(&a.vk, Input::VerifyingKey, FileKind::VerifyingKey)
                .and_then(|b| read_verifying_key(&b).map_err(|e| format!("{}: {e}", a.vk.display())))
        },
        || a.proof.as_ref().map(|path| read_proof_envelope(path).map(|b| read_any_proof(&b))),
    );
    let vk = match vk {
        Ok(v) => v,
        Err(e) => return fail(2, e),
    };
    let points = match points_for(a, &vk) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let proof = match (&a.proof, read) {
        (Some(path), Some(read)) => match read {
            Ok(Ok(AnyProof::Step(p))) => Some((path, p)),
            Ok(Ok(AnyProof::Segment(p))) => return run_segment(a, &vk, path, &p, points.as_ref()),
            Ok(Err(e)) => return fail(2, format!("{}: {e}", path.display())),
            Err(e) => return fail(2, e),
        },
        _ => None,
    };
    if a.batch.len() > 1 {
        return fail(
            2,
            "more than one --batch is for a segment proof; this is a one-step proof".into(),
        );
    }
    // Optional: recompute commitments from the user's files.
    let mut expected: Option<Statement> = None;
    if let Some(sp) = &a.spec {
        let spec = match ModelSpec::from_file(sp) {
            Ok(s) => s,
            Err(e) => return fail(2, e.to_string()),
        };
        if spec.digest() != vk.layout.spec_digest {
            return fail(
                1,
                format!(
                    "{}: this spec (digest {}) is not the verifying key's (digest {})",
                    sp.display(),
                    fr_to_hex(&spec.digest()),
                    fr_to_hex(&vk.layout.spec_digest)
                ),
            );
        }
        let Some((_, proof)) = &proof else {
            // key only (--ptau without --proof): the spec must be the key's, as above
            return check_only(a, &vk);
        };
        let mut st = proof.statement();
        // the files first (each error names its file), then their
        // commitments side by side
        let read = |p: &Option<PathBuf>| p.as_ref().map(|p| read_checkpoint(p, &spec)).transpose();
        let (before, after) = match (read(&a.before), read(&a.after)) {
            (Ok(b), Ok(af)) => (b, af),
            (Err(e), _) | (_, Err(e)) => return fail(2, e.to_string()),
        };
        if let Some(c) = &before {
            st.step = c.step;
        }
        let mut batch = None;
        if let Some(p) = a.batch.first() {
            match read_batch(p, &spec) {
                Ok((b, label)) => {
                    if let Err(m) = batch_for_step(p, label, st.step) {
                        return fail(1, m);
                    }
                    batch = Some(b);
                }
                Err(e) => return fail(2, e.to_string()),
            }
        }
        let (first, last, cb) = match commitments(&spec, &before, &after, batch.as_slice(), points.as_ref()) {
            Ok(c) => c,
            Err(e) => return fail(2, e),
        };
        st.c_before = first.unwrap_or(st.c_before);
        st.c_after = last.unwrap_or(st.c_after);
        st.c_batch = cb.first().copied().unwrap_or(st.c_batch);
        expected = Some(st);
    }
    let Some((proof_path, proof)) = proof else {
        return check_only(a, &vk);
    };
    // the key first: nothing is accepted under a key that fails its check
    if let Some(dir) = &a.ptau {
        if let Err(code) = check_key(a, &vk, dir) {
            return code;
        }
    }
    let checked = a.ptau.as_deref();
    match verify(&vk, &proof, expected.as_ref()) {
        Ok((st, dt)) => {
            if a.json {
                say(&format!(
                    "{}",
                    serde_json::json!({
                        "accepted": true,
                        "spec_digest": fr_to_hex(&st.spec_digest),
                        "c_before": fr_to_hex(&st.c_before),
                        "c_after": fr_to_hex(&st.c_after),
                        "c_batch": fr_to_hex(&st.c_batch),
                        "step": st.step,
                        "params": format!("{:?}", vk.params).to_lowercase(),
                        "params_checked_against": checked.map(|d| d.display().to_string()),
                        "verify_ms": dt.as_secs_f64() * 1e3,
                        "total_ms": total_ms(),
                    })
                ));
            } else {
                say(&format!("ACCEPTED {}", took(dt)));
                say(&format!("  spec_digest {}", fr_to_hex(&st.spec_digest)));
                say(&format!("  step        {}", st.step));
                say(&format!("  c_before    {}", fr_to_hex(&st.c_before)));
                say(&format!("  c_after     {}", fr_to_hex(&st.c_after)));
                say(&format!("  c_batch     {}", fr_to_hex(&st.c_batch)));
                say(&format!(
                    "  params      {}",
                    describe_params(vk.params, checked)
                ));
            }
            ExitCode::SUCCESS
        }
        Err(VerifyError::Malformed(m)) => fail(2, format!("{}: {m}", proof_path.display())),
        Err(VerifyError::Rejected(m)) => {
            fail(1, format!("REJECTED: {}: {m}", proof_path.display()))
        }
    }
}

/// A proof file of either kind: the kind byte of its header says which.
fn read_proof_envelope(path: &Path) -> Result<Vec<u8>, String> {
    let head = peek(path, files::MAGIC.len() + 1, Input::Proof).map_err(|e| e.to_string())?;
    let kind = if head.get(files::MAGIC.len()) == Some(&(FileKind::SegmentProof as u8)) {
        FileKind::SegmentProof
    } else {
        FileKind::Proof
    };
    read_envelope(path, Input::Proof, kind)
}

/// The user's files for a segment's statement (`--spec` with `--before`,
/// `--after` and one `--batch` per step); Err is the exit status.
fn segment_expected(
    a: &Args,
    vk: &VerifyingKey,
    proof: &SegmentProof,
    points: Option<&Points>,
) -> Result<Option<zkstep_verifier::SegmentStatement>, ExitCode> {
    let Some(sp) = &a.spec else { return Ok(None) };
    let spec = ModelSpec::from_file(sp).map_err(|e| fail(2, e.to_string()))?;
    if spec.digest() != vk.layout.spec_digest {
        return Err(fail(
            1,
            format!(
                "{}: this spec (digest {}) is not the verifying key's (digest {})",
                sp.display(),
                fr_to_hex(&spec.digest()),
                fr_to_hex(&vk.layout.spec_digest)
            ),
        ));
    }
    let mut st = proof.payload.statement;
    let read = |p: &Option<PathBuf>| {
        p.as_ref()
            .map(|p| read_checkpoint(p, &spec))
            .transpose()
            .map_err(|e| fail(2, e.to_string()))
    };
    let (start, end) = (read(&a.before)?, read(&a.after)?);
    if let Some(c) = &start {
        st.step = c.step;
    }
    let mut batches = Vec::with_capacity(a.batch.len());
    for (i, p) in a.batch.iter().enumerate() {
        let (b, label) = read_batch(p, &spec).map_err(|e| fail(2, e.to_string()))?;
        batch_for_step(p, label, st.step.saturating_add(i as u64)).map_err(|m| fail(1, m))?;
        batches.push(b);
    }
    let (first, last, cb) = commitments(&spec, &start, &end, &batches, points).map_err(|e| fail(2, e))?;
    st.c_start = first.unwrap_or(st.c_start);
    st.c_end = last.unwrap_or(st.c_end);
    if !batches.is_empty() {
        st.batches = vk.layout.batches_digest(&cb);
        st.steps = cb.len() as u64;
    }
    Ok(Some(st))
}

/// The first and last checkpoints' commitments (where given) and every batch's.
type FileCommitments = (Option<Fr>, Option<Fr>, Vec<Fr>);

/// The commitments of the files a user gave (the first and last
/// checkpoints where given, every batch), side by side: each is a
/// sequential hash chain. Under keys on KZG points (`points`) a
/// checkpoint's is the hash of its point under the keys' powers.
fn commitments(
    spec: &ModelSpec,
    first: &Option<Checkpoint>,
    last: &Option<Checkpoint>,
    batches: &[Batch],
    points: Option<&Points>,
) -> Result<FileCommitments, String> {
    let ends = [first, last];
    let ckpts: Vec<&Checkpoint> = if points.is_some() { vec![] } else { ends.iter().filter_map(|c| c.as_ref()).collect() };
    let (cs, cb) = commit_all(spec, &ckpts, &batches.iter().collect::<Vec<_>>());
    let [f, l] = match points {
        Some(p) => ends.map(|c| c.as_ref().map(|c| p.commitment(spec, c)).transpose()),
        None => {
            let mut cs = cs.into_iter();
            ends.map(|c| Ok(c.as_ref().and_then(|_| cs.next())))
        }
    };
    Ok((f.map_err(|e| e.to_string())?, l.map_err(|e| e.to_string())?, cb))
}

/// Keys on KZG points commit checkpoint files with their points file
/// (`--points`, else `points.key` beside the verifying key); None for chain
/// keys or where no checkpoint file is given. Err is the exit status.
fn points_for(a: &Args, vk: &VerifyingKey) -> Result<Option<Points>, ExitCode> {
    if let (Some(p), None) = (&a.points, &vk.theta) {
        return Err(fail(
            2,
            format!(
                "{}: --points is for keys on KZG points; {} binds checkpoints by hash chains",
                p.display(),
                a.vk.display()
            ),
        ));
    }
    if vk.theta.is_none() || (a.before.is_none() && a.after.is_none()) {
        return Ok(None);
    }
    let path = a.points.clone().unwrap_or_else(|| a.vk.with_file_name("points.key"));
    let bytes = read_envelope(&path, Input::Points, FileKind::Points).map_err(|e| {
        fail(
            2,
            format!("{e} (keys on KZG points commit checkpoint files with the points file keygen wrote beside the verifying key; give it with --points)"),
        )
    })?;
    read_points(&bytes, vk).map(Some).map_err(|e| fail(2, format!("{}: {e}", path.display())))
}

/// Verify a segment proof; returns the exit status.
fn run_segment(a: &Args, vk: &VerifyingKey, path: &Path, proof: &SegmentProof, points: Option<&Points>) -> ExitCode {
    let expected = match segment_expected(a, vk, proof, points) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if let Some(dir) = &a.ptau {
        if let Err(code) = check_key(a, vk, dir) {
            return code;
        }
    }
    let checked = a.ptau.as_deref();
    match verify_segment(vk, proof, expected.as_ref()) {
        Ok((st, dt)) => {
            let end = st.step + st.steps;
            if a.json {
                say(&format!(
                    "{}",
                    serde_json::json!({
                        "accepted": true,
                        "kind": "segment",
                        "spec_digest": fr_to_hex(&st.spec_digest),
                        "step": st.step,
                        "steps": st.steps,
                        "c_start": fr_to_hex(&st.c_start),
                        "c_end": fr_to_hex(&st.c_end),
                        "batches": fr_to_hex(&st.batches),
                        "params": format!("{:?}", vk.params).to_lowercase(),
                        "params_checked_against": checked.map(|d| d.display().to_string()),
                        "verify_ms": dt.as_secs_f64() * 1e3,
                        "total_ms": total_ms(),
                    })
                ));
            } else {
                say(&format!(
                    "ACCEPTED segment of {} steps ({} → {}) {}",
                    st.steps,
                    st.step,
                    end,
                    took(dt)
                ));
                say(&format!("  spec_digest {}", fr_to_hex(&st.spec_digest)));
                say(&format!("  c_start     {}", fr_to_hex(&st.c_start)));
                say(&format!("  c_end       {}", fr_to_hex(&st.c_end)));
                say(&format!("  batches     {}", fr_to_hex(&st.batches)));
                say(&format!(
                    "  params      {}",
                    describe_params(vk.params, checked)
                ));
            }
            ExitCode::SUCCESS
        }
        Err(VerifyError::Malformed(m)) => fail(2, format!("{}: {m}", path.display())),
        Err(VerifyError::Rejected(m)) => fail(1, format!("REJECTED: {}: {m}", path.display())),
    }
}

/// `--ptau DIR` without `--proof`: check the key only.
fn check_only(a: &Args, vk: &VerifyingKey) -> ExitCode {
    let Some(dir) = &a.ptau else {
        // clap requires --proof unless --ptau is given
        return fail(
            2,
            "--proof is required (or --ptau DIR to check the key only)".into(),
        );
    };
    let t = std::time::Instant::now();
    if let Err(code) = check_key(a, vk, dir) {
        return code;
    }
    let secs = t.elapsed().as_secs_f64();
    if a.json {
        say(&format!(
            "{}",
            serde_json::json!({
                "key_checked": true,
                "spec_digest": fr_to_hex(&vk.layout.spec_digest),
                "params": "ceremony",
                "params_checked_against": dir.display().to_string(),
                "check_s": secs,
            })
        ));
    } else {
        say(&format!("KEY CHECKED in {secs:.1} s: {}", a.vk.display()));
        say(&format!(
            "  spec_digest {}",
            fr_to_hex(&vk.layout.spec_digest)
        ));
        say(&format!(
            "  params      {}",
            describe_params(vk.params, Some(dir))
        ));
    }
    ExitCode::SUCCESS
}

/// Whether the file's header says it is a merge proof (any other file goes
/// the step's way, which names what is wrong with it).
fn is_merge_proof(path: &Path) -> bool {
    peek(path, files::MAGIC.len() + 1, Input::Proof)
        .map(|h| h.starts_with(files::MAGIC) && h.get(files::MAGIC.len()) == Some(&(FileKind::MergeProof as u8)))
        .unwrap_or(false)
}

/// `--round` and `--global` against a merge proof's statement; Err is the exit status.
fn merge_files(a: &Args, key: &MergeKey, st: &MergeStatement) -> Result<(), ExitCode> {
    let Some(sp) = &a.spec else { return Ok(()) };
    let spec = ModelSpec::from_file(sp).map_err(|e| fail(2, e.to_string()))?;
    if spec.digest() != key.layout.spec_digest {
        return Err(fail(1, format!("{}: this spec is not the merge verifying key's", sp.display())));
    }
    let reject = |path: &Path, m: String| fail(1, format!("REJECTED: {}: {m}", path.display()));
    // the checkpoints' commitments under the merge key: chains, or under
    // KZG points with its points file (--points, else merge_points.key
    // beside --vk)
    let points = match (key.on_points(), a.round.is_some() || a.global.is_some()) {
        (true, true) => {
            let path = a.points.clone().unwrap_or_else(|| a.vk.with_file_name("merge_points.key"));
            let bytes = read_envelope(&path, Input::Points, FileKind::Points).map_err(|e| {
                fail(2, format!("{e} (merge keys on KZG points commit checkpoint files with the merge_points.key keygen wrote beside the merge verifying key; give it with --points)"))
            })?;
            Some(read_merge_points(&bytes, key).map_err(|e| fail(2, format!("{}: {e}", path.display())))?)
        }
        _ => None,
    };
    let commit = |cks: &[&Checkpoint]| -> Result<Vec<zkstep_core::Fr>, ExitCode> {
        match &points {
            None => Ok(commit_all(&spec, cks, &[]).0),
            Some(p) => cks.iter().map(|c| p.commitment(&spec, c).map_err(|e| fail(2, e.to_string()))).collect(),
        }
    };
    if let Some(r) = &a.round {
        let round = Round::from_file(r).map_err(|e| fail(2, e.to_string()))?;
        if round.nodes.len() != st.c_nodes.len() {
            return Err(reject(r, format!("{} nodes, the proof merged {}", round.nodes.len(), st.c_nodes.len())));
        }
        if round.tau_fx != st.tau_fx {
            return Err(reject(r, format!("tau_fx {}, the proof's {}", round.tau_fx, st.tau_fx)));
        }
        let centre = read_checkpoint(&round.previous, &spec).map_err(|e| fail(2, e.to_string()))?;
        let ckpts = round
            .nodes
            .iter()
            .map(|(p, _)| read_checkpoint(p, &spec))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(2, e.to_string()))?;
        let mut all: Vec<&Checkpoint> = vec![&centre];
        all.extend(ckpts.iter());
        let cs = commit(&all)?;
        if cs[0] != st.c_centre || centre.step != st.centre_step {
            return Err(reject(&round.previous, "not the previous global model the proof merged around".into()));
        }
        for (i, (p, rep)) in round.nodes.iter().enumerate() {
            if cs[i + 1] != st.c_nodes[i] || ckpts[i].step != st.step {
                return Err(reject(p, format!("not node {i}'s checkpoint in the proof (another model, step or order)")));
            }
            if *rep != st.reputations[i] {
                return Err(reject(r, format!("node {i}'s reputation is {rep}, the proof's {}", st.reputations[i])));
            }
        }
    }
    if let Some(g) = &a.global {
        let c = read_checkpoint(g, &spec).map_err(|e| fail(2, e.to_string()))?;
        let cs = commit(&[&c])?;
        if cs[0] != st.c_global || c.step != st.step {
            return Err(reject(g, "not the global model the proof shows merged".into()));
        }
    }
    Ok(())
}

/// Verify a merge proof (`--vk` a merge verifying key); returns the exit status.
fn run_merge(a: &Args, path: &Path) -> ExitCode {
    if a.before.is_some() || a.after.is_some() || !a.batch.is_empty() || a.ptau.is_some() {
        return fail(
            2,
            "--before, --after, --batch and --ptau are for step proofs; a merge proof takes --spec with --round and --global".into(),
        );
    }
    let (key, proof) = side_by_side(
        || {
            read_envelope(&a.vk, Input::VerifyingKey, FileKind::MergeVerifyingKey)
                .and_then(|b| read_merge_key(&b).map_err(|e| format!("{}: {e}", a.vk.display())))
        },
        || {
            read_envelope(path, Input::Proof, FileKind::MergeProof)
                .and_then(|b| read_merge_proof(&b).map_err(|e| format!("{}: {e}", path.display())))
        },
    );
    let key = match key {
        Ok(k) => k,
        Err(e) => return fail(2, e),
    };
    let proof = match proof {
        Ok(p) => p,
        Err(e) => return fail(2, e),
    };
    if let (Some(p), false) = (&a.points, key.on_points()) {
        return fail(
            2,
            format!("{}: --points is for keys on KZG points; {} binds checkpoints by hash chains", p.display(), a.vk.display()),
        );
    }
    if let Err(code) = merge_files(a, &key, &proof.payload.statement) {
        return code;
    }
    match verify_merge_proof(&key, &proof) {
        Ok((st, dt)) => {
            let zeroed: Vec<usize> = (0..st.zeroed.len()).filter(|&i| st.zeroed[i]).collect();
            if a.json {
                say(&format!(
                    "{}",
                    serde_json::json!({
                        "accepted": true,
                        "merge": true,
                        "spec_digest": fr_to_hex(&key.layout.spec_digest),
                        "step": st.step,
                        "nodes": st.c_nodes.iter().map(fr_to_hex).collect::<Vec<_>>(),
                        "reputations": st.reputations,
                        "zeroed": zeroed,
                        "tau_fx": st.tau_fx,
                        "c_previous": fr_to_hex(&st.c_centre),
                        "c_global": fr_to_hex(&st.c_global),
                        "verify_ms": dt.as_secs_f64() * 1e3,
                        "total_ms": total_ms(),
                    })
                ));
            } else {
                say(&format!("ACCEPTED merge {}", took(dt)));
                say(&format!("  spec_digest {}", fr_to_hex(&key.layout.spec_digest)));
                say(&format!("  step        {} ({} nodes; zeroed: {zeroed:?})", st.step, st.c_nodes.len()));
                say(&format!("  c_previous  {}", fr_to_hex(&st.c_centre)));
                say(&format!("  c_global    {}", fr_to_hex(&st.c_global)));
                say(&format!("  params      {}", describe_params(key.params, None)));
            }
            ExitCode::SUCCESS
        }
        Err(VerifyError::Malformed(m)) => fail(2, format!("{}: {m}", path.display())),
        Err(VerifyError::Rejected(m)) => fail(1, format!("REJECTED: {}: {m}", path.display())),
    }
}
