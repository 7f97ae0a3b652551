//! The IVC driver, a small state machine: `Ivc::new(z₀, challenges)`, one
//! `prove_step` per fold, `verify` (the whole running state, for tests; the
//! product compresses with `compress`).
//!
//! The CycleFold shape (design step 2): each fold (after the first) folds
//! the primary's last instance into its running instance natively, proves
//! the commitments' scalar multiplications R = P + r·Q with one CycleFold
//! instance (`cyclefold`) and folds that into the CycleFold running
//! instance, then runs the primary circuit (`augmented`), which checks both
//! folds and runs the step, and commits its witness (the last part fresh;
//! W₁, and W₂ with two rounds, from the precommitment). The fold's new
//! instance is folded by the next fold, or by compression.
//!
//! Challenges: `PerFold` commits each fold's W₁ first ([`Ivc::precommit`],
//! done inside `prove_step`) and draws αⱼ = H(pp, comm_W₁, j); `PerRun`
//! needs every fold's W₁ committed before the first fold: the caller runs
//! [`Ivc::precommit`] over all folds, [`run_challenges`] on the results, and
//! hands each precommitment to its `prove_step`.

use crate::augmented::{
    cf_challenge, cf_io_len, chain_link, fold_drawn, own_challenge, state_hash, synthesize_primary, PrimaryInputs,
};
use crate::cs::{PhasedCs, Region, WitnessLayout, WitnessRecorder};
use crate::cyclefold;
use crate::error::{FoldError, Result};
use crate::hash::{run_drawn, run_drawn_late, CHALLENGE_BITS};
use crate::instance::{
    check_running, commit_at, commit_first, commit_witness, Commitment, CommitmentKey, FoldInstance,
    FoldWitness, RunningInstance, RunningWitness,
};
use crate::ladder::odd_challenge;
use crate::nifs;
use crate::params::{Params, View};
use crate::step::{ChallengeMode, StepCircuit};
use ff::Field;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::ConstraintSystem;
use nova_snark::traits::commitment::CommitmentEngineTrait;
use nova_snark::traits::Engine;
use rand::rngs::OsRng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// A fold's W₁, committed before its challenges are drawn.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Precommitment<E: Engine> {
    /// comm_W₁.
    pub comm: Commitment<E>,
    pub(crate) blind: E::Scalar,
    // Σ sʲ·W₁ⱼ at a random s: the fold's W₁ must come out the same once the
    // challenges are known
    pub(crate) key: E::Scalar,
    pub(crate) fingerprint: E::Scalar,
    // late values not yet committed, and the column the first of them takes
    pub(crate) pending: usize,
    pub(crate) late_column: usize,
    // the fold's W₂, committed before the second round (PerRunTwice)
    pub(crate) second: Option<SecondCommitment<E>>,
}

/// A fold's W₂, committed before the second round of challenges.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct SecondCommitment<E: Engine> {
    /// comm_W₂.
    pub comm: Commitment<E>,
    pub(crate) blind: E::Scalar,
    pub(crate) fingerprint: E::Scalar,
}

impl<E: Engine> Precommitment<E> {
    /// Late values this precommitment still needs ([`StepCircuit::late`]).
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// comm_W₂, once [`Ivc::precommit_second`] has run (PerRunTwice).
    pub fn second(&self) -> Option<&SecondCommitment<E>> {
        self.second.as_ref()
    }

    /// Add the fold's late values (in allocation order) to comm_W₁. The
    /// commitment then opens to the whole of W₁, so every challenge drawn
    /// from it comes after them too.
    pub fn complete(&mut self, ck: &CommitmentKey<E>, late: &[E::Scalar]) -> Result<()> {
        if late.len() != self.pending {
            return Err(FoldError::Invalid(format!(
                "{} late values for a precommitment that needs {}",
                late.len(),
                self.pending
            )));
        }
        if late.is_empty() {
            return Ok(());
        }
        let blind = E::Scalar::random(&mut OsRng);
        let idx: Vec<usize> = (self.late_column..self.late_column + late.len()).collect();
        self.comm = self.comm + E::CE::commit_sparse(ck, &idx, late, &blind);
        self.blind += blind;
        self.fingerprint = fingerprint_from(self.fingerprint, self.key, late.iter());
        self.pending = 0;
        Ok(())
    }
}

/// A fold's W₁ synthesised and not yet committed ([`Ivc::synthesize_first`]):
/// committing is an MSM, so a prover may commit one fold while it
/// synthesises the next.
pub struct FirstPhase<E: Engine> {
    now: Vec<E::Scalar>,
    pending: usize,
    late_column: usize,
}

/// A fold's W₂ synthesised and not yet committed ([`Ivc::synthesize_second`]).
pub struct SecondPhase<E: Engine> {
    w2: Vec<E::Scalar>,
    key: E::Scalar,
}

impl<E: Engine> Precommitment<E> {
    /// Attach the fold's comm_W₂ ([`Ivc::commit_second`]).
    pub fn attach_second(&mut self, s: SecondCommitment<E>) {
        self.second = Some(s);
    }
}

/// A first phase and, when asked for, the step's next state.
type Synthesized<E> = (FirstPhase<E>, Option<Vec<<E as Engine>::Scalar>>);

pub(crate) fn fingerprint<'a, F: Field>(key: F, values: impl Iterator<Item = &'a F>) -> F {
    fingerprint_from(F::ZERO, key, values)
}

/// Horner's rule continued from `acc`: the fingerprint of a prefix extends
/// to the whole.
fn fingerprint_from<'a, F: Field>(acc: F, key: F, values: impl Iterator<Item = &'a F>) -> F {
    values.fold(acc, |acc, v| acc * key + v)
}

/// The challenges of a `PerRun` IVC from its folds' precommitments, in
/// order. `PerRunTwice`: the first round only until every precommitment has
/// its comm_W₂ ([`Ivc::precommit_second`]), then both rounds.
pub fn run_challenges<E1, E2>(pp: &Params<E1, E2>, pre: &[Precommitment<E1>]) -> Vec<E1::Scalar>
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
{
    let link = |acc, c| chain_link::<E1, E2>(&pp.ro.n2, acc, c);
    let end1 = pre.iter().fold(E1::Scalar::ZERO, |acc, p| link(acc, &p.comm));
    let seconds: Option<Vec<_>> = pre.iter().map(|p| p.second.as_ref()).collect();
    let v = pp.view();
    match seconds {
        Some(s) if pp.cfg.mode == ChallengeMode::PerRunTwice => {
            let end2 = s.iter().fold(E1::Scalar::ZERO, |acc, c| link(acc, &c.comm));
            derive_run(&v, &[end1, end2])
        }
        _ => {
            let mut ch = derive_run(&v, &[end1, E1::Scalar::ZERO]);
            ch.truncate(pp.cfg.challenges - pp.cfg.late);
            ch
        }
    }
}

/// The PerRun challenges from the chains' last links: αⱼ = H(end₁, j) for
/// the first round, βⱼ = H(end₁, end₂, j) for the second (PerRunTwice), on
/// the primary's field (the chains live in its circuit).
pub(crate) fn derive_run<E1, E2>(v: &View<'_, E1, E2>, ends: &[E1::Scalar]) -> Vec<E1::Scalar>
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
{
    let end1 = ends.first().copied().unwrap_or(E1::Scalar::ZERO);
    let end2 = ends.get(1).copied().unwrap_or(E1::Scalar::ZERO);
    let first = v.cfg.run_challenges().saturating_sub(v.cfg.late);
    // one Poseidon permutation a challenge: side by side
    (0..v.cfg.run_challenges())
        .into_par_iter()
        .map(|j| {
            if j < first {
                run_drawn::<E2>(&v.ro.n2, end1, j)
            } else {
                run_drawn_late::<E2>(&v.ro.n2, end1, end2, j)
            }
        })
        .collect()
}

/// The chains' last links: each chain's state with the last instance's
/// part linked (the circuit links a fold's instance when the next fold
/// folds it; the last one is never folded in a circuit).
pub(crate) fn run_ends<E1, E2>(v: &View<'_, E1, E2>, chain: &[E1::Scalar], last: &FoldInstance<E1>) -> Vec<E1::Scalar>
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
{
    chain
        .iter()
        .zip(&last.comm_w)
        .map(|(c, w)| chain_link::<E1, E2>(&v.ro.n2, *c, w))
        .collect()
}

/// The state the IVC is in after some folds: the primary's running
/// instance, its last instance (not yet folded), the CycleFold running
/// instance, the step's state, the chains.
#[derive(Clone, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Ivc<E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
{
    pub(crate) arity: usize,
    pub(crate) h0: E1::Scalar,
    pub(crate) zi: Vec<E1::Scalar>,
    pub(crate) chain: Vec<E1::Scalar>,
    pub(crate) i: u64,
    pub(crate) run1: RunningInstance<E1>,
    pub(crate) run1_w: RunningWitness<E1>,
    pub(crate) last1: Option<(FoldInstance<E1>, FoldWitness<E1>)>,
    pub(crate) run2: RunningInstance<E2>,
    pub(crate) run2_w: RunningWitness<E2>,
    pub(crate) blind: E1::Scalar,
}

impl<E1, E2> Ivc<E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
{
    /// An IVC from the step circuit's `z0`; a `PerRun` IVC takes its
    /// challenges ([`run_challenges`]), the others none.
    pub fn new(pp: &Params<E1, E2>, z0: &[E1::Scalar], challenges: Vec<E1::Scalar>) -> Result<Self> {
        let cfg = pp.cfg;
        if z0.len() != cfg.arity || challenges.len() != cfg.run_challenges() {
            return Err(FoldError::Invalid(format!(
                "z0 has {} slots and {} challenges; the step circuit has {} and {}",
                z0.len(),
                challenges.len(),
                cfg.arity,
                cfg.run_challenges()
            )));
        }
        let mut z = z0.to_vec();
        z.extend(challenges);
        let parts = cfg.primary_parts();
        Ok(Ivc {
            arity: cfg.arity,
            h0: first_hash(&pp.view(), &z),
            zi: z,
            chain: vec![E1::Scalar::ZERO; cfg.chain_len()],
            i: 0,
            run1: RunningInstance::default_with(parts, cfg.primary_io()),
            run1_w: RunningWitness::default_with(&pp.shape1, parts),
            last1: None,
            run2: RunningInstance::default_with(1, cf_io_len(&cfg)),
            run2_w: RunningWitness::default_with(&pp.shape2, 1),
            blind: E1::Scalar::ZERO,
        })
    }


    /// Folds done.
    pub fn num_steps(&self) -> u64 {
        self.i
    }

    /// The step circuit's current state (challenges not included).
    pub fn outputs(&self) -> &[E1::Scalar] {
        &self.zi[..self.arity]
    }

    /// Commit a fold's W₁: run the step circuit on `z` (its slots only),
    /// commit what its first phase allocated except its late values
    /// ([`StepCircuit::late`], added with [`Precommitment::complete`]).
    /// Returns the precommitment and the step's next state under random
    /// stand-in challenges (what a `PerRun` prover feeds the next fold's
    /// precommitment; the slots that depend on the challenges are
    /// meaningless until the real fold).
    pub fn precommit<C: StepCircuit<E1::Scalar>>(
        pp: &Params<E1, E2>,
        step: &C,
        z: &[E1::Scalar],
    ) -> Result<(Precommitment<E1>, Vec<E1::Scalar>)> {
        let (first, next) = Self::synthesize_first(pp, step, z)?;
        Ok((Self::commit_first(pp, first), next))
    }

    /// [`Ivc::precommit`] without its commitment: the fold's first phase and
    /// the step's next state; [`Ivc::commit_first`] commits it.
    pub fn synthesize_first<C: StepCircuit<E1::Scalar>>(
        pp: &Params<E1, E2>,
        step: &C,
        z: &[E1::Scalar],
    ) -> Result<(FirstPhase<E1>, Vec<E1::Scalar>)> {
        let (first, next) = Self::first_phase(pp, step, z, true, step.late())?;
        Ok((first, next.unwrap_or_default()))
    }

    /// Commit a synthesised first phase (blind, fingerprint key drawn here).
    pub fn commit_first(pp: &Params<E1, E2>, first: FirstPhase<E1>) -> Precommitment<E1> {
        let blind = E1::Scalar::random(&mut OsRng);
        let key = E1::Scalar::random(&mut OsRng);
        Precommitment {
            comm: commit_first::<E1>(&pp.ck1, &pp.layout1, &first.now, &blind),
            blind,
            key,
            fingerprint: fingerprint(key, first.now.iter()),
            pending: first.pending,
            late_column: first.late_column,
            second: None,
        }
    }

    /// The first phase of [`Ivc::precommit`], running the second phase only
    /// when its state is wanted, leaving the last `defer` values of W₁ to
    /// [`Precommitment::complete`].
    fn first_phase<C: StepCircuit<E1::Scalar>>(
        pp: &Params<E1, E2>,
        step: &C,
        z: &[E1::Scalar],
        want_next: bool,
        defer: usize,
    ) -> Result<Synthesized<E1>> {
        let cfg = pp.cfg;
        check_step(pp, step)?;
        if !cfg.split() || z.len() != cfg.arity {
            return Err(FoldError::Invalid(
                "precommit is for a step circuit with challenges, given its z".into(),
            ));
        }
        let mut cs = WitnessRecorder::<E1::Scalar>::new(cfg.primary_parts());
        let zv = z
            .iter()
            .enumerate()
            .map(|(k, v)| AllocatedNum::alloc(cs.namespace(|| format!("z{k}")), || Ok(*v)))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        cs.set_region(Region::First);
        let carry = step.first(&mut cs.namespace(|| "step"), &zv)?;
        cs.set_region(Region::Second);
        let w1: Vec<E1::Scalar> = cs.first_values().copied().collect();
        if w1.len() != pp.layout1.first {
            return Err(FoldError::Invalid(format!(
                "the step circuit's first phase allocated {} values, its shape {}",
                w1.len(),
                pp.layout1.first
            )));
        }
        if defer > w1.len() {
            return Err(FoldError::Invalid(format!(
                "{defer} late values of a first phase of {}",
                w1.len()
            )));
        }
        let mut now = w1;
        now.truncate(now.len() - defer);
        let pre = FirstPhase {
            late_column: pp.layout1.first_offset() + now.len(),
            now,
            pending: defer,
        };
        if !want_next {
            return Ok((pre, None));
        }
        if let Some(next) = step.provisional_next(&carry) {
            return Ok((pre, Some(next)));
        }
        // random stand-ins: an inverse at a challenge must not meet zero
        let ch = (0..cfg.challenges)
            .map(|k| {
                AllocatedNum::alloc(cs.namespace(|| format!("α{k}")), || {
                    Ok(E1::Scalar::random(&mut OsRng))
                })
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let next = step.second(&mut cs.namespace(|| "step 2"), carry, &ch)?;
        let next = next
            .iter()
            .map(|v| v.get_value().ok_or(FoldError::Synthesis("a missing output".into())))
            .collect::<Result<Vec<_>>>()?;
        Ok((pre, Some(next)))
    }

    /// Commit a fold's W₂ (PerRunTwice), its W₁ already precommitted: run
    /// the step circuit on `z` (its slots only) at the first round's
    /// challenges and random stand-ins for the second, and commit what its
    /// second phase allocated outside [`crate::after_late_challenges`].
    /// Returns the step's next state (the slots that depend on the second
    /// round are meaningless until the real fold).
    pub fn precommit_second<C: StepCircuit<E1::Scalar>>(
        pp: &Params<E1, E2>,
        step: &C,
        z: &[E1::Scalar],
        pre: &mut Precommitment<E1>,
        first_round: &[E1::Scalar],
    ) -> Result<Vec<E1::Scalar>> {
        let (second, next) = Self::synthesize_second(pp, step, z, pre, first_round)?;
        pre.attach_second(Self::commit_second(pp, second));
        Ok(next)
    }

    /// [`Ivc::precommit_second`] without its commitment: the fold's second
    /// phase and the step's next state; [`Ivc::commit_second`] commits it.
    pub fn synthesize_second<C: StepCircuit<E1::Scalar>>(
        pp: &Params<E1, E2>,
        step: &C,
        z: &[E1::Scalar],
        pre: &Precommitment<E1>,
        first_round: &[E1::Scalar],
    ) -> Result<(SecondPhase<E1>, Vec<E1::Scalar>)> {
        let cfg = pp.cfg;
        check_step(pp, step)?;
        if cfg.mode != ChallengeMode::PerRunTwice
            || z.len() != cfg.arity
            || first_round.len() != cfg.challenges - cfg.late
            || pre.pending > 0
        {
            return Err(FoldError::Invalid(
                "precommit_second is for a PerRunTwice fold whose W₁ is committed, given its z and the first round".into(),
            ));
        }
        let mut cs = WitnessRecorder::<E1::Scalar>::new(3);
        cs.set_region(Region::Third);
        let alloc = |cs: &mut WitnessRecorder<E1::Scalar>, name: String, v: E1::Scalar| {
            AllocatedNum::alloc(cs.namespace(|| name), || Ok(v))
        };
        let zv = z
            .iter()
            .enumerate()
            .map(|(k, v)| alloc(&mut cs, format!("z{k}"), *v))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let ch = (0..cfg.challenges)
            .map(|k| {
                let v = first_round.get(k).copied().unwrap_or_else(|| E1::Scalar::random(&mut OsRng));
                alloc(&mut cs, format!("α{k}"), v)
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        cs.set_region(Region::First);
        let carry = step.first(&mut cs.namespace(|| "step"), &zv)?;
        cs.set_region(Region::Second);
        let next = step.second(&mut cs.namespace(|| "step 2"), carry, &ch)?;
        let w2: Vec<E1::Scalar> = cs.values_in(Region::Second).copied().collect();
        if w2.len() != pp.layout1.second {
            return Err(FoldError::Invalid(format!(
                "the step circuit's second phase allocated {} values, its shape {}",
                w2.len(),
                pp.layout1.second
            )));
        }
        let next = next
            .iter()
            .map(|v| v.get_value().ok_or(FoldError::Synthesis("a missing output".into())))
            .collect::<Result<Vec<_>>>()?;
        Ok((SecondPhase { w2, key: pre.key }, next))
    }

    /// Commit a synthesised second phase: the comm_W₂ to attach to its
    /// fold's precommitment ([`Precommitment::attach_second`]).
    pub fn commit_second(pp: &Params<E1, E2>, second: SecondPhase<E1>) -> SecondCommitment<E1> {
        let blind = E1::Scalar::random(&mut OsRng);
        SecondCommitment {
            comm: commit_at::<E1>(&pp.ck1, pp.layout1.second_offset(), &second.w2, &blind),
            blind,
            fingerprint: fingerprint(second.key, second.w2.iter()),
        }
    }

    /// Fold one step. A `PerRun` IVC needs this fold's precommitment.
    pub fn prove_step<C: StepCircuit<E1::Scalar>>(
        &mut self,
        pp: &Params<E1, E2>,
        step: &C,
        pre: Option<&Precommitment<E1>>,
    ) -> Result<()> {
        let cfg = pp.cfg;
        check_step(pp, step)?;
        let own;
        let pre = match cfg.mode {
            ChallengeMode::None => None,
            ChallengeMode::PerRun | ChallengeMode::PerRunTwice => Some(pre.ok_or_else(|| {
                FoldError::Invalid("a PerRun fold needs its precommitment".into())
            })?),
            ChallengeMode::PerFold => {
                own = Self::commit_first(pp, Self::first_phase(pp, step, &self.zi[..cfg.arity], false, 0)?.0);
                Some(&own)
            }
        };
        if cfg.mode == ChallengeMode::PerRunTwice && pre.is_some_and(|p| p.second.is_none()) {
            return Err(FoldError::Invalid(
                "a PerRunTwice fold needs its W₂ committed (precommit_second)".into(),
            ));
        }
        if pre.is_some_and(|p| p.pending > 0) {
            return Err(FoldError::Invalid(format!(
                "a precommitment still waiting for {} late values",
                pre.map_or(0, |p| p.pending)
            )));
        }
        let drawn = draw(pp, pre);
        let f = self.primary(pp, step, pre, drawn)?;
        self.finish(f);
        Ok(())
    }

    /// A fold up to its new instance: the last instance folded into the
    /// running one natively, the commitments' multiplications proven by a
    /// CycleFold instance folded into its running instance, the primary
    /// circuit run (with this fold's challenges `drawn`, PerFold) and its
    /// witness committed. Nothing of `self` changes until [`Ivc::finish`].
    pub(crate) fn primary<C: StepCircuit<E1::Scalar>>(
        &self,
        pp: &Params<E1, E2>,
        step: &C,
        pre: Option<&Precommitment<E1>>,
        drawn: Vec<E1::Scalar>,
    ) -> Result<PrimaryFold<E1, E2>> {
        self.primary_with(pp, step, pre, drawn, &Forge::honest())
    }

    /// [`Ivc::primary`] with a forger's changes (tests).
    pub(crate) fn primary_with<C: StepCircuit<E1::Scalar>>(
        &self,
        pp: &Params<E1, E2>,
        step: &C,
        pre: Option<&Precommitment<E1>>,
        drawn: Vec<E1::Scalar>,
        forge: &Forge<E1, E2>,
    ) -> Result<PrimaryFold<E1, E2>> {
        let cfg = pp.cfg;
        let parts = cfg.primary_parts();
        let mut inputs = PrimaryInputs::<E1, E2> {
            pp: pp.digest,
            i: self.i,
            h0: self.h0,
            z: self.zi.clone(),
            chain: self.chain.clone(),
            run1: None,
            inc1: None,
            t1: None,
            next1: None,
            run2: None,
            inc2: None,
            t2: None,
            blind: self.blind,
            blind_next: E1::Scalar::random(&mut OsRng),
            drawn,
        };
        // the first fold folds nothing; the others fold the last instance
        let folded = match &self.last1 {
            None => None,
            Some((u1, w1)) => {
                let mut sponge = None;
                let (t1, next1, next1_w) = nifs::fold_with(&pp.ck1, &pp.shape1, &self.run1, &self.run1_w, u1, w1, |t| {
                    let (k, h) = own_challenge::<E1, E2>(&pp.ro.n2, pp.digest, u1, t);
                    let k = k ^ forge.k_xor;
                    sponge = Some((k, h));
                    odd_challenge::<E1::Scalar>(k, CHALLENGE_BITS as u32)
                })?;
                let (k1, h) = sponge.ok_or_else(|| FoldError::Synthesis("no challenge drawn".into()))?;
                // the CycleFold instance: R = P + r₁·Q for each part and for E
                let mut pairs: Vec<cyclefold::Pair<E1>> = (0..parts).map(|j| (self.run1.comm_w[j], u1.comm_w[j])).collect();
                pairs.push((self.run1.comm_e, t1));
                let io = cyclefold::public_io::<E1>(k1, &pairs);
                let mut cs = WitnessRecorder::<E2::Scalar>::new(1);
                cyclefold::synthesize::<E1, _>(&mut cs, parts + 1, Some(&io))?;
                let layout2 = plain_layout(pp.shape2.num_vars());
                let w2 = cs.witness(&layout2)?;
                let blinds = vec![E2::Scalar::random(&mut OsRng)];
                let u2 = FoldInstance {
                    comm_w: commit_witness::<E2>(&pp.ck2, &layout2, &w2, &blinds)?,
                    x: cs.public().to_vec(),
                };
                let w2 = FoldWitness { w: w2, blinds };
                let (t2, run2, run2_w) = nifs::fold_with(&pp.ck2, &pp.shape2, &self.run2, &self.run2_w, &u2, &w2, |t| {
                    odd_challenge::<E2::Scalar>(cf_challenge::<E1, E2>(h, &next1, &u2.comm_w[0], t), CHALLENGE_BITS as u32)
                })?;
                inputs.run1 = Some(self.run1.clone());
                inputs.inc1 = Some(u1.clone());
                inputs.t1 = Some(t1);
                inputs.next1 = Some(next1.clone());
                inputs.run2 = Some(self.run2.clone());
                inputs.inc2 = Some(u2);
                inputs.t2 = Some(t2);
                let chain = run_ends(&pp.view(), &self.chain, u1);
                Some(Folded { run1: next1, run1_w: next1_w, run2, run2_w, chain })
            }
        };
        (forge.inputs)(&mut inputs);
        let mut cs = WitnessRecorder::<E1::Scalar>::new(parts);
        let z_next = synthesize_primary::<E1, E2, C, _>(&mut cs, &cfg, pp.ro.c2(), step, Some(&inputs))?;
        let (u1, w1) = commit_primary(pp, &cs, pre, self.i)?;
        let z_next = z_next
            .iter()
            .map(|v| v.get_value().ok_or(FoldError::Synthesis("a missing output".into())))
            .collect::<Result<Vec<_>>>()?;
        Ok(PrimaryFold {
            u1,
            w1,
            z_next,
            folded,
            blind_next: inputs.blind_next,
        })
    }

    /// Take a fold's results as the new state.
    pub(crate) fn finish(&mut self, f: PrimaryFold<E1, E2>) {
        if let Some(d) = f.folded {
            self.run1 = d.run1;
            self.run1_w = d.run1_w;
            self.run2 = d.run2;
            self.run2_w = d.run2_w;
            self.chain = d.chain;
        }
        self.last1 = Some((f.u1, f.w1));
        self.zi = f.z_next;
        self.blind = f.blind_next;
        self.i += 1;
    }

    /// Check the whole state: the last instance's public IO opens to it,
    /// the run's challenges are the chains' (PerRun), and the three
    /// instances are satisfied (each commitment opening to its part of W).
    /// Returns the step's z_n.
    pub fn verify(&self, pp: &Params<E1, E2>, num_steps: u64, z0: &[E1::Scalar]) -> Result<Vec<E1::Scalar>> {
        let cfg = pp.cfg;
        let (u1, w1) = match &self.last1 {
            Some(l) if num_steps == self.i && z0.len() == cfg.arity => l,
            _ => {
                return Err(FoldError::Rejected(format!(
                    "{} folds of a {}-slot state, asked for {num_steps} of {}",
                    self.i,
                    cfg.arity,
                    z0.len()
                )))
            }
        };
        let v = pp.view();
        let mut z = z0.to_vec();
        z.extend(derive_run(&v, &run_ends(&v, &self.chain, u1)));
        let st = FinalState {
            zn: &self.zi,
            chain: &self.chain,
            run1: &self.run1,
            last1: u1,
            run2: &self.run2,
            blind: self.blind,
        };
        check_final(&v, num_steps, &z, &st)?;
        check_running(&pp.ck1, &pp.shape1, &pp.layout1, &self.run1, &self.run1_w)?;
        check_running(
            &pp.ck1,
            &pp.shape1,
            &pp.layout1,
            &RunningInstance::from_fold(u1),
            &RunningWitness::from_fold(&pp.shape1, w1),
        )?;
        let layout2 = plain_layout(pp.shape2.num_vars());
        check_running(&pp.ck2, &pp.shape2, &layout2, &self.run2, &self.run2_w)?;
        Ok(self.zi[..cfg.arity].to_vec())
    }
}

/// What a fold folded: the new running instances and chains.
pub(crate) struct Folded<E1: Engine, E2: Engine> {
    pub run1: RunningInstance<E1>,
    pub run1_w: RunningWitness<E1>,
    pub run2: RunningInstance<E2>,
    pub run2_w: RunningWitness<E2>,
    pub chain: Vec<E1::Scalar>,
}

/// A fold's results before they become the state ([`Ivc::finish`]).
pub(crate) struct PrimaryFold<E1: Engine, E2: Engine> {
    pub u1: FoldInstance<E1>,
    pub w1: FoldWitness<E1>,
    pub z_next: Vec<E1::Scalar>,
    pub folded: Option<Folded<E1, E2>>,
    pub blind_next: E1::Scalar,
}

/// A forged prover's changes to an honest fold (tests): the primary fold
/// and its CycleFold instance at K ^ `k_xor` (a challenge the circuit does
/// not draw), and the primary circuit's inputs changed by `inputs`.
pub(crate) struct Forge<E1: Engine, E2: Engine> {
    pub k_xor: u128,
    pub inputs: fn(&mut PrimaryInputs<E1, E2>),
}

impl<E1: Engine, E2: Engine> Forge<E1, E2> {
    pub(crate) fn honest() -> Self {
        Forge { k_xor: 0, inputs: |_| {} }
    }
}

/// The PerFold challenges a precommitment gives (none otherwise).
pub(crate) fn draw<E1, E2>(pp: &Params<E1, E2>, pre: Option<&Precommitment<E1>>) -> Vec<E1::Scalar>
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
{
    match (pp.cfg.mode, pre) {
        (ChallengeMode::PerFold, Some(p)) => (0..pp.cfg.challenges)
            .map(|j| fold_drawn::<E1, E2>(&pp.ro.n2, pp.digest, &p.comm, j))
            .collect(),
        _ => vec![],
    }
}

/// The state both checks see: what the last instance's IO opens.
pub(crate) struct FinalState<'a, E1: Engine, E2: Engine> {
    pub zn: &'a [E1::Scalar],
    pub chain: &'a [E1::Scalar],
    pub run1: &'a RunningInstance<E1>,
    pub last1: &'a FoldInstance<E1>,
    pub run2: &'a RunningInstance<E2>,
    pub blind: E1::Scalar,
}

/// The verifier's check of the final state: the last instance carries
/// H(pp, n, h₀, z_n, chains, U₁, U_cf) and (PerFold) its challenges are
/// its comm_W₁'s. `z0` and the state include the PerRun challenges, which
/// the caller derived from the chains' ends.
pub(crate) fn check_final<E1, E2>(
    pp: &View<'_, E1, E2>,
    n: u64,
    z0: &[E1::Scalar],
    st: &FinalState<'_, E1, E2>,
) -> Result<()>
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
{
    let cfg = pp.cfg;
    let k = cfg.fold_challenges();
    if st.last1.x.len() != cfg.primary_io()
        || st.last1.comm_w.len() != cfg.primary_parts()
        || st.run1.x.len() != cfg.primary_io()
        || st.run1.comm_w.len() != cfg.primary_parts()
        || st.run2.x.len() != cf_io_len(&cfg)
        || st.run2.comm_w.len() != 1
        || st.zn.len() != cfg.state_len()
        || st.chain.len() != cfg.chain_len()
        || z0.len() != cfg.state_len()
    {
        return Err(FoldError::Rejected("instances of the wrong size".into()));
    }
    // the challenges are constants of the state
    if st.zn[cfg.arity..] != z0[cfg.arity..] {
        return Err(FoldError::Rejected("the challenges changed along the run".into()));
    }
    for j in 0..k {
        if st.last1.x[j] != fold_drawn::<E1, E2>(&pp.ro.n2, pp.digest, &st.last1.comm_w[0], j) {
            return Err(FoldError::Rejected(format!("the last fold's challenge {j} is not its comm_W1's")));
        }
    }
    let mut state = vec![first_hash(pp, z0)];
    state.extend_from_slice(st.zn);
    state.extend_from_slice(st.chain);
    let h = state_hash::<E1, E2>(&pp.ro.n2, pp.digest, n, &state, st.run1, st.run2, st.blind);
    if h != st.last1.x[k] {
        return Err(FoldError::Rejected("the state hash does not open to z_n".into()));
    }
    Ok(())
}

/// h₀ = H(pp, 0, (0, z₀, 0…), U⊥, U_cf⊥, 0): the first fold's input hash.
pub(crate) fn first_hash<E1, E2>(pp: &View<'_, E1, E2>, z0: &[E1::Scalar]) -> E1::Scalar
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
{
    let cfg = pp.cfg;
    let mut state = vec![E1::Scalar::ZERO];
    state.extend_from_slice(z0);
    state.extend(vec![E1::Scalar::ZERO; cfg.chain_len()]);
    state_hash::<E1, E2>(
        &pp.ro.n2,
        pp.digest,
        0,
        &state,
        &RunningInstance::default_with(cfg.primary_parts(), cfg.primary_io()),
        &RunningInstance::default_with(1, cf_io_len(&cfg)),
        E1::Scalar::ZERO,
    )
}


/// The CycleFold circuit's (never split) layout.
pub(crate) fn plain_layout(num_vars: usize) -> WitnessLayout {
    WitnessLayout::plain(num_vars)
}

pub(crate) fn check_step<E1, E2, C>(pp: &Params<E1, E2>, step: &C) -> Result<()>
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
    C: StepCircuit<E1::Scalar>,
{
    if step.arity() != pp.cfg.arity || step.num_challenges() != pp.cfg.challenges {
        return Err(FoldError::Invalid(format!(
            "a step circuit of arity {} with {} challenges, the parameters are for {} and {}",
            step.arity(),
            step.num_challenges(),
            pp.cfg.arity,
            pp.cfg.challenges
        )));
    }
    Ok(())
}

/// Commit the primary's witness: the last part fresh, W₁ (and W₂ with two
/// rounds) from the precommitment (whose fingerprints the recomputed values
/// must match).
pub(crate) fn commit_primary<E1, E2>(
    pp: &Params<E1, E2>,
    cs: &WitnessRecorder<E1::Scalar>,
    pre: Option<&Precommitment<E1>>,
    fold: u64,
) -> Result<(FoldInstance<E1>, FoldWitness<E1>)>
where
    E1: Engine<Base = <E2 as Engine>::Scalar>,
    E2: Engine<Base = <E1 as Engine>::Scalar>,
{
    let w = cs.witness(&pp.layout1)?;
    let x = cs.public().to_vec();
    let (comm_w, blinds) = match pre {
        None => {
            let b = vec![E1::Scalar::random(&mut OsRng)];
            (commit_witness::<E1>(&pp.ck1, &pp.layout1, &w, &b)?, b)
        }
        Some(p) => {
            if fingerprint(p.key, cs.first_values()) != p.fingerprint {
                return Err(FoldError::PhaseDependsOnChallenge { fold: fold as usize });
            }
            let (mut comm, mut blinds) = (vec![p.comm], vec![p.blind]);
            if let Some(s) = &p.second {
                if fingerprint(p.key, cs.values_in(Region::Second)) != s.fingerprint {
                    return Err(FoldError::LatePhaseDependsOnChallenge { fold: fold as usize });
                }
                comm.push(s.comm);
                blinds.push(s.blind);
            }
            // the last part, on the columns it lies on
            let last = pp.layout1.part_columns(pp.layout1.parts - 1);
            let b = E1::Scalar::random(&mut OsRng);
            comm.push(commit_at::<E1>(&pp.ck1, last.start, &w[last], &b));
            blinds.push(b);
            (comm, blinds)
        }
    };
    Ok((FoldInstance { comm_w, x }, FoldWitness { w, blinds }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::OnePhase;
    use crate::testing::{Claim, Doubler, Permutation};
    use nova_snark::traits::snark::default_ck_hint;

    type E1 = nova_snark::provider::Bn256EngineKZG;
    type E2 = nova_snark::provider::GrumpkinEngine;
    type F = <E1 as Engine>::Scalar;

    fn params<C: StepCircuit<F>>(c: &C, mode: ChallengeMode) -> Params<E1, E2> {
        Params::setup(c, mode, &*default_ck_hint(), &*default_ck_hint()).unwrap()
    }

    fn doubler_run(pp: &Params<E1, E2>, n: usize, forge_at: Option<(usize, Forge<E1, E2>)>) -> Ivc<E1, E2> {
        let mut ivc = Ivc::new(pp, &[F::from(3)], vec![]).unwrap();
        for k in 0..n {
            match &forge_at {
                Some((at, f)) if *at == k => {
                    let fold = ivc.primary_with(pp, &OnePhase(Doubler), None, vec![], f).unwrap();
                    ivc.finish(fold);
                }
                _ => ivc.prove_step(pp, &OnePhase(Doubler), None).unwrap(),
            }
        }
        ivc
    }

    #[test]
    fn a_one_phase_run_verifies_and_its_secondary_is_within_2_12() {
        let pp = params(&OnePhase(Doubler), ChallengeMode::None);
        assert!(pp.shape2.num_cons() <= 1 << 12 && pp.shape2.num_vars() <= 1 << 12, "{} {}", pp.shape2.num_cons(), pp.shape2.num_vars());
        // 3 → 7 → 15 → 31 → 63
        let ivc = doubler_run(&pp, 4, None);
        assert_eq!(ivc.verify(&pp, 4, &[F::from(3)]).unwrap(), vec![F::from(63)]);
        assert!(ivc.verify(&pp, 3, &[F::from(3)]).is_err());
        assert!(ivc.verify(&pp, 4, &[F::from(4)]).is_err());
        // one fold: only the first instance, nothing folded yet
        let one = doubler_run(&pp, 1, None);
        assert_eq!(one.verify(&pp, 1, &[F::from(3)]).unwrap(), vec![F::from(7)]);
    }

    #[test]
    fn a_fold_at_another_challenge_or_with_other_points_is_rejected() {
        let pp = params(&OnePhase(Doubler), ChallengeMode::None);
        let forged = |f: Forge<E1, E2>| doubler_run(&pp, 4, Some((2, f))).verify(&pp, 4, &[F::from(3)]);
        // the primary folded (natively and in the CycleFold instance) at a K the hash did not give
        assert!(forged(Forge { k_xor: 1, inputs: |_| {} }).is_err());
        // the circuit told of another R than the CycleFold instance computes
        assert!(forged(Forge {
            k_xor: 0,
            inputs: |i| {
                if let Some(n) = i.next1.as_mut() {
                    n.comm_w[0] = n.comm_w[0] + n.comm_w[0];
                }
            },
        })
        .is_err());
        // another cross term, another u
        assert!(forged(Forge {
            k_xor: 0,
            inputs: |i| {
                if let Some(t) = i.t1.as_mut() {
                    *t = *t + *t;
                }
            },
        })
        .is_err());
        assert!(forged(Forge {
            k_xor: 0,
            inputs: |i| {
                if let Some(u) = i.inc1.as_mut() {
                    u.x[0] += F::ONE;
                }
            },
        })
        .is_err());
        // the CycleFold instance's T
        assert!(forged(Forge {
            k_xor: 0,
            inputs: |i| {
                if let Some(t) = i.t2.as_mut() {
                    *t = *t + *t;
                }
            },
        })
        .is_err());
        // and the honest run through the same path is accepted
        assert!(forged(Forge::honest()).is_ok());
    }

    /// A PerRun IVC of permutation folds on the CycleFold shape.
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
    fn per_run_challenges_accept_a_permutation_and_reject_others() {
        let c = |a: Vec<u64>, b: Vec<u64>| Permutation::<F>::new(a, b, false);
        let pp = params(&c(vec![0; 3], vec![0; 3]), ChallengeMode::PerRun);
        let z0 = vec![F::ONE, F::ONE];
        let good = [c(vec![1, 2, 3], vec![3, 1, 2]), c(vec![5, 5, 7], vec![5, 7, 5]), c(vec![0, 4, 4], vec![4, 0, 4])];
        let zn = per_run(&pp, &good).verify(&pp, 3, &z0).unwrap();
        assert_eq!(zn[0], zn[1]);
        let mut bad = good.clone();
        bad[1] = c(vec![5, 5, 7], vec![5, 7, 7]);
        let zn = per_run(&pp, &bad).verify(&pp, 3, &z0).unwrap();
        assert_ne!(zn[0], zn[1]);
        // challenges that are not the chains'
        let mut z = z0.clone();
        let mut pre = vec![];
        for f in &good {
            let (p, next) = Ivc::precommit(&pp, f, &z).unwrap();
            pre.push(p);
            z = next;
        }
        let mut ch = run_challenges(&pp, &pre);
        ch[0] += F::ONE;
        let mut ivc = Ivc::new(&pp, &z0, ch).unwrap();
        for (f, p) in good.iter().zip(&pre) {
            ivc.prove_step(&pp, f, Some(p)).unwrap();
        }
        assert!(ivc.verify(&pp, 3, &z0).is_err());
    }

    #[test]
    fn no_witness_variable_of_either_circuit_is_free() {
        use crate::forge::{free_columns, unread_columns};
        let pp = params(&Claim::<F>::new(&[0; 3]), ChallengeMode::PerRunTwice);
        assert_eq!(unread_columns(&pp.shape1, &pp.layout1.padding()), Vec::<usize>::new(), "primary");
        assert_eq!(unread_columns(&pp.shape2, &[]), Vec::<usize>::new(), "CycleFold");
        // the third fold's witness (both folds real): any one value changed
        // alone breaks a constraint
        let z0 = vec![F::ZERO, F::ZERO];
        let c = Claim::<F>::new(&[1, 2, 3]);
        let (mut pres, mut z) = (vec![], z0.clone());
        for _ in 0..3 {
            let (p, next) = Ivc::precommit(&pp, &c, &z).unwrap();
            pres.push(p);
            z = next;
        }
        let first = run_challenges(&pp, &pres);
        let mut z = z0.clone();
        for p in pres.iter_mut() {
            z = Ivc::precommit_second(&pp, &c, &z, p, &first).unwrap();
        }
        let mut ivc = Ivc::new(&pp, &z0, run_challenges(&pp, &pres)).unwrap();
        for p in &pres {
            ivc.prove_step(&pp, &c, Some(p)).unwrap();
        }
        let (u, w) = ivc.last1.as_ref().unwrap();
        let free = free_columns(&pp.shape1, &w.w, &u.x, &pp.layout1.padding());
        assert!(free.is_empty(), "free columns of the primary: {free:?}");
        // and the CycleFold running instance's witness is satisfied as folded
        assert!(ivc.verify(&pp, 3, &z0).is_ok());
    }

    #[test]
    fn two_rounds_of_challenges_check_a_claim() {
        let pp = params(&Claim::<F>::new(&[0; 3]), ChallengeMode::PerRunTwice);
        let run = |folds: &[Claim<F>]| {
            let z0 = vec![F::ZERO, F::ZERO];
            let mut z = z0.clone();
            let mut pre = vec![];
            for c in folds {
                let (p, next) = Ivc::precommit(&pp, c, &z).unwrap();
                pre.push(p);
                z = next;
            }
            let first = run_challenges(&pp, &pre);
            let mut z = z0.clone();
            for (c, p) in folds.iter().zip(pre.iter_mut()) {
                z = Ivc::precommit_second(&pp, c, &z, p, &first).unwrap();
            }
            let ch = run_challenges(&pp, &pre);
            assert_eq!((ch.len(), ch[0]), (2, first[0]));
            let mut ivc = Ivc::new(&pp, &z0, ch.clone()).unwrap();
            for (c, p) in folds.iter().zip(&pre) {
                ivc.prove_step(&pp, c, Some(p)).unwrap();
            }
            (ivc.verify(&pp, folds.len() as u64, &z0), ch)
        };
        let folds = [Claim::new(&[1, 2, 3]), Claim::new(&[4, 5, 6]), Claim::new(&[7, 8, 9])];
        let (zn, ch) = run(&folds);
        assert_eq!(zn.unwrap(), vec![ch[0] * F::from(45), F::from(3)]);
        let mut bad = folds.clone();
        bad[1].skew[0] = F::ONE;
        assert!(run(&bad).0.is_err());
    }
}
