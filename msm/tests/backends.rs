//! The MSM backends against the naive reference Σ sᵢ·Pᵢ: random inputs and
//! the edge cases (empty, one point, zero scalars, r − 1, identity points,
//! repeated points). The GPU comparisons run where a device is present and
//! say visibly that they were skipped elsewhere.

use ff::Field;
use group::Group;
use halo2curves::bn256::{Fr, G1Affine, G1};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use zkstep_msm::{cpu_msm, gpu_msm, gpu_status, msm, reference_msm, sequential_bases};

fn random_input(n: usize, seed: u64) -> (Vec<Fr>, Vec<G1Affine>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let scalars = (0..n).map(|_| Fr::random(&mut rng)).collect();
    let bases = (0..n)
        .map(|_| G1Affine::from(G1::random(&mut rng)))
        .collect();
    (scalars, bases)
}

/// Edge cases as (name, scalars, bases).
fn edge_cases() -> Vec<(&'static str, Vec<Fr>, Vec<G1Affine>)> {
    let (s, b) = random_input(64, 7);
    let minus_one = -Fr::ONE;
    let id = G1Affine::from(G1::identity());
    vec![
        ("empty", vec![], vec![]),
        ("single point", vec![s[0]], vec![b[0]]),
        ("zero scalars", vec![Fr::ZERO; 64], b.clone()),
        ("scalar r-1", vec![minus_one; 64], b.clone()),
        ("identity points", s.clone(), vec![id; 64]),
        ("repeated point", s.clone(), vec![b[3]; 64]),
        (
            "mixed",
            (0..64)
                .map(|i| match i % 4 {
                    0 => Fr::ZERO,
                    1 => minus_one,
                    2 => Fr::ONE,
                    _ => s[i],
                })
                .collect(),
            (0..64)
                .map(|i| if i % 5 == 0 { id } else { b[i] })
                .collect(),
        ),
    ]
}

#[test]
fn cpu_matches_reference_on_edge_cases() {
    for (name, s, b) in edge_cases() {
        assert_eq!(cpu_msm(&s, &b), reference_msm(&s, &b), "{name}");
        assert_eq!(msm(&s, &b), reference_msm(&s, &b), "{name}");
    }
}

#[test]
fn cpu_matches_reference_on_random_inputs() {
    for (n, seed) in [(1usize, 1u64), (2, 2), (17, 3), (300, 4), (1 << 10, 5)] {
        let (s, b) = random_input(n, seed);
        assert_eq!(cpu_msm(&s, &b), reference_msm(&s, &b), "n = {n}");
    }
}

#[test]
fn sequential_bases_are_multiples_of_the_generator() {
    let b = sequential_bases(5);
    for (i, p) in b.iter().enumerate() {
        assert_eq!(G1::from(*p), G1::generator() * Fr::from(i as u64 + 1));
    }
}

#[test]
fn a_wrong_scalar_changes_the_result() {
    let (mut s, b) = random_input(100, 9);
    let good = cpu_msm(&s, &b);
    s[42] += Fr::ONE;
    assert_ne!(cpu_msm(&s, &b), good);
}

/// GPU = CPU, bit for bit, on edge cases and 2¹⁰ … 2²⁰ random points.
#[test]
fn gpu_matches_cpu() {
    if let Err(e) = gpu_status() {
        // straight to stderr, past the test harness's capture, so the skip shows
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("SKIPPED gpu_matches_cpu: {e}\n").as_bytes(),
        );
        return;
    }
    for (name, s, b) in edge_cases() {
        assert_eq!(gpu_msm(&s, &b).ok(), Some(cpu_msm(&s, &b)), "{name}");
    }
    for log in (10..=20).step_by(2) {
        let n = 1usize << log;
        let mut rng = ChaCha20Rng::seed_from_u64(log as u64);
        let s: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        let b = sequential_bases(n);
        assert_eq!(
            gpu_msm(&s, &b).ok(),
            Some(cpu_msm(&s, &b)),
            "2^{log} points"
        );
    }
}

#[test]
fn gpu_request_without_device_is_an_error_not_a_crash() {
    if gpu_status().is_ok() {
        return;
    }
    assert!(zkstep_msm::set_backend(zkstep_msm::Backend::Gpu).is_err());
    assert!(gpu_msm(&[Fr::ONE], &[G1Affine::generator()]).is_err());
    assert_eq!(zkstep_msm::backend(), zkstep_msm::Backend::Auto);
}
