//! A univariate KZG opening of committed coefficient vectors at one point,
//! on a HyperKZG commitment key's public pieces (its G1 powers and [τ]₂).
//!
//! The first piece of checkpoint commitments as KZG points
//! (docs/design/kzg-checkpoints.md): a vector c is committed as
//! C = Σ cₖ·[τᵏ]₁ (no blinding component: the argument's soundness forces
//! it to be zero), and k commitments are opened together at ζ with one
//! quotient point π and the value y of their combination Σ rⁱ·cᵢ:
//!
//! ```text
//! e(Σ rⁱ·Cᵢ − y·[1]₁ + ζ·π, [1]₂) = e(π, [τ]₂)
//! ```
//!
//! which holds iff (Σ rⁱ·cᵢ)(X) − y = (X − ζ)·q(X) at X = τ. It needs only
//! [1]₂ and [τ]₂, which every key has (pruned ceremony files included).
//! nova-snark keeps its own univariate KZG private to HyperKZG, so the
//! opening is built here on `CommitmentKey::ck()`/`tau_H()` and the
//! group's pairing.

use crate::error::{FoldError, Result};
use ff::Field;
use nova_snark::provider::hyperkzg::CommitmentKey;
use nova_snark::provider::traits::{DlogGroup, DlogGroupExt, PairingGroup};
use nova_snark::traits::Engine;
use serde::{Deserialize, Serialize};

/// What verifying an opening needs: [1]₁, [1]₂ and [τ]₂ (stored in a
/// verifying key file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct KzgVerifierKey<E: Engine>
where
    E::GE: PairingGroup,
{
    g1: E::GE,
    g2: <E::GE as PairingGroup>::G2,
    tau_g2: <E::GE as PairingGroup>::G2,
}

/// An opening of k commitments at ζ, combined with powers of r.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct KzgOpening<E: Engine> {
    /// y = Σ rⁱ·cᵢ(ζ).
    pub value: E::Scalar,
    /// π = [q(τ)]₁, q = (Σ rⁱ·cᵢ − y)/(X − ζ).
    pub proof: E::GE,
}

/// The verifier key of a commitment key.
pub fn verifier_key<E: Engine>(ck: &CommitmentKey<E>) -> Result<KzgVerifierKey<E>>
where
    E::GE: PairingGroup,
{
    let g1 = ck
        .ck()
        .first()
        .ok_or_else(|| FoldError::Invalid("an empty commitment key".into()))?;
    Ok(KzgVerifierKey {
        g1: E::GE::group(g1),
        g2: <<E::GE as PairingGroup>::G2 as DlogGroup>::gen(),
        tau_g2: <<E::GE as PairingGroup>::G2 as DlogGroup>::group(ck.tau_H()),
    })
}

/// The first `n` powers of a key (rounded up to a power of two, as a key's
/// length must be), with its blinding generator and [τ]₂.
pub fn prefix<E: Engine>(ck: &CommitmentKey<E>, n: usize) -> Result<CommitmentKey<E>>
where
    E::GE: PairingGroup,
{
    let m = n.max(1).next_power_of_two();
    let powers = ck.ck().get(..m).ok_or_else(|| {
        FoldError::Invalid(format!("{n} powers asked of a commitment key of {}", ck.ck().len()))
    })?;
    CommitmentKey::new(powers.to_vec(), *ck.h(), *ck.tau_H())
        .map_err(|e| FoldError::Invalid(format!("a prefix of the commitment key: {e}")))
}

/// C = Σ cₖ·[τᵏ]₁ (no blinding component).
pub fn commit<E: Engine>(ck: &CommitmentKey<E>, coeffs: &[E::Scalar]) -> Result<E::GE>
where
    E::GE: PairingGroup,
{
    let bases = ck.ck().get(..coeffs.len()).ok_or_else(|| {
        FoldError::Invalid(format!(
            "{} coefficients for a commitment key of {} powers",
            coeffs.len(),
            ck.ck().len()
        ))
    })?;
    Ok(E::GE::vartime_multiscalar_mul(coeffs, bases))
}

/// Σ rⁱ·cᵢ, coefficient by coefficient (the vectors may differ in length).
fn combine<F: Field>(polys: &[&[F]], r: F) -> Vec<F> {
    let len = polys.iter().map(|p| p.len()).max().unwrap_or(0);
    let mut out = vec![F::ZERO; len];
    let mut ri = F::ONE;
    for p in polys {
        for (o, c) in out.iter_mut().zip(p.iter()) {
            *o += ri * c;
        }
        ri *= r;
    }
    out
}

/// c(ζ) and the quotient (c − c(ζ))/(X − ζ), by synthetic division.
fn divide<F: Field>(c: &[F], zeta: F) -> (F, Vec<F>) {
    let mut q = vec![F::ZERO; c.len().saturating_sub(1)];
    let mut acc = F::ZERO;
    for k in (0..c.len()).rev() {
        // acc = c_k + ζ·c_{k+1} + ζ²·c_{k+2} + …: the quotient's coefficient k − 1
        acc = acc * zeta + c[k];
        if k > 0 {
            q[k - 1] = acc;
        }
    }
    (acc, q)
}

/// Open `polys` (the coefficient vectors behind the commitments) at ζ,
/// combined with powers of `r`.
pub fn open<E: Engine>(
    ck: &CommitmentKey<E>,
    polys: &[&[E::Scalar]],
    r: E::Scalar,
    zeta: E::Scalar,
) -> Result<KzgOpening<E>>
where
    E::GE: PairingGroup,
{
    let (value, q) = divide(&combine(polys, r), zeta);
    Ok(KzgOpening {
        value,
        proof: commit(ck, &q)?,
    })
}

/// A pairing equation e(a, b) = e(c, d) checked as one product
/// e(a, b)·e(−c, d) = 1: one Miller loop over both pairs and one final
/// exponentiation, where two pairings would take two of each.
pub trait PairingCheck: PairingGroup {
    /// Whether e(a, b) = e(c, d).
    fn pairings_equal(a: &Self, b: &Self::G2, c: &Self, d: &Self::G2) -> bool;
}

impl PairingCheck for halo2curves::bn256::G1 {
    fn pairings_equal(a: &Self, b: &Self::G2, c: &Self, d: &Self::G2) -> bool {
        use group::{Curve, Group};
        use halo2curves::pairing::MillerLoopResult;
        let (a, c) = (a.to_affine(), (-*c).to_affine());
        let (b, d) = (b.to_affine(), d.to_affine());
        let product = halo2curves::bn256::multi_miller_loop(&[(&a, &b), (&c, &d)]).final_exponentiation();
        bool::from(product.is_identity())
    }
}

/// Accept `opening` of `comms` at ζ with combination `r`, or say why not.
pub fn verify<E: Engine>(
    vk: &KzgVerifierKey<E>,
    comms: &[E::GE],
    r: E::Scalar,
    zeta: E::Scalar,
    opening: &KzgOpening<E>,
) -> Result<()>
where
    E::GE: PairingCheck,
{
    // Σ rⁱ·Cᵢ − y·[1]₁ + ζ·π as one MSM (a merge opens N + 2 points: one
    // scalar multiplication each cost more than the pairing)
    let scalars: Vec<E::Scalar> = std::iter::successors(Some(E::Scalar::ONE), |p| Some(*p * r))
        .take(comms.len())
        .chain([-opening.value, zeta])
        .collect();
    let bases: Vec<_> = comms.iter().chain([&vk.g1, &opening.proof]).map(|p| p.affine()).collect();
    let left = E::GE::vartime_multiscalar_mul(&scalars, &bases);
    if E::GE::pairings_equal(&left, &vk.g2, &opening.proof, &vk.tau_g2) {
        Ok(())
    } else {
        Err(FoldError::Rejected(
            "the KZG opening does not hold: the commitments do not evaluate to the claimed value at ζ".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ff::Field;
    use nova_snark::provider::Bn256EngineKZG as E;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    type F = <E as Engine>::Scalar;
    type G = <E as Engine>::GE;

    fn setup(n: usize) -> (CommitmentKey<E>, KzgVerifierKey<E>, StdRng) {
        let ck = CommitmentKey::<E>::setup_from_rng(b"kzg test", n, StdRng::seed_from_u64(7));
        let vk = verifier_key(&ck).unwrap();
        (ck, vk, StdRng::seed_from_u64(11))
    }

    fn random(n: usize, rng: &mut StdRng) -> Vec<F> {
        (0..n).map(|_| F::random(&mut *rng)).collect()
    }

    #[test]
    fn synthetic_division_matches_the_polynomial() {
        let mut rng = StdRng::seed_from_u64(1);
        let c = random(37, &mut rng);
        let (z, x) = (F::random(&mut rng), F::random(&mut rng));
        let (y, q) = divide(&c, z);
        let eval = |p: &[F], at: F| p.iter().rev().fold(F::ZERO, |a, k| a * at + k);
        assert_eq!(y, eval(&c, z));
        // c(x) − y = (x − ζ)·q(x) at a random x
        assert_eq!(eval(&c, x) - y, (x - z) * eval(&q, x));
    }

    /// Two random vectors of these lengths, their commitments, an r, a ζ
    /// and the honest opening.
    struct Opened {
        ck: CommitmentKey<E>,
        vk: KzgVerifierKey<E>,
        vecs: [Vec<F>; 2],
        comms: [G; 2],
        r: F,
        z: F,
        o: KzgOpening<E>,
    }

    fn opened(la: usize, lb: usize) -> Opened {
        let (ck, vk, mut rng) = setup(64);
        let (a, b) = (random(la, &mut rng), random(lb, &mut rng));
        let comms = [commit(&ck, &a).unwrap(), commit(&ck, &b).unwrap()];
        let (r, z) = (F::random(&mut rng), F::random(&mut rng));
        let o = open(&ck, &[&a, &b], r, z).unwrap();
        Opened { ck, vk, vecs: [a, b], comms, r, z, o }
    }

    #[test]
    fn an_honest_opening_of_two_commitments_verifies() {
        let t = opened(40, 64);
        verify(&t.vk, &t.comms, t.r, t.z, &t.o).unwrap();
    }

    /// Each mutation of the statement or the proof is rejected: another
    /// value, another point, another r, a coefficient changed, a blinding
    /// component, commitments swapped, a proof for another point.
    #[test]
    fn every_mutation_is_rejected() {
        let Opened { ck, vk, vecs: [a, b], comms, r, z, o } = opened(33, 33);
        let bad = |comms: &[G], r: F, z: F, o: &KzgOpening<E>| {
            matches!(verify(&vk, comms, r, z, o), Err(FoldError::Rejected(_)))
        };
        let mut wrong = o.clone();
        wrong.value += F::ONE;
        assert!(bad(&comms, r, z, &wrong), "value + 1");
        assert!(bad(&comms, r, z + F::ONE, &o), "another ζ");
        assert!(bad(&comms, r + F::ONE, z, &o), "another r");
        let mut a2 = a.clone();
        a2[17] += F::ONE;
        assert!(bad(&[commit(&ck, &a2).unwrap(), comms[1]], r, z, &o), "a coefficient off by one");
        let h = G::group(ck.h());
        assert!(bad(&[comms[0] + h, comms[1]], r, z, &o), "a blinding component");
        assert!(bad(&[comms[1], comms[0]], r, z, &o), "commitments swapped");
        let other = open(&ck, &[&a, &b], r, z + F::ONE).unwrap();
        let mut mixed = o.clone();
        mixed.proof = other.proof;
        assert!(bad(&comms, r, z, &mixed), "a proof for another point");
        // a changed vector opened honestly does not match the old commitment
        let o2 = open(&ck, &[&a2, &b], r, z).unwrap();
        assert!(bad(&comms, r, z, &o2), "the opening of another vector");
    }

    #[test]
    fn a_vector_longer_than_the_key_is_refused() {
        let (ck, _, mut rng) = setup(16);
        let c = random(ck.ck().len() + 1, &mut rng);
        assert!(matches!(commit(&ck, &c), Err(FoldError::Invalid(_))));
    }
}
