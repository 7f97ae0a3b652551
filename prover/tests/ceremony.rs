//! Ceremony params: keygen from a directory of `ppot_pruned_NN.ptau` files
//! (here a test file written from a random τ, in the ceremony file format),
//! then prove and verify; the key says `ceremony`.
#![allow(clippy::unwrap_used)]

use nova_snark::provider::hyperkzg::{CommitmentEngine, CommitmentKey};
use nova_snark::traits::commitment::CommitmentEngineTrait;
use zkstep_circuits::engine::E1;
use zkstep_circuits::files::ParamsKind;
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};
use zkstep_prover::ivc::{keygen, prove, Setup};

#[test]
fn keygen_from_ptau_files_proves_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let power = 20u32; // ppsnark asks for about 695k generators even for this tiny circuit
    let ck = CommitmentKey::<E1>::setup_from_rng(b"ck", 1 << power, rand::rngs::OsRng);
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(dir.path().join(format!("ppot_pruned_{power:02}.ptau"))).unwrap(),
    );
    CommitmentEngine::<E1>::save_setup(&ck, &mut f).unwrap();
    drop(f);
    let spec = ModelSpec::from_toml_str(
        "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 2\n",
    )
    .unwrap();
    let keys = keygen(&spec, Some(2), usize::MAX, Setup::Ceremony(dir.path())).unwrap();
    assert_eq!(keys.params, ParamsKind::Ceremony);
    let before = Checkpoint::init(&spec, 3);
    let batch = Batch {
        x: Matrix::from_vec(2, 2, vec![1, -2, 3, 4]).unwrap(),
        y: Matrix::from_vec(2, 2, vec![5, 6, 7, 8]).unwrap(),
        salt: seeded_salt(3, 0),
    };
    let after = step(&spec, &before, &batch).unwrap().after;
    let (proof, _) = prove(&keys, &before, &after, &batch, &mut |_| {}).unwrap();
    zkstep_circuits::verify::verify_payload(&keys.layout, &keys.vk, spec.digest(), &proof, None)
        .unwrap();
    // an empty directory is a clear error
    let empty = tempfile::tempdir().unwrap();
    let e = match keygen(&spec, Some(2), usize::MAX, Setup::Ceremony(empty.path())) {
        Ok(_) => panic!("keygen without ptau files succeeded"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("ppot_pruned") || e.contains("ptau"), "{e}");
}
