//! GPU against CPU on one machine: for 2^lo … 2^hi random points, checks
//! that the GPU's Σ sᵢ·Pᵢ equals the CPU's and times both (median of 3).
//! Prints one JSON line per size; exits 1 on any mismatch, 2 without a GPU.
//!
//! `cargo run --release -p zkstep-msm --features cuda --example msm_check -- 16 24`
#![allow(missing_docs)]

use ff::Field;
use halo2curves::bn256::Fr;
use rand_chacha::rand_core::SeedableRng;
use std::time::Instant;

fn median_time<T>(mut f: impl FnMut() -> T) -> (T, f64) {
    let mut out = f();
    let mut t = vec![];
    for _ in 0..3 {
        let s = Instant::now();
        out = f();
        t.push(s.elapsed().as_secs_f64());
    }
    t.sort_by(|a, b| a.total_cmp(b));
    (out, t[1])
}

fn main() {
    let a: Vec<u32> = std::env::args()
        .skip(1)
        .filter_map(|s| s.parse().ok())
        .collect();
    let (lo, hi) = (
        a.first().copied().unwrap_or(16),
        a.get(1).copied().unwrap_or(24),
    );
    if let Err(e) = zkstep_msm::gpu_status() {
        eprintln!("msm_check: {e}");
        std::process::exit(2);
    }
    let mut bad = false;
    for log in lo..=hi {
        let n = 1usize << log;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(log as u64);
        let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        let bases = zkstep_msm::sequential_bases(n);
        let (gpu, tg) = median_time(|| zkstep_msm::gpu_msm(&scalars, &bases));
        let (cpu, tc) = median_time(|| zkstep_msm::cpu_msm(&scalars, &bases));
        let equal = gpu.as_ref().ok() == Some(&cpu);
        bad |= !equal;
        println!(
            "{{\"log2_points\": {log}, \"equal\": {equal}, \"gpu_ms\": {:.3}, \"cpu_ms\": {:.3}, \"gpu_ns_per_point\": {:.2}, \"cpu_ns_per_point\": {:.1}, \"speedup\": {:.1}{}}}",
            tg * 1e3,
            tc * 1e3,
            tg * 1e9 / n as f64,
            tc * 1e9 / n as f64,
            tc / tg,
            gpu.err().map_or(String::new(), |e| format!(", \"error\": {:?}", e.to_string()))
        );
    }
    if bad {
        std::process::exit(1);
    }
}
