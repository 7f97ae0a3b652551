//! Measure compression SNARK variants on one zkstep fold shape (developer tool):
//! `cargo run --release -p zkstep-examples --features tools --example compress_variants -- ROWS`
#![allow(clippy::unwrap_used, missing_docs)]
use std::sync::Arc;
use std::time::Instant;
use zkstep_circuits::engine::{E1, E2, EE1, EE2};
use zkstep_circuits::{Layout, TileCircuit};
use zkstep_core::data::{make_batch, two_moons};
use zkstep_core::model::seeded_salt;
use zkstep_core::spec::demo_spec;
use zkstep_core::{step, Checkpoint};
use zkstep_fold::{compress, ChallengeMode, CompressedProof, Ivc, Params};
use zkstep_prover::ivc::{fold_inputs, stand_ins, FoldInputs};

fn run<S1: zkstep_fold::Compressor<E1>, S2: zkstep_fold::Compressor<E2>>(name: &str, rows: usize) {
    let s = demo_spec();
    let ds = two_moons(64, 0.1, 1);
    let before = Checkpoint::init(&s, 1);
    let batch = make_batch(&ds, s.batch_size, 0, 1, seeded_salt(1, 0));
    let after = step(&s, &before, &batch).unwrap().after;
    let lay = Arc::new(Layout::new(&s, rows).unwrap());
    let FoldInputs {
        z0, circuits: cs, ..
    } = fold_inputs(&lay, &before, &after, &batch, stand_ins(), [Default::default(); 2]).unwrap();
    let t = Instant::now();
    let pp = Params::<E1, E2>::setup(
        &TileCircuit::shape(lay.clone()),
        ChallengeMode::None,
        &*S1::ck_floor(),
        &*S2::ck_floor(),
    )
    .unwrap();
    let (pk, vk) = compress::setup::<E1, E2, S1, S2, EE1>(&pp).unwrap();
    let keygen = t.elapsed();
    let t = Instant::now();
    let mut ivc = Ivc::new(&pp, &z0, vec![]).unwrap();
    for c in &cs {
        ivc.prove_step(&pp, c, None).unwrap();
    }
    let fold = t.elapsed();
    let t = Instant::now();
    let snark = CompressedProof::<E1, E2, S1, S2, EE1>::prove(&pp, &pk, &ivc).unwrap();
    let compress = t.elapsed();
    // the first verification builds constants once (timed apart: cold)
    let t = Instant::now();
    snark.verify(&vk, cs.len() as u64, &z0, ivc.outputs()).unwrap();
    let cold = t.elapsed();
    let t = Instant::now();
    let reps: u32 = std::env::var("REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    for _ in 0..reps {
        snark.verify(&vk, cs.len() as u64, &z0, ivc.outputs()).unwrap();
    }
    let verify = t.elapsed() / reps;
    let bytes = postcard::to_stdvec(&snark).unwrap().len();
    println!("{name:<22} constraints {:>7}  keygen {keygen:>8.2?}  fold {fold:>8.2?}  compress {compress:>8.2?}  verify {verify:>8.2?} (cold {cold:>8.2?})  proof {bytes} B", pp.num_constraints().0);
}

fn main() {
    let rows: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(4);
    let which = std::env::args().nth(2).unwrap_or_default();
    type Pp1 = nova_snark::spartan::ppsnark::RelaxedR1CSSNARK<E1, EE1>;
    type Sn1 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E1, EE1>;
    type Pp2 = nova_snark::spartan::ppsnark::RelaxedR1CSSNARK<E2, EE2>;
    type Sn2 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E2, EE2>;
    match which.as_str() {
        "pp-pp" => run::<Pp1, Pp2>("ppsnark/ppsnark", rows),
        "pp-sn" => run::<Pp1, Sn2>("ppsnark/snark", rows),
        "sn-sn" => run::<Sn1, Sn2>("snark/snark", rows),
        _ => run::<Sn1, Pp2>("snark/ppsnark", rows),
    }
}
