//! Forged provers against the challenge machinery, and the
//! no-free-variable check of both circuits' witnesses (W₁ and W₂). These
//! reach the driver's halves (`Ivc::primary`, `Ivc::finish`) to build folds
//! an honest prover refuses to build.

#![allow(clippy::type_complexity)]

use crate::compress;
use crate::instance::commit_witness;
use crate::ivc::{draw, Ivc, Precommitment};
use crate::params::Params;
use crate::step::{ChallengeMode, OnePhase, StepCircuit};
use crate::ivc::SecondCommitment;
use crate::testing::{Claim, Permutation};
use crate::{run_challenges, FoldError};
use ff::Field;
use nova_snark::r1cs::R1CSShape;
use nova_snark::traits::snark::RelaxedR1CSSNARKTrait;
use nova_snark::traits::Engine;

type E1 = nova_snark::provider::Bn256EngineKZG;
type E2 = crate::rows::GrumpkinRows;
type F = <E1 as Engine>::Scalar;
type EE1 = nova_snark::provider::hyperkzg::EvaluationEngine<E1>;
type EE2 = crate::rows::RowIpa;
// Spartan opens with Mercury as zkstep's engine does; later parts with HyperKZG
type S1 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E1, nova_snark::provider::mercury::EvaluationEngine<E1>>;
type S2 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E2, EE2>;
type Proof = compress::CompressedProof<E1, E2, S1, S2, EE1>;

fn params<C: StepCircuit<F>>(c: &C, mode: ChallengeMode) -> Params<E1, E2> {
    Params::setup(c, mode, &*S1::ck_floor(), &*S2::ck_floor()).unwrap()
}

/// Parameters of the two-value permutation circuit, made once per mode for
/// all the tests here (PerFold: each fold a permutation; PerRun: the run).
fn shared(per_fold: bool) -> &'static Params<E1, E2> {
    static FOLD: std::sync::OnceLock<Params<E1, E2>> = std::sync::OnceLock::new();
    static RUN: std::sync::OnceLock<Params<E1, E2>> = std::sync::OnceLock::new();
    let (cell, mode) = if per_fold {
        (&FOLD, ChallengeMode::PerFold)
    } else {
        (&RUN, ChallengeMode::PerRun)
    };
    cell.get_or_init(|| params(&perm(&[0; 2], &[0; 2], per_fold), mode))
}

fn perm(a: &[u64], b: &[u64], per_fold: bool) -> Permutation<F> {
    Permutation::new(a.to_vec(), b.to_vec(), per_fold)
}

/// b's last value chosen, once α is known, so that Π(α − a) = Π(α − b):
/// what a prover who could change W₁ after the challenge would do.
fn forge_last(alpha: F, a: &[F], b: &[F]) -> Vec<F> {
    let n = b.len();
    let pa = Permutation::product(alpha, a);
    let pb = Permutation::product(alpha, &b[..n - 1]);
    let mut out = b.to_vec();
    out[n - 1] = alpha - pa * pb.invert().unwrap();
    out
}

/// A precommitment that keeps `honest`'s comm_W₁ but vouches for `c`'s W₁.
fn vouch(pp: &Params<E1, E2>, honest: &Precommitment<E1>, c: &Permutation<F>, z: &[F]) -> Precommitment<E1> {
    let (mine, _) = Ivc::precommit(pp, c, z).unwrap();
    Precommitment {
        comm: honest.comm,
        blind: honest.blind,
        ..mine
    }
}

fn rejected(r: crate::Result<Vec<F>>) -> String {
    match r {
        Err(FoldError::Rejected(m)) => m,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn a_w1_changed_after_the_challenge_is_rejected() {
    let pp = shared(true);
    let (pk, vk) = compress::setup::<E1, E2, S1, S2, EE1>(pp).unwrap();
    let z0 = vec![F::ZERO, F::ZERO];
    let bad = perm(&[1, 2], &[2, 2], true);
    let (pre, _) = Ivc::precommit(pp, &bad, &z0).unwrap();
    let alpha = draw(pp, Some(&pre))[0];
    let forged = Permutation {
        b: forge_last(alpha, &bad.a, &bad.b),
        ..bad.clone()
    };
    let pre_forged = vouch(pp, &pre, &forged, &z0);
    let ivc0 = Ivc::new(pp, &z0, vec![]).unwrap();

    // the honest prover refuses: its W₁ is not the committed one
    let mut ivc = ivc0.clone();
    assert!(matches!(
        ivc.primary(pp, &forged, Some(&pre), vec![alpha]),
        Err(FoldError::PhaseDependsOnChallenge { fold: 0 })
    ));

    // comm_W₁ kept, W₁ changed: comm_W₁ does not open to W's first part
    let f = ivc.primary(pp, &forged, Some(&pre_forged), vec![alpha]).unwrap();
    ivc.finish(pp, f).unwrap();
    rejected(ivc.verify(pp, 1, &z0));

    // the same, with comm_W₂ made up so that comm_W₁ + comm_W₂ opens to W:
    // only the opening of comm_W₂ on W₂'s generators can catch it
    let mut ivc = ivc0.clone();
    let mut f = ivc.primary(pp, &forged, Some(&pre_forged), vec![alpha]).unwrap();
    let r = F::random(&mut rand::rngs::OsRng);
    let plain = crate::ivc::plain_layout(pp.layout1.num_vars());
    let whole = commit_witness::<E1>(&pp.ck1, &plain, &f.w1.w, &[r]).unwrap()[0];
    f.u1.comm_w[1] = whole + f.u1.comm_w[0] * (-F::ONE);
    f.w1.blinds = vec![f.w1.blinds[0], r - f.w1.blinds[0]];
    ivc.finish(pp, f).unwrap();
    rejected(ivc.verify(pp, 1, &z0));
    let proof = Proof::prove(pp, &pk, &ivc).unwrap();
    let why = rejected(proof.verify(&vk, 1, &z0, ivc.outputs()).map(|_| vec![]));
    assert!(why.contains("comm_W2"), "{why}");
}

#[test]
fn a_swapped_comm_w1_is_rejected() {
    // PerFold: fold 2 proven under fold 1's comm_W₁ (and the challenge it gives)
    let pp = shared(true);
    let z0 = vec![F::ZERO, F::ZERO];
    let c1 = perm(&[1, 2], &[2, 1], true);
    let c2 = perm(&[3, 4], &[4, 3], true);
    let mut ivc = Ivc::new(pp, &z0, vec![]).unwrap();
    let (p1, _) = Ivc::precommit(pp, &c1, &z0).unwrap();
    ivc.prove_step(pp, &c1, None).unwrap();
    let z1 = ivc.outputs().to_vec();
    let swapped = vouch(pp, &p1, &c2, &z1);
    let f = ivc.primary(pp, &c2, Some(&swapped), draw(pp, Some(&p1))).unwrap();
    ivc.finish(pp, f).unwrap();
    rejected(ivc.verify(pp, 2, &z0));

    // PerRun: the challenges drawn from the commitments in another order
    let pp = shared(false);
    let z0 = vec![F::ONE, F::ONE];
    let c1 = perm(&[1, 2], &[2, 1], false);
    let c2 = perm(&[3, 4], &[4, 3], false);
    let (p1, z1) = Ivc::precommit(pp, &c1, &z0).unwrap();
    let (p2, _) = Ivc::precommit(pp, &c2, &z1).unwrap();
    let mut ivc = Ivc::new(pp, &z0, run_challenges(pp, &[p2.clone(), p1.clone()])).unwrap();
    ivc.prove_step(pp, &c1, Some(&p1)).unwrap();
    ivc.prove_step(pp, &c2, Some(&p2)).unwrap();
    rejected(ivc.verify(pp, 2, &z0));
}

#[test]
fn a_challenge_not_equal_to_its_hash_is_rejected() {
    // PerFold: α + 1 as the fold's public challenge (W₂ consistent with it)
    let pp = shared(true);
    let z0 = vec![F::ZERO, F::ZERO];
    let c = perm(&[5, 6], &[6, 5], true);
    let (pre, _) = Ivc::precommit(pp, &c, &z0).unwrap();
    let alpha = draw(pp, Some(&pre))[0];
    let mut ivc = Ivc::new(pp, &z0, vec![]).unwrap();
    let f = ivc.primary(pp, &c, Some(&pre), vec![alpha + F::ONE]).unwrap();
    ivc.finish(pp, f).unwrap();
    rejected(ivc.verify(pp, 1, &z0));

    // PerRun: challenges other than the chain's
    let pp = shared(false);
    let z0 = vec![F::ONE, F::ONE];
    let c = perm(&[5, 6], &[6, 5], false);
    let (pre, _) = Ivc::precommit(pp, &c, &z0).unwrap();
    let ch = run_challenges(pp, std::slice::from_ref(&pre));
    let mut ivc = Ivc::new(pp, &z0, vec![ch[0] + F::ONE]).unwrap();
    ivc.prove_step(pp, &c, Some(&pre)).unwrap();
    rejected(ivc.verify(pp, 1, &z0));
}

#[test]
fn w2_under_another_challenge_is_rejected() {
    for per_fold in [true, false] {
        let z0 = if per_fold {
            vec![F::ZERO, F::ZERO]
        } else {
            vec![F::ONE, F::ONE]
        };
        let pp = shared(per_fold);
        let c = Permutation {
            skew: F::ONE,
            ..perm(&[5, 6], &[6, 5], per_fold)
        };
        let (pre, _) = Ivc::precommit(pp, &c, &z0).unwrap();
        let ch = if per_fold {
            vec![]
        } else {
            run_challenges(pp, std::slice::from_ref(&pre))
        };
        let mut ivc = Ivc::new(pp, &z0, ch).unwrap();
        ivc.prove_step(pp, &c, (!per_fold).then_some(&pre)).unwrap();
        rejected(ivc.verify(pp, 1, &z0));
    }
}

/// Columns no constraint reads, except W₂'s padding (which no variable has).
pub(crate) fn unread_columns<E: Engine>(shape: &R1CSShape<E>, skip: &[usize]) -> Vec<usize> {
    let mut read = vec![false; shape.num_vars()];
    for m in [shape.A(), shape.B(), shape.C()] {
        for (_, col, _) in m.iter() {
            if col < read.len() {
                read[col] = true;
            }
        }
    }
    (0..read.len())
        .filter(|c| !read[*c] && !skip.contains(c))
        .collect()
}

#[test]
fn no_witness_variable_is_free() {
    let one = params(&OnePhase(crate::testing::Doubler), ChallengeMode::None);
    for pp in [&one, shared(true), shared(false), shared_two()] {
        let pad = pp.layout1.padding();
        assert_eq!(unread_columns(&pp.shape1, &pad), Vec::<usize>::new(), "primary");
        assert_eq!(unread_columns(&pp.shape2, &[]), Vec::<usize>::new(), "secondary");
    }
    // in a fold's satisfying witness, changing any one value of W₁ or W₂
    // alone breaks a constraint
    let pp = shared(true);
    let z0 = vec![F::ZERO, F::ZERO];
    let c = perm(&[1, 2], &[2, 1], true);
    let mut ivc = Ivc::new(pp, &z0, vec![]).unwrap();
    ivc.prove_step(pp, &c, None).unwrap();
    ivc.prove_step(pp, &c, None).unwrap();
    let (pre, _) = Ivc::precommit(pp, &c, ivc.outputs()).unwrap();
    let f = ivc.primary(pp, &c, Some(&pre), draw(pp, Some(&pre))).unwrap();
    let free = free_columns(&pp.shape1, &f.w1.w, &f.u1.x, &pp.layout1.padding());
    // nova-snark's equality gadget (in its complete addition) takes an
    // inverse of a − b, which no constraint pins when a = b: a row of the
    // secondary's commitments that is zero on both sides of a fold (this
    // test's secondary fills three of its four rows) leaves that inverse
    // free. It feeds nothing: the gadget's result is 1 whatever it is.
    let names = crate::params::primary_column_names::<E1, E2, _>(&pp.cfg, &c).unwrap();
    let free: Vec<(usize, &String)> = free
        .iter()
        .map(|col| (*col, &names[*col]))
        .filter(|(_, n)| !(n.contains("/check self.") && n.ends_with("/t/num")))
        .collect();
    assert!(free.is_empty(), "free columns of the primary: {free:?}");
    // and on three parts (W₁, W₂, W₃ each read)
    let pp = shared_two();
    let z0 = vec![F::ZERO, F::ZERO];
    let c = Claim::<F>::new(&[1, 2, 3]);
    let (mut pres, mut z) = (vec![], z0.clone());
    for _ in 0..3 {
        let (p, next) = Ivc::precommit(pp, &c, &z).unwrap();
        pres.push(p);
        z = next;
    }
    let first = run_challenges(pp, &pres);
    let mut z = z0.clone();
    for p in pres.iter_mut() {
        z = Ivc::precommit_second(pp, &c, &z, p, &first).unwrap();
    }
    let mut ivc = Ivc::new(pp, &z0, run_challenges(pp, &pres)).unwrap();
    ivc.prove_step(pp, &c, Some(&pres[0])).unwrap();
    ivc.prove_step(pp, &c, Some(&pres[1])).unwrap();
    let f = ivc.primary(pp, &c, Some(&pres[2]), vec![]).unwrap();
    let free = free_columns(&pp.shape1, &f.w1.w, &f.u1.x, &pp.layout1.padding());
    assert!(free.is_empty(), "free columns of the three-part primary: {free:?}");
}

/// Parameters of the claim circuit (PerRunTwice), made once.
fn shared_two() -> &'static Params<E1, E2> {
    static TWO: std::sync::OnceLock<Params<E1, E2>> = std::sync::OnceLock::new();
    TWO.get_or_init(|| params(&Claim::<F>::new(&[0; 3]), ChallengeMode::PerRunTwice))
}

#[test]
fn a_chain_that_does_not_start_at_zero_is_rejected() {
    // a prover that starts the chain at a value of its choice (7), so that
    // the run's challenges are another hash of the same commitments: the
    // secondary starts it at 0 on the first fold, whatever its input
    let pp = shared(false);
    let z0 = vec![F::ONE, F::ONE];
    let c = perm(&[5, 6], &[6, 5], false);
    let (pre, _) = Ivc::precommit(pp, &c, &z0).unwrap();
    let start = <E1 as Engine>::Base::from(7);
    let end = crate::hash::chain_link::<E1>(pp.ro.n1(), start, &pre.comm);
    let ch = crate::ivc::derive_run(&pp.view(), &[end]);
    let mut ivc = Ivc::new(pp, &z0, ch).unwrap();
    ivc.chain = vec![start];
    ivc.prove_step(pp, &c, Some(&pre)).unwrap();
    rejected(ivc.verify(pp, 1, &z0));
    // the same run from 0 is accepted
    let mut ivc = Ivc::new(pp, &z0, run_challenges(pp, std::slice::from_ref(&pre))).unwrap();
    ivc.prove_step(pp, &c, Some(&pre)).unwrap();
    assert!(ivc.verify(pp, 1, &z0).is_ok());
}

/// One fold's precommitment from `z0`: W₁ and W₂ of `c` committed; beside it
/// a copy (same W₁ commitment and key) whose W₂ fingerprint is `vouch`'s at
/// the challenges `c`'s commitments give; and those challenges.
fn two_round_pre(
    pp: &Params<E1, E2>,
    c: &Claim<F>,
    vouch: &Claim<F>,
    z0: &[F],
) -> (Precommitment<E1>, Precommitment<E1>, Vec<F>) {
    let (mut p, _) = Ivc::precommit(pp, c, z0).unwrap();
    let first = run_challenges(pp, std::slice::from_ref(&p));
    let mut other = p.clone();
    Ivc::precommit_second(pp, c, z0, &mut p, &first).unwrap();
    let ch = run_challenges(pp, std::slice::from_ref(&p));
    let aim = Claim {
        guess: vouch.chase.then_some(ch[1]),
        ..vouch.clone()
    };
    Ivc::precommit_second(pp, &aim, z0, &mut other, &first).unwrap();
    let (Some(mine), Some(theirs)) = (p.second.clone(), other.second.clone()) else {
        panic!("no W₂ committed")
    };
    let forged = Precommitment {
        second: Some(SecondCommitment {
            fingerprint: theirs.fingerprint,
            ..mine
        }),
        ..p.clone()
    };
    (p, forged, ch)
}

#[test]
fn a_w2_that_follows_the_second_round_is_rejected() {
    let pp = shared_two();
    let (pk, vk) = compress::setup::<E1, E2, S1, S2, EE1>(pp).unwrap();
    let z0 = vec![F::ZERO, F::ZERO];
    // a claim one off, committed before γ; then v's last value chosen at γ
    // so that the sum at γ is 0
    let mut wrong = Claim::<F>::new(&[1, 2, 3]);
    wrong.skew[0] = F::ONE;
    let chasing = Claim {
        chase: true,
        ..wrong.clone()
    };
    let (pre, forged, ch) = two_round_pre(pp, &wrong, &chasing, &z0);
    let aimed = Claim {
        guess: Some(ch[1]),
        ..chasing.clone()
    };
    let ivc0 = Ivc::new(pp, &z0, ch.clone()).unwrap();

    // the honest prover refuses: W₂ at γ is not the committed one
    let mut ivc = ivc0.clone();
    assert!(matches!(
        ivc.prove_step(pp, &aimed, Some(&pre)),
        Err(FoldError::LatePhaseDependsOnChallenge { fold: 0 })
    ));
    // the wrong claim itself fails its constraint
    let mut ivc = ivc0.clone();
    ivc.prove_step(pp, &wrong, Some(&pre)).unwrap();
    rejected(ivc.verify(pp, 1, &z0));

    // comm_W₂ kept, W₂ changed: comm_W₂ does not open to W's second part
    let mut ivc = ivc0.clone();
    ivc.prove_step(pp, &aimed, Some(&forged)).unwrap();
    rejected(ivc.verify(pp, 1, &z0));

    // the same, with comm_W₃ made up so that the parts' sum opens to W:
    // only the openings of the later parts on their generators can catch it
    // (this compressor opens comm_W₂ with W's values there, which fails;
    // one that opened it with its committed values would fail at comm_W₃)
    let mut ivc = ivc0.clone();
    let mut f = ivc.primary(pp, &aimed, Some(&forged), vec![]).unwrap();
    let r = F::random(&mut rand::rngs::OsRng);
    let plain = crate::ivc::plain_layout(pp.layout1.num_vars());
    let whole = commit_witness::<E1>(&pp.ck1, &plain, &f.w1.w, &[r]).unwrap()[0];
    f.u1.comm_w[2] = whole + (f.u1.comm_w[0] + f.u1.comm_w[1]) * (-F::ONE);
    f.w1.blinds[2] = r - f.w1.blinds[0] - f.w1.blinds[1];
    ivc.finish(pp, f).unwrap();
    rejected(ivc.verify(pp, 1, &z0));
    let proof = Proof::prove(pp, &pk, &ivc).unwrap();
    let why = rejected(proof.verify(&vk, 1, &z0, ivc.outputs()).map(|_| vec![]));
    assert!(why.contains("the opening of comm_W"), "{why}");

    // a second-round challenge other than the chains'
    let honest = Claim::<F>::new(&[1, 2, 3]);
    let (pre, _, ch) = two_round_pre(pp, &honest, &honest, &z0);
    let mut ivc = Ivc::new(pp, &z0, vec![ch[0], ch[1] + F::ONE]).unwrap();
    ivc.prove_step(pp, &honest, Some(&pre)).unwrap();
    rejected(ivc.verify(pp, 1, &z0));
    // a fold without its W₂ committed is refused
    let (bare, _) = Ivc::precommit(pp, &honest, &z0).unwrap();
    assert!(matches!(
        Ivc::new(pp, &z0, ch).unwrap().prove_step(pp, &honest, Some(&bare)),
        Err(FoldError::Invalid(_))
    ));
}

/// Columns of a satisfying fresh witness that can change alone (by +1)
/// without breaking any constraint.
pub(crate) fn free_columns<E: Engine>(
    shape: &R1CSShape<E>,
    w: &[E::Scalar],
    x: &[E::Scalar],
    skip: &[usize],
) -> Vec<usize> {
    let mut z = w.to_vec();
    z.push(E::Scalar::ONE);
    z.extend_from_slice(x);
    let (a, b, c) = shape.multiply_vec(&z).unwrap();
    assert!((0..a.len()).all(|r| a[r] * b[r] == c[r]), "not satisfied");
    // rows that read each column, with the coefficient in each matrix
    let mut rows: Vec<Vec<(usize, E::Scalar, E::Scalar, E::Scalar)>> = vec![vec![]; w.len()];
    for (k, m) in [shape.A(), shape.B(), shape.C()].into_iter().enumerate() {
        for (r, col, v) in m.iter() {
            if col < w.len() {
                let mut e = (r, E::Scalar::ZERO, E::Scalar::ZERO, E::Scalar::ZERO);
                match k {
                    0 => e.1 = v,
                    1 => e.2 = v,
                    _ => e.3 = v,
                }
                rows[col].push(e);
            }
        }
    }
    (0..w.len())
        .filter(|col| !skip.contains(col))
        .filter(|col| {
            let mut by_row: std::collections::BTreeMap<usize, (E::Scalar, E::Scalar, E::Scalar)> =
                Default::default();
            for (r, da, db, dc) in &rows[*col] {
                let e = by_row.entry(*r).or_insert((a[*r], b[*r], c[*r]));
                e.0 += da;
                e.1 += db;
                e.2 += dc;
            }
            by_row.values().all(|(a, b, c)| *a * b == *c)
        })
        .collect()
}

#[test]
fn late_values_other_than_the_folds_are_rejected() {
    use crate::testing::TableLookup;
    let s = 2;
    let shape = TableLookup::<F> {
        values: vec![F::ZERO; 2],
        mult: vec![F::ZERO; s],
    };
    let pp = params(&shape, ChallengeMode::PerRun);
    let folds = TableLookup::<F>::run(&[vec![0, 3], vec![1, 1]], s);
    let z0 = vec![F::ZERO, F::ZERO, F::ZERO];
    let (mut p0, z1) = Ivc::precommit(&pp, &folds[0], &z0).unwrap();
    let (mut p1, _) = Ivc::precommit(&pp, &folds[1], &z1).unwrap();
    // fold 0's multiplicities committed one off from the ones it uses
    let mut other = folds[0].mult.clone();
    other[0] += F::ONE;
    let mut p0_other = p0.clone();
    p0_other.complete(&pp.ck1, &other).unwrap();
    p0.complete(&pp.ck1, &folds[0].mult).unwrap();
    p1.complete(&pp.ck1, &folds[1].mult).unwrap();
    // a precommitment still waiting for its late values is refused
    let (waiting, _) = Ivc::precommit(&pp, &folds[0], &z0).unwrap();
    let mut ivc = Ivc::new(&pp, &z0, run_challenges(&pp, &[p0.clone(), p1.clone()])).unwrap();
    assert!(matches!(
        ivc.prove_step(&pp, &folds[0], Some(&waiting)),
        Err(FoldError::Invalid(_))
    ));
    // the honest prover refuses W₁ other than the committed one
    let ch = run_challenges(&pp, &[p0_other.clone(), p1.clone()]);
    let mut ivc = Ivc::new(&pp, &z0, ch.clone()).unwrap();
    assert!(matches!(
        ivc.prove_step(&pp, &folds[0], Some(&p0_other)),
        Err(FoldError::PhaseDependsOnChallenge { fold: 0 })
    ));
    // a forged one (the fingerprint of W₁, the commitment of the other values)
    let forged = Precommitment {
        comm: p0_other.comm,
        blind: p0_other.blind,
        ..p0
    };
    let mut ivc = Ivc::new(&pp, &z0, ch).unwrap();
    ivc.prove_step(&pp, &folds[0], Some(&forged)).unwrap();
    ivc.prove_step(&pp, &folds[1], Some(&p1)).unwrap();
    rejected(ivc.verify(&pp, 2, &z0));
}
