//! Proof and key files: a versioned envelope around postcard-encoded payloads.
//!
//! Layout: `ZKSTEP\0` magic (7 bytes), kind (1 byte: 1 verifying key, 2 proof, 4 segment proof,
//! 3 proving key; π_merge's: 5 verifying key, 6 proving key, 7 proof), format version (u32 LE), spec digest (32 bytes, a
//! canonical field element), params kind (1 byte: 0 dev, 1 ceremony), payload
//! length (u64 LE), SHA-256 of everything before it *and* the payload (32
//! bytes), payload. Every field is checked on read, with an error that says
//! which, before any payload byte is decoded; the payload must decode to
//! exactly its length (no trailing bytes), and every field element in it
//! must be canonical (halo2curves' deserialisation refuses values ≥ p). The format lives here
//! (not in the verifier) because the prover writes what the verifier reads and
//! the two crates never depend on each other.
//!
//! Why postcard: maintained, serde-based (nova-snark's types derive serde),
//! compact, no schema to keep in sync; bincode 3.0.0 is an empty crate and
//! bincode 2 is unmaintained.

use crate::engine::{CompressedSnark, ProverKey, PublicParams, VerifierKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zkstep_core::poseidon::Fr;

/// Magic bytes.
pub const MAGIC: &[u8; 7] = b"ZKSTEP\0";
/// Envelope format version (3: the checksum covers the header; exact-length
/// payloads; canonical spec digest; 4: X sections in every fold, no input
/// tiles — keys and proofs of version 3 are for another circuit; 7: steps
/// close in the circuit, segment proofs; 8: the folding layer is
/// zkstep-fold's, not nova-snark's IVC; 9: range checks by lookup, the
/// challenge drawn from every fold's committed first phase; 10: the
/// secondary's verifier key written as its shape and uncompressed key, the
/// checksum SHA-256; 11: the proving key's commitment keys uncompressed;
/// 12: ρ drawn from the committed first phases like α, no transcript T;
/// 13: proofs name their verifying key's checksum; 14: two-sided range
/// checks on whole limbs — keys of 13 are for another circuit; 15: a hash
/// chain absorbs a chunk of at most 7 elements with the width-9 sponge, so
/// every commitment and digest with a short record changed; 16:
/// cross-entropy's softmax cut across the top layer's folds, two more state
/// slots, and Adam's first moment and root at 10¹⁸ — keys of a
/// cross-entropy or Adam spec of 15 are for another circuit; 17: a unit's
/// record interleaves W and its optimizer state a block of 69 values at a
/// time, so that stateful rows can be cut into segments — the commitments of
/// momentum and Adam checkpoints changed; 18: zkstep-fold's witness layout
/// and configuration name a second round of challenges (three witness
/// parts), so every key's parameter digest changed; 20: the primary's
/// Spartan opens W and E with Mercury, a constant-size argument, instead of
/// HyperKZG — proofs of 19 are for another verifier; 24: Spartan's
/// verifier keys hold their matrices compactly and nova-snark's digest of
/// them, read by zkstep-fold's `spartan` verifier; 25: a fold's challenge
/// is r = 2¹²⁸ + 2K + 1 for the hash K, multiplied in the circuits by
/// zkstep-fold's `ladder` — every key's circuits and every proof changed;
/// 26: the secondary circuit starts the PerRun chains at 0 on the first
/// fold — every key's secondary shape changed; 27: both circuits cut their
/// state hashes and split the fold's challenge without the strict bit
/// decomposition (the hash's range is checked where it is used), so the
/// secondary of two rounds fits 2¹³ — every key's shapes changed; 28: the
/// primary hashes with zkstep-fold's own Poseidon sponge circuit (the same
/// hash, fewer non-zeros) — every key's primary matrices changed; 29: the
/// secondary's commitments are two Pedersen rows under shared generators
/// (zkstep-fold's `rows`), folded row by row in the primary — every key's
/// primary and secondary key changed, and every proof); 30: a merge proof
/// on KZG points stores its checkpoints' points and not their hashes (the
/// statement's commitments are derived from the points when it is read),
/// a fold's two lookup sums are variables that the balance and the
/// restart read (two constraints more, fewer non-zeros), and the step's
/// and merge's hashes run on zkstep-fold's sponge circuit (the same values,
/// about half the non-zeros) — every key's primary shape changed; 31: the
/// step's and the merge's units (a weight, an output row, a cell, a row of
/// D(Y), a position of a merge unit across its checkpoints, with their
/// lookups' inverses) are laid out side by side in the primary's rows and
/// in each part's columns (zkstep-fold's `in_unit`), and the verifying key
/// writes one unit's entries a group (`spartan`'s blocks) and the other
/// entries' columns through the list of those they read — every key
/// changed, the constraints did not; 32: the secondary's commitments in
/// four rows, not two (zkstep-fold's `rows::ROWS`: the verifier's IPA over
/// 2¹¹ generators; the primary folds four more points a fold), and
/// Commit(θ) under keys on KZG points hashes its eight values with the
/// short sponge (`theta::point_commitment`) — every key and proof changed,
/// and every KZG checkpoint commitment; 33: a spec of one layer leaves out
/// the digest of the layer above's claim about its output, which only a
/// non-top layer's first tile opens — such specs' keys changed (1,973
/// constraints a fold fewer), other specs' circuits did not.
pub const FILE_VERSION: u32 = 33;
const HEADER: usize = 7 + 1 + 4 + 32 + 1 + 8 + 32;
/// Largest payload we accept (4 GiB): a hostile length must not make us allocate.
pub const MAX_PAYLOAD: u64 = 1 << 32;

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// Verifying key.
    VerifyingKey = 1,
    /// Proof.
    Proof = 2,
    /// Proving key (public parameters + compression key).
    ProvingKey = 3,
    /// Segment proof (k consecutive steps, one proof).
    SegmentProof = 4,
    /// π_merge's verifying key (merges of N checkpoints of a spec).
    MergeVerifyingKey = 5,
    /// π_merge's proving key.
    MergeProvingKey = 6,
    /// A merge proof.
    MergeProof = 7,
    /// The G1 powers checkpoints are committed under (keys on KZG points).
    Points = 8,
}

impl FileKind {
    fn name(self) -> &'static str {
        match self {
            FileKind::VerifyingKey => "verifying key",
            FileKind::Proof => "proof",
            FileKind::ProvingKey => "proving key",
            FileKind::SegmentProof => "segment proof",
            FileKind::MergeVerifyingKey => "merge verifying key",
            FileKind::MergeProvingKey => "merge proving key",
            FileKind::MergeProof => "merge proof",
            FileKind::Points => "points file",
        }
    }
}

/// How the commitment key was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamsKind {
    /// A fresh random τ generated at keygen: sound for whoever ran keygen
    /// (e.g. the model owner who hands the proving key to the trainer), not
    /// for third parties.
    Dev = 0,
    /// Powers of τ from a public ceremony (`ppot_pruned_NN.ptau`): publicly verifiable.
    Ceremony = 1,
}

impl ParamsKind {
    /// How to say it to a user.
    pub fn describe(self) -> &'static str {
        match self {
            ParamsKind::Dev => "dev (fresh random tau from keygen: sound only for the party that ran keygen; not for public verification)",
            ParamsKind::Ceremony => "ceremony (powers of tau from a public ceremony)",
        }
    }
}

/// Malformed file errors (what was wrong, never a panic).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FileError {
    /// Too short to hold the header, or shorter than its declared payload.
    #[error("truncated: {0}")]
    Truncated(String),
    /// Not a zkstep file.
    #[error("not a zkstep file (bad magic bytes)")]
    Magic,
    /// A zkstep file of another kind.
    #[error("is a zkstep {got}, expected a {want}")]
    Kind {
        /// Found.
        got: String,
        /// Wanted.
        want: String,
    },
    /// Another format version.
    #[error("unsupported format version {0} (this zkstep reads version {FILE_VERSION})")]
    Version(u32),
    /// Checksum mismatch (corrupted file).
    #[error("corrupted: the payload checksum does not match")]
    Checksum,
    /// The payload does not decode.
    #[error("payload does not decode: {0}")]
    Decode(String),
    /// Unknown params kind byte.
    #[error("unknown params kind {0}")]
    ParamsKind(u8),
    /// The header's spec digest is not a canonical field element.
    #[error("the header's spec digest is not a canonical field element (≥ p)")]
    NonCanonical,
    /// Bytes after the payload's encoding.
    #[error("{0} bytes after the payload's encoding")]
    Trailing(usize),
    /// A key's rows per tile or segments per row out of range.
    #[error("rows per tile {rows} or segments per row {segments} out of range (1 to {MAX_TILING})")]
    Tiling {
        /// Declared rows per tile.
        rows: u64,
        /// Declared segments per row.
        segments: u64,
    },
}

/// Most rows a tile, or segments a row, a key may declare: far above any
/// layout keygen makes, and a bound on what a hostile key can make its
/// reader allocate.
pub const MAX_TILING: u64 = 1 << 20;

/// A key's declared tiling, checked before a layout is built from it (the
/// proving and the verifying key's reader both).
pub fn check_tiling(rows: u64, segments: u64) -> Result<(), FileError> {
    if (1..=MAX_TILING).contains(&rows) && (1..=MAX_TILING).contains(&segments) {
        Ok(())
    } else {
        Err(FileError::Tiling { rows, segments })
    }
}

/// Envelope header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// What the file holds.
    pub kind: FileKind,
    /// Spec digest it was made for.
    pub spec_digest: Fr,
    /// How its parameters were made.
    pub params: ParamsKind,
}

/// Encode an envelope.
pub fn encode<T: Serialize>(header: Header, payload: &T) -> Result<Vec<u8>, FileError> {
    let body = postcard::to_stdvec(payload)
        .map_err(|e| FileError::Decode(format!("cannot encode: {e}")))?;
    Ok(seal(header, &body))
}

/// An envelope around payload bytes as they are (for tools and tests that
/// craft payloads: anyone can seal any bytes, so the checksum detects
/// corruption, not forgery).
pub fn seal(header: Header, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend_from_slice(MAGIC);
    out.push(header.kind as u8);
    out.extend_from_slice(&FILE_VERSION.to_le_bytes());
    out.extend_from_slice(ff::PrimeField::to_repr(&header.spec_digest).as_ref());
    out.push(header.params as u8);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    let sum = checksum(&out, body);
    out.extend_from_slice(&sum);
    out.extend_from_slice(body);
    out
}

/// SHA-256 of the header fields before the checksum and the payload (it
/// detects corruption; SHA-256 because CPUs hash it in hardware: a 38 MB
/// verifying key in ≈ 20 ms, against ≈ 100 ms for SHA3 here).
fn checksum(head: &[u8], body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(head);
    h.update(body);
    h.finalize().into()
}

/// The checksum an envelope carries (SHA-256 of its header fields and
/// payload; check it with [`open`] first): a verifying key's names the key
/// byte for byte, so a proof records the one it was made for. None when
/// the bytes are shorter than a header.
pub fn envelope_checksum(bytes: &[u8]) -> Option<[u8; 32]> {
    bytes.get(HEADER - 32..HEADER)?.try_into().ok()
}

/// Decode and check an envelope header and checksum; returns the header and payload bytes.
pub fn open(bytes: &[u8], want: FileKind) -> Result<(Header, &[u8]), FileError> {
    let (h, body) = open_header(bytes, want)?;
    check_sum(bytes, body)?;
    Ok((h, body))
}

/// The checksum against the header fields and payload.
fn check_sum(bytes: &[u8], body: &[u8]) -> Result<(), FileError> {
    if checksum(&bytes[..53], body) != bytes[53..85] {
        return Err(FileError::Checksum);
    }
    Ok(())
}

/// [`open`] without the checksum (which [`decode`] checks beside decoding).
fn open_header(bytes: &[u8], want: FileKind) -> Result<(Header, &[u8]), FileError> {
    if bytes.len() < 8 {
        return Err(if bytes.len() >= MAGIC.len() && &bytes[..7] != MAGIC {
            FileError::Magic
        } else {
            FileError::Truncated(format!("{} bytes, a header needs {HEADER}", bytes.len()))
        });
    }
    if &bytes[..7] != MAGIC {
        return Err(FileError::Magic);
    }
    let kind = match bytes[7] {
        1 => FileKind::VerifyingKey,
        2 => FileKind::Proof,
        3 => FileKind::ProvingKey,
        4 => FileKind::SegmentProof,
        5 => FileKind::MergeVerifyingKey,
        6 => FileKind::MergeProvingKey,
        7 => FileKind::MergeProof,
        8 => FileKind::Points,
        k => {
            return Err(FileError::Kind {
                got: format!("file of unknown kind {k}"),
                want: want.name().into(),
            })
        }
    };
    if kind != want {
        return Err(FileError::Kind {
            got: kind.name().into(),
            want: want.name().into(),
        });
    }
    if bytes.len() < HEADER {
        return Err(FileError::Truncated(format!(
            "{} bytes, the header needs {HEADER}",
            bytes.len()
        )));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != FILE_VERSION {
        return Err(FileError::Version(version));
    }
    let mut digest = [0u8; 32];
    digest.copy_from_slice(&bytes[12..44]);
    let spec_digest = Option::from(<Fr as ff::PrimeField>::from_repr(digest.into()))
        .ok_or(FileError::NonCanonical)?;
    let params = match bytes[44] {
        0 => ParamsKind::Dev,
        1 => ParamsKind::Ceremony,
        p => return Err(FileError::ParamsKind(p)),
    };
    let mut len8 = [0u8; 8];
    len8.copy_from_slice(&bytes[45..53]);
    let len = u64::from_le_bytes(len8);
    if len > MAX_PAYLOAD || (bytes.len() - HEADER) as u64 != len {
        return Err(FileError::Truncated(format!(
            "the header declares a {len}-byte payload, the file holds {}",
            bytes.len() - HEADER
        )));
    }
    Ok((
        Header {
            kind,
            spec_digest,
            params,
        },
        &bytes[HEADER..],
    ))
}

/// Decode an envelope's payload.
pub fn decode<T: for<'de> Deserialize<'de> + Send>(
    bytes: &[u8],
    want: FileKind,
) -> Result<(Header, T), FileError> {
    let (h, body) = open_header(bytes, want)?;
    // the checksum (a pass over a key's megabytes) beside the decoding; a
    // wrong checksum is reported first, whatever the decoding found. The
    // decoding is the join's first closure, the one that starts at once:
    // it is the longer, and a verifier's other pool thread may still be
    // decoding the proof when the key is read
    let (decoded, sum) = rayon::join(
        || -> Result<T, FileError> {
            let (v, rest) =
                postcard::take_from_bytes(body).map_err(|e| FileError::Decode(e.to_string()))?;
            if !rest.is_empty() {
                return Err(FileError::Trailing(rest.len()));
            }
            Ok(v)
        },
        || check_sum(bytes, body),
    );
    sum?;
    Ok((h, decoded?))
}

/// The public statement of one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    /// Digest of the model spec.
    pub spec_digest: Fr,
    /// Commit(θ_t).
    pub c_before: Fr,
    /// Commit(θ_{t+1}).
    pub c_after: Fr,
    /// Commit(batch, salt).
    pub c_batch: Fr,
    /// Step index t.
    pub step: u64,
}

/// A proof file's payload.
#[derive(Serialize, Deserialize)]
pub struct ProofPayload {
    /// What is proven.
    pub statement: Statement,
    /// The checksum of the verifying key file it was made for
    /// ([`envelope_checksum`]): the verifier refuses it under any other key.
    pub vk_checksum: [u8; 32],
    /// The challenges ρ and γ (the folding layer's: every fold requires the
    /// state's to be the ones drawn from the commitments).
    pub challenges: crate::layout::Challenges,
    /// Number of folds.
    pub num_folds: u64,
    /// The compressed zero-knowledge proof.
    pub snark: CompressedSnark,
    /// The checkpoints' points and their opening (keys on
    /// `CommitScheme::Evaluation`; none under the chains).
    pub theta: Option<crate::theta::ThetaOpening>,
}

/// The public statement of a segment: θ_t → θ_{t+k} over k committed batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentStatement {
    /// Digest of the model spec.
    pub spec_digest: Fr,
    /// Commit(θ_t).
    pub c_start: Fr,
    /// Commit(θ_{t+k}).
    pub c_end: Fr,
    /// The chain of the k batch commitments, in order (`Layout::batches_digest`).
    pub batches: Fr,
    /// First step t.
    pub step: u64,
    /// Steps k (≥ 1).
    pub steps: u64,
}

/// What opens a segment's first step beyond its statement (the prover's
/// choice, bound by the circuit like every later step's opening).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirstStep {
    /// Commit(θ_{t+1}).
    pub c_after: Fr,
    /// The first batch's commitment.
    pub c_batch: Fr,
    /// The first step's challenges.
    pub challenges: crate::layout::Challenges,
}

/// A segment proof file's payload.
#[derive(Serialize, Deserialize)]
pub struct SegmentPayload {
    /// What is proven.
    pub statement: SegmentStatement,
    /// The checksum of the verifying key file it was made for.
    pub vk_checksum: [u8; 32],
    /// The first step's opening.
    pub first: FirstStep,
    /// Number of folds (k times a step's).
    pub num_folds: u64,
    /// The compressed zero-knowledge proof.
    pub snark: CompressedSnark,
    /// The first and last checkpoints' points and their opening (keys on
    /// `CommitScheme::Evaluation`; none under the chains).
    pub theta: Option<crate::theta::ThetaOpening>,
}

/// A verifying key file's payload: the spec and tiling (to rebuild the layout) and Nova's vk.
#[derive(Serialize, Deserialize)]
pub struct VerifyingKeyPayload {
    /// Canonical TOML of the spec.
    pub spec_toml: String,
    /// Rows per tile.
    pub rows: u64,
    /// Segments a row is cut into (1: whole rows).
    pub segments: u64,
    /// Nova's verifier key.
    pub vk: VerifierKey,
    /// What checks a proof's checkpoint opening, and which points file
    /// commits checkpoints: present iff the keys bind checkpoints by KZG
    /// points (`CommitScheme::Evaluation`).
    pub theta: Option<crate::theta::ThetaVk>,
}

/// A proving key file's payload.
#[derive(Serialize, Deserialize)]
pub struct ProvingKeyPayload {
    /// Canonical TOML of the spec.
    pub spec_toml: String,
    /// Rows per tile.
    pub rows: u64,
    /// Segments a row is cut into (1: whole rows).
    pub segments: u64,
    /// How proofs bind θ to their commitments.
    pub scheme: crate::state::CommitScheme,
    /// Nova's public parameters.
    pub pp: PublicParams,
    /// Compression prover key.
    pub pk: ProverKey,
    /// The checksum of the verifying key file keygen wrote beside it (what
    /// every proof made with this key names).
    pub vk_checksum: [u8; 32],
}

/// Borrowed twin of [`VerifyingKeyPayload`] for writing (same encoding).
#[derive(Serialize)]
pub struct VerifyingKeyRef<'a> {
    /// Canonical TOML of the spec.
    pub spec_toml: &'a str,
    /// Rows per tile.
    pub rows: u64,
    /// Segments a row is cut into (1: whole rows).
    pub segments: u64,
    /// Nova's verifier key.
    pub vk: &'a VerifierKey,
    /// What checks a proof's checkpoint opening (see [`VerifyingKeyPayload`]).
    pub theta: Option<&'a crate::theta::ThetaVk>,
}

/// Borrowed twin of [`ProvingKeyPayload`] for writing (same encoding).
#[derive(Serialize)]
pub struct ProvingKeyRef<'a> {
    /// Canonical TOML of the spec.
    pub spec_toml: &'a str,
    /// Rows per tile.
    pub rows: u64,
    /// Segments a row is cut into (1: whole rows).
    pub segments: u64,
    /// How proofs bind θ to their commitments.
    pub scheme: crate::state::CommitScheme,
    /// Nova's public parameters.
    pub pp: &'a PublicParams,
    /// Compression prover key.
    pub pk: &'a ProverKey,
    /// The checksum of the verifying key file written beside it.
    pub vk_checksum: [u8; 32],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_round_trip_and_every_header_error() {
        let h = Header {
            kind: FileKind::Proof,
            spec_digest: Fr::from(7u64),
            params: ParamsKind::Dev,
        };
        let bytes = encode(h, &vec![1u32, 2, 3]).unwrap();
        let (h2, v): (Header, Vec<u32>) = decode(&bytes, FileKind::Proof).unwrap();
        assert_eq!((h2, v), (h, vec![1, 2, 3]));
        assert!(matches!(
            decode::<Vec<u32>>(&bytes, FileKind::VerifyingKey),
            Err(FileError::Kind { .. })
        ));
        assert_eq!(
            decode::<Vec<u32>>(b"PK\x03\x04junk", FileKind::Proof).err(),
            Some(FileError::Magic)
        );
        for cut in [0, 5, 8, 40, bytes.len() - 1] {
            assert!(
                matches!(
                    decode::<Vec<u32>>(&bytes[..cut], FileKind::Proof),
                    Err(FileError::Truncated(_))
                ),
                "cut {cut}"
            );
        }
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(
            decode::<Vec<u32>>(&flipped, FileKind::Proof).err(),
            Some(FileError::Checksum)
        );
        let mut v2 = bytes.clone();
        v2[8] = (FILE_VERSION + 1) as u8;
        assert_eq!(
            decode::<Vec<u32>>(&v2, FileKind::Proof).err(),
            Some(FileError::Version(FILE_VERSION + 1))
        );
        // every header byte is covered by the checksum: a flipped bit in
        // the spec digest or the params kind is caught even where it still
        // parses (the three flips that version 2 accepted, at bytes 43–44)
        for (byte, bit) in [(43, 0), (43, 7), (44, 0)] {
            let mut f = bytes.clone();
            f[byte] ^= 1 << bit;
            let e = decode::<Vec<u32>>(&f, FileKind::Proof).err();
            assert!(
                matches!(e, Some(FileError::Checksum | FileError::NonCanonical)),
                "byte {byte} bit {bit}: {e:?}"
            );
        }
        // a payload with trailing bytes (checksum recomputed) is refused
        let mut long = bytes[..HEADER].to_vec();
        let mut body = bytes[HEADER..].to_vec();
        body.extend_from_slice(&[0, 0, 0]);
        long[45..53].copy_from_slice(&(body.len() as u64).to_le_bytes());
        let sum = checksum(&long[..53], &body);
        long[53..85].copy_from_slice(&sum);
        long.extend_from_slice(&body);
        assert_eq!(
            decode::<Vec<u32>>(&long, FileKind::Proof).err(),
            Some(FileError::Trailing(3))
        );
        // a spec digest ≥ p (checksum recomputed) is refused, never reduced
        let mut nc = bytes.clone();
        nc[12..44].copy_from_slice(&[0xff; 32]);
        let sum = checksum(&nc[..53], &nc[HEADER..]);
        nc[53..85].copy_from_slice(&sum);
        assert_eq!(
            decode::<Vec<u32>>(&nc, FileKind::Proof).err(),
            Some(FileError::NonCanonical)
        );
        let mut huge = bytes.clone();
        huge[45..53].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            decode::<Vec<u32>>(&huge, FileKind::Proof),
            Err(FileError::Truncated(_))
        ));
    }
}

/// A merge key's shape: the spec, the nodes and the units a fold (what
/// rebuilds the merge's layout; `MergeLayout::new`).
#[derive(Clone, Serialize, Deserialize)]
pub struct MergeShape {
    /// Canonical TOML of the spec.
    pub spec_toml: String,
    /// N, the nodes a merge takes.
    pub nodes: u64,
    /// Units a fold.
    pub units_per_fold: u64,
    /// How the merge binds its checkpoints (chains, or KZG points).
    pub commit_scheme: crate::state::CommitScheme,
}

/// A merge verifying key file's payload.
#[derive(Serialize, Deserialize)]
pub struct MergeVerifyingKeyPayload {
    /// What the key is for.
    pub shape: MergeShape,
    /// The folded proof's verifier key.
    pub vk: VerifierKey,
    /// Keys on KZG points: the opening's key and the merge points file's checksum.
    pub theta: Option<crate::theta::ThetaVk>,
}

/// Borrowed twin of [`MergeVerifyingKeyPayload`] (same encoding).
#[derive(Serialize)]
pub struct MergeVerifyingKeyRef<'a> {
    /// What the key is for.
    pub shape: &'a MergeShape,
    /// The folded proof's verifier key.
    pub vk: &'a VerifierKey,
    /// Keys on KZG points: the opening's key and the merge points file's checksum.
    pub theta: Option<&'a crate::theta::ThetaVk>,
}

/// A merge proving key file's payload.
#[derive(Serialize, Deserialize)]
pub struct MergeProvingKeyPayload {
    /// What the key is for.
    pub shape: MergeShape,
    /// The folding layer's parameters.
    pub pp: PublicParams,
    /// Compression prover key.
    pub pk: ProverKey,
    /// The checksum of the merge verifying key file written beside it.
    pub vk_checksum: [u8; 32],
}

/// Borrowed twin of [`MergeProvingKeyPayload`] (same encoding).
#[derive(Serialize)]
pub struct MergeProvingKeyRef<'a> {
    /// What the key is for.
    pub shape: &'a MergeShape,
    /// The folding layer's parameters.
    pub pp: &'a PublicParams,
    /// Compression prover key.
    pub pk: &'a ProverKey,
    /// The checksum of the merge verifying key file written beside it.
    pub vk_checksum: [u8; 32],
}

/// A merge proof file's payload, as read (the statement whole).
pub struct MergeProofPayload {
    /// What is proven.
    pub statement: crate::merge::MergeStatement,
    /// The checksum of the merge verifying key file it was made for.
    pub vk_checksum: [u8; 32],
    /// Folds.
    pub num_folds: u64,
    /// The compressed zero-knowledge proof.
    pub snark: CompressedSnark,
    /// Keys on KZG points: α, every checkpoint's point and evaluation at ζ, one opening.
    pub theta: Option<crate::theta::MergeOpening>,
    /// The commitments the reader derived from the opening's points (the
    /// check reuses them where the points are unchanged).
    pub point_hashes: crate::theta::PointHashes,
}

/// A merge proof file's payload as written: on KZG points the statement's
/// commitments are the points' hashes (`theta::point_commitment`), so only
/// the opening's points are stored — at N = 64 that is 66 field elements
/// fewer, and a proof cannot carry commitments that disagree with its points.
#[derive(Serialize, Deserialize)]
pub struct MergeProofFile<S, O> {
    /// What is proven, less the commitments that the points determine.
    pub statement: StoredMergeStatement,
    /// The checksum of the merge verifying key file it was made for.
    pub vk_checksum: [u8; 32],
    /// Folds.
    pub num_folds: u64,
    /// The compressed zero-knowledge proof.
    pub snark: S,
    /// Keys on KZG points: α, every checkpoint's point and evaluation at ζ, one opening.
    pub theta: Option<O>,
}

/// [`crate::merge::MergeStatement`] as a merge proof file stores it.
#[derive(Serialize, Deserialize)]
pub struct StoredMergeStatement {
    /// The nodes' (and the global model's) step.
    pub step: u64,
    /// The previous global model's step.
    pub centre_step: u64,
    /// Each node's reputation Rᵢ.
    pub reputations: Vec<u64>,
    /// Which nodes the outlier rule zeroed.
    pub zeroed: Vec<bool>,
    /// τ at S.
    pub tau_fx: i64,
    /// The nodes', the centre's and the global model's commitments; none
    /// on KZG points (derived from the opening's points).
    pub commitments: Option<(Vec<Fr>, Fr, Fr)>,
}

impl StoredMergeStatement {
    /// `s` as stored beside an opening on KZG points (`on_points`) or not.
    pub fn of(s: &crate::merge::MergeStatement, on_points: bool) -> Self {
        StoredMergeStatement {
            step: s.step,
            centre_step: s.centre_step,
            reputations: s.reputations.clone(),
            zeroed: s.zeroed.clone(),
            tau_fx: s.tau_fx,
            commitments: (!on_points).then(|| (s.c_nodes.clone(), s.c_centre, s.c_global)),
        }
    }
}

impl MergeProofPayload {
    /// The payload of a file read (`spec_digest` from its header): the
    /// commitments stored, or on KZG points derived from the opening's
    /// points (the nodes', the centre's, the global model's, in that order).
    pub fn from_file(f: MergeProofFile<CompressedSnark, crate::theta::MergeOpening>, spec_digest: Fr) -> Result<Self, String> {
        let s = f.statement;
        let mut point_hashes = crate::theta::PointHashes::default();
        let (c_nodes, c_centre, c_global) = match (s.commitments, &f.theta) {
            (Some(c), None) => c,
            (None, Some(o)) => {
                let n = s.reputations.len();
                if o.points.len() != n + 2 {
                    return Err(format!(
                        "the opening carries {} points for {n} nodes (the statement's {} checkpoints)",
                        o.points.len(),
                        n + 2
                    ));
                }
                // the nodes' at the step, the centre's at its own, the global model's
                let steps = (0..n + 2).map(|i| if i == n { s.centre_step } else { s.step });
                let points: Vec<_> = steps.zip(o.points.iter().copied()).collect();
                point_hashes = crate::theta::PointHashes::of(spec_digest, &points);
                let mut c: Vec<Fr> = point_hashes.hashes().collect();
                let (global, centre) = (c.pop(), c.pop());
                (c, centre.unwrap_or_default(), global.unwrap_or_default())
            }
            (Some(_), Some(_)) => return Err("commitments stored beside an opening of KZG points, whose points determine them".into()),
            (None, None) => return Err("neither the statement's commitments nor an opening of KZG points".into()),
        };
        Ok(MergeProofPayload {
            statement: crate::merge::MergeStatement {
                step: s.step,
                centre_step: s.centre_step,
                reputations: s.reputations,
                zeroed: s.zeroed,
                tau_fx: s.tau_fx,
                c_nodes,
                c_centre,
                c_global,
            },
            vk_checksum: f.vk_checksum,
            num_folds: f.num_folds,
            snark: f.snark,
            theta: f.theta,
            point_hashes,
        })
    }
}
