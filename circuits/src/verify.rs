//! Verification of a proof payload (one step, or a segment of k steps)
//! against a layout and Nova's verifier key: the statement, the fold count,
//! Nova's compressed proof and the final state, which the statement gives
//! exactly. Kept apart from the file format (`files`) so that reading files and
//! deciding what a proof proves stay two separate concerns; the prover (to
//! skip proofs that already verify) and `zkstep-verifier` both call it.

use crate::engine::VerifierKey;
use crate::files::{FirstStep, ProofPayload, SegmentPayload, SegmentStatement, Statement};
use crate::layout::StepOpening;
use crate::state::CommitScheme;
use crate::theta::{ThetaKey, ThetaOpening};
use zkstep_core::poseidon::{fr_to_hex, Fr};

/// Why a proof payload does not verify (the verifier crate maps this to its error type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection(pub String);

/// What a step or segment proof is checked with: Nova's verifier key and,
/// for keys that bind checkpoints by KZG points, the opening's key.
#[derive(Clone, Copy)]
pub struct StepKeys<'a> {
    /// The compression's verifier key.
    pub nova: &'a VerifierKey,
    /// [1]₁, [1]₂, [τ]₂ (`CommitScheme::Evaluation`; none under the chains).
    pub theta: Option<&'a ThetaKey>,
}

/// The proof's spec (its header's and its statement's) must be the key's.
fn check_spec(lay: &crate::Layout, header_spec: Fr, spec: Fr) -> Result<(), Rejection> {
    if header_spec != lay.spec_digest || spec != lay.spec_digest {
        return Err(Rejection(format!(
            "the proof is for spec {}, the verifying key for spec {}",
            fr_to_hex(&spec),
            fr_to_hex(&lay.spec_digest)
        )));
    }
    Ok(())
}

/// Each of the proof's statement fields must be the expected one.
fn check_fields(fields: &[(&str, Fr, Fr)]) -> Result<(), Rejection> {
    match fields.iter().find(|(_, got, want)| got != want) {
        Some((name, got, want)) => Err(Rejection(format!(
            "the proof's {name} is {}, expected {}",
            fr_to_hex(got),
            fr_to_hex(want)
        ))),
        None => Ok(()),
    }
}

/// Check a proof payload against a layout and Nova verifier key; if `expected`
/// is given the proof's statement must be exactly it. This is the whole
/// verification; `zkstep-verifier` wraps it with file reading and a CLI.
pub fn verify_payload(
    lay: &crate::Layout,
    keys: StepKeys<'_>,
    header_spec: Fr,
    p: &ProofPayload,
    expected: Option<&Statement>,
) -> Result<Statement, Rejection> {
    let st = p.statement;
    check_spec(lay, header_spec, st.spec_digest)?;
    if let Some(e) = expected {
        check_fields(&[
            ("c_before", st.c_before, e.c_before),
            ("c_after", st.c_after, e.c_after),
            ("c_batch", st.c_batch, e.c_batch),
            ("spec_digest", st.spec_digest, e.spec_digest),
        ])?;
        if st.step != e.step {
            return Err(Rejection(format!(
                "the proof is for step {}, expected step {}",
                st.step, e.step
            )));
        }
    }
    // a one-step proof is a segment of one step opened by its own statement
    // (under KZG points its θ_{t+1} value is the opening's y_end)
    let first = FirstStep {
        c_after: p.theta.as_ref().map_or(st.c_after, |o| o.y_end),
        c_batch: st.c_batch,
        challenges: p.challenges,
    };
    let seg = SegmentStatement {
        spec_digest: st.spec_digest,
        c_start: st.c_before,
        c_end: st.c_after,
        batches: lay.batches_digest(&[st.c_batch]),
        step: st.step,
        steps: 1,
    };
    verify_folds(lay, keys, &seg, &first, (p.num_folds, p.theta.as_ref()), &p.snark)?;
    Ok(st)
}

/// Check a segment proof payload against a layout and Nova verifier key; if
/// `expected` is given the proof's statement must be exactly it.
pub fn verify_segment_payload(
    lay: &crate::Layout,
    keys: StepKeys<'_>,
    header_spec: Fr,
    p: &SegmentPayload,
    expected: Option<&SegmentStatement>,
) -> Result<SegmentStatement, Rejection> {
    let st = p.statement;
    check_spec(lay, header_spec, st.spec_digest)?;
    if let Some(e) = expected {
        check_fields(&[
            ("c_start", st.c_start, e.c_start),
            ("c_end", st.c_end, e.c_end),
            ("batch digest", st.batches, e.batches),
        ])?;
        if (st.step, st.steps) != (e.step, e.steps) {
            return Err(Rejection(format!(
                "the proof is for steps {}..{}, expected steps {}..{}",
                st.step,
                st.step.saturating_add(st.steps),
                e.step,
                e.step.saturating_add(e.steps)
            )));
        }
    }
    verify_folds(lay, keys, &st, &p.first, (p.num_folds, p.theta.as_ref()), &p.snark)?;
    Ok(st)
}

/// The most steps a segment proof may have: the verifier computes the chain
/// of a segment's Adam constants (one hash a step) before it checks the
/// proof, so a file cannot make it hash more than this.
pub const MAX_SEGMENT_STEPS: u64 = 1 << 16;

/// The check both kinds share: k steps' folds, Nova's proof from the z₀ the
/// statement and the first step's opening give, to exactly the z_n the
/// statement gives (the proof does not carry z_n). What the proof chooses
/// the cost of is bounded before anything runs: k ≤ [`MAX_SEGMENT_STEPS`]
/// (the chain of k steps' Adam constants), z₀ needs only step t's
/// constants (`AdamStep::at`, logarithmic in t). Under KZG points the
/// statement's commitments are the points' hashes, and the states hold the
/// evaluations at ζ that the opening ties to the points ([`theta_values`]).
fn verify_folds(
    lay: &crate::Layout,
    keys: StepKeys<'_>,
    st: &SegmentStatement,
    first: &FirstStep,
    (num_folds, theta): (u64, Option<&ThetaOpening>),
    snark: &crate::engine::CompressedSnark,
) -> Result<(), Rejection> {
    let vk = keys.nova;
    let k = st.steps;
    if k > MAX_SEGMENT_STEPS {
        return Err(Rejection(format!(
            "a segment proof of {k} steps: at most {MAX_SEGMENT_STEPS} are accepted"
        )));
    }
    let end = st.step.checked_add(k).filter(|_| k >= 1).ok_or_else(|| {
        Rejection(format!(
            "a segment of {k} steps from step {} is not a range of steps",
            st.step
        ))
    })?;
    let folds = (lay.num_folds() as u64).checked_mul(k);
    if folds != Some(num_folds) {
        return Err(Rejection(format!(
            "the proof has {num_folds} folds, {k} steps of this spec's schedule have {}",
            folds.map_or("too many".into(), |f| f.to_string())
        )));
    }
    if snark.compression() != vk.compression() {
        return Err(Rejection(format!(
            "the proof is compressed with {}, the verifying key is for {}",
            snark.compression().name(),
            vk.compression().name()
        )));
    }
    let n = usize::try_from(num_folds).map_err(|_| Rejection("too many folds".into()))?;
    // the states beside the SNARKs, and beside the states' hashes the
    // checkpoints' opening at the values the states take from it
    let zeta = || lay.zeta(&first.challenges, [st.c_start, st.c_end]);
    let states = || -> Result<(Vec<Fr>, Vec<Fr>), Rejection> {
        let zeta = zeta();
        let (y_start, y_end) = theta_values(lay, keys, st, theta)?;
        let opening = StepOpening {
            c_before: y_start,
            c_after: first.c_after,
            c_batch: first.c_batch,
            step: Fr::from(st.step),
            challenges: first.challenges,
            adam: lay.adam_constants(st.step),
            zeta,
        };
        let adam = lay
            .adam_digest(st.step, k)
            .ok_or_else(|| Rejection("Adam's constants are undefined for these steps".into()))?;
        let expected = lay.final_state((y_end, zeta), Fr::from(end), st.batches, adam);
        Ok((lay.first_state(&opening), expected))
    };
    let opening = || match (keys.theta, theta) {
        (Some(key), Some(o)) => crate::theta::check(key, lay.spec_digest, (st.step, st.c_start), (end, st.c_end), o, zeta())
            .map_err(Rejection),
        _ => Ok(()),
    };
    snark.verify_with(vk, n, states, opening)?.map_err(|e| {
        Rejection(format!(
            "the compressed proof does not verify from the statement's first state to its last (another commitment, step, batch or challenge, or a proof of other folds): {e}"
        ))
    })
}

/// The values z₀ and z_n hold for θ_t and θ_{t+k}: the statement's
/// commitments under the chains; under KZG points the opening's evaluations
/// (which `verify_folds` checks beside: its points hash to the commitments
/// and it holds at ζ).
fn theta_values(
    lay: &crate::Layout,
    keys: StepKeys<'_>,
    st: &SegmentStatement,
    theta: Option<&ThetaOpening>,
) -> Result<(Fr, Fr), Rejection> {
    match (lay.commit_scheme, keys.theta, theta) {
        (CommitScheme::Chain, None, None) => Ok((st.c_start, st.c_end)),
        (CommitScheme::Evaluation, Some(_), Some(o)) => Ok((o.y_start, o.y_end)),
        (CommitScheme::Evaluation, Some(_), None) => Err(Rejection(
            "the verifying key binds checkpoints by KZG points and the proof carries no opening of them (a proof made under other keys)".into(),
        )),
        (CommitScheme::Chain, None, Some(_)) => Err(Rejection(
            "the proof carries an opening of KZG points, and the verifying key binds checkpoints by hash chains (a proof made under other keys)".into(),
        )),
        _ => Err(Rejection("the verifying key's commitment scheme and its opening key disagree".into())),
    }
}
