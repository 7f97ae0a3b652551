//! The layer against nova-snark's own IVC on the same one-phase circuit:
//! the same final state after n folds, accepted by both; our compressed
//! proof verifies and rejects what it does not prove.
#![allow(clippy::unwrap_used)]

use super::common::*;
use nova_snark::traits::snark::RelaxedR1CSSNARKTrait;
use crate::{compress, ChallengeMode, Ivc, OnePhase};

// nova-snark's own IVC on its own Grumpkin engine (one point a commitment)
type NovaE2 = nova_snark::provider::GrumpkinEngine;
type NovaS2 = nova_snark::spartan::snark::RelaxedR1CSSNARK<NovaE2, crate::ipa::FastIpa<NovaE2>>;
type NovaPp = nova_snark::nova::PublicParams<E1, NovaE2, Cubic>;
type NovaRs = nova_snark::nova::RecursiveSNARK<E1, NovaE2, Cubic>;

#[test]
fn same_final_state_as_nova_snark() {
    let z0 = vec![F::from(2), F::from(3)];
    let n = 4;
    let npp = NovaPp::setup(&Cubic, &*S1::ck_floor(), &*NovaS2::ck_floor()).unwrap();
    let mut rs = NovaRs::new(&npp, &Cubic, &z0).unwrap();
    for _ in 0..n {
        rs.prove_step(&npp, &Cubic).unwrap();
    }
    let theirs = rs.verify(&npp, n, &z0).unwrap();

    let c = OnePhase(Cubic);
    let pp = params(&c, ChallengeMode::None);
    let mut ivc = Ivc::new(&pp, &z0, vec![]).unwrap();
    for _ in 0..n {
        ivc.prove_step(&pp, &c, None).unwrap();
    }
    let ours = ivc.verify(&pp, n as u64, &z0).unwrap();
    let mut native = z0.clone();
    for _ in 0..n {
        native = cubic(&native);
    }
    assert_eq!(ours, theirs);
    assert_eq!(ours, native);

    // the recursive check rejects another start or another count
    assert!(ivc.verify(&pp, n as u64, &[F::from(2), F::from(4)]).is_err());
    assert!(ivc.verify(&pp, n as u64 - 1, &z0).is_err());
}

#[test]
fn one_fold_and_compression_round_trip() {
    let c = OnePhase(Cubic);
    let pp = params(&c, ChallengeMode::None);
    let (pk, vk) = compress::setup::<E1, E2, S1, S2, EE1>(&pp).unwrap();
    let z0 = vec![F::from(7), F::from(1)];
    for n in [1u64, 3] {
        let mut ivc = Ivc::new(&pp, &z0, vec![]).unwrap();
        for _ in 0..n {
            ivc.prove_step(&pp, &c, None).unwrap();
        }
        let proof = Proof::prove(&pp, &pk, &ivc).unwrap();
        let zn = ivc.verify(&pp, n, &z0).unwrap();
        proof.verify(&vk, n, &z0, &zn).unwrap();
        assert!(proof.verify(&vk, n + 1, &z0, &zn).is_err(), "another count");
        assert!(
            proof.verify(&vk, n, &[F::from(7), F::from(2)], &zn).is_err(),
            "another start"
        );
        // the proof does not carry z_n: the verifier's must be the one proven
        let mut other = zn.clone();
        other[1] += F::from(1);
        assert!(proof.verify(&vk, n, &z0, &other).is_err(), "another end");
        assert!(proof.verify(&vk, n, &z0, &zn[..1]).is_err(), "a short end");
        // a proof survives its encoding
        let bytes = postcard::to_allocvec(&proof).unwrap();
        let back: Proof = postcard::from_bytes(&bytes).unwrap();
        back.verify(&vk, n, &z0, &zn).unwrap();
    }
}
