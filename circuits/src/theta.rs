//! Checkpoints bound by KZG points ([`CommitScheme::Evaluation`]): a
//! checkpoint's commitment is a hash of its point C_θ = Σ c_k·[τᵏ]₁ under a
//! key's G1 powers (c = `zkstep_core::commit::param_coefficients`, the
//! records Commit(θ) absorbs under the chains), and a proof links the
//! evaluations its circuit computed at ζ to the points of its first and last
//! checkpoints with one KZG opening (docs/design/kzg-checkpoints.md,
//! docs/SOUNDNESS.md). ζ absorbs the statement's two commitments, so the
//! points are fixed before it is drawn; r absorbs ζ and the claimed values.
//!
//! [`CommitScheme::Evaluation`]: crate::state::CommitScheme::Evaluation

use crate::engine::{CkFloor, E1};
use crate::transcript::domain;
use ff::{Field, PrimeField};
use rayon::prelude::*;
use nova_snark::provider::hyperkzg::CommitmentKey;
use nova_snark::provider::traits::DlogGroup;
use nova_snark::traits::Engine;
use serde::{Deserialize, Serialize};
use zkstep_core::commit::{evaluate, param_coefficients};
use zkstep_core::poseidon::{h24, h8, Fr, RATE};
use zkstep_core::{Checkpoint, ModelSpec};
use zkstep_fold::kzg::{self, KzgOpening, KzgVerifierKey};

/// A G1 point of the primary's commitment key.
pub type G1 = <E1 as Engine>::GE;

/// What verifying a proof's opening needs ([1]₁, [1]₂, [τ]₂; in the
/// verifying key file).
pub type ThetaKey = KzgVerifierKey<E1>;

/// What a proof carries beyond its statement to bind its first and last
/// checkpoints: their points, the evaluations its circuit started and ended
/// at, and one opening of both points at ζ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThetaOpening {
    /// C of the first checkpoint (θ_t).
    pub start: G1,
    /// C of the last checkpoint (θ_{t+k}).
    pub end: G1,
    /// θ_t's evaluation at ζ (z₀'s θ_t slot).
    pub y_start: Fr,
    /// θ_{t+k}'s evaluation at ζ (z_n's).
    pub y_end: Fr,
    /// π: the quotient's point of start + r·end at ζ.
    pub proof: G1,
}

/// A points file's payload (`points.key` beside keys on KZG points): the
/// proving key's first G1 powers, as many as a checkpoint of the spec has
/// coefficients (rounded up to a power of two), so that a verifier can
/// commit checkpoint files without the proving key. The verifying key
/// names the file by its checksum.
#[derive(Serialize, Deserialize)]
pub struct PointsPayload {
    /// The powers, uncompressed (each point checked when read).
    pub powers: zkstep_fold::rawkey::StoredKey<E1>,
}

/// What a verifying key on KZG points holds: the opening's key and the
/// checksum of its points file ([`PointsPayload`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThetaVk {
    /// [1]₁, [1]₂, [τ]₂.
    pub key: ThetaKey,
    /// The envelope checksum of the points file keygen wrote beside it.
    pub points: [u8; 32],
}

/// A base-field coordinate as two 128-bit limbs (the scalar field is smaller).
fn limbs(x: &<G1 as nova_snark::traits::Group>::Base) -> [Fr; 2] {
    let repr = x.to_repr();
    let b = repr.as_ref();
    let half = |s: &[u8]| {
        let mut w = [0u8; 16];
        w.copy_from_slice(s);
        Fr::from_u128(u128::from_le_bytes(w))
    };
    [half(&b[..16]), half(&b[16..32])]
}

/// Commit(θ) of a checkpoint at step `step` whose point is `c`:
/// H(CHECKPOINT_POINT, spec_digest, t, x(C), y(C), C = ∞), each coordinate
/// as two 128-bit limbs: eight values, the short sponge's rate (`h8`,
/// width 9; the wide one before format 32 cost ≈ 4.6 times as much, and a
/// π_merge verifier hashes N + 2 points).
pub fn point_commitment(spec_digest: Fr, step: u64, c: &G1) -> Fr {
    let (x, y, infinity) = c.to_coordinates();
    let [x0, x1] = limbs(&x);
    let [y0, y1] = limbs(&y);
    h8(&[
        Fr::from(domain::CHECKPOINT_POINT),
        spec_digest,
        Fr::from(step),
        x0,
        x1,
        y0,
        y1,
        Fr::from(u64::from(infinity)),
    ])
}

/// The combination r of a proof's opening: drawn after ζ and both claimed values.
pub fn opening_r(zeta: Fr, y_start: Fr, y_end: Fr) -> Fr {
    opening_r_of(zeta, &[y_start, y_end])
}

/// The combination r of an opening of several points at ζ, drawn after ζ
/// and every claimed value: H(OPENING_R, acc, values…) over chunks of
/// RATE − 2 values, acc = ζ first (for two values, [`opening_r`]).
pub fn opening_r_of(zeta: Fr, values: &[Fr]) -> Fr {
    values.chunks(RATE - 2).fold(zeta, |acc, chunk| {
        let mut input = [Fr::ZERO; RATE];
        input[0] = Fr::from(domain::OPENING_R);
        input[1] = acc;
        input[2..2 + chunk.len()].copy_from_slice(chunk);
        h24(&input)
    })
}

/// The combination r of π_merge's checkpoints: H(OPENING_R, ζ). Its folds
/// add every checkpoint's evaluation into one value with powers of r, so r
/// comes with ζ (after every W₁ and the points), not after the values.
pub fn combination_r(zeta: Fr) -> Fr {
    let mut input = [Fr::ZERO; RATE];
    input[0] = Fr::from(domain::OPENING_R);
    input[1] = zeta;
    h24(&input)
}

/// The opening of π_merge's checkpoints (keys on KZG points): the α its
/// lookups drew (ζ absorbs it), every checkpoint's point (the nodes', the
/// centre's, the global model's, in the statement's order), the value
/// Σ_c r^c·θ_c(ζ) its folds ended at, and one quotient point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeOpening {
    /// The lookups' challenge α the proof's folds drew.
    pub alpha: Fr,
    /// C of every checkpoint.
    pub points: Vec<G1>,
    /// Σ_c r^c·θ_c(ζ), r = [`combination_r`] (the last state's value).
    pub value: Fr,
    /// π: the quotient's point of Σ_c r^c·C_c at ζ.
    pub proof: G1,
}

/// The opening key of a commitment key's points.
pub fn opening_key(ck: &CommitmentKey<E1>) -> Result<ThetaKey, String> {
    kzg::verifier_key(ck).map_err(|e| e.to_string())
}

/// The G1 powers a key on `layout` must hold beyond its folds' needs: one
/// a coefficient of a checkpoint under KZG points, none under the chains.
pub fn powers_needed(layout: &crate::Layout) -> usize {
    match layout.commit_scheme {
        crate::state::CommitScheme::Chain => 0,
        crate::state::CommitScheme::Evaluation => zkstep_core::commit::coefficient_count(&layout.spec),
    }
}

/// A commitment key's size floor raised to [`powers_needed`].
pub fn ck_floor(layout: &crate::Layout, floor: CkFloor<E1>) -> CkFloor<E1> {
    let need = powers_needed(layout);
    Box::new(move |s| floor(s).max(need))
}

/// The points file's payload of a key on `layout`: its first
/// [`powers_needed`] powers.
pub fn points_payload(ck: &CommitmentKey<E1>, layout: &crate::Layout) -> Result<PointsPayload, String> {
    points_payload_of(ck, powers_needed(layout))
}

/// A points file's payload of a key's first `n` powers (π_merge's keys
/// write one too: `MergeLayout::powers_needed`).
pub fn points_payload_of(ck: &CommitmentKey<E1>, n: usize) -> Result<PointsPayload, String> {
    let key = kzg::prefix(ck, n).map_err(|e| e.to_string())?;
    Ok(PointsPayload { powers: zkstep_fold::rawkey::StoredKey { key } })
}

/// The G1 powers checkpoints are committed under (a proving key's, or a
/// points file's).
#[derive(Clone, Copy)]
pub struct PointKey<'a>(pub &'a CommitmentKey<E1>);

impl PointKey<'_> {
    /// C_θ of a checkpoint.
    pub fn point(&self, spec: &ModelSpec, ckpt: &Checkpoint) -> Result<G1, String> {
        kzg::commit(self.0, &param_coefficients(spec, ckpt)).map_err(|e| e.to_string())
    }

    /// Commit(θ) of a checkpoint and its point.
    pub fn commitment(&self, spec: &ModelSpec, ckpt: &Checkpoint) -> Result<(Fr, G1), String> {
        let p = self.point(spec, ckpt)?;
        Ok((point_commitment(spec.digest(), ckpt.step, &p), p))
    }

    /// The opening of a proof's first and last checkpoints (whose points
    /// are `points`) at ζ.
    pub fn open(
        &self,
        spec: &ModelSpec,
        [start, end]: [&Checkpoint; 2],
        [p_start, p_end]: [G1; 2],
        zeta: Fr,
    ) -> Result<ThetaOpening, String> {
        let (y, proof) = self.open_all(spec, &[start, end], zeta)?;
        Ok(ThetaOpening { start: p_start, end: p_end, y_start: y[0], y_end: y[1], proof })
    }

    /// Every checkpoint's evaluation at ζ and one opening of all their
    /// points there, combined with powers of [`opening_r_of`].
    pub fn open_all(&self, spec: &ModelSpec, ckpts: &[&Checkpoint], zeta: Fr) -> Result<(Vec<Fr>, G1), String> {
        let cs: Vec<Vec<Fr>> = ckpts.iter().map(|c| param_coefficients(spec, c)).collect();
        let values: Vec<Fr> = cs.iter().map(|c| evaluate(c, zeta)).collect();
        let (_, proof) = self.open_coefficients(&cs, opening_r_of(zeta, &values), zeta)?;
        Ok((values, proof))
    }

    /// Σ_c r^c·θ_c(ζ) of the checkpoints and its opening's quotient point.
    pub fn open_combined(&self, spec: &ModelSpec, ckpts: &[&Checkpoint], r: Fr, zeta: Fr) -> Result<(Fr, G1), String> {
        let cs: Vec<Vec<Fr>> = ckpts.iter().map(|c| param_coefficients(spec, c)).collect();
        self.open_coefficients(&cs, r, zeta)
    }

    fn open_coefficients(&self, cs: &[Vec<Fr>], r: Fr, zeta: Fr) -> Result<(Fr, G1), String> {
        let polys: Vec<&[Fr]> = cs.iter().map(Vec::as_slice).collect();
        let o = kzg::open(self.0, &polys, r, zeta).map_err(|e| e.to_string())?;
        Ok((o.value, o.proof))
    }
}

/// Check that `points` open at ζ to `values` with the quotient point `proof`.
fn check_opening(key: &ThetaKey, points: &[G1], values: &[Fr], proof: G1, zeta: Fr) -> Result<(), String> {
    let r = opening_r_of(zeta, values);
    // y = Σ rⁱ·yᵢ, as the opening combines the points
    let value = values.iter().rev().fold(Fr::ZERO, |acc, y| acc * r + y);
    kzg::verify(key, points, r, zeta, &KzgOpening::<E1> { value, proof }).map_err(|e| e.to_string())
}

/// Commitments derived from points ([`point_commitment`] of each), kept
/// with the spec digest, step and point each was derived from.
#[derive(Clone, Debug, Default)]
pub struct PointHashes(Vec<(Fr, u64, G1, Fr)>);

impl PointHashes {
    /// The hashes of `points` at their steps (side by side).
    pub fn of(spec_digest: Fr, points: &[(u64, G1)]) -> Self {
        PointHashes(
            points
                .par_iter()
                .map(|(step, c)| (spec_digest, *step, *c, point_commitment(spec_digest, *step, c)))
                .collect(),
        )
    }

    /// The hashes, in order.
    pub fn hashes(&self) -> impl Iterator<Item = Fr> + '_ {
        self.0.iter().map(|e| e.3)
    }

    /// [`point_commitment`] of the i-th point: the one kept where it was
    /// derived from the same spec, step and point, else computed.
    pub fn get(&self, i: usize, spec_digest: Fr, step: u64, c: &G1) -> Fr {
        match self.0.get(i) {
            Some((s, t, p, h)) if *s == spec_digest && *t == step && p == c => *h,
            _ => point_commitment(spec_digest, step, c),
        }
    }
}

/// Check π_merge's opening against its statement's commitments (each with
/// its checkpoint's step, in the statement's order) at ζ: one point a
/// commitment, each hashing to it, and Σ_c r^c·C_c opening to the value.
/// `known`: hashes already taken of these points (a proof file's reader
/// derives the statement from them), used where spec, step and point are
/// the same, so a check after a read does not hash them again.
pub fn check_merge(
    key: &ThetaKey,
    spec_digest: Fr,
    commitments: &[(u64, Fr)],
    o: &MergeOpening,
    zeta: Fr,
    known: &PointHashes,
) -> Result<(), String> {
    let n = commitments.len();
    if o.points.len() != n {
        return Err(format!("the opening has {} points for {n} checkpoints", o.points.len()));
    }
    let hashes: Vec<Fr> = (0..n)
        .into_par_iter()
        .map(|i| known.get(i, spec_digest, commitments[i].0, &o.points[i]))
        .collect();
    if let Some(i) = (0..n).find(|&i| hashes[i] != commitments[i].1) {
        return Err(format!("the opening's point {i} does not hash to the statement's commitment of that checkpoint"));
    }
    let opening = KzgOpening::<E1> { value: o.value, proof: o.proof };
    kzg::verify(key, &o.points, combination_r(zeta), zeta, &opening).map_err(|e| e.to_string())
}

/// Check a proof's opening against its statement: each point hashes to the
/// statement's commitment at its step, and both open at ζ to the claimed
/// values (the ones the circuit's first and last states hold).
pub fn check(
    key: &ThetaKey,
    spec_digest: Fr,
    (step_start, c_start): (u64, Fr),
    (step_end, c_end): (u64, Fr),
    o: &ThetaOpening,
    zeta: Fr,
) -> Result<(), String> {
    if point_commitment(spec_digest, step_start, &o.start) != c_start {
        return Err("the proof's point of its first checkpoint does not hash to the statement's first commitment".into());
    }
    if point_commitment(spec_digest, step_end, &o.end) != c_end {
        return Err("the proof's point of its last checkpoint does not hash to the statement's last commitment".into());
    }
    check_opening(key, &[o.start, o.end], &[o.y_start, o.y_end], o.proof, zeta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_commitment_depends_on_every_input() {
        let g = G1::gen();
        let base = point_commitment(Fr::from(1u64), 5, &g);
        assert_ne!(base, point_commitment(Fr::from(2u64), 5, &g), "spec");
        assert_ne!(base, point_commitment(Fr::from(1u64), 6, &g), "step");
        assert_ne!(base, point_commitment(Fr::from(1u64), 5, &(g + g)), "point");
        assert_ne!(base, point_commitment(Fr::from(1u64), 5, &G1::zero()), "∞");
        assert_ne!(point_commitment(Fr::from(1u64), 5, &-g), base, "−C");
    }

    #[test]
    fn kept_point_hashes_are_used_only_for_what_they_were_taken_of() {
        let (g, spec) = (G1::gen(), Fr::from(1u64));
        let kept = PointHashes::of(spec, &[(5, g), (7, g + g)]);
        let h: Vec<Fr> = kept.hashes().collect();
        assert_eq!(h, vec![point_commitment(spec, 5, &g), point_commitment(spec, 7, &(g + g))]);
        assert_eq!(kept.get(0, spec, 5, &g), h[0]);
        // another spec, step, point or index: hashed afresh
        assert_eq!(kept.get(0, Fr::from(2u64), 5, &g), point_commitment(Fr::from(2u64), 5, &g));
        assert_eq!(kept.get(0, spec, 6, &g), point_commitment(spec, 6, &g));
        assert_eq!(kept.get(0, spec, 5, &(g + g)), point_commitment(spec, 5, &(g + g)));
        assert_eq!(kept.get(1, spec, 5, &g), h[0]);
        assert_eq!(kept.get(2, spec, 5, &g), h[0]);
        assert_eq!(PointHashes::default().get(0, spec, 7, &(g + g)), h[1]);
    }
}
