//! Verification of a proof payload against a layout and Nova's verifier
//! key: the statement, the fold count, Nova's compressed proof and the final
//! state. Kept apart from the file format (`files`) so that reading files and
//! deciding what a proof proves stay two separate concerns; the prover (to
//! skip proofs that already verify) and `zkstep-verifier` both call it.

use crate::engine::VerifierKey;
use crate::files::{ProofPayload, Statement};
use zkstep_core::poseidon::Fr;

/// Why a proof payload does not verify (the verifier crate maps this to its error type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection(pub String);

/// Check a proof payload against a layout and Nova verifier key; if `expected`
/// is given the proof's statement must be exactly it. This is the whole
/// verification; `zkstep-verifier` wraps it with file reading and a CLI.
pub fn verify_payload(
    lay: &crate::Layout,
    vk: &VerifierKey,
    header_spec: Fr,
    p: &ProofPayload,
    expected: Option<&Statement>,
) -> Result<Statement, Rejection> {
    use zkstep_core::poseidon::fr_to_hex;
    let st = p.statement;
    if header_spec != lay.spec_digest || st.spec_digest != lay.spec_digest {
        return Err(Rejection(format!(
            "the proof is for spec {}, the verifying key for spec {}",
            fr_to_hex(&st.spec_digest),
            fr_to_hex(&lay.spec_digest)
        )));
    }
    if let Some(e) = expected {
        for (name, got, want) in [
            ("c_before", st.c_before, e.c_before),
            ("c_after", st.c_after, e.c_after),
            ("c_batch", st.c_batch, e.c_batch),
            ("spec_digest", st.spec_digest, e.spec_digest),
        ] {
            if got != want {
                return Err(Rejection(format!(
                    "the proof's {name} is {}, expected {}",
                    fr_to_hex(&got),
                    fr_to_hex(&want)
                )));
            }
        }
        if st.step != e.step {
            return Err(Rejection(format!(
                "the proof is for step {}, expected step {}",
                st.step, e.step
            )));
        }
    }
    if p.num_folds != lay.num_folds() as u64 {
        return Err(Rejection(format!(
            "the proof has {} folds, this spec's schedule has {}",
            p.num_folds,
            lay.num_folds()
        )));
    }
    if p.snark.compression() != vk.compression() {
        return Err(Rejection(format!(
            "the proof is compressed with {}, the verifying key is for {}",
            p.snark.compression().name(),
            vk.compression().name()
        )));
    }
    let z0 = lay.initial_state(st.c_before, st.c_after, st.c_batch, st.step, p.challenges);
    let zn = p
        .snark
        .verify(vk, lay.num_folds(), &z0)
        .map_err(|e| Rejection(format!("the compressed proof does not verify: {e}")))?;
    lay.check_final(&z0, &zn)
        .map_err(|e| Rejection(e.to_string()))?;
    Ok(st)
}
