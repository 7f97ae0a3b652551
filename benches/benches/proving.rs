//! criterion benches of the proving pipeline, grouped by size:
//! `cargo bench -p zkstep-benches --bench proving`
//!
//! - `gadgets_per_element`: witness synthesis (what the prover does per
//!   fold) of 1024 rescales (d = 10⁹ with a 64-bit quotient), sign-pinned
//!   ReLUs and 64-bit range checks; the constraints per element are printed.
//! - `fold/<budget>`: one Nova fold (`prove_step`) of the bench model at
//!   fold budgets 2¹⁵ … 2¹⁷;
//! - `compress/<budget>` and `verify/<budget>`: compression and standalone
//!   verification of a whole step at the demo's budget 2¹⁶ (compression
//!   takes ≈40 s a sample on 2 cores: this group alone runs ≈7 minutes).
//!
//! Keygen for each size runs once, outside the timed code.
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use nova_snark::frontend::shape_cs::ShapeCS;
use nova_snark::frontend::util_cs::witness_cs::WitnessCS;
use nova_snark::frontend::ConstraintSystem;
use std::hint::black_box;
use zkstep_circuits::engine::{CompressedSnark, Ivc, E1};
use zkstep_cli::bench::measure::{bench_batch, bench_spec};
use zkstep_core::{step, Fr};
use zkstep_gadgets::expr::{alloc, var};
use zkstep_gadgets::fixed::{relu, rescale};
use zkstep_gadgets::range::{range_bits, BitDecomposition};
use zkstep_prover::ivc::{fold_inputs, keygen, proof_bytes, prove, verifying_key_bytes, Setup};

const ELEMENTS: usize = 1024;

/// The three gadgets, each on `ELEMENTS` values, into any constraint system.
fn synth<CS: ConstraintSystem<Fr>>(cs: &mut CS, which: &str) {
    for i in 0..ELEMENTS {
        let z = 1_234_567_891_234i64 + i as i64 * 7_919;
        let mut ns = cs.namespace(|| format!("e{i}"));
        let za = alloc(ns.namespace(|| "z"), Some(Fr::from(z as u64))).unwrap();
        match which {
            "rescale" => {
                let (q, r) = (
                    (z + 500_000_000) / 1_000_000_000,
                    (z + 500_000_000) % 1_000_000_000,
                );
                rescale(
                    ns.namespace(|| "rescale"),
                    &mut BitDecomposition,
                    &var(&za),
                    1_000_000_000,
                    500_000_000,
                    Some(Fr::from(q as u64)),
                    Some(Fr::from(r as u64)),
                    64,
                )
                .unwrap();
            }
            "relu" => {
                relu(
                    ns.namespace(|| "relu"),
                    &mut BitDecomposition,
                    &var(&za),
                    Some(true),
                    64,
                )
                .unwrap();
            }
            _ => {
                range_bits(ns.namespace(|| "range"), &var(&za), 64).unwrap();
            }
        }
    }
}

fn bench_gadgets(c: &mut Criterion) {
    let mut g = c.benchmark_group("gadgets_per_element");
    g.throughput(Throughput::Elements(ELEMENTS as u64));
    for which in ["rescale", "relu", "range64"] {
        let mut shape = ShapeCS::<E1>::new();
        synth(&mut shape, which);
        eprintln!(
            "{which}: {} constraints per element",
            shape.num_constraints() / ELEMENTS
        );
        g.bench_with_input(BenchmarkId::new(which, ELEMENTS), &which, |b, w| {
            b.iter(|| {
                let mut cs = WitnessCS::<Fr>::new();
                synth(&mut cs, w);
                black_box(cs)
            })
        });
    }
    g.finish();
}

/// Keys, fold inputs and the after-checkpoint of the bench model (width 16, batch 8).
fn setup(budget: usize) -> (zkstep_prover::ivc::Keys, zkstep_prover::ivc::FoldInputs) {
    let spec = bench_spec(16, 8, 1, "sgd", "mse").unwrap();
    let keys = keygen(&spec, None, budget, Setup::Dev).unwrap();
    let before = zkstep_core::Checkpoint::init(&spec, 1);
    let batch = bench_batch(&spec, 16, 8).unwrap();
    let after = step(&spec, &before, &batch).unwrap().after;
    let inputs = fold_inputs(&keys.layout, &before, &after, &batch, zkstep_prover::ivc::stand_ins(), [Default::default(); 2]).unwrap();
    (keys, inputs)
}

fn bench_fold(c: &mut Criterion) {
    let mut g = c.benchmark_group("fold");
    g.sample_size(10);
    for log in [15u32, 16, 17] {
        let (keys, inp) = setup(1 << log);
        let (cons, _) = keys.pp.num_constraints();
        eprintln!("fold budget 2^{log}: {cons} constraints per fold");
        // fold 0 starts the IVC; fold 1 is a fold of two instances
        let mut rs = Ivc::new(&keys.pp, &inp.z0, vec![]).unwrap();
        rs.prove_step(&keys.pp, &inp.circuits[0], None).unwrap();
        g.bench_function(BenchmarkId::new("prove_step", format!("2^{log}")), |b| {
            b.iter_batched(
                || rs.clone(),
                |mut r| {
                    r.prove_step(&keys.pp, &inp.circuits[1], None).unwrap();
                    r
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn bench_compress_verify(c: &mut Criterion) {
    let log = 16u32;
    let (keys, inp) = setup(1 << log);
    let mut rs = Ivc::new(&keys.pp, &inp.z0, vec![]).unwrap();
    for circ in &inp.circuits {
        rs.prove_step(&keys.pp, circ, None).unwrap();
    }
    let mut g = c.benchmark_group("compress");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(300));
    g.bench_function(BenchmarkId::new("ppsnark_snark", format!("2^{log}")), |b| {
        b.iter(|| black_box(CompressedSnark::prove(&keys.pp, &keys.pk, &rs).unwrap()))
    });
    g.finish();

    let spec = bench_spec(16, 8, 1, "sgd", "mse").unwrap();
    let before = zkstep_core::Checkpoint::init(&spec, 1);
    let batch = bench_batch(&spec, 16, 8).unwrap();
    let after = step(&spec, &before, &batch).unwrap().after;
    let (proof, _) = prove(&keys, &before, &after, &batch, &mut |_| {}).unwrap();
    let vk = zkstep_verifier::read_verifying_key(&verifying_key_bytes(&keys).unwrap()).unwrap();
    let p = zkstep_verifier::read_proof(&proof_bytes(&keys, &proof).unwrap()).unwrap();
    let mut g = c.benchmark_group("verify");
    g.bench_function(BenchmarkId::new("standalone", format!("2^{log}")), |b| {
        b.iter(|| black_box(zkstep_verifier::verify(&vk, &p, None).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench_gadgets, bench_fold, bench_compress_verify);
criterion_main!(benches);
