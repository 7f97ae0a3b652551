//! Test ceremony files shared by the prover's and the verifier's ceremony
//! tests (included by `#[path]`; neither crate depends on the other):
//! `ppot_pruned_20.ptau` in the ceremony file format for a τ drawn from a
//! seed — 64 MiB, about 20 s to make on 2 cores, so made once into the
//! target's temporary folder and reused by later runs and both test binaries.
#![allow(dead_code)]

use nova_snark::provider::hyperkzg::{CommitmentEngine, CommitmentKey};
use nova_snark::traits::commitment::CommitmentEngineTrait;
use rand::SeedableRng;
use std::path::{Path, PathBuf};
use zkstep_circuits::engine::E1;

/// ppsnark asks for about 695k generators even for the smallest circuit.
pub const POWER: u32 = 20;

/// The file name the ceremony loader looks for.
pub fn ptau_name() -> String {
    format!("ppot_pruned_{POWER:02}.ptau")
}

/// A directory holding `ppot_pruned_20.ptau` for the τ drawn from `seed`
/// (made once, then reused: written to a temporary name and renamed).
pub fn ptau_dir(seed: u64) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("test-ptau-{POWER}-seed{seed}"));
    let file = dir.join(ptau_name());
    if !file.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let rng = rand::rngs::StdRng::seed_from_u64(seed);
        let ck = CommitmentKey::<E1>::setup_from_rng(b"ck", 1 << POWER, rng);
        let tmp = dir.join(format!(".{}.{}", ptau_name(), std::process::id()));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp).unwrap());
        CommitmentEngine::<E1>::save_setup(&ck, &mut f).unwrap();
        drop(f);
        std::fs::rename(&tmp, &file).unwrap();
    }
    dir
}
