//! Challenges drawn from committed witnesses are real: a permutation shown
//! by a grand product at such a challenge is accepted, a non-permutation is
//! not, in both modes, folded and compressed. (Forged provers — a W₁ changed
//! after the challenge, a swapped comm_W₁, a challenge not equal to its
//! hash, W₂ under another challenge — are in `forge.rs`, which reaches the
//! driver's internals.)
#![allow(clippy::unwrap_used)]

use super::common::*;
use ff::Field;
use nova_snark::traits::snark::RelaxedR1CSSNARKTrait;
use crate::testing::{Claim, Permutation, TableLookup};
use crate::{compress, run_challenges, ChallengeMode, Ivc, Params};

fn per_run(pp: &Params<E1, E2>, folds: &[Permutation<F>]) -> Ivc<E1, E2> {
    let z0 = vec![F::ONE, F::ONE];
    let mut z = z0.clone();
    let mut pre = vec![];
    for c in folds {
        let (p, next) = Ivc::precommit(pp, c, &z).unwrap();
        pre.push(p);
        z = next;
    }
    let ch = run_challenges(pp, &pre);
    let mut ivc = Ivc::new(pp, &z0, ch).unwrap();
    for (c, p) in folds.iter().zip(&pre) {
        ivc.prove_step(pp, c, Some(p)).unwrap();
    }
    ivc
}

#[test]
fn per_fold_accepts_permutations_and_rejects_others() {
    let c = |a: Vec<u64>, b: Vec<u64>| Permutation::<F>::new(a, b, true);
    let pp = params(&c(vec![0; 3], vec![0; 3]), ChallengeMode::PerFold);
    assert!(pp.layout().split());
    let (pk, vk) = compress::setup::<E1, E2, S1, S2, EE1>(&pp).unwrap();
    let z0 = vec![F::ZERO, F::from(9)];
    let good = [
        c(vec![1, 2, 3], vec![3, 1, 2]),
        c(vec![5, 5, 7], vec![5, 7, 5]),
        c(vec![0, 4, 4], vec![4, 0, 4]),
    ];
    let mut ivc = Ivc::new(&pp, &z0, vec![]).unwrap();
    for f in &good {
        ivc.prove_step(&pp, f, None).unwrap();
    }
    assert_eq!(ivc.verify(&pp, 3, &z0).unwrap(), vec![F::from(3), F::from(9)]);
    let proof = Proof::prove(&pp, &pk, &ivc).unwrap();
    proof.verify(&vk, 3, &z0, &[F::from(3), F::from(9)]).unwrap();
    assert!(proof.verify(&vk, 3, &z0, &[F::from(4), F::from(9)]).is_err());
    // the states from a closure that runs beside the SNARKs: its error is
    // returned as it is, another last state is the proof's rejection; the
    // statement's own check beside them comes first, and fails a proof
    // whose states and folds are right
    let states = |zn: u64| move || Ok::<_, &str>((vec![F::ZERO, F::from(9)], vec![F::from(zn), F::from(9)]));
    let fine = || Ok::<(), &str>(());
    assert!(matches!(proof.verify_with(&vk, 3, states(3), fine), Ok(Ok(()))));
    assert!(matches!(proof.verify_with(&vk, 3, states(4), fine), Ok(Err(_))));
    let failing = || Err::<(Vec<F>, Vec<F>), _>("no states");
    assert!(matches!(proof.verify_with(&vk, 3, failing, fine), Err("no states")));
    let refused = || Err::<(), _>("no opening");
    assert!(matches!(proof.verify_with(&vk, 3, states(3), refused), Err("no opening")));
    assert!(matches!(proof.verify_with(&vk, 3, failing, refused), Err("no opening")));
    assert!(matches!(proof.verify_with(&vk, 0, states(3), fine), Ok(Err(_))));
    // the key read back (the secondary's rebuilt from its shape and its
    // uncompressed commitment key) is the same key; a cut one is refused
    type Vk = compress::VerifierKey<E1, E2, S1, S2, EE1>;
    let bytes = postcard::to_stdvec(&vk).unwrap();
    let back: Vk = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(postcard::to_stdvec(&back).unwrap(), bytes);
    proof.verify(&back, 3, &z0, &[F::from(3), F::from(9)]).unwrap();
    assert!(postcard::from_bytes::<Vk>(&bytes[..bytes.len() - 100]).is_err());
    // so are the parameters (both commitment keys written uncompressed)
    let bytes = postcard::to_stdvec(&pp).unwrap();
    let back: crate::Params<E1, E2> = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(postcard::to_stdvec(&back).unwrap(), bytes);

    // a fold whose b is not a permutation of its a
    let mut ivc = Ivc::new(&pp, &z0, vec![]).unwrap();
    ivc.prove_step(&pp, &good[0], None).unwrap();
    ivc.prove_step(&pp, &c(vec![1, 2, 3], vec![3, 1, 1]), None)
        .unwrap();
    assert!(ivc.verify(&pp, 2, &z0).is_err());
    let proof = Proof::prove(&pp, &pk, &ivc);
    let zn = ivc.outputs().to_vec();
    assert!(proof.is_err() || proof.unwrap().verify(&vk, 2, &z0, &zn).is_err());
}

#[test]
fn per_run_accepts_a_permutation_across_folds_and_rejects_others() {
    let c = |a: Vec<u64>, b: Vec<u64>| Permutation::<F>::new(a, b, false);
    let pp = params(&c(vec![0; 2], vec![0; 2]), ChallengeMode::PerRun);
    let (pk, vk) = compress::setup::<E1, E2, S1, S2, EE1>(&pp).unwrap();
    let z0 = vec![F::ONE, F::ONE];
    // b is a permutation of a over the run, not within either fold
    let good = [c(vec![1, 2], vec![3, 1]), c(vec![3, 4], vec![4, 2])];
    let ivc = per_run(&pp, &good);
    let zn = ivc.verify(&pp, 2, &z0).unwrap();
    assert_eq!(zn[0], zn[1]);
    let proof = Proof::prove(&pp, &pk, &ivc).unwrap();
    proof.verify(&vk, 2, &z0, &zn).unwrap();

    // not a permutation over the run: the products differ at the end
    let bad = [c(vec![1, 2], vec![3, 1]), c(vec![3, 4], vec![4, 4])];
    let ivc = per_run(&pp, &bad);
    let zn = ivc.verify(&pp, 2, &z0).unwrap();
    assert_ne!(zn[0], zn[1]);
}

/// A PerRun IVC of lookup folds whose multiplicities are late values:
/// precommit every fold, complete each with its multiplicities, then fold.
fn lookup_run(pp: &Params<E1, E2>, folds: &[TableLookup<F>]) -> Ivc<E1, E2> {
    let z0 = vec![F::ZERO, F::ZERO, F::ZERO];
    let mut z = z0.clone();
    let mut pre = vec![];
    for c in folds {
        let (mut p, next) = Ivc::precommit(pp, c, &z).unwrap();
        assert_eq!(p.pending(), c.mult.len());
        p.complete(pp.primary_key(), &c.mult).unwrap();
        pre.push(p);
        z = next;
    }
    let ch = run_challenges(pp, &pre);
    let mut ivc = Ivc::new(pp, &z0, ch).unwrap();
    for (c, p) in folds.iter().zip(&pre) {
        ivc.prove_step(pp, c, Some(p)).unwrap();
    }
    ivc
}

#[test]
fn a_lookup_with_late_multiplicities_accepts_values_in_the_table_only() {
    let s = 4;
    let shape = TableLookup::<F> {
        values: vec![F::ZERO; 3],
        mult: vec![F::ZERO; s],
    };
    let pp = params(&shape, ChallengeMode::PerRun);
    let (pk, vk) = compress::setup::<E1, E2, S1, S2, EE1>(&pp).unwrap();
    let z0 = vec![F::ZERO, F::ZERO, F::ZERO];
    // table {0, …, 11} over three folds; each fold's queries anywhere in it
    let good = TableLookup::<F>::run(&[vec![0, 11, 5], vec![5, 5, 7], vec![3, 0, 9]], s);
    let ivc = lookup_run(&pp, &good);
    let zn = ivc.verify(&pp, 3, &z0).unwrap();
    assert_eq!((zn[0] == zn[1], zn[2]), (true, F::from(12)));
    let proof = Proof::prove(&pp, &pk, &ivc).unwrap();
    proof.verify(&vk, 3, &z0, &zn).unwrap();

    // a query past the table: no multiplicities balance it
    let bad = TableLookup::<F>::run(&[vec![0, 11, 5], vec![5, 5, 12], vec![3, 0, 9]], s);
    let zn = lookup_run(&pp, &bad).verify(&pp, 3, &z0).unwrap();
    assert_ne!(zn[0], zn[1]);
    // one multiplicity off by one
    let mut off = good.clone();
    off[1].mult[1] += F::ONE;
    let zn = lookup_run(&pp, &off).verify(&pp, 3, &z0).unwrap();
    assert_ne!(zn[0], zn[1]);
}

/// A PerRunTwice IVC of claim folds: every W₁ committed, the first round
/// drawn, every W₂ committed at it, both rounds drawn, then the folds.
fn two_rounds(pp: &Params<E1, E2>, folds: &[Claim<F>]) -> (Ivc<E1, E2>, Vec<F>) {
    let z0 = vec![F::ZERO, F::ZERO];
    let mut z = z0.clone();
    let mut pre = vec![];
    for c in folds {
        let (p, next) = Ivc::precommit(pp, c, &z).unwrap();
        assert!(p.second().is_none());
        pre.push(p);
        z = next;
    }
    let first = run_challenges(pp, &pre);
    assert_eq!(first.len(), 1);
    let mut z = z0.clone();
    for (c, p) in folds.iter().zip(pre.iter_mut()) {
        z = Ivc::precommit_second(pp, c, &z, p, &first).unwrap();
    }
    let ch = run_challenges(pp, &pre);
    assert_eq!((ch.len(), ch[0]), (2, first[0]));
    let mut ivc = Ivc::new(pp, &z0, ch.clone()).unwrap();
    for (c, p) in folds.iter().zip(&pre) {
        ivc.prove_step(pp, c, Some(p)).unwrap();
    }
    (ivc, ch)
}

#[test]
fn a_claim_checked_at_a_second_round_challenge_is_accepted_only_when_true() {
    let pp = params(&Claim::<F>::new(&[0; 3]), ChallengeMode::PerRunTwice);
    let l = pp.layout();
    assert_eq!((l.parts, l.first, l.second), (3, 3, 8));
    let (pk, vk) = compress::setup::<E1, E2, S1, S2, EE1>(&pp).unwrap();
    let z0 = vec![F::ZERO, F::ZERO];
    let folds = [Claim::new(&[1, 2, 3]), Claim::new(&[4, 5, 6])];
    let (ivc, ch) = two_rounds(&pp, &folds);
    // z_n = [ρ·Σa, 2]
    let want = vec![ch[0] * F::from(21), F::from(2)];
    assert_eq!(ivc.verify(&pp, 2, &z0).unwrap(), want);
    // the masks drawn beforehand (as the prover does while folding), then used
    let masks = crate::Masks::draw(&pp).unwrap();
    let proof = Proof::prove_masked(&pp, &pk, &ivc, masks).unwrap();
    proof.verify(&vk, 2, &z0, &want).unwrap();
    // each later part's opening (W₂'s and W₃'s, tasks side by side) is
    // checked: one claimed evaluation off is refused, and with both off the
    // first part's failure is the one named
    let bytes = postcard::to_stdvec(&proof).unwrap();
    let edited = |parts: &[usize]| {
        let mut p: Proof = postcard::from_bytes(&bytes).unwrap();
        for k in parts {
            p.shift_opening(*k);
        }
        p.verify(&vk, 2, &z0, &want).unwrap_err().to_string()
    };
    assert!(edited(&[0]).contains("comm_W2"), "{}", edited(&[0]));
    assert!(edited(&[1]).contains("comm_W3"), "{}", edited(&[1]));
    assert!(edited(&[1, 0]).contains("comm_W2"), "{}", edited(&[1, 0]));
    // masks of other parameters (another shape) are refused, not folded in
    let other = params(&Claim::<F>::new(&[0; 5]), ChallengeMode::PerRunTwice);
    let wrong = crate::Masks::draw(&other).unwrap();
    assert!(Proof::prove_masked(&pp, &pk, &ivc, wrong).is_err());
    // not another number of folds, nor another z₀, nor another z_n
    assert!(proof.verify(&vk, 3, &z0, &want).is_err());
    assert!(proof.verify(&vk, 2, &[F::ONE, F::ZERO], &want).is_err());
    assert!(proof.verify(&vk, 2, &z0, &[want[0], F::ONE]).is_err());

    // a claim one off in the second fold, fixed before γ: the sum at γ is not 0
    let mut bad = folds.clone();
    bad[1].skew[0] = F::ONE;
    let (ivc, _) = two_rounds(&pp, &bad);
    assert!(ivc.verify(&pp, 2, &z0).is_err());
    let proof = Proof::prove(&pp, &pk, &ivc);
    let zn = ivc.outputs().to_vec();
    assert!(proof.is_err() || proof.unwrap().verify(&vk, 2, &z0, &zn).is_err());
}

#[test]
fn a_step_circuit_with_a_second_round_needs_its_mode() {
    let c = Claim::<F>::new(&[0; 2]);
    for mode in [ChallengeMode::PerRun, ChallengeMode::PerFold, ChallengeMode::None] {
        assert!(Params::<E1, E2>::setup(&c, mode, &*S1::ck_floor(), &*S2::ck_floor()).is_err());
    }
    let one_round = Permutation::<F>::new(vec![0; 2], vec![0; 2], false);
    assert!(Params::<E1, E2>::setup(&one_round, ChallengeMode::PerRunTwice, &*S1::ck_floor(), &*S2::ck_floor()).is_err());
}

