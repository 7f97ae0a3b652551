//! The two circuits of a fold. Each folds the other curve's last instance
//! into that curve's running instance, where its commitments are native
//! points, and checks that the instance's public IO carries the hash of the
//! state this circuit left behind:
//!
//! - the **primary** (over the primary curve's scalar field) runs the step
//!   circuit; its state hash covers h₀ (the hash of the first state, so
//!   z₀ is hashed once, not in every fold) and zᵢ;
//! - the **secondary** folds the primary's instances; on a split layout it
//!   also folds comm_W₂ beside comm_W₁, and either checks each fold's
//!   challenges (`PerFold`: αⱼ = H(pp, comm_W₁, j) is public IO) or chains
//!   every comm_W₁ into its state (`PerRun`), where the verifier finds it;
//!   with two rounds (`PerRunTwice`) it folds comm_W₃ as well and chains
//!   every comm_W₂ beside every comm_W₁.
//!
//! Public IO: the primary's is `[α… (PerFold), the secondary's hash (passed
//! through), its own hash]`, the secondary's `[the primary's hash (passed
//! through), its own hash]`.

use crate::cs::{PhasedCs, Region};
use crate::gadgets::{alloc_points, state_hash_circuit, AllocIncoming, AllocRunning};
use crate::poseidon::{Hasher, Plan};
use crate::hash::{chain_link_circuit, fold_drawn_circuit};
use crate::instance::{Commitment, FoldInstance, RunningInstance};
use crate::step::{ChallengeMode, StepCircuit};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{AllocatedBit, Boolean, ConstraintSystem, SynthesisError};
use nova_snark::gadgets::ecc::AllocatedPoint;
use nova_snark::gadgets::utils::{alloc_num_equals, alloc_zero, conditionally_select};
use nova_snark::traits::{Engine, ROConstantsCircuit};
use serde::{Deserialize, Serialize};

/// What the two circuits' shapes depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// The step circuit's state slots.
    pub arity: usize,
    /// Challenges its second phase receives.
    pub challenges: usize,
    /// Of those, how many (the last) come in the second round (PerRunTwice).
    pub late: usize,
    /// How they are drawn.
    pub mode: ChallengeMode,
}

impl Config {
    /// Whether the primary's witness is split into W₂ ‖ W₁ (or W₃ ‖ W₂ ‖ W₁).
    pub fn split(&self) -> bool {
        self.mode != ChallengeMode::None
    }

    /// Whether the challenges are constants of the whole run.
    pub fn per_run(&self) -> bool {
        matches!(self.mode, ChallengeMode::PerRun | ChallengeMode::PerRunTwice)
    }

    /// Slots of the IVC state: the step's, then (PerRun) the challenges.
    pub fn state_len(&self) -> usize {
        self.arity + self.run_challenges()
    }

    /// Challenges kept in the state (PerRun, PerRunTwice).
    pub fn run_challenges(&self) -> usize {
        if self.per_run() {
            self.challenges
        } else {
            0
        }
    }

    /// Where the layer's own variables go: the last part of the witness.
    pub fn last_region(&self) -> Region {
        if self.mode == ChallengeMode::PerRunTwice {
            Region::Third
        } else {
            Region::Second
        }
    }

    /// Challenges that are public IO of each primary instance (PerFold).
    pub fn fold_challenges(&self) -> usize {
        if self.mode == ChallengeMode::PerFold {
            self.challenges
        } else {
            0
        }
    }

    /// Public IO of a primary instance.
    pub fn primary_io(&self) -> usize {
        self.fold_challenges() + 2
    }

    /// Witness commitments of a primary instance.
    pub fn primary_parts(&self) -> usize {
        match self.mode {
            ChallengeMode::None => 1,
            ChallengeMode::PerFold | ChallengeMode::PerRun => 2,
            ChallengeMode::PerRunTwice => 3,
        }
    }

    /// Slots of the secondary's state: the chain of comm_W₁ (PerRun), and
    /// of comm_W₂ (PerRunTwice).
    pub fn chain_len(&self) -> usize {
        match self.mode {
            ChallengeMode::PerRun => 1,
            ChallengeMode::PerRunTwice => 2,
            _ => 0,
        }
    }
}

/// One primary fold's inputs (`E` is the secondary engine, whose instances
/// the primary folds; the circuit is over `E::Base`).
#[derive(Clone, Debug)]
pub struct PrimaryInputs<E: Engine> {
    /// The parameters' digest.
    pub pp: E::Base,
    /// Folds done before this one.
    pub i: u64,
    /// h₀ (ignored by the first fold, which computes it).
    pub h0: E::Base,
    /// zᵢ (z₀ on the first fold), challenges included (PerRun).
    pub z: Vec<E::Base>,
    /// The secondary's running instance (None on the first fold).
    pub running: Option<RunningInstance<E>>,
    /// The secondary's last instance (None on the first fold).
    pub incoming: Option<FoldInstance<E>>,
    /// The cross term's commitment (None on the first fold).
    pub t: Option<Commitment<E>>,
    /// The blind of the state hash this fold checks.
    pub blind: E::Base,
    /// The blind of the state hash this fold outputs.
    pub blind_next: E::Base,
    /// This fold's challenges (PerFold; drawn from its comm_W₁).
    pub drawn: Vec<E::Base>,
}

/// One secondary fold's inputs (`E` is the primary engine).
#[derive(Clone, Debug)]
pub struct SecondaryInputs<E: Engine> {
    /// The parameters' digest.
    pub pp: E::Base,
    /// Folds done before this one.
    pub i: u64,
    /// The chains of comm_W₁ (and comm_W₂) so far (PerRun, PerRunTwice).
    pub chain: Vec<E::Base>,
    /// The primary's running instance (None on the first fold).
    pub running: Option<RunningInstance<E>>,
    /// The primary instance this fold folds in.
    pub incoming: FoldInstance<E>,
    /// The cross term's commitment (None on the first fold).
    pub t: Option<Commitment<E>>,
    /// The blind of the state hash this fold checks.
    pub blind: E::Base,
    /// The blind of the state hash this fold outputs.
    pub blind_next: E::Base,
}

pub(crate) fn alloc<F: ff::PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    name: &str,
    v: Option<F>,
) -> Result<AllocatedNum<F>, SynthesisError> {
    AllocatedNum::alloc(cs.namespace(|| name.to_string()), || {
        v.ok_or(SynthesisError::AssignmentMissing)
    })
}

/// The parts every fold shares: digest, counter, blinds, the running and
/// incoming instances, T, and whether this is the first fold.
struct Common<E: Engine> {
    pp: AllocatedNum<E::Base>,
    i: AllocatedNum<E::Base>,
    blind: AllocatedNum<E::Base>,
    blind_next: AllocatedNum<E::Base>,
    running: AllocRunning<E>,
    incoming: AllocIncoming<E>,
    t: Vec<AllocatedPoint<E>>,
    first: AllocatedBit,
}

#[allow(clippy::too_many_arguments)]
fn common<E: Engine + 'static, CS: ConstraintSystem<E::Base>>(
    mut cs: CS,
    pp: Option<E::Base>,
    i: Option<u64>,
    blinds: Option<(E::Base, E::Base)>,
    running: Option<&RunningInstance<E>>,
    incoming: Option<&FoldInstance<E>>,
    t: Option<&Commitment<E>>,
    parts: usize,
    io: usize,
) -> Result<Common<E>, SynthesisError> {
    let pp = alloc(cs.namespace(|| "pp"), "v", pp)?;
    let i = alloc(cs.namespace(|| "i"), "v", i.map(E::Base::from))?;
    let blind = alloc(cs.namespace(|| "blind"), "v", blinds.map(|b| b.0))?;
    let blind_next = alloc(cs.namespace(|| "blind next"), "v", blinds.map(|b| b.1))?;
    let running = AllocRunning::alloc(cs.namespace(|| "U"), running, parts, io)?;
    let incoming = AllocIncoming::alloc(cs.namespace(|| "u"), incoming, parts, io)?;
    let t = alloc_points(cs.namespace(|| "T"), [t], true)?;
    let zero = alloc_zero(cs.namespace(|| "zero"));
    let first = alloc_num_equals(cs.namespace(|| "first fold"), &i, &zero)?;
    Ok(Common {
        pp,
        i,
        blind,
        blind_next,
        running,
        incoming,
        t,
        first,
    })
}

/// `hash = x` unless this is the first fold: (hash − x)·(1 − first) = 0.
pub(crate) fn check_hash<F: ff::PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    hash: &AllocatedNum<F>,
    x: &AllocatedNum<F>,
    first: &AllocatedBit,
) {
    cs.enforce(
        || "equal or first fold",
        |lc| lc + hash.get_variable() - x.get_variable(),
        |lc| lc + CS::one() - first.get_variable(),
        |lc| lc,
    );
}

/// i + 1.
pub(crate) fn next_count<F: ff::PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    i: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError> {
    let n = AllocatedNum::alloc(cs.namespace(|| "i + 1"), || {
        i.get_value()
            .map(|v| v + F::ONE)
            .ok_or(SynthesisError::AssignmentMissing)
    })?;
    cs.enforce(
        || "i' = i + 1",
        |lc| lc,
        |lc| lc,
        |lc| lc + n.get_variable() - i.get_variable() - CS::one(),
    );
    Ok(n)
}

/// `v`, or 0 on the first fold: (1 − first)·v.
pub(crate) fn unless_first<F: ff::PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    v: &AllocatedNum<F>,
    first: &AllocatedBit,
) -> Result<AllocatedNum<F>, SynthesisError> {
    let out = AllocatedNum::alloc(cs.namespace(|| "value"), || match (v.get_value(), first.get_value()) {
        (Some(h), Some(f)) => Ok(if f { F::ZERO } else { h }),
        _ => Err(SynthesisError::AssignmentMissing),
    })?;
    cs.enforce(
        || "(1 - first)·v",
        |lc| lc + CS::one() - first.get_variable(),
        |lc| lc + v.get_variable(),
        |lc| lc + out.get_variable(),
    );
    Ok(out)
}

/// The step circuit on zᵢ (its slots, then the run's challenges): phase
/// one in W₁, phase two in W₂ with the challenges (`drawn` under
/// `PerFold`, the state's under `PerRun`); returns z_{i+1}, challenges
/// included, with the layer's region restored.
pub(crate) fn run_step<F, C, CS>(
    cs: &mut CS,
    cfg: &Config,
    step: &C,
    z: &[AllocatedNum<F>],
    drawn: Vec<AllocatedNum<F>>,
) -> Result<Vec<AllocatedNum<F>>, SynthesisError>
where
    F: ff::PrimeField,
    C: StepCircuit<F>,
    CS: PhasedCs<F>,
{
    cs.set_region(Region::First);
    let carry = step.first(&mut cs.namespace(|| "step"), &z[..cfg.arity])?;
    cs.set_region(Region::Second);
    let challenges: Vec<_> = match cfg.mode {
        ChallengeMode::None => vec![],
        ChallengeMode::PerFold => drawn,
        ChallengeMode::PerRun | ChallengeMode::PerRunTwice => z[cfg.arity..].to_vec(),
    };
    let mut z_next = step.second(&mut cs.namespace(|| "step 2"), carry, &challenges)?;
    cs.set_region(cfg.last_region());
    if z_next.len() != cfg.arity {
        return Err(SynthesisError::IncompatibleLengthVector(format!(
            "the step circuit returned {} slots, its arity is {}",
            z_next.len(),
            cfg.arity
        )));
    }
    z_next.extend(z[cfg.arity..].iter().cloned());
    Ok(z_next)
}

/// The primary circuit; returns z_{i+1} (challenges included, PerRun).
/// The layer's own variables go to the last part (W₂, or W₃ with two
/// rounds), the step's first phase to W₁, its second to W₂.
pub fn synthesize_primary<E, C, CS>(
    cs: &mut CS,
    cfg: &Config,
    ro: &ROConstantsCircuit<E>,
    step: &C,
    inp: Option<&PrimaryInputs<E>>,
) -> Result<Vec<AllocatedNum<E::Base>>, SynthesisError>
where
    E: Engine + 'static,
    C: StepCircuit<E::Base>,
    CS: PhasedCs<E::Base>,
{
    cs.set_region(cfg.last_region());
    let drawn = (0..cfg.fold_challenges())
        .map(|j| {
            AllocatedNum::alloc_input(cs.namespace(|| format!("α{j}")), || {
                inp.map(|p| p.drawn[j])
                    .ok_or(SynthesisError::AssignmentMissing)
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let c = common::<E, _>(
        cs.namespace(|| "in"),
        inp.map(|p| p.pp),
        inp.map(|p| p.i),
        inp.map(|p| (p.blind, p.blind_next)),
        inp.and_then(|p| p.running.as_ref()),
        inp.and_then(|p| p.incoming.as_ref()),
        inp.and_then(|p| p.t.as_ref()),
        1,
        2,
    )?;
    let h0 = alloc(cs.namespace(|| "h0"), "v", inp.map(|p| p.h0))?;
    let z = (0..cfg.state_len())
        .map(|k| alloc(cs.namespace(|| format!("z{k}")), "v", inp.map(|p| p.z[k])))
        .collect::<Result<Vec<_>, _>>()?;
    // the first fold hashes with h₀ = 0 and keeps that hash as h₀
    let h0_in = unless_first(cs.namespace(|| "h0 in"), &h0, &c.first)?;
    let mut state = vec![h0_in];
    state.extend(z.iter().cloned());
    // the primary's hashes on our sponge (fewer non-zeros; the same values)
    let plan = Plan::wide::<E>(ro)?;
    let own = Hasher::Own(&plan);
    let hash = state_hash_circuit(
        cs.namespace(|| "hash in"),
        ro,
        own,
        &c.pp,
        &c.i,
        &state,
        &c.running,
        &c.blind,
    )?;
    check_hash(cs.namespace(|| "check in"), &hash, &c.incoming.x[0], &c.first);
    let first = Boolean::from(c.first.clone());
    let folded = c.running.fold(cs.namespace(|| "fold"), ro, own, &c.pp, &c.incoming, &c.t)?;
    let zero = AllocRunning::zero(cs.namespace(|| "zero U"), 1, 2)?;
    let running = AllocRunning::select(cs.namespace(|| "U next"), &zero, &folded, &first)?;
    let h0_next = conditionally_select(cs.namespace(|| "h0 next"), &hash, &h0, &first)?;
    let i_next = next_count(cs.namespace(|| "i next"), &c.i)?;

    let z_next = run_step(cs, cfg, step, &z, drawn)?;
    let mut state = vec![h0_next];
    state.extend(z_next.iter().cloned());
    let out = state_hash_circuit(
        cs.namespace(|| "hash out"),
        ro,
        own,
        &c.pp,
        &i_next,
        &state,
        &running,
        &c.blind_next,
    )?;
    c.incoming.x[1].inputize(cs.namespace(|| "pass the secondary's hash"))?;
    out.inputize(cs.namespace(|| "output the hash"))?;
    Ok(z_next)
}

/// The secondary circuit (no step of its own; its witness is never split).
pub fn synthesize_secondary<E, CS>(
    cs: &mut CS,
    cfg: &Config,
    ro: &ROConstantsCircuit<E>,
    inp: Option<&SecondaryInputs<E>>,
) -> Result<(), SynthesisError>
where
    E: Engine + 'static,
    CS: ConstraintSystem<E::Base>,
{
    let (parts, io, k) = (cfg.primary_parts(), cfg.primary_io(), cfg.fold_challenges());
    let c = common::<E, _>(
        cs.namespace(|| "in"),
        inp.map(|p| p.pp),
        inp.map(|p| p.i),
        inp.map(|p| (p.blind, p.blind_next)),
        inp.and_then(|p| p.running.as_ref()),
        inp.map(|p| &p.incoming),
        inp.and_then(|p| p.t.as_ref()),
        parts,
        io,
    )?;
    // the chains start at 0: on the first fold, where no hash binds the
    // input state, a prover could otherwise pick the start and so draw the
    // run's challenges again
    let chain = (0..cfg.chain_len())
        .map(|k| {
            let v = alloc(cs.namespace(|| format!("chain{k}")), "v", inp.map(|p| p.chain[k]))?;
            unless_first(cs.namespace(|| format!("chain{k} in")), &v, &c.first)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let hash = state_hash_circuit(
        cs.namespace(|| "hash in"),
        ro,
        Hasher::Nova,
        &c.pp,
        &c.i,
        &chain,
        &c.running,
        &c.blind,
    )?;
    check_hash(cs.namespace(|| "check in"), &hash, &c.incoming.x[k], &c.first);
    let first = Boolean::from(c.first.clone());
    let folded = c.running.fold(cs.namespace(|| "fold"), ro, Hasher::Nova, &c.pp, &c.incoming, &c.t)?;
    let start = AllocRunning::from_incoming(cs.namespace(|| "first U"), &c.incoming)?;
    let running = AllocRunning::select(cs.namespace(|| "U next"), &start, &folded, &first)?;
    // the challenges the primary instance used are the ones its W₁ gives
    for j in 0..k {
        let a = fold_drawn_circuit(cs.namespace(|| format!("α{j}")), ro, &c.pp, &c.incoming.w[0], j)?;
        cs.enforce(
            || format!("α{j} = H(pp, comm_W1, {j})"),
            |lc| lc + a.get_variable() - c.incoming.x[j].get_variable(),
            |lc| lc + CS::one(),
            |lc| lc,
        );
    }
    // chain k hashes each fold's comm of W_{k+1}
    let chain_next = chain
        .iter()
        .enumerate()
        .map(|(k, prev)| {
            chain_link_circuit(cs.namespace(|| format!("chain{k} next")), ro, prev, &c.incoming.w[k])
        })
        .collect::<Result<Vec<_>, _>>()?;
    let i_next = next_count(cs.namespace(|| "i next"), &c.i)?;
    let out = state_hash_circuit(
        cs.namespace(|| "hash out"),
        ro,
        Hasher::Nova,
        &c.pp,
        &i_next,
        &chain_next,
        &running,
        &c.blind_next,
    )?;
    c.incoming.x[k + 1].inputize(cs.namespace(|| "pass the primary's hash"))?;
    out.inputize(cs.namespace(|| "output the hash"))?;
    Ok(())
}
