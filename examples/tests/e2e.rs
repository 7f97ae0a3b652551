//! End to end through the libraries: keygen (dev params), prove, compress,
//! verify with only the verifier crate; and rejection of wrong statements.
#![allow(clippy::unwrap_used)]

use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};
use zkstep_prover::ivc::{keygen, proof_bytes, prove, verifying_key_bytes, Setup};
use zkstep_verifier::{read_proof, read_verifying_key, verify, VerifyError};

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

#[test]
fn prove_compress_verify_and_reject() {
    let spec = ModelSpec::from_toml_str(SPEC).unwrap();
    let keys = keygen(&spec, Some(2), usize::MAX, Setup::Dev).unwrap();
    let before = Checkpoint::init(&spec, 1);
    let b = batch(&spec, 1);
    let after = step(&spec, &before, &b).unwrap().after;
    let (proof, _t) = prove(&keys, &before, &after, &b, false).unwrap();
    let pbytes = proof_bytes(&keys, &proof).unwrap();
    let vbytes = verifying_key_bytes(&keys).unwrap();
    let vk = read_verifying_key(&vbytes).unwrap();
    let p = read_proof(&pbytes).unwrap();
    let (st, dt) = verify(&vk, &p, None).unwrap();
    eprintln!(
        "verified in {dt:?}; proof {} bytes; vk {} bytes",
        pbytes.len(),
        vbytes.len()
    );
    assert_eq!(
        st.c_before,
        zkstep_core::commit::commit_params(&spec, &before)
    );

    // a statement whose c_after is another checkpoint's
    let mut other = after.clone();
    other.layers[0].w.data[0] += 1;
    let mut want = st;
    want.c_after = zkstep_core::commit::commit_params(&spec, &other);
    assert!(matches!(
        verify(&vk, &p, Some(&want)),
        Err(VerifyError::Rejected(_))
    ));
    // a forged statement inside the proof file: the compressed proof no longer matches
    let mut forged = read_proof(&pbytes).unwrap();
    forged.payload.statement.c_after = want.c_after;
    assert!(matches!(
        verify(&vk, &forged, None),
        Err(VerifyError::Rejected(_))
    ));
    // another batch
    let mut forged = read_proof(&pbytes).unwrap();
    forged.payload.statement.c_batch = zkstep_core::commit::commit_batch(&spec, &batch(&spec, 2));
    assert!(matches!(
        verify(&vk, &forged, None),
        Err(VerifyError::Rejected(_))
    ));
    // another step index
    let mut forged = read_proof(&pbytes).unwrap();
    forged.payload.statement.step += 1;
    assert!(matches!(
        verify(&vk, &forged, None),
        Err(VerifyError::Rejected(_))
    ));
    // another challenge
    let mut forged = read_proof(&pbytes).unwrap();
    forged.payload.challenges.rho += zkstep_core::Fr::from(1u64);
    assert!(matches!(
        verify(&vk, &forged, None),
        Err(VerifyError::Rejected(_))
    ));
    // truncated and bit-flipped files
    assert!(matches!(
        read_proof(&pbytes[..pbytes.len() / 2]),
        Err(VerifyError::Malformed(_))
    ));
    let mut flipped = pbytes.clone();
    let mid = flipped.len() - 100;
    flipped[mid] ^= 4;
    assert!(read_proof(&flipped).is_err());

    // the prover refuses an after-checkpoint that is not the declared step
    let e = match prove(&keys, &before, &other, &b, false) {
        Ok(_) => panic!("proved a wrong after-checkpoint"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("differs from the declared step at layer 1, W[0,0]"),
        "{e}"
    );

    // spec B's key does not accept spec A's proof
    let spec_b = ModelSpec::from_toml_str(&SPEC.replace("lr = 0.1", "lr = 0.2")).unwrap();
    let keys_b = keygen(&spec_b, Some(2), usize::MAX, Setup::Dev).unwrap();
    let vk_b = read_verifying_key(&verifying_key_bytes(&keys_b).unwrap()).unwrap();
    assert!(matches!(
        verify(&vk_b, &p, None),
        Err(VerifyError::Rejected(_))
    ));
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
    let (p1, _) = prove(&keys, &c1, &c2, &b1, false).unwrap();
    let (st, _) = verify(
        &vk,
        &read_proof(&proof_bytes(&keys, &p1).unwrap()).unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(st.step, 1);
    assert_eq!(st.c_before, zkstep_core::commit::commit_params(&spec, &c1));
}
