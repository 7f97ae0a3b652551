//! The IVC driver of the CycleFold shape (design step 2): each fold folds
//! the primary's last instance into its running instance natively,
//! proves the commitments' scalar multiplications with one CycleFold
//! instance ([`crate::cyclefold`]) and folds that into the CycleFold
//! running instance, then runs the primary circuit ([`crate::cfprimary`]),
//! which checks both folds and runs the step. No secondary circuit of the
//! old shape: the secondary's instances are the CycleFold circuit's, whose
//! R1CS is a few thousand constraints.
//!
//! Built beside [`crate::Ivc`] and checked by its own `verify`. The product
//! was switched to it (commit 99f2b98: compression, parameters, format),
//! measured and switched back (docs/design/fresh-verify.md, "step 2 built,
//! measured, and not adopted"): a fresh verification 20 % faster for a
//! primary ≈ 25k constraints a fold larger.
//!
//! Its three longest tests (its rejections of a forged fold, its PerRun
//! and two-round runs: 35, 16 and 13 s of CPU on CI's two cores, for a
//! shape no proof uses) are `#[ignore]`d; run them on purpose with
//! `cargo test -p zkstep-fold --lib cfivc -- --include-ignored`.

use crate::augmented::Config;
use crate::cfprimary::{self, cf_challenge, cf_io_len, chain_link, own_challenge, state_hash, CfInputs, PRIMARY_IO};
use crate::cs::{ShapeRecorder, WitnessLayout, WitnessRecorder};
use crate::cyclefold;
use crate::error::{FoldError, Result};
use crate::instance::{check_running, commit_witness, FoldInstance, FoldWitness, RunningInstance, RunningWitness};
use crate::ivc::{check_step, commit_primary, drawn_run, plain_layout, Precommitment};
use crate::ladder::odd_challenge;
use crate::nifs;
use crate::params::{config, Params, RoSet};
use crate::step::{ChallengeMode, StepCircuit};
use ff::Field;
use nova_snark::r1cs::{CommitmentKeyHint, R1CSShape};
use nova_snark::traits::commitment::CommitmentEngineTrait;
use nova_snark::traits::{Engine, ROConstants};
use rand::rngs::OsRng;

/// The primary's shape in the CycleFold shape and the CycleFold circuit's.
pub fn shapes<E1, E2, C>(cfg: &Config, step: &C) -> Result<(R1CSShape<E1>, WitnessLayout, R1CSShape<E2>)>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    C: StepCircuit<E1::Scalar>,
{
    let ro = RoSet::<E1, E2>::default();
    let mut cs = ShapeRecorder::<E1::Scalar>::new(cfg.primary_parts());
    cfprimary::synthesize::<E1, E2, C, _>(&mut cs, cfg, ro.c2(), step, None)?;
    let (s1, layout) = cs.into_shape::<E1>()?;
    let mut cs = ShapeRecorder::<E2::Scalar>::new(1);
    cyclefold::synthesize::<E1, _>(&mut cs, cfg.primary_parts() + 1, None)?;
    let (s2, _) = cs.into_shape::<E2>()?;
    Ok((s1, layout, s2))
}

/// The layer's own circuits in the CycleFold shape (the primary's own
/// part and the CycleFold circuit) around a step circuit of `arity` slots
/// that draws `challenges` challenges in `mode`, as
/// [`crate::params::layer_sizes`] counts the IVC's.
pub fn layer_sizes<E1, E2>(arity: usize, challenges: usize, mode: ChallengeMode) -> Result<crate::params::CircuitSizes>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    crate::params::layer_sizes_by::<E1, E2, _>(arity, challenges, mode, shapes::<E1, E2, crate::params::Pass>)
}

/// Parameters of the CycleFold shape with fresh commitment keys.
pub fn setup<E1, E2, C>(
    step: &C,
    mode: ChallengeMode,
    hint1: &CommitmentKeyHint<E1>,
    hint2: &CommitmentKeyHint<E2>,
) -> Result<Params<E1, E2>>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    C: StepCircuit<E1::Scalar>,
{
    let cfg = config(step, mode)?;
    let (s1, layout1, s2) = shapes::<E1, E2, C>(&cfg, step)?;
    let ck1 = E1::CE::setup(b"ck", s1.num_cons().max(s1.num_vars()).max(hint1(&s1)))?;
    let ck2 = R1CSShape::commitment_key(&[&s2], &[hint2])?;
    Ok(Params::assemble(cfg, (s1, layout1, Default::default()), s2, ck1, ck2))
}

/// The challenges of a PerRun IVC of the CycleFold shape from its folds'
/// precommitments, in order (both rounds once every comm_W₂ is attached).
pub fn run_challenges<E1, E2>(pp: &Params<E1, E2>, pre: &[Precommitment<E1>]) -> Vec<E1::Scalar>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    let link = |acc, c| chain_link::<E1, E2>(pp.ro.n2(), acc, c);
    let end1 = pre.iter().fold(E1::Scalar::ZERO, |acc, p| link(acc, &p.comm));
    let seconds: Option<Vec<_>> = pre.iter().map(|p| p.second()).collect();
    match seconds {
        Some(s) if pp.cfg.mode == ChallengeMode::PerRunTwice => {
            let end2 = s.iter().fold(E1::Scalar::ZERO, |acc, c| link(acc, &c.comm));
            drawn_run::<E2>(pp.ro.n2(), &pp.cfg, &[end1, end2])
        }
        _ => {
            let mut ch = drawn_run::<E2>(pp.ro.n2(), &pp.cfg, &[end1, E1::Scalar::ZERO]);
            ch.truncate(pp.cfg.challenges - pp.cfg.late);
            ch
        }
    }
}

/// h₀ = H(pp, 0, (0, z₀, 0…), U⊥, U_cf⊥, 0): the first fold's input hash.
fn first_hash<E1, E2>(ro: &ROConstants<E2>, pp: E1::Scalar, cfg: &Config, z0: &[E1::Scalar]) -> E1::Scalar
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    let mut state = vec![E1::Scalar::ZERO];
    state.extend_from_slice(z0);
    state.extend(vec![E1::Scalar::ZERO; cfg.chain_len()]);
    state_hash::<E1, E2>(
        ro,
        pp,
        0,
        &state,
        &RunningInstance::default_with(cfg.primary_parts(), PRIMARY_IO),
        &RunningInstance::default_with(1, cf_io_len(cfg)),
        E1::Scalar::ZERO,
    )
}

/// A forged prover's changes to an honest fold (tests): the primary fold
/// and its CycleFold instance at K ^ `k_xor` (a challenge the circuit does
/// not draw), and the primary circuit's inputs changed by `inputs`.
pub(crate) struct Forge<E1: Engine, E2: Engine> {
    pub k_xor: u128,
    pub inputs: fn(&mut CfInputs<E1, E2>),
}

impl<E1: Engine, E2: Engine> Forge<E1, E2> {
    fn honest() -> Self {
        Forge { k_xor: 0, inputs: |_| {} }
    }
}

/// The state of a CycleFold IVC after some folds.
pub struct CfIvc<E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    arity: usize,
    h0: E1::Scalar,
    zi: Vec<E1::Scalar>,
    chain: Vec<E1::Scalar>,
    i: u64,
    run1: RunningInstance<E1>,
    run1_w: RunningWitness<E1>,
    last1: Option<(FoldInstance<E1>, FoldWitness<E1>)>,
    runcf: RunningInstance<E2>,
    runcf_w: RunningWitness<E2>,
    blind: E1::Scalar,
}

impl<E1, E2> CfIvc<E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    /// An IVC from the step circuit's `z0` and (PerRun) its challenges.
    pub fn new(pp: &Params<E1, E2>, z0: &[E1::Scalar], challenges: Vec<E1::Scalar>) -> Result<Self> {
        let cfg = pp.cfg;
        if z0.len() != cfg.arity || challenges.len() != cfg.run_challenges() || cfg.mode == ChallengeMode::PerFold {
            return Err(FoldError::Invalid(format!(
                "z0 has {} slots and {} challenges; the step circuit has {} and {} ({:?})",
                z0.len(),
                challenges.len(),
                cfg.arity,
                cfg.run_challenges(),
                cfg.mode
            )));
        }
        let mut z = z0.to_vec();
        z.extend(challenges);
        let parts = cfg.primary_parts();
        Ok(CfIvc {
            arity: cfg.arity,
            h0: first_hash::<E1, E2>(pp.ro.n2(), pp.digest, &cfg, &z),
            zi: z,
            chain: vec![E1::Scalar::ZERO; cfg.chain_len()],
            i: 0,
            run1: RunningInstance::default_with(parts, PRIMARY_IO),
            run1_w: RunningWitness::default_with(&pp.shape1, parts),
            last1: None,
            runcf: RunningInstance::default_with(1, cf_io_len(&cfg)),
            runcf_w: RunningWitness::default_with(&pp.shape2, 1),
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

    /// Fold one step; a PerRun IVC needs this fold's precommitment.
    pub fn prove_step<C: StepCircuit<E1::Scalar>>(
        &mut self,
        pp: &Params<E1, E2>,
        step: &C,
        pre: Option<&Precommitment<E1>>,
    ) -> Result<()> {
        self.fold_step(pp, step, pre, &Forge::honest())
    }

    /// [`CfIvc::prove_step`], with a forger's changes (tests).
    pub(crate) fn fold_step<C: StepCircuit<E1::Scalar>>(
        &mut self,
        pp: &Params<E1, E2>,
        step: &C,
        pre: Option<&Precommitment<E1>>,
        forge: &Forge<E1, E2>,
    ) -> Result<()> {
        let cfg = pp.cfg;
        check_step(pp, step)?;
        let pre = if cfg.per_run() {
            let p = pre.ok_or_else(|| FoldError::Invalid("a PerRun fold needs its precommitment".into()))?;
            if cfg.mode == ChallengeMode::PerRunTwice && p.second().is_none() {
                return Err(FoldError::Invalid("a PerRunTwice fold needs its W₂ committed (precommit_second)".into()));
            }
            if p.pending() > 0 {
                return Err(FoldError::Invalid(format!("a precommitment still waiting for {} late values", p.pending())));
            }
            Some(p)
        } else {
            None
        };
        let parts = cfg.primary_parts();
        let mut inputs = CfInputs::<E1, E2> {
            pp: pp.digest,
            i: self.i,
            h0: self.h0,
            z: self.zi.clone(),
            chain: self.chain.clone(),
            run1: None,
            inc1: None,
            t1: None,
            next1: None,
            runcf: None,
            inccf: None,
            tcf: None,
            blind: self.blind,
            blind_next: E1::Scalar::random(&mut OsRng),
        };
        // the first fold folds nothing; the others fold the last instance
        let folded = match &self.last1 {
            None => None,
            Some((u1, w1)) => {
                let mut sponge = None;
                let (t1, next1, next1_w) = nifs::fold_with(&pp.ck1, &pp.shape1, &self.run1, &self.run1_w, u1, w1, |t| {
                    let (k, h) = own_challenge::<E1, E2>(pp.ro.n2(), pp.digest, u1, t);
                    let k = k ^ forge.k_xor;
                    sponge = Some((k, h));
                    odd_challenge::<E1::Scalar>(k, 128)
                })?;
                let (k1, h) = sponge.ok_or_else(|| FoldError::Synthesis("no challenge drawn".into()))?;
                // the CycleFold instance: R = P + r₁·Q for each part and E
                let mut pairs: Vec<cyclefold::Pair<E1>> = (0..parts).map(|j| (self.run1.comm_w[j], u1.comm_w[j])).collect();
                pairs.push((self.run1.comm_e, t1));
                let io = cyclefold::public_io::<E1>(k1, &pairs);
                let mut cs = WitnessRecorder::<E2::Scalar>::new(1);
                cyclefold::synthesize::<E1, _>(&mut cs, parts + 1, Some(&io))?;
                let layout2 = plain_layout(pp.shape2.num_vars());
                let wcf = cs.witness(&layout2)?;
                let blinds = vec![E2::Scalar::random(&mut OsRng)];
                let ucf = FoldInstance {
                    comm_w: commit_witness::<E2>(&pp.ck2, &layout2, &wcf, &blinds)?,
                    x: cs.public().to_vec(),
                };
                let wcf = FoldWitness { w: wcf, blinds };
                let (tcf, runcf, runcf_w) = nifs::fold_with(&pp.ck2, &pp.shape2, &self.runcf, &self.runcf_w, &ucf, &wcf, |t| {
                    odd_challenge::<E2::Scalar>(cf_challenge::<E1, E2>(h, &next1, &ucf.comm_w[0], t), 128)
                })?;
                inputs.run1 = Some(self.run1.clone());
                inputs.inc1 = Some(u1.clone());
                inputs.t1 = Some(t1);
                inputs.next1 = Some(next1.clone());
                inputs.runcf = Some(self.runcf.clone());
                inputs.inccf = Some(ucf);
                inputs.tcf = Some(tcf);
                let chain = self
                    .chain
                    .iter()
                    .zip(&u1.comm_w)
                    .map(|(c, w)| chain_link::<E1, E2>(pp.ro.n2(), *c, w))
                    .collect::<Vec<_>>();
                Some((next1, next1_w, runcf, runcf_w, chain))
            }
        };
        (forge.inputs)(&mut inputs);
        let mut cs = WitnessRecorder::<E1::Scalar>::new(parts);
        let z_next = cfprimary::synthesize::<E1, E2, C, _>(&mut cs, &cfg, pp.ro.c2(), step, Some(&inputs))?;
        let (u_new, w_new) = commit_primary(pp, &cs, pre, self.i)?;
        let z_next = z_next
            .iter()
            .map(|v| v.get_value().ok_or(FoldError::Synthesis("a missing output".into())))
            .collect::<Result<Vec<_>>>()?;
        if let Some((next1, next1_w, runcf, runcf_w, chain)) = folded {
            self.run1 = next1;
            self.run1_w = next1_w;
            self.runcf = runcf;
            self.runcf_w = runcf_w;
            self.chain = chain;
        }
        self.last1 = Some((u_new, w_new));
        self.zi = z_next;
        self.blind = inputs.blind_next;
        self.i += 1;
        Ok(())
    }

    /// Check the whole state: the last instance's public IO opens to it,
    /// the run's challenges are the chains' (PerRun), and the three
    /// instances are satisfied. Returns the step's z_n.
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
        if u1.x.len() != PRIMARY_IO || u1.comm_w.len() != cfg.primary_parts() || self.chain.len() != cfg.chain_len() {
            return Err(FoldError::Rejected("instances of the wrong size".into()));
        }
        // the chains' last links are the last instance's parts
        let ends: Vec<E1::Scalar> = self
            .chain
            .iter()
            .zip(&u1.comm_w)
            .map(|(c, w)| chain_link::<E1, E2>(pp.ro.n2(), *c, w))
            .collect();
        let mut z = z0.to_vec();
        z.extend(drawn_run::<E2>(pp.ro.n2(), &cfg, &ends));
        if self.zi[cfg.arity..] != z[cfg.arity..] {
            return Err(FoldError::Rejected("the run's challenges are not the chains'".into()));
        }
        let mut state = vec![first_hash::<E1, E2>(pp.ro.n2(), pp.digest, &cfg, &z)];
        state.extend_from_slice(&self.zi);
        state.extend_from_slice(&self.chain);
        let h = state_hash::<E1, E2>(pp.ro.n2(), pp.digest, num_steps, &state, &self.run1, &self.runcf, self.blind);
        if h != u1.x[0] {
            return Err(FoldError::Rejected("the last instance's state hash does not open to z_n".into()));
        }
        check_running(&pp.ck1, &pp.shape1, &pp.layout1, &self.run1, &self.run1_w)?;
        check_running(
            &pp.ck1,
            &pp.shape1,
            &pp.layout1,
            &RunningInstance::from_fold(u1),
            &RunningWitness::from_fold(&pp.shape1, w1),
        )?;
        let layout2 = plain_layout(pp.shape2.num_vars());
        check_running(&pp.ck2, &pp.shape2, &layout2, &self.runcf, &self.runcf_w)?;
        Ok(self.zi[..cfg.arity].to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ivc::Ivc;
    use crate::step::OnePhase;
    use crate::testing::{Claim, Doubler, Permutation};
    use nova_snark::traits::snark::default_ck_hint;

    type E1 = nova_snark::provider::Bn256EngineKZG;
    type E2 = nova_snark::provider::GrumpkinEngine;
    type F = <E1 as Engine>::Scalar;

    fn params<C: StepCircuit<F>>(c: &C, mode: ChallengeMode) -> Params<E1, E2> {
        setup::<E1, E2, C>(c, mode, &*default_ck_hint(), &*default_ck_hint()).unwrap()
    }

    fn doubler_run(pp: &Params<E1, E2>, n: usize, forge_at: Option<(usize, Forge<E1, E2>)>) -> CfIvc<E1, E2> {
        let mut ivc = CfIvc::new(pp, &[F::from(3)], vec![]).unwrap();
        for k in 0..n {
            match &forge_at {
                Some((at, f)) if *at == k => ivc.fold_step(pp, &OnePhase(Doubler), None, f).unwrap(),
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
    #[ignore = "the CycleFold shape is not adopted (no proof uses it): run on purpose with --ignored"]
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
                if let Some(t) = i.tcf.as_mut() {
                    *t = *t + *t;
                }
            },
        })
        .is_err());
        // and the honest run through the same path is accepted
        assert!(forged(Forge::honest()).is_ok());
    }

    /// A PerRun IVC of permutation folds on the CycleFold shape.
    fn per_run(pp: &Params<E1, E2>, folds: &[Permutation<F>]) -> CfIvc<E1, E2> {
        let z0 = vec![F::ONE, F::ONE];
        let mut z = z0.clone();
        let mut pre = vec![];
        for c in folds {
            let (p, next) = Ivc::precommit(pp, c, &z).unwrap();
            pre.push(p);
            z = next;
        }
        let ch = run_challenges(pp, &pre);
        let mut ivc = CfIvc::new(pp, &z0, ch).unwrap();
        for (c, p) in folds.iter().zip(&pre) {
            ivc.prove_step(pp, c, Some(p)).unwrap();
        }
        ivc
    }

    #[test]
    #[ignore = "the CycleFold shape is not adopted (no proof uses it): run on purpose with --ignored"]
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
        let mut ivc = CfIvc::new(&pp, &z0, ch).unwrap();
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
        let mut ivc = CfIvc::new(&pp, &z0, run_challenges(&pp, &pres)).unwrap();
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
    #[ignore = "the CycleFold shape is not adopted (no proof uses it): run on purpose with --ignored"]
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
            let mut ivc = CfIvc::new(&pp, &z0, ch.clone()).unwrap();
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
