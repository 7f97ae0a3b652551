//! MSM backends on this machine, BN254 G1:
//! `cargo bench -p zkstep-benches --bench msm`
//!
//! Two scalar distributions: `random` (full-width field elements, the worst
//! case) and `witness` (what a fold commits to: half bits, a third small
//! signed fixed-point values — negative ones are r − x, full width unless
//! the MSM looks at −s — and the rest random).
//!
//! - `nova`: nova-snark's own Pippenger (`provider::msm::msm`), what Nova
//!   runs without our shim;
//! - `halo2curves`: `msm_best`;
//! - `affine`: zkstep's own batch-affine Pippenger (`zkstep_pippenger::msm`),
//!   zkstep-msm's CPU backend;
//! - `ark-ec`: arkworks 0.5 `VariableBaseMSM` on ark-bn254 (inputs converted
//!   beforehand, so this is its best case);
//! - `zkstep-msm-shim`: the entry point Nova reaches through the blitzar
//!   shim (backend `cpu`), including the shim's byte → field conversion.
#![allow(missing_docs)]

use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::PrimeField as _;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ff::{Field, PrimeField};
use halo2curves::bn256::{Fr, G1Affine};
use halo2curves::CurveAffine;
use rand_chacha::rand_core::SeedableRng;
use std::hint::black_box;

fn ark_scalar(s: &Fr) -> ark_bn254::Fr {
    ark_bn254::Fr::from_le_bytes_mod_order(s.to_repr().as_ref())
}

fn ark_point(p: &G1Affine) -> ark_bn254::G1Affine {
    let c = p.coordinates().into_option();
    match c {
        Some(c) => ark_bn254::G1Affine::new_unchecked(
            ark_bn254::Fq::from_le_bytes_mod_order(c.x().to_repr().as_ref()),
            ark_bn254::Fq::from_le_bytes_mod_order(c.y().to_repr().as_ref()),
        ),
        None => ark_bn254::G1Affine::identity(),
    }
}

fn witness_like(n: usize, rng: &mut rand_chacha::ChaCha20Rng) -> Vec<Fr> {
    use rand_chacha::rand_core::RngCore;
    (0..n)
        .map(|i| match i % 6 {
            0..=2 => Fr::from(rng.next_u32() as u64 & 1),
            3 | 4 => {
                let v = Fr::from(rng.next_u64() % 2_000_000_000_000);
                if rng.next_u32() & 1 == 0 {
                    v
                } else {
                    -v
                }
            }
            _ => Fr::random(&mut *rng),
        })
        .collect()
}

/// The three CPU candidates that take halo2curves types, on one input.
fn cpu_candidates(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    scalars: &[Fr],
    bases: &[G1Affine],
) {
    let n = scalars.len();
    g.throughput(criterion::Throughput::Elements(n as u64));
    g.bench_with_input(BenchmarkId::new("nova", n), &n, |b, _| {
        b.iter(|| black_box(nova_snark::provider::msm::msm(scalars, bases)))
    });
    g.bench_with_input(BenchmarkId::new("halo2curves", n), &n, |b, _| {
        b.iter(|| black_box(halo2curves::msm::msm_best(scalars, bases)))
    });
    g.bench_with_input(BenchmarkId::new("affine", n), &n, |b, _| {
        b.iter(|| black_box(zkstep_pippenger::msm(scalars, bases)))
    });
}

fn bench_witness(c: &mut Criterion) {
    let mut g = c.benchmark_group("msm_bn254_g1_witness");
    g.sample_size(10);
    for log in [16u32, 18] {
        let n = 1usize << log;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(100 + log as u64);
        let scalars = witness_like(n, &mut rng);
        let bases = zkstep_msm::sequential_bases(n);
        cpu_candidates(&mut g, &scalars, &bases);
    }
    g.finish();
}

fn bench_msm(c: &mut Criterion) {
    let mut g = c.benchmark_group("msm_bn254_g1");
    g.sample_size(10);
    for log in [12u32, 16, 18] {
        let n = 1usize << log;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(log as u64);
        let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        let bases = zkstep_msm::sequential_bases(n);
        cpu_candidates(&mut g, &scalars, &bases);
        let a_s: Vec<ark_bn254::Fr> = scalars.iter().map(ark_scalar).collect();
        let a_b: Vec<ark_bn254::G1Affine> = bases.iter().map(ark_point).collect();
        // same answer, or the comparison means nothing
        let h = G1Affine::from(halo2curves::msm::msm_best(&scalars, &bases));
        let a = ark_bn254::G1Projective::msm(&a_b, &a_s).map(|p| p.into_affine());
        assert_eq!(
            a.ok(),
            Some(ark_point(&h)),
            "ark-ec and halo2curves disagree"
        );
        g.bench_with_input(BenchmarkId::new("ark-ec", n), &n, |b, _| {
            b.iter(|| black_box(ark_bn254::G1Projective::msm(&a_b, &a_s)))
        });
        let bytes: Vec<[u8; 32]> = scalars.iter().map(|s| s.to_bytes()).collect();
        g.bench_with_input(BenchmarkId::new("zkstep-msm-shim", n), &n, |b, _| {
            b.iter(|| {
                let mut out = [halo2curves::bn256::G1::default()];
                blitzar::compute::compute_bn254_g1_uncompressed_commitments_with_halo2_generators(
                    &mut out,
                    &[(&bytes).into()],
                    &bases,
                );
                black_box(out)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_witness, bench_msm);
criterion_main!(benches);
