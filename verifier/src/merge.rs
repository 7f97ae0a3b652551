//! Merge proofs (π_merge): read a merge verifying key and a merge proof,
//! and verify, with the same guards and error kinds as a step's proof.

use crate::{guard, VerifyError};
use std::time::{Duration, Instant};
use zkstep_circuits::engine::VerifierKey;
use zkstep_circuits::files::{self, FileKind, Header, MergeProofPayload, MergeVerifyingKeyPayload, ParamsKind};
use zkstep_circuits::merge::{MergeLayout, MergeStatement};
use zkstep_core::ModelSpec;

/// A merge verifying key, read and checked.
pub struct MergeKey {
    /// The spec every checkpoint of the merge is of.
    pub spec: ModelSpec,
    /// The merge's layout (N, units a fold).
    pub layout: MergeLayout,
    /// The folded proof's verifier key.
    pub vk: VerifierKey,
    /// How its commitment key was made.
    pub params: ParamsKind,
    /// The key file's checksum (what proofs name).
    pub checksum: [u8; 32],
    /// Keys on KZG points: the opening's key and the merge points file's checksum.
    pub theta: Option<zkstep_circuits::theta::ThetaVk>,
}

impl MergeKey {
    /// Whether its merges bind checkpoints by KZG points (then checkpoint
    /// files are committed with its points file, [`read_merge_points`]).
    pub fn on_points(&self) -> bool {
        self.theta.is_some()
    }
}

/// Read a merge points file (`merge_points.key` beside merge keys on KZG
/// points) and require it to be the one `key` names.
pub fn read_merge_points(bytes: &[u8], key: &MergeKey) -> Result<crate::Points, VerifyError> {
    crate::read_points_for(bytes, key.layout.spec_digest, key.theta.as_ref())
}

/// A merge proof file, read.
pub struct MergeProof {
    /// Its header.
    pub header: Header,
    /// Its payload: the statement, the folds, the proof.
    pub payload: MergeProofPayload,
}

/// Read a merge verifying key.
pub fn read_merge_key(bytes: &[u8]) -> Result<MergeKey, VerifyError> {
    guard(VerifyError::Malformed, || {
        let (h, p): (Header, MergeVerifyingKeyPayload) = files::decode(bytes, FileKind::MergeVerifyingKey)
            .map_err(|e| VerifyError::Malformed(e.to_string()))?;
        let (spec, layout) =
            MergeLayout::from_shape(&p.shape).map_err(|e| VerifyError::Malformed(e.to_string()))?;
        if spec.digest() != h.spec_digest {
            return Err(VerifyError::Malformed(
                "the embedded spec does not match the header's spec digest".into(),
            ));
        }
        let checksum = files::envelope_checksum(bytes)
            .ok_or_else(|| VerifyError::Malformed("shorter than its header".into()))?;
        if (layout.scheme == zkstep_circuits::state::CommitScheme::Evaluation) != p.theta.is_some() {
            return Err(VerifyError::Malformed(
                "the key's commitment scheme and its opening key disagree".into(),
            ));
        }
        Ok(MergeKey {
            spec,
            layout,
            vk: p.vk,
            params: h.params,
            checksum,
            theta: p.theta,
        })
    })
}

/// Read a merge proof.
pub fn read_merge_proof(bytes: &[u8]) -> Result<MergeProof, VerifyError> {
    guard(VerifyError::Malformed, || {
        type Stored = files::MergeProofFile<zkstep_circuits::engine::CompressedSnark, zkstep_circuits::theta::MergeOpening>;
        let (header, stored): (Header, Stored) = files::decode(bytes, FileKind::MergeProof)
            .map_err(|e| VerifyError::Malformed(e.to_string()))?;
        let payload = MergeProofPayload::from_file(stored, header.spec_digest).map_err(VerifyError::Malformed)?;
        Ok(MergeProof { header, payload })
    })
}

/// Verify a merge proof under its key: the proof must name this key file and
/// be of its spec; returns the statement proven and the proof check's time.
pub fn verify_merge_proof(key: &MergeKey, proof: &MergeProof) -> Result<(MergeStatement, Duration), VerifyError> {
    let t = Instant::now();
    let p = &proof.payload;
    if p.vk_checksum != key.checksum {
        return Err(VerifyError::Rejected(
            "the merge proof was made for another merge verifying key".into(),
        ));
    }
    if proof.header.spec_digest != key.layout.spec_digest {
        return Err(VerifyError::Rejected("the merge proof is of another spec than its key".into()));
    }
    guard(VerifyError::Rejected, || {
        let theta = (key.theta.as_ref().map(|t| &t.key), p.theta.as_ref());
        zkstep_circuits::merge::verify_merge(&key.layout, &key.vk, p.num_folds, &p.snark, &p.statement, theta, &p.point_hashes)
            .map_err(VerifyError::Rejected)
    })?;
    Ok((p.statement.clone(), t.elapsed()))
}
