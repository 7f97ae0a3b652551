//! Equal scalars gathered before Pippenger: Σ sᵢ·Gᵢ = Σₛ s·(Σ_{sᵢ=s} Gᵢ).
//!
//! A fold's W₂ holds LogUp's inverses 1/(α − q), one a query, and the
//! queries are 16-bit limbs, so the same full-width value comes back many
//! times: at width 256 a fold's W₂ has 94.7k full-width values of which
//! 54.0k are distinct (four of them 4.5–5.4k times each). Pippenger spends
//! about 20 additions a full-width point at these sizes; summing the bases
//! of each repeated scalar first spends one, and leaves Pippenger the
//! distinct scalars only. A sample of the scalars decides whether that
//! pays; scalars of at most 64 bits (or whose negation is) are left as they
//! are, since nova-snark's small-scalar buckets take them cheaply already.

use group::Curve;
use halo2curves::bn256::{Fr, G1Affine, G1};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// Below this many points the gathering is not worth its bookkeeping.
const MIN_POINTS: usize = 1 << 13;
/// Scalars the sample looks at.
const SAMPLE: usize = 1 << 10;

/// A full-width scalar's canonical bytes (None for one that is, up to its
/// sign, at most 64 bits).
fn wide(s: &Fr) -> Option<[u8; 32]> {
    use ff::PrimeField;
    let small = |r: &[u8; 32]| r[8..].iter().all(|b| *b == 0);
    let r = s.to_repr();
    let mut bytes = [0u8; 32];
    bytes.copy_from_slice(r.as_ref());
    if small(&bytes) {
        return None;
    }
    let neg = (-*s).to_repr();
    let mut nb = [0u8; 32];
    nb.copy_from_slice(neg.as_ref());
    (!small(&nb)).then_some(bytes)
}

/// Whether a sample of the scalars repeats often enough among the wide ones
/// (one in eight) for gathering to pay.
fn worth_it(scalars: &[Fr]) -> bool {
    let step = (scalars.len() / SAMPLE).max(1);
    let mut seen = HashSet::new();
    let (mut wide_n, mut repeats) = (0usize, 0usize);
    for s in scalars.iter().step_by(step) {
        if let Some(k) = wide(s) {
            wide_n += 1;
            if !seen.insert(k) {
                repeats += 1;
            }
        }
    }
    wide_n >= SAMPLE / 4 && repeats * 8 >= wide_n
}

/// The same sum over fewer points: each wide scalar that repeats once, with
/// the sum of its bases; every other pair as it was. None when the scalars
/// do not repeat enough to pay (then the caller runs the MSM as given).
pub(crate) fn gathered(scalars: &[Fr], bases: &[G1Affine]) -> Option<(Vec<Fr>, Vec<G1Affine>)> {
    let n = scalars.len().min(bases.len());
    if n < MIN_POINTS || !worth_it(&scalars[..n]) {
        return None;
    }
    let keys: Vec<Option<[u8; 32]>> = scalars[..n].par_iter().map(wide).collect();
    // group ids in order of first appearance; NONE for the narrow scalars
    const NONE: u32 = u32::MAX;
    let mut ids = vec![NONE; n];
    let mut first: Vec<usize> = vec![];
    let mut index: HashMap<[u8; 32], u32> = HashMap::with_capacity(n / 2);
    for (i, k) in keys.iter().enumerate() {
        if let Some(k) = k {
            let next = first.len() as u32;
            let id = *index.entry(*k).or_insert(next);
            if id == next {
                first.push(i);
            }
            ids[i] = id;
        }
    }
    // members of each group, contiguous (a counting sort by id)
    let groups = first.len();
    let mut start = vec![0usize; groups + 1];
    for id in ids.iter().filter(|id| **id != NONE) {
        start[*id as usize + 1] += 1;
    }
    for g in 0..groups {
        start[g + 1] += start[g];
    }
    let mut fill = start.clone();
    let mut members = vec![0usize; start[groups]];
    for (i, id) in ids.iter().enumerate().filter(|(_, id)| **id != NONE) {
        members[fill[*id as usize]] = i;
        fill[*id as usize] += 1;
    }
    let sums: Vec<G1> = (0..groups)
        .into_par_iter()
        .map(|g| {
            members[start[g]..start[g + 1]]
                .iter()
                .fold(G1::default(), |acc, i| acc + bases[*i])
        })
        .collect();
    let mut affine = vec![G1Affine::default(); groups];
    G1::batch_normalize(&sums, &mut affine);
    let narrow = ids.iter().filter(|id| **id == NONE).count();
    let mut s = Vec::with_capacity(narrow + groups);
    let mut b = Vec::with_capacity(narrow + groups);
    for (i, id) in ids.iter().enumerate() {
        if *id == NONE {
            s.push(scalars[i]);
            b.push(bases[i]);
        }
    }
    for (g, p) in affine.into_iter().enumerate() {
        s.push(scalars[first[g]]);
        b.push(p);
    }
    Some((s, b))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sequential_bases;
    use halo2curves::msm::msm_best;

    /// The sum by halo2curves' Pippenger, untouched by the gathering (the
    /// naive reference would take seconds at these sizes).
    fn reference_msm(scalars: &[Fr], bases: &[G1Affine]) -> G1 {
        msm_best(scalars, bases)
    }
    use ff::Field;
    use rand_chacha::rand_core::SeedableRng;

    /// n scalars: 16 distinct full-width values repeated, some small ones
    /// (positive and negative), zeros.
    fn repeated(n: usize, seed: u64) -> Vec<Fr> {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let wide: Vec<Fr> = (0..16).map(|_| Fr::random(&mut rng)).collect();
        (0..n)
            .map(|i| match i % 7 {
                0 => Fr::from(i as u64),
                1 => -Fr::from(3 * i as u64),
                2 => Fr::ZERO,
                _ => wide[(i * 31) % 16],
            })
            .collect()
    }

    #[test]
    fn gathering_keeps_the_sum_and_shrinks_it() {
        let n = MIN_POINTS + 123;
        let bases = sequential_bases(n);
        let scalars = repeated(n, 1);
        let (s, b) = gathered(&scalars, &bases).unwrap();
        assert!(s.len() < n / 2, "{} points of {n}", s.len());
        assert_eq!(reference_msm(&s, &b), reference_msm(&scalars, &bases));
    }

    #[test]
    fn bases_that_cancel_and_the_backend_agree() {
        let n = MIN_POINTS;
        let mut bases = sequential_bases(n / 2);
        let neg: Vec<G1Affine> = bases.iter().map(|p| -*p).collect();
        bases.extend(neg);
        // the same wide scalar on G and −G: that group sums to the identity
        let scalars = repeated(n, 2);
        let (s, b) = gathered(&scalars, &bases).unwrap();
        assert_eq!(reference_msm(&s, &b), reference_msm(&scalars, &bases));
        assert_eq!(crate::cpu_msm(&scalars, &bases), reference_msm(&scalars, &bases));
    }

    #[test]
    fn distinct_or_small_scalars_are_left_alone() {
        let n = MIN_POINTS * 2;
        let bases = sequential_bases(n);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let distinct: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        assert!(gathered(&distinct, &bases).is_none());
        let small: Vec<Fr> = (0..n).map(|i| Fr::from((i % 5) as u64)).collect();
        assert!(gathered(&small, &bases).is_none());
        let few = repeated(MIN_POINTS - 1, 4);
        assert!(gathered(&few, &bases).is_none());
    }
}
