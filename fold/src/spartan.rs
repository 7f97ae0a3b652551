//! Spartan's verifier on a key zkstep writes: fast to read, small to store.
//!
//! nova-snark's Spartan (`spartan::snark`) verifier key is the padded R1CS
//! shape and its evaluation engine's key, and its digest is recomputed on
//! first use (bincode and SHA3 over every non-zero): in a fresh
//! `zkstep-verify` that was most of the time, and the matrices, written as
//! field elements and indices, most of a 30–50 MB key. [`SpartanVk`] keeps
//! what the verifier needs instead:
//!
//! - the digest nova-snark's own key computed at keygen (the prover's key
//!   absorbs that very value; the verifying key is the verifier's trust
//!   root, so the digest is read as the matrices are);
//! - the matrices in [`Matrices`]' compact form: per row a length, per
//!   entry a varint column delta and an index into the key's distinct
//!   values (a fold's coefficients are few: ±1, powers of two, the scale);
//! - the evaluation engine's key as [`EeStore`] writes it.
//!
//! [`SpartanVk::verify`] is Spartan's verification algorithm (nova-snark's
//! `snark.rs`, learned from its code, on its public sum-check and
//! polynomial types) against that key: the same transcript, so it accepts
//! exactly the proofs nova-snark's prover makes; `agrees_with_nova_snark`
//! checks both verifiers on honest and edited proofs. The proof itself is
//! nova-snark's type, read through [`ProofParts`] (its fields in serde
//! order). [`Compressor`] lets the compression use this verifier for
//! Spartan and nova-snark's own for MicroSpartan (`ppsnark`), whose key
//! holds commitments instead of matrices.

use crate::cs::RowGroups;
use crate::error::{FoldError, Result};
use crate::instance::CommitmentKey;
use crate::rawkey::{LazyKey, Raw};
use ff::{Field, PrimeField};
use nova_snark::errors::NovaError;
use nova_snark::provider::pedersen::{CommitmentEngine as Pedersen, CommitmentKeyExtTrait};
use nova_snark::provider::traits::{DlogGroupExt, PairingGroup};
use nova_snark::r1cs::{R1CSShape, RelaxedR1CSInstance, SparseMatrix};
use nova_snark::spartan::polys::eq::EqPolynomial;
use nova_snark::spartan::polys::multilinear::SparsePolynomial;
use nova_snark::spartan::sumcheck::SumcheckProof;
use nova_snark::spartan::{ppsnark, snark};
use nova_snark::traits::commitment::CommitmentEngineTrait;
use nova_snark::traits::evaluation::EvaluationEngineTrait;
use nova_snark::traits::snark::{DigestHelperTrait, RelaxedR1CSSNARKTrait};
use nova_snark::traits::{Engine, TranscriptEngineTrait};
use rayon::prelude::*;
use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

type Commitment<E> = <<E as Engine>::CE as CommitmentEngineTrait<E>>::Commitment;

/// An evaluation claim: a commitment, a point, the value there.
type Claim<E> = (Commitment<E>, Vec<<E as Engine>::Scalar>, <E as Engine>::Scalar);

/// A SNARK as zkstep's compression uses it: nova-snark's prover, and the
/// verifier key zkstep writes with the verification it runs.
pub trait Compressor<E: Engine>: RelaxedR1CSSNARKTrait<E> {
    /// What a verifying key file holds for this SNARK.
    type Vk: Serialize + DeserializeOwned + Send + Sync;

    /// nova-snark's setup, the verifier's key as zkstep writes it (with
    /// the shape's rows' unit groups, where its key can use them).
    fn keys(ck: &CommitmentKey<E>, shape: &R1CSShape<E>, groups: &RowGroups) -> Result<(Self::ProverKey, Self::Vk)>;

    /// What a proof file holds for this SNARK: the same bytes as the SNARK,
    /// in the form the verifier reads (decoded once, with the proof).
    type Proof: Clone + Serialize + DeserializeOwned + Send + Sync;

    /// The SNARK as a proof file holds it.
    fn into_proof(self) -> Result<Self::Proof>;

    /// Check the proof of `u`.
    fn check(p: &Self::Proof, vk: &Self::Vk, u: &RelaxedR1CSInstance<E>) -> Result<()>;
}

/// MicroSpartan: nova-snark's key (commitments to the matrices) and verifier.
impl<E: Engine, EE: EvaluationEngineTrait<E>> Compressor<E> for ppsnark::RelaxedR1CSSNARK<E, EE> {
    type Vk = <Self as RelaxedR1CSSNARKTrait<E>>::VerifierKey;

    fn keys(ck: &CommitmentKey<E>, shape: &R1CSShape<E>, _: &RowGroups) -> Result<(Self::ProverKey, Self::Vk)> {
        Ok(Self::setup(ck, shape)?)
    }

    type Proof = Self;

    fn into_proof(self) -> Result<Self> {
        Ok(self)
    }

    fn check(p: &Self, vk: &Self::Vk, u: &RelaxedR1CSInstance<E>) -> Result<()> {
        Ok(p.verify(vk, u)?)
    }
}

/// Spartan: zkstep's key and verifier (module header).
impl<E: Engine + 'static, EE: EeStore<E>> Compressor<E> for snark::RelaxedR1CSSNARK<E, EE> {
    type Vk = SpartanVk<E, EE>;

    fn keys(ck: &CommitmentKey<E>, shape: &R1CSShape<E>, groups: &RowGroups) -> Result<(Self::ProverKey, Self::Vk)> {
        let (pk, vk) = Self::setup(ck, shape)?;
        let (_, ee) = EE::setup(ck)?;
        let padded = shape.pad();
        // nova-snark's key is (the engine's key, the padded shape) in serde
        // order: the key written here must describe exactly that
        let theirs = postcard::to_stdvec(&vk).map_err(internal)?;
        let ours = postcard::to_stdvec(&(&ee, &padded)).map_err(internal)?;
        if theirs != ours {
            return Err(internal("Spartan's verifier key is not its engine's key and the padded shape"));
        }
        let stored = EE::store(ck, &ee)?;
        Ok((
            pk,
            SpartanVk {
                digest: vk.digest(),
                matrices: Matrices::of(&padded, groups)?,
                stored,
                ee,
            },
        ))
    }

    // the parts, not nova-snark's struct (whose fields are private): a
    // verifier that re-encoded the struct to read them would recompute
    // every point's square root (≈ 0.5 ms on a Grumpkin proof)
    type Proof = ProofParts<E, EE>;

    fn into_proof(self) -> Result<ProofParts<E, EE>> {
        let bytes = postcard::to_stdvec(&self).map_err(internal)?;
        match postcard::take_from_bytes(&bytes) {
            Ok((p, [])) => Ok(p),
            _ => Err(internal("a Spartan proof that does not read as its parts")),
        }
    }

    fn check(p: &ProofParts<E, EE>, vk: &Self::Vk, u: &RelaxedR1CSInstance<E>) -> Result<()> {
        Ok(vk.verify(p, u)?)
    }
}

fn internal(e: impl std::fmt::Display) -> FoldError {
    FoldError::Invalid(e.to_string())
}

/// How an evaluation engine's verifier key is written in a [`SpartanVk`].
pub trait EeStore<E: Engine>: EvaluationEngineTrait<E> {
    /// What the file holds.
    type Stored: Serialize + DeserializeOwned + Send + Sync;
    /// What to write for the key `EE::setup(ck)` made.
    fn store(ck: &CommitmentKey<E>, vk: &Self::VerifierKey) -> Result<Self::Stored>;
    /// The key again.
    fn load(s: &Self::Stored) -> std::result::Result<Self::VerifierKey, NovaError>;
}

/// A few points: written as they are.
macro_rules! stored_as_is {
    ($ee:ty) => {
        impl<E> EeStore<E> for $ee
        where
            E: Engine<CE = nova_snark::provider::hyperkzg::CommitmentEngine<E>> + 'static,
            E::GE: PairingGroup,
        {
            type Stored = Self::VerifierKey;
            fn store(_: &CommitmentKey<E>, vk: &Self::VerifierKey) -> Result<Self::Stored> {
                Ok(vk.clone())
            }
            fn load(s: &Self::Stored) -> std::result::Result<Self::VerifierKey, NovaError> {
                Ok(s.clone())
            }
        }
    };
}
stored_as_is!(nova_snark::provider::mercury::EvaluationEngine<E>);
stored_as_is!(nova_snark::provider::hyperkzg::EvaluationEngine<E>);

/// The IPA's key is the whole commitment key: written uncompressed (no
/// square root a point when read), its points checked when loaded (beside
/// the matrices' decoding) and the engine's key re-derived from it.
impl<E> EeStore<E> for crate::ipa::FastIpa<E>
where
    E: Engine<CE = Pedersen<E>> + 'static,
    E::GE: DlogGroupExt,
    CommitmentKey<E>: CommitmentKeyExtTrait<E>,
    crate::ipa::Affine<E>: halo2curves::CurveAffine<ScalarExt = E::Scalar, Base = E::Base>,
{
    type Stored = LazyKey<E>;
    fn store(ck: &CommitmentKey<E>, _: &Self::VerifierKey) -> Result<Self::Stored> {
        LazyKey::of(ck).map_err(internal)
    }
    fn load(s: &Self::Stored) -> std::result::Result<Self::VerifierKey, NovaError> {
        let key = s.key().map_err(|reason| NovaError::InvalidCommitmentKey { reason })?;
        Ok(Self::setup(&key)?.1)
    }
}

/// The row IPA's key is one row's generators: written as [`crate::ipa::FastIpa`]'s.
impl EeStore<crate::rows::GrumpkinRows> for crate::rows::RowIpa {
    type Stored = LazyKey<crate::rows::GrumpkinRows>;
    fn store(ck: &crate::rows::RowKey, _: &Self::VerifierKey) -> Result<Self::Stored> {
        LazyKey::of(ck).map_err(internal)
    }
    fn load(s: &Self::Stored) -> std::result::Result<Self::VerifierKey, NovaError> {
        let key = s.key().map_err(|reason| NovaError::InvalidCommitmentKey { reason })?;
        Ok(Self::setup(&key)?.1)
    }
}

/// nova-snark's `spartan::snark::RelaxedR1CSSNARK`, field by field in its
/// serde order (its fields are private; `parts_read_back_as_the_proof`
/// checks the two write the same bytes).
#[derive(Clone, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct ProofParts<E: Engine, EE: EvaluationEngineTrait<E>> {
    // nova-snark's field names too, so self-describing formats (JSON) read
    // and write it as nova-snark's struct
    #[serde(rename = "sc_proof_outer")]
    sc_outer: SumcheckProof<E>,
    claims_outer: (E::Scalar, E::Scalar, E::Scalar),
    #[serde(rename = "eval_E")]
    eval_e: E::Scalar,
    #[serde(rename = "sc_proof_inner")]
    sc_inner: SumcheckProof<E>,
    #[serde(rename = "eval_W")]
    eval_w: E::Scalar,
    #[serde(rename = "sc_proof_batch")]
    sc_batch: SumcheckProof<E>,
    evals_batch: Vec<E::Scalar>,
    eval_arg: EE::EvaluationArgument,
}

/// Spartan's verifier key as zkstep writes it (module header).
pub struct SpartanVk<E: Engine, EE: EeStore<E>> {
    digest: E::Scalar,
    matrices: Matrices<E::Scalar>,
    stored: EE::Stored,
    ee: EE::VerifierKey,
}

impl<E: Engine, EE: EeStore<E>> Serialize for SpartanVk<E, EE> {
    fn serialize<Z: Serializer>(&self, s: Z) -> std::result::Result<Z::Ok, Z::Error> {
        (&self.digest, &self.matrices, &self.stored).serialize(s)
    }
}

impl<'de, E: Engine, EE: EeStore<E>> Deserialize<'de> for SpartanVk<E, EE> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        // the matrices' bytes as read (borrowed where the input allows),
        // decoded beside the evaluation key's loading (the IPA's: 2¹⁴
        // points, each checked on the curve)
        let (digest, parts, stored) = <(E::Scalar, Parts<'de, E::Scalar>, EE::Stored)>::deserialize(d)?;
        let (matrices, ee) = rayon::join(|| Matrices::decode(parts), || EE::load(&stored));
        let matrices = matrices.map_err(de::Error::custom)?;
        let ee = ee.map_err(|e| de::Error::custom(format!("Spartan's evaluation key: {e}")))?;
        Ok(SpartanVk { digest, matrices, stored, ee })
    }
}

impl<E: Engine + 'static, EE: EeStore<E>> SpartanVk<E, EE> {
    /// Spartan's verification of a proof of `u` (nova-snark's algorithm).
    pub fn verify(&self, p: &ProofParts<E, EE>, u: &RelaxedR1CSInstance<E>) -> std::result::Result<(), NovaError> {
        let m = &self.matrices;
        if u.X().len() != m.num_io {
            return Err(NovaError::InvalidInputLength);
        }
        let mut tr = E::TE::new(b"RelaxedR1CSSNARK");
        tr.absorb(b"vk", &self.digest);
        tr.absorb(b"U", u);
        let rounds_x = m.num_cons.trailing_zeros() as usize;
        let rounds_y = m.num_vars.trailing_zeros() as usize + 1;

        // outer sum-check: Σ eq(τ, x)·(Az·Bz − u·Cz − E) = 0
        let tau = (0..rounds_x)
            .map(|_| tr.squeeze(b"t"))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let (claim_outer, r_x) = p.sc_outer.verify(E::Scalar::ZERO, rounds_x, 3, &mut tr)?;
        let (az, bz, cz) = p.claims_outer;
        if claim_outer != EqPolynomial::new(tau).evaluate(&r_x) * (az * bz - u.u() * cz - p.eval_e) {
            return Err(NovaError::InvalidSumcheckProof);
        }
        tr.absorb(b"claims_outer", &[az, bz, cz, p.eval_e].as_slice());

        // inner sum-check: the three claims joined by r, at r_y
        let r = tr.squeeze(b"r")?;
        let (claim_inner, r_y) = p.sc_inner.verify(az + r * bz + r * r * cz, rounds_y, 2, &mut tr)?;
        let eval_x = {
            let x: Vec<E::Scalar> = std::iter::once(u.u()).chain(u.X().iter().copied()).collect();
            SparsePolynomial::new(rounds_y - 1, x).evaluate(&r_y[1..])
        };
        let eval_z = (E::Scalar::ONE - r_y[0]) * p.eval_w + r_y[0] * eval_x;
        let [a, b, c] = m.evaluate(&r_x, &r_y);
        if claim_inner != (a + r * b + r * r * c) * eval_z {
            return Err(NovaError::InvalidSumcheckProof);
        }
        tr.absorb(b"w", &[p.eval_w].as_slice());

        // W at r_y[1..] and E at r_x, batched into one opening
        let claims = [(*u.comm_W(), r_y[1..].to_vec(), p.eval_w), (*u.comm_E(), r_x, p.eval_e)];
        let (comm, point, eval) = batch_claims::<E>(&claims, &mut tr, &p.sc_batch, &p.evals_batch)?;
        EE::verify(&self.ee, &mut tr, &comm, &point, &eval, &p.eval_arg)
    }

    /// The matrices' non-zeros (A, B and C together).
    pub fn non_zeros(&self) -> usize {
        self.matrices.abc.iter().map(|m| m.cols.len()).sum()
    }
}

/// Spartan's batching of evaluation claims (C, x, e) of different sizes into
/// one at a shared point: a sum-check over Σ ρⁱ·eq(xᵢ, ·)·Pᵢ, then the
/// claims joined by powers of c, each scaled by L₀ of the point's prefix it
/// does not read.
fn batch_claims<E: Engine + 'static>(
    claims: &[Claim<E>],
    tr: &mut E::TE,
    sc: &SumcheckProof<E>,
    evals: &[E::Scalar],
) -> std::result::Result<Claim<E>, NovaError> {
    if evals.len() != claims.len() {
        return Err(NovaError::InvalidInputLength);
    }
    let rho = tr.squeeze(b"r")?;
    let rhos = powers(rho, claims.len());
    let rounds: Vec<usize> = claims.iter().map(|c| c.1.len()).collect();
    let max = rounds.iter().copied().max().unwrap_or(0);
    let es: Vec<E::Scalar> = claims.iter().map(|c| c.2).collect();
    let (fin, r) = sc.verify_batch(&es, &rounds, &rhos, 2, tr)?;
    let expected: E::Scalar = claims
        .iter()
        .zip(evals.iter().zip(&rhos))
        .map(|(cl, (e, rho))| EqPolynomial::new(r[max - cl.1.len()..].to_vec()).evaluate(&cl.1) * e * rho)
        .sum();
    if fin != expected {
        return Err(NovaError::InvalidSumcheckProof);
    }
    tr.absorb(b"l", &evals);
    let c = tr.squeeze(b"c")?;
    let cs = powers(c, claims.len());
    let mut eval = E::Scalar::ZERO;
    for ((cl, e), ci) in claims.iter().zip(evals).zip(&cs) {
        let lagrange: E::Scalar = r[..max - cl.1.len()].iter().map(|x| E::Scalar::ONE - x).product();
        eval += lagrange * e * ci;
    }
    let terms: Vec<(Commitment<E>, E::Scalar)> = claims.iter().zip(&cs).map(|(cl, ci)| (cl.0, *ci)).collect();
    let comm = crate::sums::combine::<E>(&terms);
    Ok((comm, r, eval))
}

fn powers<F: Field>(s: F, n: usize) -> Vec<F> {
    std::iter::successors(Some(F::ONE), |p| Some(*p * s)).take(n).collect()
}

/// A padded shape's matrices A, B, C (module header). In memory each is
/// rows of (column, index into `values`); on disk each is one byte string:
/// per row its length, per entry the zig-zag varint of its column less the
/// last entry's and the varint of its value's index.
pub struct Matrices<F> {
    num_cons: usize,
    num_vars: usize,
    num_io: usize,
    // distinct values; 0 and 1 are ONE and −ONE, the cheap ones
    values: Vec<F>,
    // the columns the entries below read, increasing
    used: Vec<u32>,
    // every entry not in a block, its column an index into `used`
    abc: [Csr; 3],
    blocks: Vec<Block>,
}

/// One matrix's rows: `rows[i]`'s entries are `starts[i]..starts[i + 1]`
/// (every row while a key is made; read from a key, the rows with entries).
#[derive(Default)]
struct Csr {
    rows: Vec<u32>,
    starts: Vec<u32>,
    cols: Vec<u32>,
    vals: Vec<u32>,
}

/// A group of U = 2ᵏ units' rows ([`RowGroups`]): unit u's i-th row is
/// base + i·U + u. An entry at the same place of row i in every unit, with
/// the same value, is written once, its column a *class*: the U columns
/// (one a unit) it reads. So Σᵤ eq(r_x, base + i·U + u)·eq(r_y, class[u])
/// = eq(r_x's high bits, base/U + i)·Σᵤ eq(r_x's low k bits, u)·eq(r_y, class[u]):
/// one unit's entries and one sum a class, not U units' entries.
struct Block {
    log_u: u32,
    base: usize,
    rows: usize,
    // U columns a class
    classes: Vec<u32>,
    // `rows` rows each, a column being a class
    abc: [Csr; 3],
}

impl Csr {
    /// Rows `rows` of the U = `u` units from `base`, each entry at the same
    /// place with the same value in every unit, as block rows (columns:
    /// classes, interned in `classes`); marks the entries it takes.
    fn gather(
        &self,
        (base, u, rows): (usize, usize, usize),
        classes: &mut (Vec<u32>, std::collections::HashMap<Vec<u32>, u32>),
        taken: &mut [bool],
    ) -> Csr {
        let mut out = Csr { starts: vec![0], rows: (0..rows as u32).collect(), ..Default::default() };
        for i in 0..rows {
            let at: Vec<(usize, usize)> = (0..u)
                .map(|x| {
                    let r = base + i * u + x;
                    (self.starts[r] as usize, self.starts[r + 1] as usize)
                })
                .collect();
            let len = at[0].1 - at[0].0;
            if at.iter().all(|(a, b)| b - a == len) {
                for p in 0..len {
                    let v = self.vals[at[0].0 + p];
                    if at.iter().any(|(a, _)| self.vals[a + p] != v) {
                        continue;
                    }
                    let class: Vec<u32> = at.iter().map(|(a, _)| self.cols[a + p]).collect();
                    let next = classes.1.len() as u32;
                    let id = *classes.1.entry(class.clone()).or_insert_with(|| {
                        classes.0.extend_from_slice(&class);
                        next
                    });
                    out.cols.push(id);
                    out.vals.push(v);
                    for (a, _) in &at {
                        taken[a + p] = true;
                    }
                }
            }
            out.starts.push(out.cols.len() as u32);
        }
        out
    }

    /// The rows without the entries marked.
    fn without(&self, taken: &[bool]) -> Csr {
        let mut out = Csr { starts: vec![0], rows: self.rows.clone(), ..Default::default() };
        for w in self.starts.windows(2) {
            let row = w[0] as usize..w[1] as usize;
            for ((c, v), t) in self.cols[row.clone()].iter().zip(&self.vals[row.clone()]).zip(&taken[row]) {
                if !t {
                    out.cols.push(*c);
                    out.vals.push(*v);
                }
            }
            out.starts.push(out.cols.len() as u32);
        }
        out
    }
}

/// What a block's class costs, in additions (as [`cost`]): nothing for
/// one column read by every unit, two multiplications for U consecutive
/// columns from a multiple of U (the units' own variables laid side by
/// side, [`crate::cs::ColumnOrder`]), else one a unit and one more.
fn class_cost(c: &[u32]) -> usize {
    if c.iter().all(|x| *x == c[0]) {
        0
    } else if interleaved(c) {
        8
    } else {
        4 * c.len() + 4
    }
}

/// Whether a class is U consecutive columns from a multiple of U.
fn interleaved(c: &[u32]) -> bool {
    (c[0] as usize).is_multiple_of(c.len()) && c.iter().enumerate().all(|(u, x)| *x as usize == c[0] as usize + u)
}

/// What evaluating an entry costs, in additions: a ±1 adds, another value
/// multiplies (≈ 4 additions with its table lookup).
fn cost(v: u32) -> usize {
    if v < 2 {
        1
    } else {
        4
    }
}

/// Rows a task of the matrices' evaluation takes.
const CHUNK: usize = 4096;

/// The largest padded shape a key may declare (2²⁸ rows: far past any fold
/// zkstep makes, and a bound on what a hostile key can make the verifier allocate).
const MAX_LOG: u32 = 28;

impl<F: PrimeField + Serialize + DeserializeOwned> Matrices<F> {
    fn of<E: Engine<Scalar = F>>(s: &R1CSShape<E>, groups: &RowGroups) -> Result<Self> {
        let mut values = vec![F::ONE, -F::ONE];
        let mut index = std::collections::HashMap::<[u8; 32], u32>::new();
        let key = |v: &F| {
            let mut k = [0u8; 32];
            let repr = v.to_repr();
            let b = repr.as_ref();
            k[..b.len().min(32)].copy_from_slice(&b[..b.len().min(32)]);
            k
        };
        index.insert(key(&F::ONE), 0);
        index.insert(key(&-F::ONE), 1);
        let mut csr = |m: &SparseMatrix<F>| -> Result<Csr> {
            let mut starts = Vec::with_capacity(m.indptr.len());
            for p in &m.indptr {
                starts.push(u32::try_from(*p).map_err(internal)?);
            }
            let cols = m.indices.iter().map(|c| u32::try_from(*c).map_err(internal)).collect::<Result<Vec<_>>>()?;
            let vals = m
                .data
                .iter()
                .map(|v| {
                    let n = values.len() as u32;
                    *index.entry(key(v)).or_insert_with(|| {
                        values.push(*v);
                        n
                    })
                })
                .collect();
            Ok(Csr { rows: (0..starts.len() as u32 - 1).collect(), starts, cols, vals })
        };
        let mut abc = [csr(s.A())?, csr(s.B())?, csr(s.C())?];
        let mut blocks = vec![];
        for (base, u, rows) in groups.placed() {
            if base + u * rows > s.num_cons() {
                return Err(internal("row groups past the shape's rows"));
            }
            let mut classes = (vec![], std::collections::HashMap::new());
            let mut taken: Vec<Vec<bool>> = abc.iter().map(|m| vec![false; m.cols.len()]).collect();
            let block: Vec<Csr> =
                abc.iter().zip(&mut taken).map(|(m, t)| m.gather((base, u, rows), &mut classes, t)).collect();
            // kept only where one unit's entries and rows and the classes
            // cost clearly less than every unit's entries and rows (a row:
            // one multiplication a matrix; measured, two units of π_merge
            // at N = 64 cost more than the cost below says)
            let once: usize = block.iter().flat_map(|m| m.vals.iter().map(|v| cost(*v))).sum::<usize>() + 12 * rows;
            let varying: usize = classes.0.chunks(u).map(class_cost).sum();
            if 4 * (once + varying) >= 3 * once * u {
                continue;
            }
            for (m, t) in abc.iter_mut().zip(&taken) {
                *m = m.without(t);
            }
            let [a, b, c]: [Csr; 3] = block.try_into().map_err(|_| internal("three matrices"))?;
            blocks.push(Block { log_u: u.trailing_zeros(), base, rows, classes: classes.0, abc: [a, b, c] });
        }
        // the remaining entries read columns through the list of those they read
        let mut used: Vec<u32> = abc.iter().flat_map(|m| m.cols.iter().copied()).collect();
        used.sort_unstable();
        used.dedup();
        let mut at = vec![0u32; s.num_vars() + 1 + s.num_io()];
        for (i, c) in used.iter().enumerate() {
            at[*c as usize] = i as u32;
        }
        for m in &mut abc {
            for c in &mut m.cols {
                *c = at[*c as usize];
            }
        }
        Ok(Matrices {
            num_cons: s.num_cons(),
            num_vars: s.num_vars(),
            num_io: s.num_io(),
            values,
            used,
            abc,
            blocks,
        })
    }

    /// Ã(r_x, r_y), B̃(r_x, r_y), C̃(r_x, r_y): one pass over the non-zeros.
    ///
    /// No table of 2·num_vars values for eq(r_y, ·): r_y's first variable
    /// picks the half, and the second half holds only u and x, so one table
    /// of eq(r_y[1..], ·) serves both (a column c ≥ num_vars reads entry
    /// c − num_vars) and each row keeps two sums, scaled by 1 − r_y[0] and
    /// r_y[0] once at the end. Nor one of num_cons values for eq(r_x, ·):
    /// a row's is eq(high bits)·eq(low bits), two tables of ≈ √num_cons.
    fn evaluate(&self, r_x: &[F], r_y: &[F]) -> [F; 3] {
        if r_y.is_empty() {
            return [F::ZERO; 3];
        }
        let split = r_x.len() / 2;
        let nv = self.num_vars;
        let ((hi, lo), eq_y) = rayon::join(
            || {
                rayon::join(
                    || EqPolynomial::evals_from_points(&r_x[..split]),
                    || EqPolynomial::evals_from_points(&r_x[split..]),
                )
            },
            || EqY::new(r_y, nv),
        );
        // eq(r_y, ·) at the columns the plain entries read
        let y: Vec<F> = self.used.par_iter().map(|c| eq_y.at(*c as usize)).collect();
        // a row's eq(r_x, ·): eq(high bits)·eq(low bits)
        let bits = lo.len().trailing_zeros();
        let plain = |m: &Csr| -> F {
            // chunks of rows in order: a row's sum times eq(low bits), the
            // rows' total times eq(high bits) once their high bits change
            let n = m.rows.len();
            (0..n.div_ceil(CHUNK))
                .into_par_iter()
                .map(|c| {
                    let (mut total, mut part, mut high) = (F::ZERO, F::ZERO, usize::MAX);
                    for i in c * CHUNK..((c + 1) * CHUNK).min(n) {
                        let mut acc = F::ZERO;
                        for k in m.starts[i] as usize..m.starts[i + 1] as usize {
                            let v = y[m.cols[k] as usize];
                            match m.vals[k] {
                                0 => acc += v,
                                1 => acc -= v,
                                x => acc += self.values[x as usize] * v,
                            }
                        }
                        let row = m.rows[i] as usize;
                        if row >> bits != high {
                            if high != usize::MAX {
                                total += part * hi[high];
                            }
                            (part, high) = (F::ZERO, row >> bits);
                        }
                        part += acc * lo[row & (lo.len() - 1)];
                    }
                    if high != usize::MAX {
                        total += part * hi[high];
                    }
                    total
                })
                .sum()
        };
        let mut out = [plain(&self.abc[0]), plain(&self.abc[1]), plain(&self.abc[2])];
        for b in &self.blocks {
            let e = b.evaluate(r_x, r_y, &eq_y, &hi, &self.values);
            for (o, v) in out.iter_mut().zip(e) {
                *o += v;
            }
        }
        out
    }
}

/// eq(r_y, c) for a column c of z = (W, u, X), one multiplication a
/// column: r_y[0] picks the half (W, or u and X from num_vars on), and
/// eq(r_y[1..], ·) is eq(its high bits)·eq(its low bits), two tables of
/// ≈ √num_vars values, the high one scaled by 1 − r_y[0] and by r_y[0].
struct EqY<F> {
    nv: usize,
    bits: usize,
    high: [Vec<F>; 2],
    low: Vec<F>,
}

impl<F: PrimeField> EqY<F> {
    fn new(r_y: &[F], nv: usize) -> Self {
        let r_w = &r_y[1..];
        let split = r_w.len() / 2;
        let h = EqPolynomial::evals_from_points(&r_w[..split]);
        let low = EqPolynomial::evals_from_points(&r_w[split..]);
        let (a, b) = (F::ONE - r_y[0], r_y[0]);
        EqY {
            nv,
            bits: r_w.len() - split,
            high: [h.iter().map(|e| a * e).collect(), h.iter().map(|e| b * e).collect()],
            low,
        }
    }

    #[inline]
    fn at(&self, c: usize) -> F {
        let half = usize::from(c >= self.nv);
        let c = c - half * self.nv;
        self.high[half][c >> self.bits] * self.low[c & ((1 << self.bits) - 1)]
    }
}

impl Block {
    /// The block's share of Ã, B̃, C̃ at (r_x, r_y) (the struct's header):
    /// `eq_y` gives eq(r_y, ·), `hi` is eq(r_x[..n/2], ·).
    fn evaluate<F: PrimeField>(&self, r_x: &[F], r_y: &[F], eq_y: &EqY<F>, hi: &[F], values: &[F]) -> [F; 3] {
        let nv = eq_y.nv;
        let (n, k) = (r_x.len(), self.log_u as usize);
        let u = 1usize << k;
        // eq(r_x[..n − k], m) for the block's rows m = base/U + i
        let split = n / 2;
        let first = self.base >> k;
        let high: Vec<F> = if n - k >= split {
            let lo = EqPolynomial::evals_from_points(&r_x[split..n - k]);
            let bits = n - k - split;
            (first..first + self.rows).map(|m| hi[m >> bits] * lo[m & ((1 << bits) - 1)]).collect()
        } else {
            let t = EqPolynomial::evals_from_points(&r_x[..n - k]);
            t[first..first + self.rows].to_vec()
        };
        let low = EqPolynomial::evals_from_points(&r_x[n - k..]);
        // a class of U consecutive columns from c₀ = a multiple of U:
        // Σᵤ eq(r_x's low bits, u)·eq(r_y', c₀ + u) = g·eq(r_y', c₀), with
        // g = Πᵦ (x_b·y_b + (1 − x_b)(1 − y_b)) / Πᵦ (1 − y_b) over the k
        // low bits x of r_x and y of r_y' = r_y[1..] (eq(r_y', c₀) has
        // eq(y, 0) = Πᵦ (1 − y_b) for its low bits)
        let m = nv.trailing_zeros() as usize;
        let r_w = &r_y[1..];
        let g: Option<F> = (k <= m && r_w.len() == m)
            .then(|| {
                let (x, y) = (&r_x[n - k..], &r_w[m - k..]);
                let f: F = x.iter().zip(y).map(|(a, b)| *a * b + (F::ONE - a) * (F::ONE - b)).product();
                let z: F = y.iter().map(|b| F::ONE - b).product();
                Option::<F>::from(z.invert()).map(|zi| f * zi)
            })
            .flatten();
        let y = |c: u32| eq_y.at(c as usize);
        // a class's Σᵤ eq(low, u)·eq(r_y, class[u]); Σᵤ eq(low, u) = 1
        let t: Vec<F> = self
            .classes
            .par_chunks(u)
            .map(|c| {
                if c.iter().all(|x| *x == c[0]) {
                    return y(c[0]);
                }
                if let Some(g) = g.filter(|_| interleaved(c)) {
                    return g * y(c[0]);
                }
                c.iter().zip(&low).map(|(col, e)| *e * y(*col)).sum()
            })
            .collect();
        let one = |m: &Csr| -> F {
            m.rows
                .par_iter()
                .zip(m.starts.par_windows(2))
                .map(|(row, w)| {
                    let h = high[*row as usize];
                    let mut acc = F::ZERO;
                    for k in w[0] as usize..w[1] as usize {
                        let v = t[m.cols[k] as usize];
                        match m.vals[k] {
                            0 => acc += v,
                            1 => acc -= v,
                            x => acc += values[x as usize] * v,
                        }
                    }
                    acc * h
                })
                .sum()
        };
        [one(&self.abc[0]), one(&self.abc[1]), one(&self.abc[2])]
    }
}

impl<F: PrimeField + Serialize> Serialize for Matrices<F> {
    fn serialize<Z: Serializer>(&self, s: Z) -> std::result::Result<Z::Ok, Z::Error> {
        let enc = |m: &Csr| {
            let mut out = Vec::with_capacity(m.cols.len() * 3 + m.starts.len());
            let (mut last, mut next_row) = (0i64, 0u32);
            // the rows with entries: the gap since the last such row, the length
            for (row, w) in m.rows.iter().zip(m.starts.windows(2)) {
                if w[0] == w[1] {
                    continue;
                }
                varint(&mut out, u64::from(*row - next_row));
                next_row = row + 1;
                varint(&mut out, u64::from(w[1] - w[0]));
                for k in w[0] as usize..w[1] as usize {
                    let c = i64::from(m.cols[k]);
                    varint(&mut out, zigzag(c - last));
                    varint(&mut out, u64::from(m.vals[k]));
                    last = c;
                }
            }
            Raw(out)
        };
        let classes = |c: &[u32]| {
            let mut out = Vec::with_capacity(c.len() * 2);
            let mut last = 0i64;
            for x in c {
                varint(&mut out, zigzag(i64::from(*x) - last));
                last = i64::from(*x);
            }
            Raw(out)
        };
        let blocks: Vec<_> = self
            .blocks
            .iter()
            .map(|b| {
                (b.log_u, b.base as u64, b.rows as u64, classes(&b.classes), [enc(&b.abc[0]), enc(&b.abc[1]), enc(&b.abc[2])])
            })
            .collect();
        let mut used = Vec::with_capacity(self.used.len() * 2);
        let mut last = 0u32;
        for c in &self.used {
            varint(&mut used, u64::from(c - last));
            last = *c;
        }
        (
            self.num_cons as u64,
            self.num_vars as u64,
            self.num_io as u64,
            &self.values,
            Raw(used),
            [enc(&self.abc[0]), enc(&self.abc[1]), enc(&self.abc[2])],
            blocks,
        )
            .serialize(s)
    }
}

/// A [`Matrices`] as written: rows, variables, inputs, the value table,
/// the columns the plain entries read (varint deltas, increasing), the
/// three matrices' bytes (columns: indices into that list) and the blocks
/// (log₂ U, first row, rows a unit, the classes' columns as zig-zag varint
/// deltas, the three matrices' bytes with classes for columns).
type Parts<'a, F> = (u64, u64, u64, Vec<F>, Bytes<'a>, [Bytes<'a>; 3], Vec<BlockParts<'a>>);
type BlockParts<'a> = (u32, u64, u64, Bytes<'a>, [Bytes<'a>; 3]);

/// A byte string, borrowed from the input where the deserializer can lend
/// it (postcard's `from_bytes` can: a key's matrices are not copied).
struct Bytes<'a>(std::borrow::Cow<'a, [u8]>);

impl<'de> Deserialize<'de> for Bytes<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Bytes<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_borrowed_bytes<Er: de::Error>(self, v: &'de [u8]) -> std::result::Result<Bytes<'de>, Er> {
                Ok(Bytes(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_bytes<Er: de::Error>(self, v: &[u8]) -> std::result::Result<Bytes<'de>, Er> {
                Ok(Bytes(std::borrow::Cow::Owned(v.to_vec())))
            }
            fn visit_byte_buf<Er: de::Error>(self, v: Vec<u8>) -> std::result::Result<Bytes<'de>, Er> {
                Ok(Bytes(std::borrow::Cow::Owned(v)))
            }
        }
        d.deserialize_bytes(V)
    }
}

impl<'de, F: PrimeField + DeserializeOwned> Deserialize<'de> for Matrices<F> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Matrices::decode(Parts::<'de, F>::deserialize(d)?).map_err(de::Error::custom)
    }
}

impl<F: PrimeField> Matrices<F> {
    /// The matrices from their parts as written, every entry checked.
    fn decode((nc, nv, ni, values, used, abc, blocks): Parts<'_, F>) -> std::result::Result<Self, String> {
        let bad = |what: &str| format!("Spartan's matrices: {what}");
        let pow2 = |n: u64| n.is_power_of_two() && n.trailing_zeros() <= MAX_LOG;
        // a regular padded shape: its IO (with u) within the variables'
        // second half, the columns Spartan's r_y reads
        if !pow2(nc) || !pow2(nv) || (ni + 1).next_power_of_two() * 2 > nv {
            return Err(bad(&format!("{nc} rows, {nv} variables, {ni} inputs")));
        }
        // verifying allocates an eq table of nv values: a padded shape uses
        // at least half its variables, each in an entry of at least two
        // bytes, so more variables than bytes is no real key (and must not
        // make the verifier allocate gigabytes)
        let bytes: u64 = abc.iter().map(|m| m.0.len() as u64).sum::<u64>()
            + used.0.len() as u64
            + blocks.iter().map(|b| b.3 .0.len() as u64 + b.4.iter().map(|m| m.0.len() as u64).sum::<u64>()).sum::<u64>();
        if nv > bytes.max(1 << 10) {
            return Err(bad(&format!("{nv} variables in {bytes} bytes of matrices")));
        }
        if values.len() < 2 || values[0] != F::ONE || values[1] != -F::ONE || values.len() > u32::MAX as usize {
            return Err(bad("a value table that does not start with 1 and −1"));
        }
        let width = nv + 1 + ni;
        let values_len = values.len() as u64;
        let used = decode_used(&used.0, width).map_err(|e| bad(&e))?;
        // the blocks' places in order (groups in order, each at a multiple
        // of its U, within the rows), then every matrix decoded side by side
        let mut end = 0u64;
        for &(k, base, rows, _, _) in &blocks {
            let fits = (1..=MAX_LOG).contains(&k)
                && rows > 0
                && base >= end
                && base % (1 << k) == 0
                && rows.checked_shl(k).and_then(|r| r.checked_add(base)).is_some_and(|e| e <= nc);
            if !fits {
                return Err(bad(&format!("a block of 2^{k} units of {rows} rows at row {base}")));
            }
            end = base + (rows << k);
        }
        let three = |dec: &(dyn Fn(&Bytes<'_>) -> std::result::Result<Csr, String> + Sync), m: &[Bytes<'_>; 3]| {
            let (a, (b, c)) = rayon::join(|| dec(&m[0]), || rayon::join(|| dec(&m[1]), || dec(&m[2])));
            Ok::<_, String>([a?, b?, c?])
        };
        let block = |(k, base, rows, classes, m): BlockParts<'_>| -> std::result::Result<Block, String> {
            let classes = decode_classes(&classes.0, 1 << k, width).map_err(|e| bad(&e))?;
            let n = (classes.len() >> k) as u64;
            let dec = |b: &Bytes<'_>| decode_csr(&b.0, rows, n, values_len).map_err(|e| bad(&format!("a block: {e}")));
            Ok(Block {
                log_u: k,
                base: base as usize,
                rows: rows as usize,
                classes,
                abc: three(&dec, &m)?,
            })
        };
        let plain = |b: &Bytes<'_>| decode_csr(&b.0, nc, used.len() as u64, values_len).map_err(|e| bad(&e));
        let (abc, blocks) = rayon::join(|| three(&plain, &abc), || blocks.into_par_iter().map(block).collect::<Vec<_>>());
        // the first error in the order written
        let abc = abc?;
        let blocks = blocks.into_iter().collect::<std::result::Result<Vec<_>, String>>()?;
        Ok(Matrices {
            num_cons: nc as usize,
            num_vars: nv as usize,
            num_io: ni as usize,
            used,
            abc,
            values,
            blocks,
        })
    }
}

/// A matrix of `rows` rows as written (its rows with entries, each as the
/// gap since the last such row, its length and its entries), every row
/// within `rows`, every entry within `width` columns and the value table.
fn decode_csr(b: &[u8], rows: u64, width: u64, values_len: u64) -> std::result::Result<Csr, String> {
    let bad = |what: &str| what.to_string();
    let mut r = Reader { b, at: 0 };
    // a row with entries takes at least three bytes, an entry two
    let (mut row_list, mut starts) = (Vec::with_capacity(b.len() / 3), Vec::with_capacity(b.len() / 3 + 1));
    let (mut cols, mut vals) = (Vec::with_capacity(b.len() / 2), Vec::with_capacity(b.len() / 2));
    starts.push(0u32);
    let (mut last, mut next_row) = (0i64, 0u64);
    while r.at < b.len() {
        let gap = r.next().ok_or_else(|| bad("truncated"))?;
        let row = next_row.checked_add(gap).filter(|row| *row < rows).ok_or_else(|| bad("a row past the matrix"))?;
        next_row = row + 1;
        let n = r.next().ok_or_else(|| bad("truncated"))?;
        if n == 0 || n > (b.len() - r.at) as u64 / 2 {
            return Err(bad("a row without entries, or longer than its bytes"));
        }
        for _ in 0..n {
            let dc = r.next().ok_or_else(|| bad("truncated"))?;
            let c = last + unzigzag(dc);
            let v = r.next().ok_or_else(|| bad("truncated"))?;
            if c < 0 || c as u64 >= width || v >= values_len {
                return Err(bad("an entry outside the matrix or the value table"));
            }
            cols.push(c as u32);
            vals.push(v as u32);
            last = c;
        }
        row_list.push(row as u32);
        starts.push(cols.len() as u32);
    }
    Ok(Csr { rows: row_list, starts, cols, vals })
}

/// The columns the plain entries read, as written: increasing, each
/// within `width`.
fn decode_used(b: &[u8], width: u64) -> std::result::Result<Vec<u32>, String> {
    let mut r = Reader { b, at: 0 };
    let mut out: Vec<u32> = Vec::with_capacity(b.len());
    let mut next = 0u64;
    while r.at < b.len() {
        let d = r.next().ok_or("a column of the list truncated")?;
        let c = next.checked_add(d).filter(|c| *c < width && (out.is_empty() || d > 0));
        let c = c.ok_or("the list of columns read: not increasing within the matrix")?;
        out.push(c as u32);
        next = c;
    }
    Ok(out)
}

/// A block's classes as written: U columns a class, each within `width`.
fn decode_classes(b: &[u8], u: usize, width: u64) -> std::result::Result<Vec<u32>, String> {
    let mut r = Reader { b, at: 0 };
    let mut out = Vec::with_capacity(b.len());
    let mut last = 0i64;
    while r.at < b.len() {
        let c = last + unzigzag(r.next().ok_or("a class's column truncated")?);
        if c < 0 || c as u64 >= width {
            return Err("a class's column outside the matrix".into());
        }
        out.push(c as u32);
        last = c;
    }
    if out.len() % u != 0 {
        return Err(format!("{} classes' columns, not a multiple of {u}", out.len()));
    }
    Ok(out)
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    /// The next varint (at most 10 bytes; None past the end or on an overlong one).
    #[inline]
    fn next(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let byte = *self.b.get(self.at)?;
            self.at += 1;
            if shift == 63 && byte > 1 {
                return None;
            }
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Some(v);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::provider::{Bn256EngineKZG, GrumpkinEngine};
    use nova_snark::r1cs::RelaxedR1CSWitness;

    type E1 = Bn256EngineKZG;
    type E2 = GrumpkinEngine;
    type Ee1 = nova_snark::provider::mercury::EvaluationEngine<E1>;
    type Ee2 = crate::ipa::FastIpa<E2>;
    type Sp1 = snark::RelaxedR1CSSNARK<E1, Ee1>;
    type Sp2 = snark::RelaxedR1CSSNARK<E2, Ee2>;
    type Sp<E, EE> = snark::RelaxedR1CSSNARK<E, EE>;

    /// A shape of `n` constraints over `n + 3` variables and 2 inputs whose
    /// coefficients repeat (1, −1, 2, 10⁹) and do not (the row's index).
    fn shape<E: Engine>(n: usize) -> R1CSShape<E> {
        let (vars, io) = (n + 3, 2);
        let coeff = |k: usize| match k % 5 {
            0 => E::Scalar::ONE,
            1 => -E::Scalar::ONE,
            2 => E::Scalar::from(2),
            3 => E::Scalar::from(1_000_000_000),
            _ => E::Scalar::from(k as u64 + 7),
        };
        let mut m = [vec![], vec![], vec![]];
        for i in 0..n {
            m[0].push((i, i, coeff(i)));
            m[0].push((i, vars + 1, coeff(i + 1)));
            m[1].push((i, (i + 1) % vars, coeff(i + 2)));
            m[2].push((i, vars, coeff(i + 3)));
            m[2].push((i, (i + 2) % vars, coeff(i + 4)));
        }
        for row in &mut m {
            row.sort_by_key(|e| (e.0, e.1));
        }
        let sm = |v: &Vec<(usize, usize, E::Scalar)>| SparseMatrix::new(v, n, vars + 1 + io);
        R1CSShape::new(n, vars, io, sm(&m[0]), sm(&m[1]), sm(&m[2])).unwrap()
    }

    struct Case<E: Engine, S: Compressor<E>> {
        s: R1CSShape<E>,
        ck: CommitmentKey<E>,
        pk: S::ProverKey,
        vk: S::Vk,
        u: RelaxedR1CSInstance<E>,
        w: RelaxedR1CSWitness<E>,
    }

    fn case<E: Engine, S: Compressor<E>>(n: usize) -> Case<E, S> {
        let s = shape::<E>(n);
        let ck = R1CSShape::commitment_key(&[&s], &[&*S::ck_floor()]).unwrap();
        let (pk, vk) = S::keys(&ck, &s, &RowGroups::default()).unwrap();
        let (u, w) = random(&s, &ck);
        Case { s, ck, pk, vk, u, w }
    }

    /// A random satisfying pair, its commitments without blinds (as Spartan proves them).
    fn random<E: Engine>(s: &R1CSShape<E>, ck: &CommitmentKey<E>) -> (RelaxedR1CSInstance<E>, RelaxedR1CSWitness<E>) {
        let (u, w) = s.sample_random_instance_witness(ck).unwrap();
        let (w, r_w, r_e) = w.derandomize();
        (u.derandomize(&E::CE::derand_key(ck), &r_w, &r_e), w)
    }

    fn bytes<T: Serialize>(t: &T) -> Vec<u8> {
        postcard::to_stdvec(t).unwrap()
    }

    /// The honest proof is accepted by nova-snark's verifier and by ours;
    /// each edit of the proof, another instance, another digest and another
    /// coefficient are rejected by ours (and the proof edits by nova-snark's).
    fn agrees<E: Engine + 'static, EE: EeStore<E>>(n: usize) {
        let c = case::<E, snark::RelaxedR1CSSNARK<E, EE>>(n);
        let p = snark::RelaxedR1CSSNARK::<E, EE>::prove(&c.ck, &c.pk, &c.s, &c.u, &c.w).unwrap();
        let (_, nova_vk) = snark::RelaxedR1CSSNARK::<E, EE>::setup(&c.ck, &c.s).unwrap();
        p.verify(&nova_vk, &c.u).unwrap();
        // the parts write the very bytes of the proof
        let parts: ProofParts<E, EE> = postcard::from_bytes(&bytes(&p)).unwrap();
        assert_eq!(bytes(&parts), bytes(&p));
        let p = p.into_proof().unwrap();
        assert_eq!(bytes(&p), bytes(&parts));
        Sp::<E, EE>::check(&p, &c.vk, &c.u).unwrap();

        type Edit<E, EE> = Box<dyn Fn(&mut ProofParts<E, EE>)>;
        let edits: Vec<(&str, Edit<E, EE>)> = vec![
            ("eval_W", Box::new(|q| q.eval_w += E::Scalar::ONE)),
            ("eval_E", Box::new(|q| q.eval_e += E::Scalar::ONE)),
            ("Az", Box::new(|q| q.claims_outer.0 += E::Scalar::ONE)),
            ("Cz", Box::new(|q| q.claims_outer.2 += E::Scalar::ONE)),
            ("a batched evaluation", Box::new(|q| q.evals_batch[1] += E::Scalar::ONE)),
            ("one batched evaluation too few", Box::new(|q| {
                q.evals_batch.pop();
            })),
        ];
        for (what, edit) in edits {
            let mut q: ProofParts<E, EE> = postcard::from_bytes(&bytes(&p)).unwrap();
            edit(&mut q);
            assert!(c.vk.verify(&q, &c.u).is_err(), "{what} edited: accepted");
            if let Ok(theirs) = postcard::from_bytes::<snark::RelaxedR1CSSNARK<E, EE>>(&bytes(&q)) {
                if what != "one batched evaluation too few" {
                    assert!(theirs.verify(&nova_vk, &c.u).is_err(), "{what} edited: nova-snark accepts");
                }
            }
        }
        // a sum-check's round polynomial: one byte of the proof's first coefficient
        let mut b = bytes(&p);
        b[2] ^= 1;
        if let Ok(q) = postcard::from_bytes::<ProofParts<E, EE>>(&b) {
            assert!(c.vk.verify(&q, &c.u).is_err(), "a sum-check edited: accepted");
        }
        let (other, _) = random(&c.s, &c.ck);
        assert!(Sp::<E, EE>::check(&p, &c.vk, &other).is_err(), "another instance accepted");

        let mut vk: SpartanVk<E, EE> = postcard::from_bytes(&bytes(&c.vk)).unwrap();
        assert_eq!(bytes(&vk), bytes(&c.vk), "the key reads back as itself");
        vk.digest += E::Scalar::ONE;
        assert!(Sp::<E, EE>::check(&p, &vk, &c.u).is_err(), "another digest accepted");
        let mut vk: SpartanVk<E, EE> = postcard::from_bytes(&bytes(&c.vk)).unwrap();
        let last = vk.matrices.values.len() - 1;
        vk.matrices.values[last] += E::Scalar::ONE;
        assert!(Sp::<E, EE>::check(&p, &vk, &c.u).is_err(), "another coefficient accepted");
    }

    #[test]
    fn agrees_with_nova_snark_on_the_primary() {
        agrees::<E1, Ee1>(40);
    }

    #[test]
    fn agrees_with_nova_snark_on_the_secondary() {
        agrees::<E2, Ee2>(40);
    }

    /// The compact form holds the distinct values once: a key of many
    /// repeated coefficients is a few bytes an entry.
    #[test]
    fn matrices_are_a_few_bytes_an_entry() {
        let c = case::<E1, Sp1>(1000);
        let m: &Matrices<_> = &c.vk.matrices;
        let nnz: usize = m.abc.iter().map(|x| x.cols.len()).sum();
        assert_eq!(nnz, 5000);
        let own = (0..1004).filter(|k| k % 5 == 4).count();
        assert_eq!(m.values.len(), 4 + own, "1, −1, 2, 10⁹ and the rows' own values");
        let b = bytes(m);
        assert!(b.len() < 33 * m.values.len() + 4 * nnz + 3 * 1024, "{} bytes", b.len());
        let _ = case::<E2, Sp2>(8);
    }

    /// A cut, padded or edited byte string of a matrix, a value table without
    /// 1 and −1, and a shape that is not regular are refused when read.
    #[test]
    fn hostile_matrices_are_refused() {
        let c = case::<E1, Sp1>(20);
        let good = bytes(&c.vk.matrices);
        let read = |b: &[u8]| postcard::from_bytes::<Matrices<<E1 as Engine>::Scalar>>(b);
        assert!(read(&good).is_ok());
        type Parts = (u64, u64, u64, Vec<<E1 as Engine>::Scalar>, Raw, [Raw; 3], Vec<(u32, u64, u64, Raw, [Raw; 3])>);
        let parts = || -> Parts { postcard::from_bytes(&good).unwrap() };
        let refused = |p: Parts, what: &str| {
            let e = read(&bytes(&p)).err().map(|e| e.to_string());
            assert!(e.is_some(), "{what}: accepted");
        };
        let mut p = parts();
        p.5[0].0.pop();
        refused(p, "a cut matrix");
        let mut p = parts();
        p.5[1].0.push(0);
        refused(p, "a byte past the last row");
        let mut p = parts();
        p.3.swap(0, 1);
        refused(p, "−1 first");
        let mut p = parts();
        p.1 = 3;
        refused(p, "3 variables");
        let mut p = parts();
        p.0 = 1 << 40;
        refused(p, "2⁴⁰ rows");
        let mut p = parts();
        p.1 = 1 << 27;
        refused(p, "2²⁷ variables in a few kilobytes");
        let mut p = parts();
        p.2 = p.1;
        refused(p, "as many inputs as variables");
        // the list of columns read: a repeated column, one past the matrix
        let mut p = parts();
        p.4 .0.push(0);
        refused(p, "a column read twice in the list");
        let mut p = parts();
        p.4 .0.extend([0xff, 0xff, 0xff, 0x7f]);
        refused(p, "a column past the matrix in the list");
        let mut p = parts();
        p.4 .0.truncate(2);
        refused(p, "an entry past the list of columns");
        // an entry's value index past the table
        let mut p = parts();
        let k = p.5[2].0.iter().position(|b| *b != 0).unwrap();
        p.5[2].0[k + 2] = 0x7f;
        refused(p, "a value index past the table");
        assert!(read(&good[..good.len() - 1]).is_err());
    }

    /// A circuit of units ([`crate::in_unit`]): 11 units of one family
    /// (groups 8 + 2, one left) and 3 of another (2, one left), each
    /// reading its own variables, a shared one, the last unit's output (a
    /// chain), and a combination that grows a unit (rows that differ),
    /// beside rows of no unit. Returns the shape and its groups.
    fn units_shape<E: Engine>() -> (R1CSShape<E>, RowGroups) {
        use crate::cs::ShapeRecorder;
        use nova_snark::frontend::{ConstraintSystem, LinearCombination};
        type F<E> = <E as Engine>::Scalar;
        let mut cs = ShapeRecorder::<F<E>>::new(1);
        let one = ShapeRecorder::<F<E>>::one();
        let shared = cs.alloc(|| "shared", || Ok(F::<E>::ONE)).unwrap();
        let x = cs.alloc_input(|| "x", || Ok(F::<E>::ONE)).unwrap();
        let (mut prev, mut grow) = (shared, LinearCombination::zero() + shared);
        for (kind, units, extra) in [("a", 11, 8u64), ("b", 3, 2)] {
            for t in 0..units {
                crate::in_unit(kind, t, || {
                    let a = cs.alloc(|| format!("a{t}"), || Ok(F::<E>::ONE)).unwrap();
                    let b = cs.alloc(|| format!("b{t}"), || Ok(F::<E>::ONE)).unwrap();
                    cs.enforce(|| "ab", |lc| lc + a + shared, |lc| lc + (F::<E>::from(3), b), |lc| lc + prev);
                    cs.enforce(|| "grow", |lc| lc + &grow, |lc| lc + b, |lc| lc + a + x);
                    for j in 0..extra {
                        cs.enforce(
                            || format!("mix{j}"),
                            |lc| lc + (F::<E>::from(j + 7), a) + (F::<E>::from(j + 2), b) + shared,
                            |lc| lc + one,
                            |lc| lc + (F::<E>::from(j + 3), prev) - x,
                        );
                    }
                    grow = grow.clone() + a;
                    prev = b;
                });
            }
        }
        cs.enforce(|| "tail", |lc| lc + prev, |lc| lc + one, |lc| lc + shared);
        let (s, _, units) = cs.into_grouped_shape::<E>().unwrap();
        (s, units.rows)
    }

    /// Matrices with blocks evaluate as the plain ones at random points
    /// (written and read back too), hold fewer entries, and Spartan's
    /// proofs on the grouped shape verify against the grouped key.
    #[test]
    fn blocks_evaluate_as_every_units_entries() {
        let (s, groups) = units_shape::<E1>();
        assert_eq!(groups.0, vec![(3, 10), (1, 10), (1, 4)], "8 + 2 of the first family, 2 of the second");
        let padded = s.pad();
        let plain = Matrices::of(&padded, &RowGroups::default()).unwrap();
        let grouped = Matrices::of(&padded, &groups).unwrap();
        assert!(!grouped.blocks.is_empty(), "the group of 8 is kept");
        let b = &grouped.blocks[0];
        let u = 1 << b.log_u;
        assert!(b.classes.chunks(u).any(interleaved), "the units' own variables side by side");
        assert!(b.classes.chunks(u).any(|c| !interleaved(c) && c.iter().any(|x| *x != c[0])), "the chain's");
        let entries = |m: &Matrices<_>| -> usize {
            m.abc.iter().map(|x| x.cols.len()).sum::<usize>()
                + m.blocks.iter().flat_map(|b| b.abc.iter().map(|x| x.cols.len())).sum::<usize>()
        };
        assert!(entries(&grouped) * 5 < entries(&plain) * 3, "{} against {}", entries(&grouped), entries(&plain));
        let read: Matrices<_> = postcard::from_bytes(&bytes(&grouped)).unwrap();
        let mut rng = rand::thread_rng();
        let mut point = |n: usize| (0..n).map(|_| <E1 as Engine>::Scalar::random(&mut rng)).collect::<Vec<_>>();
        for _ in 0..3 {
            let r_x = point(padded.num_cons().trailing_zeros() as usize);
            let r_y = point(padded.num_vars().trailing_zeros() as usize + 1);
            let want = plain.evaluate(&r_x, &r_y);
            assert_eq!(grouped.evaluate(&r_x, &r_y), want);
            assert_eq!(read.evaluate(&r_x, &r_y), want);
        }
        // Spartan on the grouped shape against the grouped key
        let ck = R1CSShape::commitment_key(&[&s], &[&*Sp1::ck_floor()]).unwrap();
        let (pk, vk) = Sp1::keys(&ck, &s, &groups).unwrap();
        let (u, w) = random(&s, &ck);
        let p = Sp1::prove(&ck, &pk, &s, &u, &w).unwrap().into_proof().unwrap();
        Sp1::check(&p, &vk, &u).unwrap();
        let (other, _) = random(&s, &ck);
        assert!(Sp1::check(&p, &vk, &other).is_err(), "another instance accepted");
        let mut vk: SpartanVk<E1, Ee1> = postcard::from_bytes(&bytes(&vk)).unwrap();
        let b = &mut vk.matrices.blocks[0];
        let k = b.abc[0].vals.iter().position(|v| *v > 1).unwrap();
        b.abc[0].vals[k] = 1 - (b.abc[0].vals[k] % 2);
        assert!(Sp1::check(&p, &vk, &u).is_err(), "a block's value edited: accepted");
    }

    /// Blocks that overlap, sit off a multiple of their U, pass the rows,
    /// have no rows, a class past the columns or a count of columns that is
    /// not U a class, or an entry past the classes, are refused when read.
    #[test]
    fn hostile_blocks_are_refused() {
        let (s, groups) = units_shape::<E1>();
        let good = bytes(&Matrices::of(&s.pad(), &groups).unwrap());
        let read = |b: &[u8]| postcard::from_bytes::<Matrices<<E1 as Engine>::Scalar>>(b);
        assert!(read(&good).is_ok());
        type Parts = (u64, u64, u64, Vec<<E1 as Engine>::Scalar>, Raw, [Raw; 3], Vec<(u32, u64, u64, Raw, [Raw; 3])>);
        let parts = || -> Parts { postcard::from_bytes(&good).unwrap() };
        let refused = |p: Parts, what: &str| {
            assert!(read(&bytes(&p)).is_err(), "{what}: accepted");
        };
        assert!(!parts().6.is_empty());
        let mut p = parts();
        p.6[0].1 += 1;
        refused(p, "a block off a multiple of its U");
        let mut p = parts();
        p.6[0].0 = 0;
        refused(p, "a block of one unit");
        let mut p = parts();
        p.6[0].2 = 1 << 30;
        refused(p, "a block past the rows");
        let mut p = parts();
        let b = p.6[0].clone();
        p.6.push(b);
        refused(p, "two blocks on the same rows");
        let mut p = parts();
        p.6[0].3 .0.push(2);
        refused(p, "a class's column too many");
        let mut p = parts();
        p.6[0].3 .0.extend([0xfe, 0xff, 0xff, 0x7f]);
        refused(p, "a class's column past the matrix");
        let mut p = parts();
        let m = &mut p.6[0].4[0].0;
        let k = m.iter().position(|b| *b != 0).unwrap();
        m[k + 1] = 0x7e;
        refused(p, "an entry past the classes");
        let mut p = parts();
        p.6[0].4[1].0.pop();
        refused(p, "a cut block");
    }
}
