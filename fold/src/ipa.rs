//! The secondary's evaluation argument with a faster prover and verifier.
//!
//! nova-snark's IPA (`provider::ipa_pc`) folds its commitment key in every
//! round, `G'ᵢ = r⁻¹·Gᵢ + r·G_{i+m/2}`: two full scalar multiplications per
//! generator, ≈ 2n for an n-point key. For the secondary's 2¹⁴ Grumpkin
//! points that was most of a compression (≈ 7 of 10 s on 2 cores, perf).
//! [`FastIpa`] makes the same proof without folding the key: after j rounds
//! the folded generator k is `Σₜ wₜ·G_{k+t·m}` (m = n/2ʲ, w the products of
//! the round challenges and their inverses), so each round's L and R are one
//! MSM each over the original generators, with `aₖ·wₜ` as the scalars
//! (Pippenger, no per-point doublings).
//!
//! The argument the prover returns ([`Argument`]) is nova-snark's
//! `InnerProductArgument` field by field (read as decoded, never
//! re-encoded), with the very group elements nova-snark's prover computes
//! (same transcript, same L, R and â: `same_proof_as_nova_snark` checks it
//! byte for byte). [`FastIpa::verify`] checks nova-snark's equation with the
//! same transcript, its two MSMs and the key's scaling joined into one
//! check Σ = O on zkstep-pippenger (the fresh verifier's largest cost); the
//! same test checks that it decides as nova-snark's verifier does on the
//! honest argument and on edited ones. The keys are serialised as
//! nova-snark's (the prover key re-derived, the verifier key a struct of
//! the same fields), so key and proof files do not change.

use crate::commit::commit_on;
use nova_snark::errors::NovaError;
use nova_snark::provider::pedersen::{Commitment, CommitmentEngine, CommitmentKey, CommitmentKeyExtTrait};
use nova_snark::provider::traits::{DlogGroup, DlogGroupExt};
use halo2curves::CurveAffine;
use group::prime::PrimeCurveAffine;
use group::Group;
use nova_snark::traits::commitment::CommitmentTrait;
use nova_snark::spartan::polys::eq::EqPolynomial;
use nova_snark::traits::commitment::{CommitmentEngineTrait, Len};
use nova_snark::traits::evaluation::EvaluationEngineTrait;
use nova_snark::traits::{Engine, TranscriptEngineTrait, TranscriptReprTrait};
use ff::Field;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::marker::PhantomData;

/// nova-snark's IPA with a prover that never folds the commitment key.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FastIpa<E: Engine> {
    _p: PhantomData<E>,
}

/// The prover's key: the one-point key the inner product is committed
/// under, serialised as nova-snark's `ipa_pc::ProverKey` is.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct ProverKey<E: Engine<CE = CommitmentEngine<E>>>
where
    E::GE: DlogGroupExt,
{
    ck_s: CommitmentKey<E>,
}

/// What the transcript absorbs of the instance (as nova-snark's
/// `InnerProductInstance`: the commitment and the claimed value; the
/// vector b is the transcript's own point).
struct Instance<'a, E: Engine<CE = CommitmentEngine<E>>>
where
    E::GE: DlogGroupExt,
{
    comm: &'a Commitment<E>,
    eval: &'a E::Scalar,
}

impl<E: Engine<CE = CommitmentEngine<E>>> TranscriptReprTrait<E::GE> for Instance<'_, E>
where
    E::GE: DlogGroupExt,
{
    fn to_transcript_bytes(&self) -> Vec<u8> {
        [self.comm.to_transcript_bytes(), self.eval.to_transcript_bytes()].concat()
    }
}

/// The verifier's key, written as nova-snark's `ipa_pc::VerifierKey` is
/// (its fields are private): the commitment key and the one-point key of
/// the inner product.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct VerifierKey<E: Engine<CE = CommitmentEngine<E>>>
where
    E::GE: DlogGroupExt,
{
    ck_v: CommitmentKey<E>,
    ck_s: CommitmentKey<E>,
}

impl<E: Engine<CE = CommitmentEngine<E>>> VerifierKey<E>
where
    E::GE: DlogGroupExt,
{
    /// How many generators the key holds (the longest vector it checks).
    pub fn generators(&self) -> usize {
        self.ck_v.generators().len()
    }
}

/// The argument: nova-snark's `InnerProductArgument` field by field, in
/// its serde order (its fields are private), so the bytes are nova-snark's
/// (`same_proof_as_nova_snark`) and the verifier reads L, R and â as
/// they were decoded (no re-encoding, whose points' square roots cost
/// ≈ 0.5 ms a proof on Grumpkin).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Argument<E: Engine<CE = CommitmentEngine<E>>>
where
    E::GE: DlogGroupExt,
{
    // nova-snark's names, for self-describing formats (as `ProofParts`)
    #[serde(rename = "L_vec")]
    l_vec: Vec<Commitment<E>>,
    #[serde(rename = "R_vec")]
    r_vec: Vec<Commitment<E>>,
    a_hat: E::Scalar,
}

fn inner_product<F: Field>(a: &[F], b: &[F]) -> F {
    a.par_iter().zip(b.par_iter()).map(|(x, y)| *x * y).sum()
}

/// The commitment of `half` (of a vector of m) on the folded generators at
/// offset `at` of each block of m: generator k of the fold is
/// `Σₜ wₜ·key[k + t·m]`; `c` on the key's last point (r·U).
fn spread<E>(key: &CommitmentKey<E>, half: &[E::Scalar], at: usize, m: usize, w: &[E::Scalar], c: E::Scalar) -> Commitment<E>
where
    E: Engine<CE = CommitmentEngine<E>> + 'static,
    E::GE: DlogGroupExt,
{
    let n = m * w.len();
    let mut s = vec![E::Scalar::ZERO; n + 1];
    s[..n].par_chunks_mut(m).zip(w.par_iter()).for_each(|(block, wt)| {
        for (x, ak) in block[at..at + half.len()].iter_mut().zip(half) {
            *x = *ak * wt;
        }
    });
    s[n] = c;
    commit_on::<E>(key, 0, &s, &E::Scalar::ZERO)
}

/// The m folded generators themselves, as a key.
fn rebase<E>(key: &CommitmentKey<E>, m: usize, w: &[E::Scalar]) -> Result<CommitmentKey<E>, NovaError>
where
    E: Engine<CE = CommitmentEngine<E>> + 'static,
    E::GE: DlogGroupExt,
    CommitmentKey<E>: CommitmentKeyExtTrait<E>,
{
    let n = m * w.len();
    let folded: Vec<Commitment<E>> = (0..m)
        .into_par_iter()
        .map(|k| {
            let mut s = vec![E::Scalar::ZERO; n];
            for (t, wt) in w.iter().enumerate() {
                s[k + t * m] = *wt;
            }
            commit_on::<E>(key, 0, &s, &E::Scalar::ZERO)
        })
        .collect();
    CommitmentKey::<E>::reinterpret_commitments_as_ck(&folded)
}

impl<E> EvaluationEngineTrait<E> for FastIpa<E>
where
    E: Engine<CE = CommitmentEngine<E>> + 'static,
    E::GE: DlogGroupExt,
    CommitmentKey<E>: CommitmentKeyExtTrait<E>,
    <E::GE as DlogGroup>::AffineGroupElement: CurveAffine<ScalarExt = E::Scalar, Base = E::Base>,
{
    type ProverKey = ProverKey<E>;
    type VerifierKey = VerifierKey<E>;
    type EvaluationArgument = Argument<E>;

    fn setup(ck: &CommitmentKey<E>) -> Result<(Self::ProverKey, Self::VerifierKey), NovaError> {
        // the same derivation as nova-snark's setup (`same_proof_as_nova_snark`
        // compares the serialised keys)
        let ck_s = E::CE::setup(b"ipa", 1)?;
        let vk = VerifierKey {
            ck_v: ck.clone(),
            ck_s: ck_s.clone(),
        };
        Ok((ProverKey { ck_s }, vk))
    }

    fn prove(
        ck: &CommitmentKey<E>,
        pk: &Self::ProverKey,
        transcript: &mut E::TE,
        comm: &Commitment<E>,
        poly: &[E::Scalar],
        point: &[E::Scalar],
        eval: &E::Scalar,
    ) -> Result<Self::EvaluationArgument, NovaError> {
        let mut b = EqPolynomial::new(point.to_vec()).evals();
        let n = b.len();
        if poly.len() != n || ck.length() < n {
            return Err(NovaError::InvalidInputLength);
        }
        transcript.dom_sep(b"IPA");
        transcript.absorb(b"U", &Instance::<E> { comm, eval });
        let r = transcript.squeeze(b"r")?;
        // the original generators with the inner product's base r·U last
        let (ck, _) = ck.split_at(n);
        let base = pk.ck_s.scale(&r);
        let mut key = ck.combine(&base);
        let mut a = poly.to_vec();
        // w: the weights of the key's generators in a folded one
        let mut w = vec![E::Scalar::ONE];
        let (mut l_vec, mut r_vec) = (Vec::new(), Vec::new());
        while a.len() > 1 {
            let m = a.len();
            if w.len() >= m {
                // as many weights as generators left: fold the key once (m
                // MSMs of w.len() points), so later rounds' MSMs are small
                key = rebase(&key, m, &w)?.combine(&base);
                w = vec![E::Scalar::ONE];
            }
            let h = m / 2;
            let c_l = inner_product(&a[..h], &b[h..]);
            let c_r = inner_product(&a[h..], &b[..h]);
            let l = spread(&key, &a[..h], h, m, &w, c_l);
            let rr = spread(&key, &a[h..], 0, m, &w, c_r);
            transcript.absorb(b"L", &l);
            transcript.absorb(b"R", &rr);
            let r = transcript.squeeze(b"r")?;
            let r_inv = Option::<E::Scalar>::from(r.invert()).ok_or(NovaError::InternalError)?;
            let (al, ar) = a.split_at(h);
            a = al.par_iter().zip(ar).map(|(x, y)| *x * r + r_inv * y).collect();
            let (bl, br) = b.split_at(h);
            b = bl.par_iter().zip(br).map(|(x, y)| *x * r_inv + r * y).collect();
            // G'ₖ = r⁻¹·Gₖ + r·G_{k+h}: block t of m splits into 2t, 2t+1 of h
            w = w.iter().flat_map(|wt| [*wt * r_inv, *wt * r]).collect();
            l_vec.push(l);
            r_vec.push(rr);
        }
        Ok(Argument::<E> { l_vec, r_vec, a_hat: a[0] })
    }

    /// nova-snark's IPA verification (`ipa_pc`: the same transcript, the
    /// same equation), with its two MSMs and the key's scaling joined into
    /// one, Σ = 0, on zkstep-pippenger's affine Pippenger:
    /// Σ rᵢ²·Lᵢ + Σ rᵢ⁻²·Rᵢ + C + (v − â·b̂)·r·H − â·Σ sⱼ·Gⱼ = O,
    /// which is nova-snark's P̂ = â·Ĝ + â·b̂·(r·H) rearranged (P = C + v·r·H,
    /// Ĝ = Σ sⱼ·Gⱼ). `agrees_with_nova_snark` checks both on edited proofs.
    fn verify(
        vk: &Self::VerifierKey,
        transcript: &mut E::TE,
        comm: &Commitment<E>,
        point: &[E::Scalar],
        eval: &E::Scalar,
        arg: &Self::EvaluationArgument,
    ) -> Result<(), NovaError> {
        let p = arg;
        let rounds = p.l_vec.len();
        let n = 1usize << point.len().min(31);
        let gens = vk.ck_v.generators();
        transcript.dom_sep(b"IPA");
        if point.len() >= 32 || n != (1 << rounds) || rounds != p.r_vec.len() || gens.len() < n {
            return Err(NovaError::InvalidInputLength);
        }
        transcript.absorb(b"U", &Instance::<E> { comm, eval });
        let r = transcript.squeeze(b"r")?;
        let mut rs = Vec::with_capacity(rounds);
        for (l, rr) in p.l_vec.iter().zip(&p.r_vec) {
            transcript.absorb(b"L", l);
            transcript.absorb(b"R", rr);
            rs.push(transcript.squeeze(b"r")?);
        }
        let r_inv = rs
            .iter()
            .map(|x| Option::<E::Scalar>::from(x.invert()).ok_or(NovaError::InvalidInputLength))
            .collect::<Result<Vec<_>, _>>()?;
        let r_sq: Vec<E::Scalar> = rs.iter().map(|x| x.square()).collect();
        let r_inv_sq: Vec<E::Scalar> = r_inv.iter().map(|x| x.square()).collect();
        // s: the weights of the folded generator (nova-snark's tensor order)
        let mut s = vec![E::Scalar::ZERO; n];
        s[0] = r_inv.iter().product();
        for i in 1..n {
            let pos = (usize::BITS - 1 - i.leading_zeros()) as usize;
            s[i] = s[i - (1 << pos)] * r_sq[(rounds - 1) - pos];
        }
        let b = EqPolynomial::new(point.to_vec()).evals();
        let b_hat = inner_product(&b, &s);
        let h = vk.ck_s.generators().first().ok_or(NovaError::InvalidInputLength)?;
        let mut points: Vec<<E::GE as DlogGroup>::AffineGroupElement> = gens[..n].to_vec();
        let mut scalars: Vec<E::Scalar> = s.par_iter().map(|x| -(p.a_hat * x)).collect();
        for (c, k) in p.l_vec.iter().zip(&r_sq).chain(p.r_vec.iter().zip(&r_inv_sq)).chain([(comm, &E::Scalar::ONE)]) {
            points.push(affine::<E>(c)?);
            scalars.push(*k);
        }
        points.push(*h);
        scalars.push((*eval - p.a_hat * b_hat) * r);
        if bool::from(zkstep_pippenger::msm(&scalars, &points).is_identity()) {
            Ok(())
        } else {
            Err(NovaError::InvalidPCS)
        }
    }
}

/// The affine points of a commitment key (halo2curves' for zkstep's engines).
pub type Affine<E> = <<E as Engine>::GE as DlogGroup>::AffineGroupElement;

/// A commitment as an affine point (the identity included).
fn affine<E>(c: &Commitment<E>) -> Result<<E::GE as DlogGroup>::AffineGroupElement, NovaError>
where
    E: Engine<CE = CommitmentEngine<E>>,
    E::GE: DlogGroupExt,
    <E::GE as DlogGroup>::AffineGroupElement: CurveAffine<ScalarExt = E::Scalar, Base = E::Base>,
{
    let (x, y, inf) = c.to_coordinates();
    if inf {
        return Ok(<<E::GE as DlogGroup>::AffineGroupElement as PrimeCurveAffine>::identity());
    }
    Option::from(<E::GE as DlogGroup>::AffineGroupElement::from_xy(x, y)).ok_or(NovaError::InvalidPCS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::provider::ipa_pc;
    use nova_snark::provider::GrumpkinEngine as E;
    use nova_snark::spartan::polys::multilinear::MultilinearPolynomial;
    use rand::rngs::OsRng;

    type F = <E as Engine>::Scalar;
    use nova_snark::provider::ipa_pc::InnerProductArgument;

    /// Both provers on one instance of 2^k values: the same bytes, and
    /// nova-snark's verifier accepts ours and rejects it for another value.
    fn both(k: usize) {
        let n = 1 << k;
        let ck = <E as Engine>::CE::setup(b"test ipa", n + 3).unwrap();
        let poly: Vec<F> = (0..n).map(|_| F::random(OsRng)).collect();
        let point: Vec<F> = (0..k).map(|_| F::random(OsRng)).collect();
        let eval = MultilinearPolynomial::new(poly.clone()).evaluate(&point);
        let comm = <E as Engine>::CE::commit(&ck, &poly, &F::ZERO);
        let (pk_n, vk) = ipa_pc::EvaluationEngine::<E>::setup(&ck).unwrap();
        let (pk, vk_ours) = FastIpa::<E>::setup(&ck).unwrap();
        assert_eq!(postcard::to_stdvec(&pk).unwrap(), postcard::to_stdvec(&pk_n).unwrap());
        assert_eq!(postcard::to_stdvec(&vk_ours).unwrap(), postcard::to_stdvec(&vk).unwrap());
        let tr = || <E as Engine>::TE::new(b"ipa test");
        let theirs = ipa_pc::EvaluationEngine::<E>::prove(&ck, &pk_n, &mut tr(), &comm, &poly, &point, &eval).unwrap();
        let ours = FastIpa::<E>::prove(&ck, &pk, &mut tr(), &comm, &poly, &point, &eval).unwrap();
        assert_eq!(postcard::to_stdvec(&ours).unwrap(), postcard::to_stdvec(&theirs).unwrap(), "k = {k}");
        // our verifier and nova-snark's decide alike, on the honest
        // argument and on edited ones
        let decide = |comm: &Commitment<E>, point: &[F], eval: &F, arg: &Argument<E>| {
            let a = FastIpa::<E>::verify(&vk_ours, &mut tr(), comm, point, eval, arg).is_ok();
            let theirs: InnerProductArgument<E> = postcard::from_bytes(&postcard::to_stdvec(arg).unwrap()).unwrap();
            let b = ipa_pc::EvaluationEngine::<E>::verify(&vk, &mut tr(), comm, point, eval, &theirs).is_ok();
            assert_eq!(a, b, "k = {k}: the two verifiers disagree");
            a
        };
        assert!(decide(&comm, &point, &eval, &ours));
        let wrong = eval + F::ONE;
        assert!(!decide(&comm, &point, &wrong, &ours));
        // a claim proven for another value is not a proof of this one
        let forged = FastIpa::<E>::prove(&ck, &pk, &mut tr(), &comm, &poly, &point, &wrong).unwrap();
        assert!(!decide(&comm, &point, &wrong, &forged));
        // another commitment, another point
        let other = <E as Engine>::CE::commit(&ck, &poly[1..], &F::ZERO);
        assert!(!decide(&other, &point, &eval, &ours));
        let mut moved = point.clone();
        moved[0] += F::ONE;
        assert!(!decide(&comm, &moved, &eval, &ours));
        // edited parts: â, an L, L and R swapped
        let parts = ours.clone();
        let mut p = Argument::<E> { l_vec: parts.l_vec.clone(), r_vec: parts.r_vec.clone(), a_hat: parts.a_hat + F::ONE };
        assert!(!decide(&comm, &point, &eval, &p));
        p.a_hat = parts.a_hat;
        p.l_vec[0] = p.l_vec[0] + comm;
        assert!(!decide(&comm, &point, &eval, &p));
        p.l_vec = parts.r_vec.clone();
        p.r_vec = parts.l_vec.clone();
        assert!(!decide(&comm, &point, &eval, &p));
        // one round short
        p.l_vec = parts.l_vec[1..].to_vec();
        p.r_vec = parts.r_vec[1..].to_vec();
        assert!(!decide(&comm, &point, &eval, &p));
        assert!(decide(&comm, &point, &eval, &parts));
    }

    #[test]
    fn same_proof_as_nova_snark() {
        for k in [1, 2, 5, 8] {
            both(k);
        }
    }

    #[test]
    fn lengths_it_cannot_prove_are_errors() {
        let ck = <E as Engine>::CE::setup(b"test ipa", 4).unwrap();
        let (pk, _) = FastIpa::<E>::setup(&ck).unwrap();
        let comm = <E as Engine>::CE::commit(&ck, &[F::ONE; 4], &F::ZERO);
        let mut tr = <E as Engine>::TE::new(b"ipa test");
        // 8 values against a 4-point key, and 4 values at a 3-variable point
        let r = FastIpa::<E>::prove(&ck, &pk, &mut tr, &comm, &[F::ONE; 8], &[F::ONE; 3], &F::ONE);
        assert!(matches!(r, Err(NovaError::InvalidInputLength)));
        let r = FastIpa::<E>::prove(&ck, &pk, &mut tr, &comm, &[F::ONE; 4], &[F::ONE; 3], &F::ONE);
        assert!(matches!(r, Err(NovaError::InvalidInputLength)));
    }
}
