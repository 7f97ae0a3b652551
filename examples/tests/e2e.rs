//! End to end through the libraries: keygen (dev params), prove, compress,
//! verify with only the verifier crate; and rejection of wrong statements.
//! The SGD case's keys and proof are made once ([`sgd`]) and shared by the
//! tests that look at them.
#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;
use zkstep_circuits::engine::Compression;
use zkstep_circuits::files::{self, FileKind, Header, VerifyingKeyPayload};
use zkstep_core::commit::{commit_batch, commit_params};
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};
use zkstep_prover::ivc::{
    keygen, keygen_with, proof_bytes, prove, prove_segment, segment_proof_bytes,
    verifying_key_bytes, Keys, Setup,
};
use zkstep_verifier::{
    read_any_proof, read_proof, read_verifying_key, verify, verify_segment, AnyProof, VerifyError,
};

const SPEC: &str = "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 3\noutputs = 3\nactivation = \"relu\"\n[[layers]]\ninputs = 3\noutputs = 2\n";

fn batch(spec: &ModelSpec, seed: u64) -> Batch {
    let b = spec.batch_size;
    let x = Matrix::from_vec(
        b,
        spec.input_width(),
        (0..b * spec.input_width())
            .map(|i| ((i as i64 * 7919 + seed as i64) % 2000 - 1000) * 1_000_000)
            .collect(),
    )
    .unwrap();
    let y = Matrix::from_vec(
        b,
        spec.output_width(),
        (0..b * spec.output_width())
            .map(|i| ((i as i64 * 31 + seed as i64) % 200 - 100) * 10_000_000)
            .collect(),
    )
    .unwrap();
    Batch {
        x,
        y,
        salt: seeded_salt(seed, 1),
    }
}

/// A segment proof file's bytes read back as one.
fn read_segment(bytes: &[u8]) -> zkstep_verifier::SegmentProof {
    match read_any_proof(bytes).unwrap() {
        AnyProof::Segment(p) => p,
        AnyProof::Step(_) => panic!("a segment proof read as a step's"),
    }
}

/// Keys, a step and its proof, made once for every test of this file
/// (keygen and compression are what cost time).
struct Fixture {
    spec: ModelSpec,
    keys: Keys,
    before: Checkpoint,
    after: Checkpoint,
    batch: Batch,
    proof: Vec<u8>,
    vk: Vec<u8>,
}

fn sgd() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let spec = ModelSpec::from_toml_str(SPEC).unwrap();
        let keys = keygen(&spec, Some(2), usize::MAX, Setup::Dev).unwrap();
        let before = Checkpoint::init(&spec, 1);
        let b = batch(&spec, 1);
        let after = step(&spec, &before, &b).unwrap().after;
        let (proof, _t) = prove(&keys, &before, &after, &b, &mut |_| {}).unwrap();
        Fixture {
            proof: proof_bytes(&keys, &proof).unwrap(),
            vk: verifying_key_bytes(&keys).unwrap(),
            spec,
            keys,
            before,
            after,
            batch: b,
        }
    })
}

#[test]
fn proof_verifies_with_only_the_verifier_crate() {
    let f = sgd();
    let vk = read_verifying_key(&f.vk).unwrap();
    let (st, dt) = verify(&vk, &read_proof(&f.proof).unwrap(), None).unwrap();
    eprintln!(
        "verified in {dt:?}; proof {} bytes; vk {} bytes",
        f.proof.len(),
        f.vk.len()
    );
    assert_eq!(st.c_before, commit_params(&f.spec, &f.before));
    assert_eq!(st.c_after, commit_params(&f.spec, &f.after));
    assert_eq!(st.c_batch, commit_batch(&f.spec, &f.batch));
}

#[test]
fn wrong_statements_are_rejected() {
    let f = sgd();
    let vk = read_verifying_key(&f.vk).unwrap();
    let p = read_proof(&f.proof).unwrap();
    // a statement whose c_after is another checkpoint's
    let mut other = f.after.clone();
    other.layers[0].w.data[0] += 1;
    let mut want = p.statement();
    want.c_after = commit_params(&f.spec, &other);
    assert!(matches!(
        verify(&vk, &p, Some(&want)),
        Err(VerifyError::Rejected(_))
    ));
    // a forged statement inside the proof file: the compressed proof no longer matches
    let forge = |edit: &dyn Fn(&mut zkstep_verifier::Proof)| {
        let mut forged = read_proof(&f.proof).unwrap();
        edit(&mut forged);
        forged
    };
    // the same transition re-labelled as step t+1, with the commitments the
    // re-labelled checkpoints have: the step is inside Commit(θ), so both
    // commitments change, and the proof (whose chains started at step t) fails
    let relabel = |c: &Checkpoint| {
        let mut c = c.clone();
        c.step += 1;
        commit_params(&f.spec, &c)
    };
    assert_ne!(relabel(&f.before), p.statement().c_before);
    let forgeries: [(&str, zkstep_verifier::Proof); 5] = [
        (
            "c_after",
            forge(&|p| p.payload.statement.c_after = want.c_after),
        ),
        (
            "c_batch",
            forge(&|p| p.payload.statement.c_batch = commit_batch(&f.spec, &batch(&f.spec, 2))),
        ),
        ("step", forge(&|p| p.payload.statement.step += 1)),
        (
            "re-labelled step",
            forge(&|p| {
                let st = &mut p.payload.statement;
                st.step += 1;
                st.c_before = relabel(&f.before);
                st.c_after = relabel(&f.after);
            }),
        ),
        (
            "challenge",
            forge(&|p| p.payload.challenges.rho += zkstep_core::Fr::from(1u64)),
        ),
    ];
    for (what, forged) in forgeries {
        assert!(
            matches!(verify(&vk, &forged, None), Err(VerifyError::Rejected(_))),
            "a proof with another {what} was not rejected"
        );
    }
}

#[test]
fn truncated_and_bit_flipped_proofs_are_refused() {
    let pbytes = &sgd().proof;
    assert!(matches!(
        read_proof(&pbytes[..pbytes.len() / 2]),
        Err(VerifyError::Malformed(_))
    ));
    let mut flipped = pbytes.clone();
    let mid = flipped.len() - 100;
    flipped[mid] ^= 4;
    assert!(read_proof(&flipped).is_err());
}

#[test]
fn the_prover_refuses_an_after_checkpoint_that_is_not_the_declared_step() {
    let f = sgd();
    let mut other = f.after.clone();
    other.layers[0].w.data[0] += 1;
    let e = match prove(&f.keys, &f.before, &other, &f.batch, &mut |_| {}) {
        Ok(_) => panic!("proved a wrong after-checkpoint"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("differs from the declared step at layer 1, W[0,0]"),
        "{e}"
    );
}

#[test]
fn a_key_for_another_spec_rejects_the_proof() {
    // spec B's verifying key file, carrying spec A's Nova key: only the spec
    // binding stands between it and accepting A's proof
    let f = sgd();
    let spec_b = ModelSpec::from_toml_str(&SPEC.replace("lr = 0.1", "lr = 0.2")).unwrap();
    let (mut h, mut vk_b): (Header, VerifyingKeyPayload) =
        files::decode(&f.vk, FileKind::VerifyingKey).unwrap();
    h.spec_digest = spec_b.digest();
    vk_b.spec_toml = spec_b.to_toml();
    let mut vk_b = read_verifying_key(&files::encode(h, &vk_b).unwrap()).unwrap();
    assert_eq!(vk_b.layout.spec_digest, spec_b.digest());
    let p = read_proof(&f.proof).unwrap();
    // the proof names the key file it was made for, and this is another
    match verify(&vk_b, &p, None) {
        Err(VerifyError::Rejected(m)) => assert!(m.contains("another verifying key"), "{m}"),
        other => panic!("expected a rejection, got {:?}", other.map(|_| ())),
    }
    // and with that check passed (the key claiming the proof's checksum),
    // the spec binding alone rejects it
    vk_b.checksum = p.payload.vk_checksum;
    match verify(&vk_b, &p, None) {
        Err(VerifyError::Rejected(m)) => assert!(m.contains("spec"), "{m}"),
        other => panic!("expected a rejection, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn momentum_three_layers_prove_and_verify() {
    let spec = ModelSpec::from_toml_str("batch_size = 2\n[optimizer]\nkind = \"momentum\"\nlr = 0.05\nmu = 0.9\n[[layers]]\ninputs = 2\noutputs = 3\nactivation = \"relu\"\n[[layers]]\ninputs = 3\noutputs = 2\nactivation = \"relu\"\n[[layers]]\ninputs = 2\noutputs = 1\n").unwrap();
    let keys = keygen(&spec, Some(2), usize::MAX, Setup::Dev).unwrap();
    // two steps so that the second starts from non-zero velocities
    let c0 = Checkpoint::init(&spec, 4);
    let b0 = batch(&spec, 4);
    let c1 = step(&spec, &c0, &b0).unwrap().after;
    let b1 = batch(&spec, 5);
    let c2 = step(&spec, &c1, &b1).unwrap().after;
    let vk = read_verifying_key(&verifying_key_bytes(&keys).unwrap()).unwrap();
    let (p1, _) = prove(&keys, &c1, &c2, &b1, &mut |_| {}).unwrap();
    let (st, _) = verify(
        &vk,
        &read_proof(&proof_bytes(&keys, &p1).unwrap()).unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(st.step, 1);
    assert_eq!(st.c_before, commit_params(&spec, &c1));
}

/// Adam (with its L2 term) mid-run: the third step (moments non-zero, the
/// bias corrections of t = 3) proves and verifies; the same proof does not
/// verify as another step's, even with the commitments re-labelled, and the
/// verifier derives k₁, c₂ from the step (a proof of step t carries t's).
#[test]
fn adam_mid_run_proves_and_verifies() {
    let spec = ModelSpec::from_toml_str(&SPEC.replace(
        "lr = 0.1",
        "kind = \"adam\"\nlr = 0.01\nweight_decay = 0.01",
    ))
    .unwrap();
    let keys = keygen(&spec, Some(2), usize::MAX, Setup::Dev).unwrap();
    let mut c = Checkpoint::init(&spec, 6);
    let mut c1 = c.clone();
    for t in 0..2 {
        c1 = c.clone();
        c = step(&spec, &c, &batch(&spec, 10 + t)).unwrap().after;
    }
    assert!(c.layers[0].state[1].w.data.iter().any(|&v| v > 0));
    let b = batch(&spec, 12);
    let after = step(&spec, &c, &b).unwrap().after;
    let (p, _) = prove(&keys, &c, &after, &b, &mut |_| {}).unwrap();
    let bytes = proof_bytes(&keys, &p).unwrap();
    let vk = read_verifying_key(&verifying_key_bytes(&keys).unwrap()).unwrap();
    let (st, _) = verify(&vk, &read_proof(&bytes).unwrap(), None).unwrap();
    assert_eq!((st.step, st.c_after), (2, commit_params(&spec, &after)));
    let relabel = |ck: &Checkpoint, step: u64| {
        let mut ck = ck.clone();
        ck.step = step;
        commit_params(&spec, &ck)
    };
    // the next step, and a late one (whose constants have converged)
    for t in [3u64, u64::MAX - 1] {
        let mut forged = read_proof(&bytes).unwrap();
        let s = &mut forged.payload.statement;
        (s.step, s.c_before, s.c_after) = (t, relabel(&c, t), relabel(&after, t + 1));
        assert!(
            matches!(verify(&vk, &forged, None), Err(VerifyError::Rejected(_))),
            "re-labelled as step {t}"
        );
    }
    // steps 1 and 2 as one segment proof: each step with its own constants
    let (seg, _) = prove_segment(
        &keys,
        &[c1.clone(), c.clone(), after.clone()],
        &[batch(&spec, 11), b],
        &mut |_| {},
    )
    .unwrap();
    let seg_bytes = segment_proof_bytes(&keys, &seg).unwrap();
    let read = || read_segment(&seg_bytes);
    let (st, _) = verify_segment(&vk, &read(), None).unwrap();
    assert_eq!(
        (st.step, st.steps, st.c_end),
        (1, 2, commit_params(&spec, &after))
    );
    // a segment that claims 2⁴⁰ steps (and as many folds): rejected before
    // anything whose cost grows with the steps claimed (the chain of every
    // step's Adam constants, which the verifier now computes before the
    // proof: at most 2¹⁶ steps are accepted); one of 2¹⁶ + 1 likewise
    for steps in [1u64 << 40, (1 << 16) + 1] {
        let mut forged = read();
        forged.payload.statement.steps = steps;
        forged.payload.num_folds = keys.layout.num_folds() as u64 * steps;
        match verify_segment(&vk, &forged, None) {
            Err(VerifyError::Rejected(why)) => assert!(why.contains("at most 65536"), "{why}"),
            other => panic!("a claim of {steps} steps: {other:?}"),
        }
    }
    // within the bound, a claim of more steps than proven: the proof does not verify
    let mut forged = read();
    forged.payload.statement.steps = 3;
    forged.payload.num_folds = keys.layout.num_folds() as u64 * 3;
    match verify_segment(&vk, &forged, None) {
        Err(VerifyError::Rejected(why)) => assert!(why.contains("does not verify"), "{why}"),
        other => panic!("a claim of 3 steps: {other:?}"),
    }
    // re-labelled as steps 2..4 (commitments recomputed): Adam's constants differ
    let mut forged = read();
    let s = &mut forged.payload.statement;
    (s.step, s.c_start, s.c_end) = (2, relabel(&c1, 2), relabel(&after, 4));
    assert!(matches!(
        verify_segment(&vk, &forged, None),
        Err(VerifyError::Rejected(_))
    ));
}

/// The small fold's default compression is Spartan (what [`sgd`] uses);
/// MicroSpartan proves and verifies the same step too, and a proof of one
/// compression is rejected under the other's key, with a message naming both.
#[test]
fn microspartan_proves_and_verifies_and_compressions_do_not_mix() {
    let f = sgd();
    assert_eq!(f.keys.compression(), Compression::Spartan);
    let keys = keygen_with(
        &f.spec,
        Some(2),
        usize::MAX,
        Some(Compression::MicroSpartan),
        zkstep_circuits::state::CommitScheme::Chain,
        Setup::Dev,
    )
    .unwrap();
    assert_eq!(keys.compression(), Compression::MicroSpartan);
    let (proof, _t) = prove(&keys, &f.before, &f.after, &f.batch, &mut |_| {}).unwrap();
    let pp = read_proof(&proof_bytes(&keys, &proof).unwrap()).unwrap();
    let vk_pp = read_verifying_key(&verifying_key_bytes(&keys).unwrap()).unwrap();
    let (st, _) = verify(&vk_pp, &pp, None).unwrap();
    assert_eq!(st.c_after, commit_params(&f.spec, &f.after));
    let mut vk_sp = read_verifying_key(&f.vk).unwrap();
    let sp = read_proof(&f.proof).unwrap();
    // each proof names the key file it was made for: under the other
    // compression's key that is the first refusal
    for (vk, proof) in [(&vk_sp, &pp), (&vk_pp, &sp)] {
        match verify(vk, proof, None) {
            Err(VerifyError::Rejected(m)) => assert!(m.contains("another verifying key"), "{m}"),
            other => panic!("expected a rejection, got {:?}", other.map(|(s, _)| s)),
        }
    }
    // a key claiming to be the proof's is still the other compression's
    let mut vk_pp = vk_pp;
    vk_sp.checksum = pp.payload.vk_checksum;
    vk_pp.checksum = sp.payload.vk_checksum;
    for (vk, proof, want) in [
        (
            &vk_sp,
            &pp,
            "compressed with microspartan, the verifying key is for spartan",
        ),
        (
            &vk_pp,
            &sp,
            "compressed with spartan, the verifying key is for microspartan",
        ),
    ] {
        match verify(vk, proof, None) {
            Err(VerifyError::Rejected(m)) => assert!(m.contains(want), "{m}"),
            other => panic!("expected a rejection, got {:?}", other.map(|(s, _)| s)),
        }
    }
}

/// Keys on KZG points (`zkstep keygen --commit-scheme kzg`): a step and a
/// segment prove and verify, the statement's commitments are the hashes of
/// the checkpoints' points under the keys' powers, and every part of the
/// binding is checked: another checkpoint's commitment, a claimed
/// evaluation off by one, another point, another quotient, the points
/// swapped, no opening at all, an opening under chain keys, a segment's
/// first θ_{t+1} value changed. Adam, so the optimizer state is among the
/// coefficients.
#[test]
fn kzg_points_prove_verify_and_bind_the_checkpoints() {
    use zkstep_circuits::files::ProofPayload;
    use zkstep_circuits::state::CommitScheme;
    use zkstep_circuits::theta::G1;
    let spec = ModelSpec::from_toml_str(&SPEC.replace(
        "lr = 0.1",
        "kind = \"adam\"\nlr = 0.01\nweight_decay = 0.01",
    ))
    .unwrap();
    let keys = keygen_with(&spec, Some(2), usize::MAX, None, CommitScheme::Evaluation, Setup::Dev).unwrap();
    let c1 = Checkpoint::init(&spec, 6);
    let c = step(&spec, &c1, &batch(&spec, 11)).unwrap().after;
    let b = batch(&spec, 12);
    let after = step(&spec, &c, &b).unwrap().after;
    let (p, _) = prove(&keys, &c, &after, &b, &mut |_| {}).unwrap();
    let bytes = proof_bytes(&keys, &p).unwrap();
    let vk = read_verifying_key(&verifying_key_bytes(&keys).unwrap()).unwrap();
    assert!(vk.theta.is_some() && vk.layout.commit_scheme == CommitScheme::Evaluation);
    let (st, _) = verify(&vk, &read_proof(&bytes).unwrap(), None).unwrap();
    let pk = keys.point_key();
    let commit = |ck: &Checkpoint| pk.commitment(&spec, ck).unwrap();
    assert_eq!((st.c_before, st.c_after), (commit(&c).0, commit(&after).0));
    assert_ne!(st.c_after, commit_params(&spec, &after), "not the chain's Commit(θ)");

    let mut other = after.clone();
    other.layers[1].w.data[0] += 1;
    let (c_other, p_other) = commit(&other);
    let rejected = |why: &str, f: &dyn Fn(&mut ProofPayload)| {
        let mut forged = read_proof(&bytes).unwrap();
        f(&mut forged.payload);
        match verify(&vk, &forged, None) {
            Err(VerifyError::Rejected(m)) => m,
            other => panic!("{why}: {other:?}"),
        }
    };
    rejected("θ_{t+1} with one weight off by one", &|p| p.statement.c_after = c_other);
    rejected("its point and commitment", &|p| {
        p.statement.c_after = c_other;
        p.theta.as_mut().unwrap().end = p_other;
    });
    rejected("y_end + 1", &|p| p.theta.as_mut().unwrap().y_end += zkstep_core::Fr::from(1u64));
    rejected("y_start + 1", &|p| p.theta.as_mut().unwrap().y_start += zkstep_core::Fr::from(1u64));
    rejected("another quotient", &|p| {
        let o = p.theta.as_mut().unwrap();
        o.proof += <G1 as nova_snark::provider::traits::DlogGroup>::gen();
    });
    rejected("points swapped", &|p| {
        let o = p.theta.as_mut().unwrap();
        std::mem::swap(&mut o.start, &mut o.end);
    });
    rejected("θ_t re-labelled as another checkpoint", &|p| p.statement.c_before = commit(&c1).0);
    let m = rejected("no opening", &|p| p.theta = None);
    assert!(m.contains("carries no opening"), "{m}");
    // an opening checked under chain keys of the same spec and rows
    let chain = keys.layout.as_ref().clone().with_commit_scheme(CommitScheme::Chain);
    let chain_keys = zkstep_circuits::verify::StepKeys { nova: &vk.vk, theta: None };
    let r = zkstep_circuits::verify::verify_payload(&chain, chain_keys, spec.digest(), &p, None);
    assert!(r.is_err_and(|e| e.0.contains("hash chains")));

    // two steps as one segment: the statement names the first and last points only
    let (seg, _) = prove_segment(&keys, &[c1.clone(), c.clone(), after.clone()], &[batch(&spec, 11), b], &mut |_| {})
        .unwrap();
    let seg_bytes = segment_proof_bytes(&keys, &seg).unwrap();
    let read = || read_segment(&seg_bytes);
    let (st, _) = verify_segment(&vk, &read(), None).unwrap();
    assert_eq!((st.c_start, st.c_end, st.steps), (commit(&c1).0, commit(&after).0, 2));
    let mut forged = read();
    forged.payload.first.c_after += zkstep_core::Fr::from(1u64);
    assert!(matches!(verify_segment(&vk, &forged, None), Err(VerifyError::Rejected(_))), "first y_after + 1");
    let mut forged = read();
    forged.payload.statement.c_end = c_other;
    forged.payload.theta.as_mut().unwrap().end = p_other;
    assert!(matches!(verify_segment(&vk, &forged, None), Err(VerifyError::Rejected(_))), "another last point");

    // the keys' files keep the scheme
    let dir = tempfile::tempdir().unwrap();
    zkstep_prover::ivc::write_keys(dir.path(), &keys).unwrap();
    let read_keys = zkstep_prover::ivc::read_proving_key(&dir.path().join("proving.key")).unwrap();
    assert_eq!(read_keys.layout.commit_scheme, CommitScheme::Evaluation);
    assert_eq!(read_keys.point_key().commitment(&spec, &after).unwrap().0, commit(&after).0);
    assert_eq!(read_keys.vk_checksum().unwrap(), keys.vk_checksum().unwrap());
    // and the points file beside them commits checkpoints as the proofs do
    let points = zkstep_verifier::read_points(&std::fs::read(dir.path().join("points.key")).unwrap(), &vk).unwrap();
    assert_eq!(points.commitment(&spec, &other).unwrap(), c_other);
    assert_eq!(read_keys.theta_vk().unwrap(), keys.theta_vk().unwrap());
}
