//! Native reference step time: the denominator of every proof-overhead ratio.
//! `cargo bench -p zkstep-benches --bench reference`
//!
//! Measures one full training step (forward, MSE gradient, backward, SGD) of
//! the reference executor at batch 32 for a 2-layer MLP of width w, for
//! w ∈ {64, 128, 256, 512}.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use zkstep_core::{model::seeded_salt, Batch, Checkpoint, Matrix, ModelSpec};

fn spec(width: usize, batch: usize) -> ModelSpec {
    let toml = format!(
        "batch_size = {batch}\n[optimizer]\nlr = 0.01\n[[layers]]\ninputs = {width}\noutputs = {width}\nactivation = \"relu\"\n[[layers]]\ninputs = {width}\noutputs = {width}\nactivation = \"identity\"\n"
    );
    match ModelSpec::from_toml_str(&toml) {
        Ok(s) => s,
        Err(e) => panic!("bench spec: {e}"),
    }
}

fn bench_step(c: &mut Criterion) {
    let mut g = c.benchmark_group("reference_step_2layer_b32");
    g.sample_size(10);
    for width in [64usize, 128, 256, 512] {
        let s = spec(width, 32);
        let ckpt = Checkpoint::init(&s, 1);
        let x = Matrix::from_vec(
            32,
            width,
            (0..32 * width)
                .map(|i| ((i * 7919) % 2001) as i64 * 1_000_000 - 1_000_000_000)
                .collect(),
        );
        let y = Matrix::from_vec(
            32,
            width,
            (0..32 * width)
                .map(|i| ((i * 104729) % 1001) as i64 * 1_000_000)
                .collect(),
        );
        let (Some(x), Some(y)) = (x, y) else {
            panic!("bench shapes")
        };
        let batch = Batch {
            x,
            y,
            salt: seeded_salt(1, 0),
        };
        g.bench_with_input(BenchmarkId::from_parameter(width), &width, |b, _| {
            b.iter(|| black_box(zkstep_core::step(&s, &ckpt, &batch).map(|t| t.loss.loss)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench_step);
criterion_main!(benches);
