//! What checkpoint commitments as KZG points would cost natively
//! (docs/design/kzg-checkpoints.md): commit a width-512 SGD checkpoint's
//! packed record stream (N coefficients), then open it together with the
//! next checkpoint's at ζ and verify. Prints seconds; BENCHMARKS.md records
//! them. `cargo run --release -p zkstep-fold --features tools --example kzg_speed [N]`.
#![allow(clippy::unwrap_used)]

use ff::Field;
use nova_snark::provider::hyperkzg::CommitmentKey;
use nova_snark::provider::Bn256EngineKZG as E;
use nova_snark::traits::Engine;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::time::Instant;
use zkstep_fold::kzg;

type F = <E as Engine>::Scalar;

fn main() {
    // 512 units × (512 + 1 bias) values, padded records of 69-value blocks → ≈ 95k packed elements
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(95_000);
    let mut rng = StdRng::seed_from_u64(1);
    let t = Instant::now();
    let ck = CommitmentKey::<E>::setup_from_rng(b"kzg speed", n, StdRng::seed_from_u64(2));
    println!("dev key of {} powers: {:.2} s", ck.ck().len(), t.elapsed().as_secs_f64());
    // packed values: three 64-bit limbs, so ≈ 192-bit scalars
    let packed = |rng: &mut StdRng| -> Vec<F> {
        (0..n)
            .map(|_| {
                let l = |rng: &mut StdRng| F::from(rand::RngCore::next_u64(rng));
                let s = F::from(u64::MAX) + F::ONE;
                l(rng) + s * l(rng) + s * s * l(rng)
            })
            .collect()
    };
    let (a, b) = (packed(&mut rng), packed(&mut rng));
    let t = Instant::now();
    let ca = kzg::commit(&ck, &a).unwrap();
    let commit_s = t.elapsed().as_secs_f64();
    let cb = kzg::commit(&ck, &b).unwrap();
    let (r, z) = (F::random(&mut rng), F::random(&mut rng));
    let t = Instant::now();
    let o = kzg::open(&ck, &[&a, &b], r, z).unwrap();
    let open_s = t.elapsed().as_secs_f64();
    let vk = kzg::verifier_key(&ck).unwrap();
    let t = Instant::now();
    kzg::verify(&vk, &[ca, cb], r, z, &o).unwrap();
    let verify_ms = t.elapsed().as_secs_f64() * 1e3;
    println!("N = {n}: commit {commit_s:.3} s, open two at ζ {open_s:.3} s, verify {verify_ms:.2} ms");
}
