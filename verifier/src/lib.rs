//! zkstep-verifier: read verifying keys and proofs, and `verify`.
//!
//! Depends on `zkstep-core` and `zkstep-circuits` only — never on the prover
//! or on GPU code (CI asserts this with `cargo tree`). [`VerifyError`]
//! separates malformed input (a file that is not what it claims) from a
//! rejected proof (a well-formed proof of something false, or of another
//! statement). Reading and verifying never panic: nova-snark panics on some
//! crafted proofs, and [`guard`] turns that into an error of the right kind.
//! [`check_ceremony`] checks a key that says "ceremony" against the ceremony
//! files: it re-derives the key from its spec, its rows and the files.
//! [`merge`] reads and verifies merge proofs (π_merge).
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod merge;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use zkstep_circuits::engine::VerifierKey;
use zkstep_circuits::files::{
    self, FileKind, Header, ParamsKind, ProofPayload, SegmentPayload, VerifyingKeyPayload,
};
pub use zkstep_circuits::files::{SegmentStatement, Statement};
use zkstep_circuits::params::ParamsError;
use zkstep_circuits::state::CommitScheme;
use zkstep_circuits::verify::StepKeys;
use zkstep_circuits::Layout;
use zkstep_core::ModelSpec;

/// Why verification did not accept.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The input is not a well-formed verifying key or proof.
    #[error("malformed input: {0}")]
    Malformed(String),
    /// The proof is well formed but does not prove the statement.
    #[error("proof rejected: {0}")]
    Rejected(String),
}

/// A verifying key with the layout it was made for.
pub struct VerifyingKey {
    /// Layout (spec, tiling, schedule) rebuilt from the key file.
    pub layout: Layout,
    /// Nova's verifier key.
    pub vk: VerifierKey,
    /// The opening key of checkpoint points and the checksum of the points
    /// file (keys on KZG points).
    pub theta: Option<zkstep_circuits::theta::ThetaVk>,
    /// How the commitment key was made.
    pub params: ParamsKind,
    /// Its file's checksum ([`files::envelope_checksum`]): a proof names the
    /// key it was made for, so a key changed in any byte refuses it.
    pub checksum: [u8; 32],
}

impl VerifyingKey {
    /// What a step or segment proof is checked with.
    pub fn keys(&self) -> StepKeys<'_> {
        StepKeys { nova: &self.vk, theta: self.theta.as_ref().map(|t| &t.key) }
    }
}

/// The G1 powers of keys on KZG points, read from their points file and
/// checked to be the ones the verifying key names: what commits checkpoint
/// files as the proofs' statements name them.
pub struct Points {
    key: zkstep_circuits::theta::PointsPayload,
}

impl Points {
    /// Commit(θ) of a checkpoint under these powers (its step inside).
    pub fn commitment(&self, spec: &ModelSpec, ckpt: &zkstep_core::Checkpoint) -> Result<zkstep_core::Fr, VerifyError> {
        zkstep_circuits::theta::PointKey(&self.key.powers.key)
            .commitment(spec, ckpt)
            .map(|(c, _)| c)
            .map_err(|e| VerifyError::Malformed(format!("the points file cannot commit this checkpoint: {e}")))
    }
}

/// Read a points file's bytes (`points.key` beside keys on KZG points) and
/// require it to be the one `vk` names (its spec and its checksum).
pub fn read_points(bytes: &[u8], vk: &VerifyingKey) -> Result<Points, VerifyError> {
    read_points_for(bytes, vk.layout.spec_digest, vk.theta.as_ref())
}

/// Read a points file for keys of the spec `spec_digest` whose verifying
/// key says `theta` of its points (a step's or a merge's key).
pub(crate) fn read_points_for(
    bytes: &[u8],
    spec_digest: zkstep_core::Fr,
    theta: Option<&zkstep_circuits::theta::ThetaVk>,
) -> Result<Points, VerifyError> {
    let Some(theta) = theta else {
        return Err(VerifyError::Malformed(
            "a points file is for keys on KZG points; this verifying key binds checkpoints by hash chains".into(),
        ));
    };
    // the checksum first: a file that is not the key's is refused before
    // any of its points is decoded
    let (h, _) = files::open(bytes, FileKind::Points).map_err(|e| VerifyError::Malformed(e.to_string()))?;
    if h.spec_digest != spec_digest || files::envelope_checksum(bytes) != Some(theta.points) {
        return Err(VerifyError::Malformed(
            "not the points file of this verifying key (another key's, or changed since keygen)".into(),
        ));
    }
    guard(VerifyError::Malformed, || {
        let (_, key): (Header, zkstep_circuits::theta::PointsPayload) =
            files::decode(bytes, FileKind::Points).map_err(|e| VerifyError::Malformed(e.to_string()))?;
        Ok(Points { key })
    })
}

/// A proof read from a file.
pub struct Proof {
    /// Envelope header.
    pub header: Header,
    /// Payload.
    pub payload: ProofPayload,
}

impl Proof {
    /// The statement this proof claims.
    pub fn statement(&self) -> Statement {
        self.payload.statement
    }
}

/// A segment proof read from a file (k consecutive steps).
pub struct SegmentProof {
    /// Envelope header.
    pub header: Header,
    /// Payload.
    pub payload: SegmentPayload,
}

/// A proof of either kind, as its file's header says.
pub enum AnyProof {
    /// One step.
    Step(Proof),
    /// A segment of steps.
    Segment(SegmentProof),
}

/// Parse a proof file of either kind (one step or a segment), by the kind
/// byte of its header.
pub fn read_any_proof(bytes: &[u8]) -> Result<AnyProof, VerifyError> {
    if bytes.get(files::MAGIC.len()) == Some(&(FileKind::SegmentProof as u8)) {
        guard(VerifyError::Malformed, || {
            let (header, payload): (Header, SegmentPayload) =
                files::decode(bytes, FileKind::SegmentProof)
                    .map_err(|e| VerifyError::Malformed(e.to_string()))?;
            Ok(AnyProof::Segment(SegmentProof { header, payload }))
        })
    } else {
        read_proof(bytes).map(AnyProof::Step)
    }
}

/// Run `f`, turning a panic inside it into `Err(kind(message))`: a panic
/// while decoding is [`VerifyError::Malformed`], one while verifying is
/// [`VerifyError::Rejected`]. The panic hook still runs (a binary that wants
/// no trace on stderr installs a silent one).
pub fn guard<T>(
    kind: fn(String) -> VerifyError,
    f: impl FnOnce() -> Result<T, VerifyError>,
) -> Result<T, VerifyError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        Err(kind(format!(
            "the SNARK library panicked: {}",
            panic_message(&*payload)
        )))
    })
}

/// The message a panic was raised with.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

/// Parse a verifying key file's bytes.
pub fn read_verifying_key(bytes: &[u8]) -> Result<VerifyingKey, VerifyError> {
    guard(VerifyError::Malformed, || decode_verifying_key(bytes))
}

fn decode_verifying_key(bytes: &[u8]) -> Result<VerifyingKey, VerifyError> {
    let (h, p): (Header, VerifyingKeyPayload) = files::decode(bytes, FileKind::VerifyingKey)
        .map_err(|e| VerifyError::Malformed(e.to_string()))?;
    let spec = ModelSpec::from_toml_str(&p.spec_toml)
        .map_err(|e| VerifyError::Malformed(format!("embedded spec: {e}")))?;
    if spec.digest() != h.spec_digest {
        return Err(VerifyError::Malformed(
            "the embedded spec does not match the header's spec digest".into(),
        ));
    }
    files::check_tiling(p.rows, p.segments).map_err(|e| VerifyError::Malformed(e.to_string()))?;
    let scheme = match p.theta {
        Some(_) => CommitScheme::Evaluation,
        None => CommitScheme::Chain,
    };
    let layout = Layout::with_segments(&spec, p.rows as usize, p.segments as usize)
        .map_err(|e| VerifyError::Malformed(e.to_string()))?
        .with_commit_scheme(scheme);
    let checksum = files::envelope_checksum(bytes)
        .ok_or_else(|| VerifyError::Malformed("shorter than its header".into()))?;
    Ok(VerifyingKey {
        layout,
        vk: p.vk,
        theta: p.theta,
        params: h.params,
        checksum,
    })
}

/// Parse a proof file's bytes.
pub fn read_proof(bytes: &[u8]) -> Result<Proof, VerifyError> {
    guard(VerifyError::Malformed, || {
        let (header, payload): (Header, ProofPayload) = files::decode(bytes, FileKind::Proof)
            .map_err(|e| VerifyError::Malformed(e.to_string()))?;
        Ok(Proof { header, payload })
    })
}

/// Verify a proof against a key; if `expected` is given, the proof's statement
/// must be exactly it. Returns the verified statement and the time taken.
pub fn verify(
    vk: &VerifyingKey,
    proof: &Proof,
    expected: Option<&Statement>,
) -> Result<(Statement, Duration), VerifyError> {
    checked(vk, &proof.header, &proof.payload.vk_checksum, || {
        zkstep_circuits::verify::verify_payload(
            &vk.layout,
            vk.keys(),
            proof.header.spec_digest,
            &proof.payload,
            expected,
        )
    })
}

/// Verify a segment proof against a key; if `expected` is given, the
/// proof's statement must be exactly it. Returns the verified statement and
/// the time taken.
pub fn verify_segment(
    vk: &VerifyingKey,
    proof: &SegmentProof,
    expected: Option<&SegmentStatement>,
) -> Result<(SegmentStatement, Duration), VerifyError> {
    checked(vk, &proof.header, &proof.payload.vk_checksum, || {
        zkstep_circuits::verify::verify_segment_payload(
            &vk.layout,
            vk.keys(),
            proof.header.spec_digest,
            &proof.payload,
            expected,
        )
    })
}

/// The header's params kind against the key's and the key the proof was
/// made for against this one (the spec digest is checked by the payload's
/// verification), then `f` under [`guard`], timed.
fn checked<T>(
    vk: &VerifyingKey,
    header: &Header,
    made_for: &[u8; 32],
    f: impl FnOnce() -> Result<T, zkstep_circuits::verify::Rejection>,
) -> Result<(T, Duration), VerifyError> {
    let t = Instant::now();
    if made_for != &vk.checksum {
        return Err(VerifyError::Rejected(format!(
            "the proof was made for another verifying key (it names the key file with checksum {}, this key file's is {})",
            hex32(made_for),
            hex32(&vk.checksum)
        )));
    }
    if header.params != vk.params {
        return Err(VerifyError::Rejected(format!(
            "the proof says it was made with {:?} params, the verifying key is {:?}",
            header.params, vk.params
        )));
    }
    let st = guard(VerifyError::Rejected, || {
        f().map_err(|r| VerifyError::Rejected(r.0))
    })?;
    Ok((st, t.elapsed()))
}

/// 32 bytes as lowercase hex, `0x`-prefixed.
fn hex32(b: &[u8; 32]) -> String {
    format!("0x{}", b.iter().map(|x| format!("{x:02x}")).collect::<String>())
}

/// Check a ceremony key against a directory of `ppot_pruned_NN.ptau` files:
/// re-derive Nova's public parameters for the key's spec and rows from those
/// files and the compression verifying key from them
/// (`zkstep_circuits::params::ceremony_keys`, the function keygen uses), and
/// require the key's Nova verifying key to be that one, byte for byte in its
/// canonical (postcard) encoding, and its schedule digest to be the spec's.
///
/// A directory that cannot be used (missing, not a directory, no file with
/// enough powers, a truncated or corrupted file) is
/// [`VerifyError::Malformed`]; a key that is not what the ceremony gives is
/// [`VerifyError::Rejected`]. The caller decides what to do with a dev key
/// (this only compares; a dev key is always rejected, having a random τ).
/// A panic inside the SNARK library is [`VerifyError::Malformed`].
pub fn check_ceremony(vk: &VerifyingKey, dir: &Path) -> Result<(), VerifyError> {
    guard(VerifyError::Malformed, || {
        let lay = &vk.layout;
        let layout = Layout::with_segments(&lay.spec, lay.rows, lay.segments)
            .map_err(|e| VerifyError::Malformed(e.to_string()))?
            .with_commit_scheme(lay.commit_scheme);
        let made =
            zkstep_circuits::params::ceremony_keys(Arc::new(layout), vk.vk.compression(), dir)
                .map_err(|e| {
                    VerifyError::Malformed(match e {
                        ParamsError::Ptau { .. } => e.to_string(),
                        ParamsError::Setup(_) => format!("{}: {e}", dir.display()),
                    })
                })?;
        let encode = |v: &VerifierKey| {
            postcard::to_stdvec(v)
                .map_err(|e| VerifyError::Malformed(format!("cannot encode: {e}")))
        };
        if encode(&made.vk)? != encode(&vk.vk)? {
            return Err(VerifyError::Rejected(
                "its Nova verifying key differs from the one these files give for its spec and \
                 rows (the key was made with another tau, or its params byte was changed)"
                    .into(),
            ));
        }
        if let Some(theta) = &vk.theta {
            let from_files = zkstep_circuits::theta::opening_key(made.pp.primary_key())
                .map_err(VerifyError::Malformed)?;
            if from_files != theta.key {
                return Err(VerifyError::Rejected(
                    "its opening key of checkpoint points differs from the one these files give".into(),
                ));
            }
        }
        Ok(())
    })
}
