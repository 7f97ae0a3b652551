//! Development commitment keys: the powers [τⁱ]₁ of a fresh random τ, made
//! by a fixed-base table.
//!
//! nova-snark's development setup (`CommitmentKey::setup_from_rng`) makes
//! each power with a 4-row comb: ≈ 64 projective additions a point, then a
//! field inversion a point to make it affine. At 2²¹ powers (a width-2048
//! checkpoint's points) that was ≈ 80 % of a 30 s keygen. Here the scalar
//! is cut into w-bit digits and each digit looks up d·2^{wj}·G in an affine
//! table: ⌈254/w⌉ additions a point, made in affine coordinates a batch of
//! points at a time with one inversion for the batch (no inversion a point
//! at the end either). The key is built with nova-snark's
//! `CommitmentKey::new` (every point checked on its curve, τ·H in its
//! subgroup) and its blinding generator from the label nova-snark uses, so
//! it is the key nova-snark's setup would make for the same τ
//! (`the_key_is_the_powers_of_tau`). τ is drawn from the OS and dropped:
//! sound for whoever ran keygen, as every development key.

use crate::error::{ProverError, Result};
use ff::{Field, PrimeField};
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use halo2curves::bn256::{Fr, G1Affine, G1, G2};
use nova_snark::provider::hyperkzg::CommitmentKey;
use nova_snark::provider::traits::DlogGroup;
use nova_snark::provider::Bn256EngineKZG;
use rayon::prelude::*;

/// The label of the blinding generator (as nova-snark's setup names it).
const LABEL: &[u8] = b"ck";

/// Powers a chunk (each chunk from its first power, side by side).
const CHUNK: usize = 1 << 14;

/// A development key of a fresh random τ with at least `n` powers: the
/// next power of two, as nova-snark's setup makes it (a key's length is a
/// power of two wherever it is read).
pub fn dev_key(n: usize) -> Result<CommitmentKey<Bn256EngineKZG>> {
    key_of_tau(Fr::random(rand::rngs::OsRng), n.next_power_of_two())
}

/// [`dev_key`] as zkstep-fold's `Params::setup_with` takes it.
pub fn fold_dev_key(n: usize) -> zkstep_fold::Result<CommitmentKey<Bn256EngineKZG>> {
    dev_key(n).map_err(|e| zkstep_fold::FoldError::Invalid(e.to_string()))
}

/// The key of `n` powers of `tau`.
fn key_of_tau(tau: Fr, n: usize) -> Result<CommitmentKey<Bn256EngineKZG>> {
    let g1 = fixed_base(G1::generator(), &powers(tau, n), window(n));
    let h = *<G1 as DlogGroup>::from_label(LABEL, 1)
        .first()
        .ok_or_else(|| ProverError::Invalid("no blinding generator".into()))?;
    let tau_h = (G2::generator() * tau).to_affine();
    CommitmentKey::new(g1, h, tau_h).map_err(|e| ProverError::Fold(format!("development key: {e}")))
}

/// 1, τ, …, τⁿ⁻¹ (chunks side by side, each from its first power).
fn powers(tau: Fr, n: usize) -> Vec<Fr> {
    let mut out = vec![Fr::ZERO; n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let mut p = tau.pow_vartime([(c * CHUNK) as u64]);
        for x in chunk {
            *x = p;
            p *= tau;
        }
    });
    out
}

/// The digit width with the fewest additions for `n` scalars: the table's
/// (2^w a window) and the points' (one a window each), at most 12 bits (a
/// window's table then stays within a core's cache: at 16 bits each lookup
/// missed it, which cost more than the additions saved).
fn window(n: usize) -> usize {
    (4..=12)
        .min_by_key(|w| ((1usize << w) + n) * (Fr::NUM_BITS as usize).div_ceil(*w))
        .unwrap_or(8)
}

/// sᵢ·g for every scalar, by a table of d·2^{wj}·g (d < 2^w) per window j.
fn fixed_base(g: G1, scalars: &[Fr], w: usize) -> Vec<G1Affine> {
    let windows = (Fr::NUM_BITS as usize).div_ceil(w);
    let table: Vec<Vec<G1Affine>> = (0..windows)
        .into_par_iter()
        .map(|j| {
            let mut base = g;
            for _ in 0..w * j {
                base = base.double();
            }
            let mut row = Vec::with_capacity((1 << w) - 1);
            let mut acc = base;
            row.push(acc);
            for _ in 2..(1usize << w) {
                acc += base;
                row.push(acc);
            }
            normalize(&row)
        })
        .collect();
    scalars
        .par_chunks(BATCH)
        .flat_map_iter(|chunk| {
            let digits: Vec<Vec<usize>> = chunk
                .iter()
                .map(|s| {
                    let repr = s.to_repr();
                    (0..windows).map(|j| digit(repr.as_ref(), j * w, w)).collect()
                })
                .collect();
            let mut acc = vec![G1Affine::identity(); chunk.len()];
            for (j, row) in table.iter().enumerate() {
                let add: Vec<Option<&G1Affine>> = digits.iter().map(|d| d[j].checked_sub(1).map(|k| &row[k])).collect();
                add_affine(&mut acc, &add);
            }
            acc
        })
        .collect()
}

/// Scalars a batch of affine additions (one inversion a window for all).
const BATCH: usize = 1 << 10;

/// accᵢ += addᵢ for every i, in affine coordinates with one batched
/// inversion: λ = (y₂ − y₁)/(x₂ − x₁), x₃ = λ² − x₁ − x₂, y₃ = λ(x₁ − x₃) − y₁
/// (6 multiplications an addition against a mixed addition's 11). An
/// identity, a doubling or a sum that cancels (x₁ = x₂) is added
/// projectively instead.
fn add_affine(acc: &mut [G1Affine], add: &[Option<&G1Affine>]) {
    use halo2curves::bn256::Fq;
    let plain = |a: &G1Affine, b: &G1Affine| a.x != b.x && !bool::from(a.is_identity()) && !bool::from(b.is_identity());
    // the denominators x₂ − x₁ and their running products
    let mut prefix = Vec::with_capacity(acc.len());
    let mut run = Fq::ONE;
    for (a, b) in acc.iter().zip(add) {
        if let Some(b) = b {
            if plain(a, b) {
                run *= b.x - a.x;
            }
        }
        prefix.push(run);
    }
    let mut inv = run.invert().unwrap_or(Fq::ZERO);
    for i in (0..acc.len()).rev() {
        let Some(b) = add[i] else { continue };
        let a = acc[i];
        if !plain(&a, b) {
            acc[i] = (G1::from(a) + b).to_affine();
            continue;
        }
        let before = if i == 0 { Fq::ONE } else { prefix[i - 1] };
        let d_inv = inv * before;
        inv *= b.x - a.x;
        let lambda = (b.y - a.y) * d_inv;
        let x3 = lambda.square() - a.x - b.x;
        let y3 = lambda * (a.x - x3) - a.y;
        acc[i] = G1Affine { x: x3, y: y3 };
    }
}

/// Affine forms of many points with one inversion.
fn normalize(p: &[G1]) -> Vec<G1Affine> {
    let mut a = vec![G1Affine::identity(); p.len()];
    G1::batch_normalize(p, &mut a);
    a
}

/// Bits `at..at + w` of a little-endian byte string (w ≤ 16), zero past its end.
fn digit(bytes: &[u8], at: usize, w: usize) -> usize {
    let byte = |k: usize| bytes.get(k).copied().unwrap_or(0) as usize;
    let (k, shift) = (at / 8, at % 8);
    let v = byte(k) | byte(k + 1) << 8 | byte(k + 2) << 16;
    (v >> shift) & ((1 << w) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use halo2curves::pairing::PairingCurveAffine;

    /// Every point is [τⁱ]₁ (direct scalar multiplications), at several
    /// window widths; τ·H is [τ]₂ (a pairing check); the blinding generator
    /// is nova-snark's.
    #[test]
    fn the_key_is_the_powers_of_tau() {
        let tau = Fr::from(0x1234_5678_9abc_def1u64) * Fr::from(0x0fed_cba9_8765_4321u64).invert().unwrap();
        let n = 300;
        let direct: Vec<G1Affine> = (0..n).map(|i| (G1::generator() * tau.pow_vartime([i as u64])).to_affine()).collect();
        for w in [4, 7, 13, window(n)] {
            assert_eq!(fixed_base(G1::generator(), &powers(tau, n), w), direct, "window {w}");
        }
        let key = key_of_tau(tau, n).unwrap();
        assert_eq!(key.ck(), &direct[..]);
        let h = *<G1 as DlogGroup>::from_label(LABEL, 1).first().unwrap();
        assert_eq!(key.h(), &h);
        // e([τ]₁, [1]₂) = e([1]₁, τ·H)
        let g2 = halo2curves::bn256::G2Affine::generator();
        assert_eq!(key.ck()[1].pairing_with(&g2), key.ck()[0].pairing_with(key.tau_H()));
        // a scalar's top digit, and a window past 254 bits reads zero
        let minus_one = -Fr::ONE;
        let r = minus_one.to_repr();
        assert_eq!(digit(r.as_ref(), 248, 8), r.as_ref()[31] as usize);
        assert_eq!(digit(r.as_ref(), 256, 16), 0);
        assert_eq!(fixed_base(G1::generator(), &[minus_one], 16), vec![(-G1::generator()).to_affine()]);
    }

    /// Scalars of every size, across several batches: the affine additions
    /// give what scalar multiplication gives (and −1, whose digits end in a
    /// sum that is near the group order).
    #[test]
    fn batches_of_affine_additions_are_scalar_multiplications() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut s: Vec<Fr> = (0..2 * BATCH + 77).map(|_| Fr::random(&mut rng)).collect();
        s[5] = Fr::ZERO;
        s[6] = -Fr::ONE;
        s[7] = Fr::from(1 << 12);
        let direct: Vec<G1Affine> = s.iter().map(|x| (G1::generator() * x).to_affine()).collect();
        assert_eq!(fixed_base(G1::generator(), &s, 12), direct);
    }

    /// Two keys of the same size have different τ.
    #[test]
    fn each_key_has_its_own_tau() {
        let (a, b) = (dev_key(5).unwrap(), dev_key(5).unwrap());
        assert_ne!(a.ck()[1], b.ck()[1]);
        assert_eq!(a.ck().len(), 8, "a power of two");
    }
}
