//! The secondary's evaluation argument, nova-snark's prover against
//! [`zkstep_fold::ipa::FastIpa`]'s, on one random instance of 2^k values
//! (the secondary's compression proves one of 2¹⁴): prove times, verify
//! times (nova-snark's verifier, ours on zkstep-msm's affine Pippenger),
//! whether the two proofs are the same bytes, and the same claim on
//! commitments in rows ([`zkstep_fold::rows::RowIpa`], ROWS rows under
//! n/ROWS generators): its prove and verify times.
//! `cargo run --release -p zkstep-fold --features tools --example ipa_speed [K…]`
#![allow(clippy::unwrap_used)]

use ff::Field;
use nova_snark::provider::ipa_pc;
use nova_snark::spartan::polys::multilinear::MultilinearPolynomial;
use nova_snark::traits::commitment::CommitmentEngineTrait;
use nova_snark::traits::evaluation::EvaluationEngineTrait;
use nova_snark::traits::{Engine, TranscriptEngineTrait};
use rand::rngs::OsRng;
use std::time::Instant;
use zkstep_fold::ipa::FastIpa;
use zkstep_fold::rows::{GrumpkinRows, RowEngine, RowIpa, ROWS};

type E = nova_snark::provider::GrumpkinEngine;
type F = <E as Engine>::Scalar;

fn main() {
    let ks: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    println!("k   nova-snark prove   FastIpa prove   nova-snark verify   FastIpa verify   same bytes   RowIpa prove ({ROWS} rows)   RowIpa verify");
    for k in if ks.is_empty() { vec![12, 14, 16] } else { ks } {
        let n = 1 << k;
        let ck = <E as Engine>::CE::setup(b"ipa speed", n).unwrap();
        let poly: Vec<F> = (0..n).map(|_| F::random(OsRng)).collect();
        let point: Vec<F> = (0..k).map(|_| F::random(OsRng)).collect();
        let eval = MultilinearPolynomial::new(poly.clone()).evaluate(&point);
        let comm = <E as Engine>::CE::commit(&ck, &poly, &F::ZERO);
        let tr = || <E as Engine>::TE::new(b"ipa speed");
        let (pk_n, vk) = ipa_pc::EvaluationEngine::<E>::setup(&ck).unwrap();
        let (pk, vk_ours) = FastIpa::<E>::setup(&ck).unwrap();
        let t = Instant::now();
        let theirs = ipa_pc::EvaluationEngine::<E>::prove(&ck, &pk_n, &mut tr(), &comm, &poly, &point, &eval).unwrap();
        let t_theirs = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let ours = FastIpa::<E>::prove(&ck, &pk, &mut tr(), &comm, &poly, &point, &eval).unwrap();
        let t_ours = t.elapsed().as_secs_f64();
        let t = Instant::now();
        ipa_pc::EvaluationEngine::<E>::verify(&vk, &mut tr(), &comm, &point, &eval, &ours).unwrap();
        let t_nova = t.elapsed().as_secs_f64();
        // the best of five for both verifiers of ours: one check is milliseconds
        let best = |f: &dyn Fn()| {
            (0..5)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        };
        let t_verify = best(&|| FastIpa::<E>::verify(&vk_ours, &mut tr(), &comm, &point, &eval, &ours).unwrap());
        let same = postcard::to_stdvec(&ours).unwrap() == postcard::to_stdvec(&theirs).unwrap();
        let ck_rows = RowEngine::setup(b"ipa speed", n).unwrap();
        let comm_rows = RowEngine::commit(&ck_rows, &poly, &F::ZERO);
        let tr_rows = || <GrumpkinRows as Engine>::TE::new(b"ipa speed");
        let (pk_rows, vk_rows) = RowIpa::setup(&ck_rows).unwrap();
        let t = Instant::now();
        let arg = RowIpa::prove(&ck_rows, &pk_rows, &mut tr_rows(), &comm_rows, &poly, &point, &eval).unwrap();
        let t_rows = t.elapsed().as_secs_f64();
        let t_rows_verify = best(&|| RowIpa::verify(&vk_rows, &mut tr_rows(), &comm_rows, &point, &eval, &arg).unwrap());
        println!(
            "{k:<3} {t_theirs:>13.2} s {t_ours:>13.2} s {:>15.1} ms {:>13.1} ms   {same:<10} {t_rows:>18.2} s {:>14.1} ms",
            t_nova * 1e3,
            t_verify * 1e3,
            t_rows_verify * 1e3
        );
    }
}
