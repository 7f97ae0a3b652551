//! Datasets: the built-in two-moons generator (for the demo and tests) and the
//! deterministic batch schedule used by `zkstep train`.

use crate::fixed::{to_fixed, ValueRange};
use crate::format::Dataset;
use crate::format::QuantReport;
use crate::model::Batch;
use crate::poseidon::Fr;
use crate::tensor::Matrix;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Two interleaving half-moons in [-1, 2]×[-0.5, 1] (scaled by 0.5), label 0 or 1, with Gaussian-ish noise.
pub fn two_moons(n: usize, noise: f64, seed: u64) -> Dataset {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let r = ValueRange::default();
    let mut x = Vec::with_capacity(2 * n);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let t = rng.gen_range(0.0..std::f64::consts::PI);
        let (mut a, mut b, label) = if i % 2 == 0 {
            (t.cos(), t.sin(), 0.0)
        } else {
            (1.0 - t.cos(), 0.5 - t.sin(), 1.0)
        };
        // sum of uniforms ≈ normal, without another dependency
        let mut g = || (0..4).map(|_| rng.gen_range(-1.0..1.0)).sum::<f64>() * 0.5 * noise;
        a += g();
        b += g();
        x.push(to_fixed(0.5 * a, r).unwrap_or(0));
        x.push(to_fixed(0.5 * b, r).unwrap_or(0));
        y.push(to_fixed(label, r).unwrap_or(0));
    }
    Dataset {
        x: Matrix {
            rows: n,
            cols: 2,
            data: x,
        },
        y: Matrix {
            rows: n,
            cols: 1,
            data: y,
        },
        report: QuantReport::default(),
    }
}

/// Sample indices of the batch for `step`: consecutive slices of one seeded permutation, wrapping.
pub fn batch_indices(n_samples: usize, batch: usize, step: u64, seed: u64) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..n_samples).collect();
    perm.shuffle(&mut ChaCha20Rng::seed_from_u64(seed));
    let start = (step as u128 * batch as u128 % n_samples as u128) as usize;
    (0..batch).map(|i| perm[(start + i) % n_samples]).collect()
}

/// Gather rows of a matrix.
pub fn gather(m: &Matrix, idx: &[usize]) -> Matrix {
    let mut data = Vec::with_capacity(idx.len() * m.cols);
    for &i in idx {
        data.extend_from_slice(m.row(i));
    }
    Matrix {
        rows: idx.len(),
        cols: m.cols,
        data,
    }
}

/// The batch for `step` of a dataset.
pub fn make_batch(ds: &Dataset, batch_size: usize, step: u64, seed: u64, salt: Fr) -> Batch {
    let idx = batch_indices(ds.x.rows, batch_size, step, seed);
    Batch {
        x: gather(&ds.x, &idx),
        y: gather(&ds.y, &idx),
        salt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_the_dataset() {
        let idx: Vec<usize> = (0..5).flat_map(|t| batch_indices(20, 4, t, 3)).collect();
        let mut s = idx.clone();
        s.sort();
        assert_eq!(s, (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn moons_are_deterministic() {
        assert_eq!(two_moons(10, 0.1, 1).x, two_moons(10, 0.1, 1).x);
        assert_ne!(two_moons(10, 0.1, 1).x, two_moons(10, 0.1, 2).x);
    }
}
