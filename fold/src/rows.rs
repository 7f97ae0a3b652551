//! Grumpkin commitments in rows (Hyrax's layout), for the secondary.
//!
//! Why: the secondary's evaluation argument is an IPA, whose verifier pays
//! one MSM over as many generators as the committed vector's length (2¹³
//! for the secondary): ≈ 36–38 % of a fresh `zkstep-verify`'s CPU
//! (docs/design/fresh-verify.md, "Next: the secondary's commitments in
//! rows"). Committed as [`ROWS`] rows of n/[`ROWS`] values, every row under
//! the same generators, a claim v = W(r) reduces by the commitments'
//! homomorphism to the row combination C = Σⱼ eq(r_rows, j)·Cⱼ and an IPA
//! of n/[`ROWS`] generators at the remaining coordinates.
//!
//! How: [`GrumpkinRows`] is nova-snark's Grumpkin engine with one change,
//! its commitment engine [`RowEngine`]: a commitment ([`RowCommitment`]) is
//! [`ROWS`] of nova-snark's Pedersen commitments on Grumpkin, each row of
//! the vector on the key's generators (the key is nova-snark's Pedersen
//! key, n/[`ROWS`] points), the blind on the first row only. Sums and
//! scalings act row by row, so nova-snark's R1CS folding and Spartan work
//! on it unchanged. [`RowIpa`] is the evaluation argument: it combines the
//! rows at the point's first coordinates and runs [`FastIpa`] on the
//! combination, under a transcript of its own seeded from Spartan's.
//!
//! Binding: each row is a Pedersen commitment under the same generators;
//! a prover that opens the row combination for eq weights drawn after the
//! rows were fixed opens each row (Hyrax, §3.1 of Wahby et al. 2018: the
//! combinations at ROWS independent points determine every row).
//! docs/SOUNDNESS.md, "The secondary's commitments in rows".

use crate::commit::commit_on;
use crate::ipa::{self, FastIpa};
use ff::Field;
use nova_snark::errors::NovaError;
use nova_snark::provider::bn256_grumpkin::grumpkin;
use nova_snark::provider::keccak::Keccak256Transcript;
use nova_snark::provider::pedersen;
use nova_snark::provider::poseidon::{PoseidonRO, PoseidonROCircuit};
use nova_snark::provider::GrumpkinEngine;
use nova_snark::spartan::polys::eq::EqPolynomial;
use nova_snark::traits::commitment::{CommitmentEngineTrait, CommitmentTrait, Len};
use nova_snark::traits::evaluation::EvaluationEngineTrait;
use nova_snark::traits::{AbsorbInRO2Trait, AbsorbInROTrait, Engine, TranscriptEngineTrait, TranscriptReprTrait};
use num_integer::Integer;
use num_traits::ToPrimitive;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::{Add, Mul, MulAssign, Range};

/// Rows a commitment has: the verifier's IPA runs over n/ROWS generators
/// (2¹¹ of the secondary's 2¹³) and a fold of the secondary costs the
/// primary ROWS ladders a commitment. Four since format 32: the primary's
/// last witness part W₃ passes 2¹⁴ variables with them (≈ 20.5k), which
/// doubles a fold's padded witness only where W₂ is within 2¹⁵ of a power
/// of two (width 128 at 12 rows a fold), and the fold sizing counts that
/// padding (docs/design/fresh-verify.md, "Four rows").
pub const ROWS: usize = 4;

type G = GrumpkinEngine;
type Scalar = grumpkin::Scalar;
/// One row: nova-snark's Pedersen commitment on Grumpkin.
pub type Row = pedersen::Commitment<G>;
/// The rows' key: nova-snark's Pedersen key on Grumpkin (one row's generators).
pub type RowKey = pedersen::CommitmentKey<G>;

/// nova-snark's Grumpkin engine with commitments in rows.
#[derive(Clone, Copy, Debug, Eq, PartialEq, Serialize, Deserialize)]
pub struct GrumpkinRows;

impl Engine for GrumpkinRows {
    type Base = grumpkin::Base;
    type Scalar = grumpkin::Scalar;
    type GE = grumpkin::Point;
    type RO = PoseidonRO<Self::Base>;
    type ROCircuit = PoseidonROCircuit<Self::Base>;
    type RO2 = PoseidonRO<Self::Scalar>;
    type RO2Circuit = PoseidonROCircuit<Self::Scalar>;
    type TE = Keccak256Transcript<Self>;
    type CE = RowEngine;
}

/// A commitment in [`ROWS`] rows: row j commits values j·m … (j+1)·m − 1
/// of the vector (m the key's length) on the key's generators; the blind
/// is on row 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowCommitment {
    rows: [Row; ROWS],
}

impl RowCommitment {
    /// The rows, first to last.
    pub fn rows(&self) -> &[Row; ROWS] {
        &self.rows
    }

    /// The commitment of these rows.
    pub fn from_rows(rows: [Row; ROWS]) -> Self {
        Self { rows }
    }

    /// Σⱼ wⱼ·rowⱼ over the first `w.len()` rows (one small MSM,
    /// [`crate::sums::combine`]).
    fn combine(&self, w: &[Scalar]) -> Row {
        let terms: Vec<(Row, Scalar)> = self.rows.iter().copied().zip(w.iter().copied()).collect();
        crate::commit::grumpkin_combine(&terms)
            .unwrap_or_else(|| terms.iter().fold(Row::default(), |acc, (r, wj)| acc + *r * *wj))
    }
}

/// Σᵢ sᵢ·Cᵢ row by row ([`crate::sums::combine`]); None if a row's point
/// cannot be read back (never for points that are sums of curve points).
pub(crate) fn combine(terms: &[(RowCommitment, Scalar)]) -> Option<RowCommitment> {
    let mut rows = [Row::default(); ROWS];
    let done: Vec<Option<Row>> = (0..ROWS)
        .into_par_iter()
        .map(|j| {
            let t: Vec<(Row, Scalar)> = terms.iter().map(|(c, s)| (c.rows[j], *s)).collect();
            crate::commit::grumpkin_combine(&t)
        })
        .collect();
    for (r, d) in rows.iter_mut().zip(done) {
        *r = d?;
    }
    Some(RowCommitment { rows })
}

impl Default for RowCommitment {
    fn default() -> Self {
        Self { rows: [Row::default(); ROWS] }
    }
}

impl CommitmentTrait<GrumpkinRows> for RowCommitment {
    /// Row 0's coordinates only: a commitment in rows is not one point.
    /// zkstep reads a commitment's points through [`RowCommitment::rows`];
    /// this exists because nova-snark's trait asks for it.
    fn to_coordinates(&self) -> (grumpkin::Base, grumpkin::Base, bool) {
        self.rows[0].to_coordinates()
    }
}

impl TranscriptReprTrait<grumpkin::Point> for RowCommitment {
    fn to_transcript_bytes(&self) -> Vec<u8> {
        self.rows.iter().flat_map(|r| r.to_transcript_bytes()).collect()
    }
}

impl AbsorbInROTrait<GrumpkinRows> for RowCommitment {
    fn absorb_in_ro(&self, ro: &mut <GrumpkinRows as Engine>::RO) {
        for r in &self.rows {
            r.absorb_in_ro(ro);
        }
    }
}

impl AbsorbInRO2Trait<GrumpkinRows> for RowCommitment {
    fn absorb_in_ro2(&self, ro: &mut <GrumpkinRows as Engine>::RO2) {
        for r in &self.rows {
            r.absorb_in_ro2(ro);
        }
    }
}

impl Add for RowCommitment {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        let mut rows = self.rows;
        for (r, o) in rows.iter_mut().zip(other.rows) {
            *r = *r + o;
        }
        Self { rows }
    }
}

impl MulAssign<Scalar> for RowCommitment {
    fn mul_assign(&mut self, s: Scalar) {
        for r in &mut self.rows {
            *r *= s;
        }
    }
}

impl Mul<Scalar> for RowCommitment {
    type Output = Self;
    fn mul(mut self, s: Scalar) -> Self {
        self *= s;
        self
    }
}

/// The commitment engine of [`GrumpkinRows`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowEngine;

/// One row's length for a vector of `n` values: the key's generators.
pub fn row_length(n: usize) -> usize {
    n.div_ceil(ROWS).next_power_of_two()
}

/// Split flat positions into (row, column) groups under an m-point key.
fn by_row<T: Copy>(m: usize, at: impl Iterator<Item = (usize, T)>) -> [Vec<(usize, T)>; ROWS] {
    let mut out: [Vec<(usize, T)>; ROWS] = Default::default();
    for (i, v) in at {
        let (j, c) = i.div_rem(&m.max(1));
        // nova-snark's Pedersen panics on columns past its key; so do rows past ROWS
        assert!(j < ROWS, "position {i} past {ROWS} rows of {m}");
        out[j].push((c, v));
    }
    out
}

/// The commitment whose row j is `row(j, blind for row j)`.
fn each_row(r: &Scalar, row: impl Fn(usize, &Scalar) -> Row + Sync) -> RowCommitment {
    let mut rows = [Row::default(); ROWS];
    rows.par_iter_mut().enumerate().for_each(|(j, out)| {
        *out = row(j, if j == 0 { r } else { &Scalar::ZERO });
    });
    RowCommitment { rows }
}

impl CommitmentEngineTrait<GrumpkinRows> for RowEngine {
    type CommitmentKey = RowKey;
    type DerandKey = pedersen::DerandKey<G>;
    type Commitment = RowCommitment;

    fn load_setup(
        reader: &mut (impl std::io::Read + std::io::Seek),
        label: &'static [u8],
        n: usize,
    ) -> Result<Self::CommitmentKey, nova_snark::provider::ptau::PtauFileError> {
        // n is the key's own length (what `save_setup` wrote), not a vector's
        <G as Engine>::CE::load_setup(reader, label, n)
    }

    fn save_setup(
        ck: &Self::CommitmentKey,
        writer: &mut (impl std::io::Write + std::io::Seek),
    ) -> Result<(), nova_snark::provider::ptau::PtauFileError> {
        <G as Engine>::CE::save_setup(ck, writer)
    }

    /// A key for vectors of up to `n` values: ⌈n/ROWS⌉ generators (a power of two).
    fn setup(label: &'static [u8], n: usize) -> Result<Self::CommitmentKey, NovaError> {
        <G as Engine>::CE::setup(label, row_length(n))
    }

    fn derand_key(ck: &Self::CommitmentKey) -> Self::DerandKey {
        <G as Engine>::CE::derand_key(ck)
    }

    /// Row j holds `v[j·m .. (j+1)·m]` (m the key's length); more than
    /// ROWS·m values is a caller's error, as a vector past nova-snark's
    /// Pedersen key is.
    fn commit(ck: &Self::CommitmentKey, v: &[Scalar], r: &Scalar) -> Self::Commitment {
        let m = ck.length().max(1);
        assert!(v.len() <= ROWS * m, "{} values past {ROWS} rows of {m}", v.len());
        each_row(r, |j, b| {
            let row = v.get(j * m..v.len().min((j + 1) * m)).unwrap_or(&[]);
            commit_on::<G>(ck, 0, row, b)
        })
    }

    fn commit_sparse_binary(ck: &Self::CommitmentKey, non_zero_indices: &[usize], r: &Scalar) -> Self::Commitment {
        let rows = by_row(ck.length(), non_zero_indices.iter().map(|i| (*i, ())));
        each_row(r, |j, b| {
            let cols: Vec<usize> = rows[j].iter().map(|(c, _)| *c).collect();
            <G as Engine>::CE::commit_sparse_binary(ck, &cols, b)
        })
    }

    fn commit_sparse(ck: &Self::CommitmentKey, indices: &[usize], scalars: &[Scalar], r: &Scalar) -> Self::Commitment {
        let rows = by_row(ck.length(), indices.iter().copied().zip(scalars.iter().copied()));
        each_row(r, |j, b| {
            let (cols, vals): (Vec<usize>, Vec<Scalar>) = rows[j].iter().copied().unzip();
            <G as Engine>::CE::commit_sparse(ck, &cols, &vals, b)
        })
    }

    fn commit_small<T: Integer + Into<u64> + Copy + Sync + ToPrimitive>(
        ck: &Self::CommitmentKey,
        v: &[T],
        r: &Scalar,
    ) -> Self::Commitment {
        let m = ck.length().max(1);
        assert!(v.len() <= ROWS * m, "{} values past {ROWS} rows of {m}", v.len());
        each_row(r, |j, b| {
            let row = v.get(j * m..v.len().min((j + 1) * m)).unwrap_or(&[]);
            <G as Engine>::CE::commit_small(ck, row, b)
        })
    }

    /// `v[range]` at its own positions, as nova-snark's Pedersen commits it.
    fn commit_small_range<T: Integer + Into<u64> + Copy + Sync + ToPrimitive>(
        ck: &Self::CommitmentKey,
        v: &[T],
        r: &Scalar,
        range: Range<usize>,
        _max_num_bits: usize,
    ) -> Self::Commitment {
        let values = v[range.clone()].iter().map(|x| Scalar::from((*x).into()));
        let at: Vec<(usize, Scalar)> = range.zip(values).collect();
        let (idx, vals): (Vec<usize>, Vec<Scalar>) = at.into_iter().unzip();
        Self::commit_sparse(ck, &idx, &vals, r)
    }

    fn derandomize(dk: &Self::DerandKey, commit: &Self::Commitment, r: &Scalar) -> Self::Commitment {
        let mut rows = commit.rows;
        rows[0] = <G as Engine>::CE::derandomize(dk, &rows[0], r);
        RowCommitment { rows }
    }

    fn ck_to_coordinates(ck: &Self::CommitmentKey) -> Vec<(grumpkin::Base, grumpkin::Base)> {
        <G as Engine>::CE::ck_to_coordinates(ck)
    }

    fn ck_to_group_elements(ck: &Self::CommitmentKey) -> Vec<grumpkin::Point> {
        <G as Engine>::CE::ck_to_group_elements(ck)
    }

    fn ck_derive_by_address(
        ck: &Self::CommitmentKey,
        addresses: &[usize],
        table_size: usize,
    ) -> Result<Self::CommitmentKey, NovaError> {
        <G as Engine>::CE::ck_derive_by_address(ck, addresses, table_size)
    }
}

/// The evaluation argument for [`GrumpkinRows`]: the rows combined at the
/// point's first coordinates, then [`FastIpa`] over one row's generators.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RowIpa;

/// A claim at `point` under an m-point key: the rows combined by the eq
/// weights of the point's first coordinates (the vector's first row alone
/// when it fits one), and the point left for the IPA. Rows the vector does
/// not reach must be the identity: the commitment is to that many values.
fn combine_rows<'a>(comm: &RowCommitment, point: &'a [Scalar], m: usize) -> Result<(Vec<Scalar>, Row, &'a [Scalar]), NovaError> {
    if point.len() >= 48 || !m.is_power_of_two() {
        return Err(NovaError::InvalidInputLength);
    }
    let n = 1usize << point.len();
    let used = (n / m).max(1);
    if used > ROWS {
        return Err(NovaError::InvalidInputLength);
    }
    if comm.rows[used..].iter().any(|r| *r != Row::default()) {
        return Err(NovaError::InvalidPCS);
    }
    let bits = used.trailing_zeros() as usize;
    let w = EqPolynomial::evals_from_points(&point[..bits]);
    Ok((w.clone(), comm.combine(&w), &point[bits..]))
}

/// The IPA's own transcript, seeded by a challenge of Spartan's after it
/// has absorbed the row commitment (so the seed binds the whole statement).
fn inner_transcript(outer: &mut Keccak256Transcript<GrumpkinRows>, comm: &RowCommitment) -> Result<Keccak256Transcript<G>, NovaError> {
    outer.absorb(b"rows", comm);
    let seed: Scalar = outer.squeeze(b"rows")?;
    let mut inner = Keccak256Transcript::<G>::new(b"zkstep row IPA");
    inner.absorb(b"seed", &seed);
    Ok(inner)
}

impl EvaluationEngineTrait<GrumpkinRows> for RowIpa {
    type ProverKey = ipa::ProverKey<G>;
    type VerifierKey = ipa::VerifierKey<G>;
    type EvaluationArgument = ipa::Argument<G>;

    fn setup(ck: &RowKey) -> Result<(Self::ProverKey, Self::VerifierKey), NovaError> {
        FastIpa::<G>::setup(ck)
    }

    fn prove(
        ck: &RowKey,
        pk: &Self::ProverKey,
        transcript: &mut Keccak256Transcript<GrumpkinRows>,
        comm: &RowCommitment,
        poly: &[Scalar],
        point: &[Scalar],
        eval: &Scalar,
    ) -> Result<Self::EvaluationArgument, NovaError> {
        let (w, row, rest) = combine_rows(comm, point, ck.length())?;
        if poly.len() != 1 << point.len() {
            return Err(NovaError::InvalidInputLength);
        }
        let m = poly.len() / w.len();
        // Σⱼ wⱼ·rowⱼ, the vector the combined commitment opens to
        let combined: Vec<Scalar> = (0..m)
            .into_par_iter()
            .map(|i| w.iter().enumerate().map(|(j, wj)| poly[j * m + i] * wj).sum())
            .collect();
        let mut inner = inner_transcript(transcript, comm)?;
        FastIpa::<G>::prove(ck, pk, &mut inner, &row, &combined, rest, eval)
    }

    fn verify(
        vk: &Self::VerifierKey,
        transcript: &mut Keccak256Transcript<GrumpkinRows>,
        comm: &RowCommitment,
        point: &[Scalar],
        eval: &Scalar,
        arg: &Self::EvaluationArgument,
    ) -> Result<(), NovaError> {
        let (_, row, rest) = combine_rows(comm, point, vk.generators())?;
        let mut inner = inner_transcript(transcript, comm)?;
        FastIpa::<G>::verify(vk, &mut inner, &row, rest, eval, arg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::r1cs::{R1CSShape, RelaxedR1CSInstance, RelaxedR1CSWitness, SparseMatrix};
    use nova_snark::spartan::polys::multilinear::MultilinearPolynomial;
    use nova_snark::spartan::snark::RelaxedR1CSSNARK;
    use nova_snark::traits::snark::RelaxedR1CSSNARKTrait;
    use rand::rngs::OsRng;

    type R = GrumpkinRows;
    type F = Scalar;

    fn random(n: usize) -> Vec<F> {
        (0..n).map(|_| F::random(OsRng)).collect()
    }

    #[test]
    fn a_commitment_is_a_pedersen_commitment_a_row_and_linear() {
        let ck = RowEngine::setup(b"rows test", 64).unwrap();
        let m = ck.length();
        assert_eq!(m, 64 / ROWS);
        let v = random(64 - 14);
        let r = F::random(OsRng);
        let c = RowEngine::commit(&ck, &v, &r);
        for (j, row) in c.rows().iter().enumerate() {
            let part = &v[(j * m).min(v.len())..((j + 1) * m).min(v.len())];
            let blind = if j == 0 { r } else { F::ZERO };
            assert_eq!(*row, <G as Engine>::CE::commit(&ck, part, &blind), "row {j}");
        }
        // sums and scalings act row by row: Com(a) + s·Com(b) = Com(a + s·b)
        let b = random(64);
        let s = F::random(OsRng);
        let sum: Vec<F> = (0..64).map(|i| v.get(i).copied().unwrap_or(F::ZERO) + s * b[i]).collect();
        let rb = F::random(OsRng);
        assert_eq!(c + RowEngine::commit(&ck, &b, &rb) * s, RowEngine::commit(&ck, &sum, &(r + s * rb)));
        // the blind comes out of row 0
        let dk = RowEngine::derand_key(&ck);
        assert_eq!(RowEngine::derandomize(&dk, &c, &r), RowEngine::commit(&ck, &v, &F::ZERO));
        // the sparse and small forms are the dense one's
        let idx = [0usize, 5, 17, 33, 40, 63];
        let vals = random(idx.len());
        let mut dense = vec![F::ZERO; 64];
        for (i, x) in idx.iter().zip(&vals) {
            dense[*i] = *x;
        }
        assert_eq!(RowEngine::commit_sparse(&ck, &idx, &vals, &r), RowEngine::commit(&ck, &dense, &r));
        let ones: Vec<F> = (0..64).map(|i| if idx.contains(&i) { F::ONE } else { F::ZERO }).collect();
        assert_eq!(RowEngine::commit_sparse_binary(&ck, &idx, &r), RowEngine::commit(&ck, &ones, &r));
        let small: Vec<u64> = (0..64).map(|i| i * 7).collect();
        let as_f: Vec<F> = small.iter().map(|x| F::from(*x)).collect();
        assert_eq!(RowEngine::commit_small(&ck, &small, &r), RowEngine::commit(&ck, &as_f, &r));
        let mut part = vec![F::ZERO; 64];
        part[10..40].copy_from_slice(&as_f[10..40]);
        assert_eq!(RowEngine::commit_small_range(&ck, &small, &r, 10..40, 64), RowEngine::commit(&ck, &part, &r));
        // the transcript and the hashes read every row
        let mut other = c;
        other.rows[ROWS - 1] = other.rows[ROWS - 1] + other.rows[0];
        assert_ne!(c.to_transcript_bytes(), other.to_transcript_bytes());
    }

    /// A claim on 2^k values under a key of m generators: proved, checked,
    /// and refused once anything in it changes.
    fn claim(k: usize, key_for: usize) {
        let n = 1 << k;
        let ck = RowEngine::setup(b"rows test", key_for).unwrap();
        let poly = random(n);
        let point = random(k);
        let eval = MultilinearPolynomial::new(poly.clone()).evaluate(&point);
        let comm = RowEngine::commit(&ck, &poly, &F::ZERO);
        let (pk, vk) = RowIpa::setup(&ck).unwrap();
        let tr = || <R as Engine>::TE::new(b"rows test");
        let arg = RowIpa::prove(&ck, &pk, &mut tr(), &comm, &poly, &point, &eval).unwrap();
        let ok = |comm: &RowCommitment, point: &[F], eval: &F| RowIpa::verify(&vk, &mut tr(), comm, point, eval, &arg).is_ok();
        assert!(ok(&comm, &point, &eval), "k = {k}, key {}", ck.length());
        assert!(!ok(&comm, &point, &(eval + F::ONE)));
        let mut moved = point.clone();
        moved[0] += F::ONE;
        assert!(!ok(&comm, &moved, &eval));
        // any row edited: the combination changes with it
        for j in 0..ROWS {
            let mut edited = comm;
            edited.rows[j] = edited.rows[j] + RowEngine::commit(&ck, &[F::ONE], &F::ZERO).rows[0];
            assert!(!ok(&edited, &point, &eval), "row {j} edited, k = {k}");
        }
        // rows swapped, where the vector has two rows or more
        if n > ck.length() {
            let mut swapped = comm;
            swapped.rows.swap(0, 1);
            assert!(!ok(&swapped, &point, &eval));
        }
    }

    #[test]
    fn row_claims_are_proved_and_edited_ones_refused() {
        // vectors shorter than a row, one full row, every row
        for (k, key_for) in [(3, 64), (4, 64), (5, 64), (6, 64), (7, 128), (6, 128)] {
            claim(k, key_for);
        }
    }

    #[test]
    fn claims_past_the_rows_are_errors() {
        let ck = RowEngine::setup(b"rows test", 64).unwrap();
        let m = ck.length();
        let (pk, vk) = RowIpa::setup(&ck).unwrap();
        let poly = random(2 * ROWS * m);
        let k = (2 * ROWS * m).trailing_zeros() as usize;
        let point = random(k);
        let tr = || <R as Engine>::TE::new(b"rows test");
        let none = RowCommitment::default();
        // twice the rows there are; 8 values at a 4-variable point
        let r = RowIpa::prove(&ck, &pk, &mut tr(), &none, &poly, &point, &F::ONE);
        assert!(matches!(r, Err(NovaError::InvalidInputLength)));
        let r = RowIpa::prove(&ck, &pk, &mut tr(), &none, &poly[..8], &point[..4], &F::ONE);
        assert!(matches!(r, Err(NovaError::InvalidInputLength)));
        // one row's claim (16 values), checked; then with a row it does not reach set
        let eval = MultilinearPolynomial::new(poly[..16].to_vec()).evaluate(&point[..4]);
        let comm = RowEngine::commit(&ck, &poly[..16], &F::ZERO);
        let arg = RowIpa::prove(&ck, &pk, &mut tr(), &comm, &poly[..16], &point[..4], &eval).unwrap();
        assert!(RowIpa::verify(&vk, &mut tr(), &comm, &point[..4], &eval, &arg).is_ok());
        let mut extra = comm;
        extra.rows[ROWS - 1] = comm.rows[0];
        let r = RowIpa::verify(&vk, &mut tr(), &extra, &point[..4], &eval, &arg);
        assert!(matches!(r, Err(NovaError::InvalidPCS)));
        assert!(RowIpa::verify(&vk, &mut tr(), &comm, &point, &eval, &arg).is_err());
    }

    /// nova-snark's Spartan on the row engine: x_i² = y_i over 2^k
    /// constraints, proved and checked; a wrong y, another instance refused.
    #[test]
    fn spartan_runs_on_the_row_engine() {
        let c = 64usize;
        let mut a = Vec::new();
        let mut cm = Vec::new();
        for i in 0..c {
            a.push((i, i, F::ONE));
            cm.push((i, c + i, F::ONE));
        }
        let nv = 2 * c;
        let m = |t: &[(usize, usize, F)]| SparseMatrix::new(t, c, nv + 1);
        let shape = R1CSShape::<R>::new(c, nv, 0, m(&a), m(&a), m(&cm)).unwrap();
        let ck = RowEngine::setup(b"rows spartan", nv).unwrap();
        assert_eq!(ck.length(), nv / ROWS);
        let x = random(c);
        let mut w: Vec<F> = x.clone();
        w.extend(x.iter().map(|v| v.square()));
        let (pk, vk) = RelaxedR1CSSNARK::<R, RowIpa>::setup(&ck, &shape).unwrap();
        let prove = |w: &[F]| {
            let e = vec![F::ZERO; c];
            let comm_w = RowEngine::commit(&ck, w, &F::ZERO);
            let u = RelaxedR1CSInstance::<R>::new(&shape, comm_w, RowCommitment::default(), F::ONE, vec![]).unwrap();
            let wit = RelaxedR1CSWitness::<R>::new(&shape, w.to_vec(), F::ZERO, e, F::ZERO).unwrap();
            (u.clone(), RelaxedR1CSSNARK::<R, RowIpa>::prove(&ck, &pk, &shape, &u, &wit))
        };
        let (u, snark) = prove(&w);
        let snark = snark.unwrap();
        snark.verify(&vk, &u).unwrap();
        // y₉ off by one: whatever the prover makes of it is refused
        let mut bad = w.clone();
        bad[c + 9] += F::ONE;
        let (ub, sb) = prove(&bad);
        assert!(sb.map_or(true, |s| s.verify(&vk, &ub).is_err()));
        // the honest proof against another instance
        let other = RelaxedR1CSInstance::<R>::new(&shape, RowEngine::commit(&ck, &bad, &F::ZERO), RowCommitment::default(), F::ONE, vec![]).unwrap();
        assert!(snark.verify(&vk, &other).is_err());
    }
}
