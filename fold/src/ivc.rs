//! The IVC driver, a small state machine: `Ivc::new(z₀, challenges)`, one
//! `prove_step` per fold, `verify` (the whole running state, for tests; the
//! product compresses with `compress`).
//!
//! Each fold: fold the secondary's last instance into its running instance
//! (natively), run the primary circuit (which folds the same in-circuit and
//! runs the step), commit its witness (W₂ and, on a split layout, W₁ from
//! the precommitment), fold it into the primary's running instance, and run
//! the secondary circuit on it.
//!
//! Challenges: `PerFold` commits each fold's W₁ first ([`Ivc::precommit`],
//! done inside `prove_step`) and draws αⱼ = H(pp, comm_W₁, j); `PerRun`
//! needs every fold's W₁ committed before the first fold: the caller runs
//! [`Ivc::precommit`] over all folds, [`run_challenges`] on the results, and
//! hands each precommitment to its `prove_step`.

use crate::augmented::{synthesize_primary, synthesize_secondary, Config, PrimaryInputs, SecondaryInputs};
use crate::commit::commit_on;
use crate::cs::{PhasedCs, Region, WitnessRecorder};
use crate::error::{FoldError, Result};
use crate::hash::{chain_link, fold_drawn, run_drawn, run_drawn_late, state_hash};
use crate::instance::{
    check_running, commit_at, commit_first, commit_witness, Commitment, CommitmentKey, FoldInstance,
    FoldWitness, RunningInstance, RunningWitness,
};
use crate::nifs;
use crate::params::{Params, View};
use crate::step::{ChallengeMode, StepCircuit};
use crate::cs::WitnessLayout;
use ff::Field;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::ConstraintSystem;
use nova_snark::gadgets::utils::field_switch;
use nova_snark::traits::{Engine, ROConstants};
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

impl<E: Engine + 'static> Precommitment<E> {
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
        self.comm = self.comm + commit_on::<E>(ck, self.late_column, late, &blind);
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
    // W₁ less its late values, in its columns' order (`Params::units1`)
    placed: Vec<E::Scalar>,
    // the fingerprint's key and the fingerprint (allocation order)
    key: E::Scalar,
    fingerprint: E::Scalar,
    pending: usize,
    late_column: usize,
}

/// A fold's W₂ synthesised and not yet committed ([`Ivc::synthesize_second`]).
pub struct SecondPhase<E: Engine> {
    // W₂ in its columns' order, and its fingerprint (allocation order)
    placed: Vec<E::Scalar>,
    fingerprint: E::Scalar,
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
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    let link = |acc, c: &Commitment<E1>| chain_link::<E1>(pp.ro.n1(), acc, c);
    let end1 = pre.iter().fold(E1::Base::ZERO, |acc, p| link(acc, &p.comm));
    let v = pp.view();
    let seconds: Option<Vec<_>> = pre.iter().map(|p| p.second.as_ref()).collect();
    match seconds {
        Some(s) if pp.cfg.mode == ChallengeMode::PerRunTwice => {
            let end2 = s.iter().fold(E1::Base::ZERO, |acc, c| link(acc, &c.comm));
            derive_run(&v, &[end1, end2])
        }
        _ => {
            let mut ch = derive_run(&v, &[end1, E1::Base::ZERO]);
            ch.truncate(pp.cfg.challenges - pp.cfg.late);
            ch
        }
    }
}

/// The PerRun challenges from the chains' last links: αⱼ = H(end₁, j) for
/// the first round, βⱼ = H(end₁, end₂, j) for the second (PerRunTwice).
pub(crate) fn derive_run<E1, E2>(v: &View<'_, E1, E2>, ends: &[E1::Base]) -> Vec<E1::Scalar>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    drawn_run::<E1>(v.ro.n1(), &v.cfg, ends)
        .into_iter()
        .map(field_switch::<E1::Base, E1::Scalar>)
        .collect()
}

/// The PerRun challenges over `E`'s RO (numbers of `E::Base`, below
/// 2²⁵⁰) from the chains' last links, as [`derive_run`] defines them.
pub(crate) fn drawn_run<E: Engine>(ro: &ROConstants<E>, cfg: &Config, ends: &[E::Base]) -> Vec<E::Base> {
    let end1 = ends.first().copied().unwrap_or(E::Base::ZERO);
    let end2 = ends.get(1).copied().unwrap_or(E::Base::ZERO);
    let first = cfg.run_challenges().saturating_sub(cfg.late);
    // one Poseidon permutation a challenge: side by side
    (0..cfg.run_challenges())
        .into_par_iter()
        .map(|j| {
            if j < first {
                run_drawn::<E>(ro, end1, j)
            } else {
                run_drawn_late::<E>(ro, end1, end2, j)
            }
        })
        .collect()
}

/// The state the IVC is in after some folds.
#[derive(Clone, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Ivc<E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    pub(crate) arity: usize,
    pub(crate) z0: Vec<E1::Scalar>,
    pub(crate) h0: E1::Scalar,
    pub(crate) zi: Vec<E1::Scalar>,
    pub(crate) chain: Vec<E2::Scalar>,
    pub(crate) i: u64,
    pub(crate) run1: RunningInstance<E1>,
    pub(crate) run1_w: RunningWitness<E1>,
    pub(crate) run2: RunningInstance<E2>,
    pub(crate) run2_w: RunningWitness<E2>,
    pub(crate) last2: FoldInstance<E2>,
    pub(crate) last2_w: FoldWitness<E2>,
    pub(crate) blind1: E1::Scalar,
    pub(crate) blind2: E2::Scalar,
}

impl<E1, E2> Ivc<E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
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
            zi: z.clone(),
            z0: z,
            chain: vec![E2::Scalar::ZERO; cfg.chain_len()],
            i: 0,
            run1: RunningInstance::default_with(parts, cfg.primary_io()),
            run1_w: RunningWitness::default_with(&pp.shape1, parts),
            run2: RunningInstance::default_with(1, 2),
            run2_w: RunningWitness::default_with(&pp.shape2, 1),
            last2: FoldInstance {
                comm_w: vec![Commitment::<E2>::default()],
                x: vec![E2::Scalar::ZERO; 2],
            },
            last2_w: FoldWitness {
                w: vec![E2::Scalar::ZERO; pp.shape2.num_vars()],
                blinds: vec![E2::Scalar::ZERO],
            },
            blind1: E1::Scalar::ZERO,
            blind2: E2::Scalar::ZERO,
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
        Precommitment {
            comm: commit_first::<E1>(&pp.ck1, &pp.layout1, &first.placed, &blind),
            blind,
            key: first.key,
            fingerprint: first.fingerprint,
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
        let key = E1::Scalar::random(&mut OsRng);
        let pre = FirstPhase {
            late_column: pp.layout1.first_offset() + now.len(),
            placed: pp.units1.columns.place(0, &now)?,
            key,
            fingerprint: fingerprint(key, now.iter()),
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
        Ok((
            SecondPhase {
                placed: pp.units1.columns.place(1, &w2)?,
                fingerprint: fingerprint(pre.key, w2.iter()),
            },
            next,
        ))
    }

    /// Commit a synthesised second phase: the comm_W₂ to attach to its
    /// fold's precommitment ([`Precommitment::attach_second`]).
    pub fn commit_second(pp: &Params<E1, E2>, second: SecondPhase<E1>) -> SecondCommitment<E1> {
        let blind = E1::Scalar::random(&mut OsRng);
        SecondCommitment {
            comm: commit_at::<E1>(&pp.ck1, pp.layout1.second_offset(), &second.placed, &blind),
            blind,
            fingerprint: second.fingerprint,
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
        self.finish(pp, f)
    }

    /// The primary half of a fold: the secondary's last instance folded
    /// natively, the primary circuit run and its witness committed.
    pub(crate) fn primary<C: StepCircuit<E1::Scalar>>(
        &self,
        pp: &Params<E1, E2>,
        step: &C,
        pre: Option<&Precommitment<E1>>,
        drawn: Vec<E1::Scalar>,
    ) -> Result<PrimaryFold<E1, E2>> {
        let cfg = pp.cfg;
        let first = self.i == 0;
        let (t2, run2, run2_w) = if first {
            (None, self.run2.clone(), self.run2_w.clone())
        } else {
            let (t, u, w) = nifs::fold(
                &pp.ck2,
                pp.ro.n2(),
                pp.digest,
                &pp.shape2,
                &self.run2,
                &self.run2_w,
                &self.last2,
                &self.last2_w,
            )?;
            (Some(t), u, w)
        };
        let blind1_next = E1::Scalar::random(&mut OsRng);
        let inputs = PrimaryInputs::<E2> {
            pp: pp.digest,
            i: self.i,
            h0: self.h0,
            z: self.zi.clone(),
            running: (!first).then(|| self.run2.clone()),
            incoming: (!first).then(|| self.last2.clone()),
            t: t2,
            blind: self.blind1,
            blind_next: blind1_next,
            drawn,
        };
        let mut cs = WitnessRecorder::<E1::Scalar>::new(cfg.primary_parts());
        let z_next = synthesize_primary::<E2, C, _>(&mut cs, &cfg, pp.ro.c2(), step, Some(&inputs))?;
        let (u1, w1) = commit_primary(pp, &cs, pre, self.i)?;
        let z_next = z_next
            .iter()
            .map(|v| v.get_value().ok_or(FoldError::Synthesis("a missing output".into())))
            .collect::<Result<Vec<_>>>()?;
        Ok(PrimaryFold {
            u1,
            w1,
            z_next,
            run2,
            run2_w,
            blind1_next,
        })
    }

    /// The secondary half: fold the primary's instance into its running
    /// instance and run the secondary circuit on it.
    pub(crate) fn finish(&mut self, pp: &Params<E1, E2>, f: PrimaryFold<E1, E2>) -> Result<()> {
        let cfg = pp.cfg;
        let first = self.i == 0;
        let PrimaryFold {
            u1,
            w1,
            z_next,
            run2,
            run2_w,
            blind1_next,
        } = f;
        let (t1, run1, run1_w) = if first {
            (
                None,
                RunningInstance::from_fold(&u1),
                RunningWitness::from_fold(&pp.shape1, &w1),
            )
        } else {
            let (t, u, w) = nifs::fold(
                &pp.ck1,
                pp.ro.n1(),
                pp.digest_base(),
                &pp.shape1,
                &self.run1,
                &self.run1_w,
                &u1,
                &w1,
            )?;
            (Some(t), u, w)
        };
        let blind2_next = E2::Scalar::random(&mut OsRng);
        let inputs = SecondaryInputs::<E1> {
            pp: pp.digest_base(),
            i: self.i,
            chain: self.chain.clone(),
            running: (!first).then(|| self.run1.clone()),
            incoming: u1.clone(),
            t: t1,
            blind: self.blind2,
            blind_next: blind2_next,
        };
        let mut cs = WitnessRecorder::<E2::Scalar>::new(1);
        synthesize_secondary::<E1, _>(&mut cs, &cfg, pp.ro.c1(), Some(&inputs))?;
        let layout2 = plain_layout(pp.shape2.num_vars());
        let w2 = cs.witness(&layout2)?;
        let blinds2 = vec![E2::Scalar::random(&mut OsRng)];
        let u2 = FoldInstance {
            comm_w: commit_witness::<E2>(&pp.ck2, &layout2, &w2, &blinds2)?,
            x: cs.public().to_vec(),
        };
        // chain k hashes each fold's comm of W_{k+1}, as the secondary does
        self.chain = self
            .chain
            .iter()
            .zip(&u1.comm_w)
            .map(|(c, w)| chain_link::<E1>(pp.ro.n1(), *c, w))
            .collect();
        self.zi = z_next;
        self.run1 = run1;
        self.run1_w = run1_w;
        self.run2 = run2;
        self.run2_w = run2_w;
        self.last2 = u2;
        self.last2_w = FoldWitness {
            w: w2,
            blinds: blinds2,
        };
        self.blind1 = blind1_next;
        self.blind2 = blind2_next;
        self.i += 1;
        Ok(())
    }

    /// Check the whole state: the public IO of the secondary's last instance
    /// opens to this state, and all three instances are satisfied (each
    /// commitment opening to its part of W). Returns the step's z_n.
    pub fn verify(&self, pp: &Params<E1, E2>, num_steps: u64, z0: &[E1::Scalar]) -> Result<Vec<E1::Scalar>> {
        let cfg = pp.cfg;
        if num_steps == 0 || num_steps != self.i || z0.len() != cfg.arity {
            return Err(FoldError::Rejected(format!(
                "{} folds of a {}-slot state, asked for {num_steps} of {}",
                self.i,
                cfg.arity,
                z0.len()
            )));
        }
        let mut z = z0.to_vec();
        let v = pp.view();
        z.extend(derive_run(&v, &self.chain));
        check_final(&v, num_steps, &z, &FinalState::from(self))?;
        check_running(&pp.ck1, &pp.shape1, &pp.layout1, &self.run1, &self.run1_w)?;
        let layout2 = plain_layout(pp.shape2.num_vars());
        check_running(&pp.ck2, &pp.shape2, &layout2, &self.run2, &self.run2_w)?;
        check_running(
            &pp.ck2,
            &pp.shape2,
            &layout2,
            &RunningInstance::from_fold(&self.last2),
            &RunningWitness::from_fold(&pp.shape2, &self.last2_w),
        )?;
        Ok(self.zi[..cfg.arity].to_vec())
    }
}

/// A fold's primary half, before the secondary folds it.
pub(crate) struct PrimaryFold<E1: Engine, E2: Engine> {
    pub u1: FoldInstance<E1>,
    pub w1: FoldWitness<E1>,
    pub z_next: Vec<E1::Scalar>,
    pub run2: RunningInstance<E2>,
    pub run2_w: RunningWitness<E2>,
    pub blind1_next: E1::Scalar,
}

/// The PerFold challenges a precommitment gives (none otherwise).
pub(crate) fn draw<E1, E2>(pp: &Params<E1, E2>, pre: Option<&Precommitment<E1>>) -> Vec<E1::Scalar>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    match (pp.cfg.mode, pre) {
        (ChallengeMode::PerFold, Some(p)) => (0..pp.cfg.challenges)
            .map(|j| field_switch(fold_drawn::<E1>(pp.ro.n1(), pp.digest_base(), &p.comm, j)))
            .collect(),
        _ => vec![],
    }
}

/// The state both checks see: what the last secondary instance's IO opens.
pub(crate) struct FinalState<'a, E1: Engine, E2: Engine> {
    pub zn: &'a [E1::Scalar],
    pub chain: &'a [E2::Scalar],
    pub run1: &'a RunningInstance<E1>,
    pub run2: &'a RunningInstance<E2>,
    pub last2: &'a FoldInstance<E2>,
    pub blind1: E1::Scalar,
    pub blind2: E2::Scalar,
}

impl<'a, E1, E2> From<&'a Ivc<E1, E2>> for FinalState<'a, E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    fn from(s: &'a Ivc<E1, E2>) -> Self {
        FinalState {
            zn: &s.zi,
            chain: &s.chain,
            run1: &s.run1,
            run2: &s.run2,
            last2: &s.last2,
            blind1: s.blind1,
            blind2: s.blind2,
        }
    }
}

/// The verifier's check of the final state: the secondary's last instance
/// carries H(pp, n, h₀, z_n, U₂) and H(pp, n, chain, U₁). `z0` and the state
/// include the PerRun challenges.
pub(crate) fn check_final<E1, E2>(
    pp: &View<'_, E1, E2>,
    n: u64,
    z0: &[E1::Scalar],
    st: &FinalState<'_, E1, E2>,
) -> Result<()>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    let cfg = pp.cfg;
    if st.last2.x.len() != 2
        || st.last2.comm_w.len() != 1
        || st.run2.x.len() != 2
        || st.run2.comm_w.len() != 1
        || st.run1.x.len() != cfg.primary_io()
        || st.run1.comm_w.len() != cfg.primary_parts()
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
    // the two sides' hashes side by side (the primary's is two in a row:
    // h₀ of z₀, then the state's)
    let (hp, hs) = rayon::join(
        || {
            let mut state = vec![first_hash(pp, z0)];
            state.extend_from_slice(st.zn);
            state_hash::<E2>(pp.ro.n2(), pp.digest, n, &state, st.run2, st.blind1)
        },
        || state_hash::<E1>(pp.ro.n1(), pp.digest_base(), n, st.chain, st.run1, st.blind2),
    );
    if hp != field_switch::<E2::Scalar, E1::Scalar>(st.last2.x[0]) {
        return Err(FoldError::Rejected(
            "the primary's state hash does not open to z_n".into(),
        ));
    }
    if hs != st.last2.x[1] {
        return Err(FoldError::Rejected(
            "the secondary's state hash does not open".into(),
        ));
    }
    Ok(())
}

/// h₀ = H(pp, 0, 0, z₀, U⊥, 0): the first fold's input hash.
pub(crate) fn first_hash<E1, E2>(pp: &View<'_, E1, E2>, z0: &[E1::Scalar]) -> E1::Scalar
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    let mut state = vec![E1::Scalar::ZERO];
    state.extend_from_slice(z0);
    state_hash::<E2>(
        pp.ro.n2(),
        pp.digest,
        0,
        &state,
        &RunningInstance::default_with(1, 2),
        E1::Scalar::ZERO,
    )
}

/// The secondary's (never split) layout.
pub(crate) fn plain_layout(num_vars: usize) -> WitnessLayout {
    WitnessLayout::plain(num_vars)
}

pub(crate) fn check_step<E1, E2, C>(pp: &Params<E1, E2>, step: &C) -> Result<()>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
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
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    let w = cs.witness_in(&pp.layout1, &pp.units1.columns)?;
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
