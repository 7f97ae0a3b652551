//! `zkstep-verify` on a stored merge proof (params/fixtures/merge, made by
//! `make_fixtures --merge`, merge keys on KZG points): accepted with its
//! round and global model (committed with `merge_points.key`); rejected
//! (exit 1) against a round with another reputation, another node's
//! checkpoint or another global model, and under another statement or
//! opening; a truncated proof, a step's key or a missing or foreign points
//! file is malformed input (exit 2).
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;
use zkstep_verifier::merge::{read_merge_key, read_merge_proof, verify_merge_proof};
use zkstep_verifier::VerifyError;

fn fx(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../params/fixtures/merge")
        .join(name)
        .display()
        .to_string()
}

fn verify(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_zkstep-verify")).args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_merge_proof_is_accepted_with_its_round_and_rejected_with_another() {
    let (vk, proof, spec) = (fx("merge_verifying.key"), fx("merge.zkstep"), fx("../spec.toml"));
    let with = |round: &str, global: &str| {
        verify(&["--vk", &vk, "--proof", &proof, "--spec", &spec, "--round", round, "--global", global])
    };
    let (code, out, err) = with(&fx("round.toml"), &fx("global.safetensors"));
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("ACCEPTED merge") && out.contains("zeroed: [2]"), "{out}");
    // the proof alone
    let (code, out, _) = verify(&["--vk", &vk, "--proof", &proof]);
    assert_eq!(code, Some(0), "{out}");
    // the round file edited: a reputation, a node's checkpoint, tau
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fx("round.toml")).unwrap();
    let abs = text.replace("\"node", &format!("\"{}/node", fx(""))).replace("\"previous", &format!("\"{}/previous", fx("")));
    for (edit, want) in [
        (abs.replace("reputation = 3", "reputation = 4"), "reputation"),
        (abs.replace("node1.safetensors", "node0.safetensors"), "names the same checkpoint"),
        (abs.replace("node0.safetensors", "global.safetensors"), "node 0's checkpoint"),
        (abs.replace("tau_fx = 500000000", "tau_fx = 500000001"), "tau_fx"),
    ] {
        let r = dir.path().join("round.toml");
        std::fs::write(&r, edit).unwrap();
        let (code, out, err) = with(r.to_str().unwrap(), &fx("global.safetensors"));
        assert_ne!(code, Some(0), "{want}: {out}");
        assert!(err.contains(want), "{want}: {err}");
    }
    // another global model: the previous one
    let (code, _, err) = with(&fx("round.toml"), &fx("previous.safetensors"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not the global model"), "{err}");
    // a truncated proof, a step's key: malformed (2)
    let bytes = std::fs::read(&proof).unwrap();
    let cut = dir.path().join("cut.zkstep");
    std::fs::write(&cut, &bytes[..bytes.len() - 9]).unwrap();
    let (code, _, err) = verify(&["--vk", &vk, "--proof", cut.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("cut.zkstep") && err.contains("truncated"), "{err}");
    let (code, _, err) = verify(&["--vk", &fx("../verifying.key"), "--proof", &proof]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("verifying.key") && err.contains("merge verifying key"), "{err}");
    // the files need the merge's points file: another key's, or none, is refused by path
    let round = fx("round.toml");
    let (code, _, err) = verify(&[
        "--vk", &vk, "--proof", &proof, "--spec", &spec, "--round", &round, "--points", &fx("../kzg_points.key"),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("kzg_points.key") && err.contains("not the points file"), "{err}");
    std::fs::copy(&vk, dir.path().join("merge_verifying.key")).unwrap();
    let alone = dir.path().join("merge_verifying.key").display().to_string();
    let (code, _, err) = verify(&["--vk", &alone, "--proof", &proof, "--spec", &spec, "--round", &round]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("merge_points.key"), "{err}");
    // the proof alone needs no points file
    let (code, out, _) = verify(&["--vk", &alone, "--proof", &proof]);
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn a_merge_proof_under_another_statement_is_rejected() {
    let key = read_merge_key(&std::fs::read(fx("merge_verifying.key")).unwrap()).unwrap();
    let honest = read_merge_proof(&std::fs::read(fx("merge.zkstep")).unwrap()).unwrap();
    verify_merge_proof(&key, &honest).unwrap();
    for edit in 0..9 {
        let mut p = read_merge_proof(&std::fs::read(fx("merge.zkstep")).unwrap()).unwrap();
        let st = &mut p.payload.statement;
        let o = p.payload.theta.as_mut().unwrap();
        match edit {
            0 => st.reputations[1] += 1,
            1 => st.zeroed[2] = false,
            2 => st.c_nodes.swap(0, 1),
            3 => st.c_global = st.c_centre,
            4 => st.step += 1,
            // the opening: its value, two points, α, none at all
            5 => o.value += zkstep_core::Fr::from(1u64),
            6 => o.points.swap(1, 3),
            7 => o.alpha += zkstep_core::Fr::from(1u64),
            _ => p.payload.theta = None,
        }
        match verify_merge_proof(&key, &p) {
            Err(VerifyError::Rejected(_)) => {}
            other => panic!("edit {edit}: {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn a_merge_proof_file_on_points_stores_no_commitments_and_the_points_make_them() {
    use zkstep_circuits::engine::CompressedSnark;
    use zkstep_circuits::files::{decode, encode, FileKind, MergeProofFile};
    use zkstep_circuits::theta::MergeOpening;
    type Stored = MergeProofFile<CompressedSnark, MergeOpening>;
    let bytes = std::fs::read(fx("merge.zkstep")).unwrap();
    let key = read_merge_key(&std::fs::read(fx("merge_verifying.key")).unwrap()).unwrap();
    let honest = read_merge_proof(&bytes).unwrap();
    let (st, _) = verify_merge_proof(&key, &honest).unwrap();
    let (h, f): (_, Stored) = decode(&bytes, FileKind::MergeProof).unwrap();
    assert!(f.statement.commitments.is_none(), "the fixture's merge keys are on KZG points");
    // re-encoded as it was read, the file reads back to the same statement
    let again = read_merge_proof(&encode(h, &f).unwrap()).unwrap();
    assert_eq!(again.payload.statement, st);
    // hostile files: commitments beside the points (which may disagree with
    // them), a point too few, no points and no commitments
    for edit in 0..3 {
        let (h, mut f): (_, Stored) = decode(&bytes, FileKind::MergeProof).unwrap();
        let want = match edit {
            0 => {
                f.statement.commitments = Some((st.c_nodes.clone(), st.c_centre, st.c_global));
                "commitments stored beside an opening"
            }
            1 => {
                f.theta.as_mut().unwrap().points.pop();
                "points for 3 nodes"
            }
            _ => {
                f.theta = None;
                "neither the statement's commitments nor an opening"
            }
        };
        match read_merge_proof(&encode(h, &f).unwrap()) {
            Err(VerifyError::Malformed(e)) => assert!(e.contains(want), "edit {edit}: {e}"),
            other => panic!("edit {edit}: {:?}", other.map(|_| ())),
        }
    }
    // a node's point swapped for another's: the derived statement names the
    // other node's commitment there, which a round's check would catch, and
    // the proof does not verify
    let (h, mut f): (_, Stored) = decode(&bytes, FileKind::MergeProof).unwrap();
    f.theta.as_mut().unwrap().points.swap(0, 1);
    let p = read_merge_proof(&encode(h, &f).unwrap()).unwrap();
    assert_eq!(p.payload.statement.c_nodes[0], st.c_nodes[1]);
    assert!(matches!(verify_merge_proof(&key, &p), Err(VerifyError::Rejected(_))));
}
