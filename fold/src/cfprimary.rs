//! The primary circuit in the CycleFold shape (design step 2,
//! docs/design/fresh-verify.md): the primary folds its own instances and
//! the CycleFold instances; the secondary is only [`crate::cyclefold`]'s
//! circuit, the scalar multiplications on the primary's curve.
//!
//! Fold i (i ≥ 1) takes the primary's running instance U, its last
//! instance u (made by fold i − 1), the cross term T and the folded
//! commitments R that the driver computed, and the CycleFold running
//! instance U_cf with the fresh CycleFold instance u_cf and its cross term:
//!
//! 1. u's public IO is H(pp, i, h₀, zᵢ, chains, U, U_cf, blind) (the state
//!    hash this circuit's last run output; not on the first fold);
//! 2. K₁ = 128 bits of H(pp, u, T) and r₁ = 2¹²⁸ + 2K₁ + 1: U's u and X
//!    fold natively, U's commitments become R;
//! 3. u_cf's public IO is, as limbs, K₁ and each (P, Q, R) of the fold
//!    (U's part or E, u's part or T, R): so u_cf, once the verifier checks
//!    the CycleFold running instance, shows R = P + r₁·Q;
//! 4. K_cf = 128 bits of the same sponge after R, comm_W_cf and T_cf are
//!    absorbed (its state already binds u, T, hence U, U_cf and K₁), and
//!    U_cf folds u_cf by the ladder and `foreign::fold`;
//! 5. the PerRun chains link u's parts; the step runs; the output is the
//!    state hash of fold i + 1.
//!
//! The first fold folds nothing: U and U_cf come out as the zero instance,
//! the chains as 0, h₀ as the hash of z₀.
//!
//! Every limb the CycleFold fold reads is range-checked where it is made:
//! u's, T's and R's here (canonical, below q), K₁'s are K₁'s bits, U's are
//! an earlier fold's R, bound by the state hash.

use crate::augmented::{alloc, check_hash, next_count, run_step, unless_first, Config};
use crate::cs::PhasedCs;
use crate::cyclefold;
use crate::foreign::Foreign;
use crate::poseidon::Sponge;
use crate::gadgets::AllocRunning;
use crate::hash::{CHALLENGE_BITS, LINK_MODE, RO_MODE};
use crate::instance::{Commitment, FoldInstance, RunningInstance};
use crate::ladder::odd_challenge_num;
use crate::own::{absorb_fold, absorb_point_packed, absorb_running, AllocOwnIncoming, AllocOwnRunning, OwnPoint};
use crate::step::{ChallengeMode, StepCircuit};
use ff::PrimeField;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{AllocatedBit, Boolean, ConstraintSystem, SynthesisError};
use nova_snark::gadgets::ecc::AllocatedPoint;
use nova_snark::gadgets::utils::{alloc_num_equals, alloc_zero, conditionally_select};
use nova_snark::traits::commitment::CommitmentTrait;
use nova_snark::traits::{AbsorbInROTrait, Engine, ROCircuitTrait, ROConstants, ROConstantsCircuit, ROTrait};

/// Public values of a primary instance: its state hash.
pub const PRIMARY_IO: usize = 1;

/// Public values of the CycleFold instance for a primary of `cfg`: K and
/// (P, Q, R) for each witness part and for E.
pub fn cf_io_len(cfg: &Config) -> usize {
    cyclefold::io_len(cfg.primary_parts() + 1)
}

/// One primary fold's inputs (`E1` the primary engine, `E2` the CycleFold
/// one; the circuit is over `E1::Scalar`).
#[derive(Clone, Debug)]
pub struct CfInputs<E1: Engine, E2: Engine> {
    /// The parameters' digest.
    pub pp: E1::Scalar,
    /// Folds done before this one.
    pub i: u64,
    /// h₀ (ignored by the first fold, which computes it).
    pub h0: E1::Scalar,
    /// zᵢ, the run's challenges included.
    pub z: Vec<E1::Scalar>,
    /// The chains of comm_W₁ (and comm_W₂) so far.
    pub chain: Vec<E1::Scalar>,
    /// U (None on the first fold).
    pub run1: Option<RunningInstance<E1>>,
    /// u, made by the last fold (None on the first).
    pub inc1: Option<FoldInstance<E1>>,
    /// The cross term of U and u.
    pub t1: Option<Commitment<E1>>,
    /// U + r₁·u, of which the circuit reads the commitments.
    pub next1: Option<RunningInstance<E1>>,
    /// U_cf (None on the first fold).
    pub runcf: Option<RunningInstance<E2>>,
    /// u_cf.
    pub inccf: Option<FoldInstance<E2>>,
    /// The cross term of U_cf and u_cf.
    pub tcf: Option<Commitment<E2>>,
    /// The blind of the state hash this fold checks.
    pub blind: E1::Scalar,
    /// The blind of the state hash this fold outputs.
    pub blind_next: E1::Scalar,
}

/// The state hash H(pp, i, state, U, U_cf, blind), natively (the state:
/// h₀, zᵢ and the chains), over the primary's scalar field, whole.
#[allow(clippy::too_many_arguments)]
pub fn state_hash<E1, E2>(
    c: &ROConstants<E2>,
    pp: E1::Scalar,
    i: u64,
    state: &[E1::Scalar],
    u: &RunningInstance<E1>,
    ucf: &RunningInstance<E2>,
    blind: E1::Scalar,
) -> E1::Scalar
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    let mut h = E2::RO::new_with_mode(c.clone(), RO_MODE);
    h.absorb(pp);
    h.absorb(E1::Scalar::from(i));
    for s in state {
        h.absorb(*s);
    }
    absorb_running::<E1, _>(&mut h, u);
    ucf.absorb(&mut h);
    h.absorb(blind);
    h.squeeze(E1::Scalar::NUM_BITS as usize, false)
}

/// One link of a chain: H(previous, comm's limbs), the narrow sponge whole.
pub fn chain_link<E1, E2>(c: &ROConstants<E2>, prev: E1::Scalar, comm: &Commitment<E1>) -> E1::Scalar
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    let mut h = E2::RO::new_with_mode(c.clone(), LINK_MODE);
    h.absorb(prev);
    absorb_point_packed::<E1, _>(&mut h, comm);
    h.squeeze(E1::Scalar::NUM_BITS as usize, false)
}

/// A squeezed number's low 128 bits.
fn low_u128<F: PrimeField>(f: F) -> u128 {
    let repr = f.to_repr();
    let mut b = [0u8; 16];
    b.copy_from_slice(&repr.as_ref()[..16]);
    u128::from_le_bytes(b)
}

/// The primary fold's K₁ = H(pp, u, T) (128 bits), and the sponge after
/// it, from which [`cf_challenge`] continues.
pub fn own_challenge<E1, E2>(
    c: &ROConstants<E2>,
    pp: E1::Scalar,
    u: &FoldInstance<E1>,
    t: &Commitment<E1>,
) -> (u128, E2::RO)
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    let mut h = E2::RO::new_with_mode(c.clone(), RO_MODE);
    h.absorb(pp);
    absorb_fold::<E1, _>(&mut h, u);
    absorb_point_packed::<E1, _>(&mut h, t);
    let k = low_u128(h.squeeze(CHALLENGE_BITS, false));
    (k, h)
}

/// The CycleFold fold's K_cf: the sponge of [`own_challenge`] after the
/// folded commitments R, u_cf's commitment and T_cf.
pub fn cf_challenge<E1, E2>(
    mut h: E2::RO,
    next1: &RunningInstance<E1>,
    ucf: &Commitment<E2>,
    tcf: &Commitment<E2>,
) -> u128
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    for c in next1.comm_w.iter().chain([&next1.comm_e]) {
        absorb_point_packed::<E1, _>(&mut h, c);
    }
    ucf.absorb_in_ro(&mut h);
    tcf.absorb_in_ro(&mut h);
    low_u128(h.squeeze(CHALLENGE_BITS, false))
}

/// Circuit twin of [`state_hash`].
#[allow(clippy::too_many_arguments)]
fn state_hash_circuit<E1, E2, CS>(
    mut cs: CS,
    c: &ROConstantsCircuit<E2>,
    pp: &AllocatedNum<E1::Scalar>,
    i: &AllocatedNum<E1::Scalar>,
    state: &[AllocatedNum<E1::Scalar>],
    u: &AllocOwnRunning<E1::Scalar>,
    ucf: &AllocRunning<E2>,
    blind: &AllocatedNum<E1::Scalar>,
) -> Result<AllocatedNum<E1::Scalar>, SynthesisError>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    CS: ConstraintSystem<E1::Scalar>,
{
    let mut ro = E2::ROCircuit::new_with_mode(c.clone(), RO_MODE);
    ro.absorb(pp);
    ro.absorb(i);
    for s in state {
        ro.absorb(s);
    }
    u.absorb(&mut ro);
    let mut h = Sponge::<E2>::Nova(ro);
    ucf.absorb(cs.namespace(|| "U_cf"), &mut h)?;
    h.absorb(blind);
    h.squeeze(&mut cs)
}

/// Circuit twin of [`chain_link`].
fn chain_link_circuit<E2, CS>(
    mut cs: CS,
    c: &ROConstantsCircuit<E2>,
    prev: &AllocatedNum<E2::Base>,
    comm: &[AllocatedNum<E2::Base>; 3],
) -> Result<AllocatedNum<E2::Base>, SynthesisError>
where
    E2: Engine,
    CS: ConstraintSystem<E2::Base>,
{
    let mut h = E2::ROCircuit::new_with_mode(c.clone(), LINK_MODE);
    h.absorb(prev);
    for v in comm {
        h.absorb(v);
    }
    h.squeeze_scalar(cs.namespace(|| "squeeze"))
}

/// K's limbs as the CycleFold IO holds a value: the low 68 bits, the next
/// 60, and 0 (sums of K's bits: in range with no check of their own).
fn k_limbs<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    bits: &[AllocatedBit],
    zero: &AllocatedNum<F>,
) -> Result<Foreign<F>, SynthesisError> {
    if bits.len() != CHALLENGE_BITS {
        return Err(SynthesisError::Unsatisfiable("K needs its 128 bits".into()));
    }
    let mut limb = |name: &str, bits: &[AllocatedBit]| {
        let value = bits.iter().rev().try_fold(F::ZERO, |acc, b| {
            b.get_value().map(|v| acc.double() + if v { F::ONE } else { F::ZERO })
        });
        let n = AllocatedNum::alloc(cs.namespace(|| name.to_string()), || value.ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(
            || format!("{name} from K's bits"),
            |lc| {
                let mut lc = lc;
                let mut w = F::ONE;
                for b in bits {
                    lc = lc + (w, b.get_variable());
                    w = w.double();
                }
                lc
            },
            |lc| lc + CS::one(),
            |lc| lc + n.get_variable(),
        );
        Ok::<_, SynthesisError>(n)
    };
    let l0 = limb("K0", &bits[..68])?;
    let l1 = limb("K1", &bits[68..])?;
    Ok(Foreign { limbs: [l0, l1, zero.clone()] })
}

/// v = a + r·b, one constraint.
fn mul_add<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    a: &AllocatedNum<F>,
    r: &AllocatedNum<F>,
    b: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError> {
    let v = AllocatedNum::alloc(cs.namespace(|| "value"), || match (a.get_value(), r.get_value(), b.get_value()) {
        (Some(a), Some(r), Some(b)) => Ok(a + r * b),
        _ => Err(SynthesisError::AssignmentMissing),
    })?;
    cs.enforce(
        || "a + r·b",
        |lc| lc + r.get_variable(),
        |lc| lc + b.get_variable(),
        |lc| lc + v.get_variable() - a.get_variable(),
    );
    Ok(v)
}

fn point<E: Engine + 'static, CS: ConstraintSystem<E::Base>>(
    mut cs: CS,
    c: Option<&Commitment<E>>,
) -> Result<AllocatedPoint<E>, SynthesisError> {
    let p = AllocatedPoint::alloc(cs.namespace(|| "point"), c.map(|c| c.to_coordinates()))?;
    p.check_on_curve(cs.namespace(|| "on the curve"))?;
    Ok(p)
}

/// The primary circuit of the CycleFold shape; returns z_{i+1} (the run's
/// challenges included). The layer's own variables go to the last part of
/// the witness, the step's phases to W₁ and W₂, as in
/// [`crate::augmented::synthesize_primary`].
pub fn synthesize<E1, E2, C, CS>(
    cs: &mut CS,
    cfg: &Config,
    ro: &ROConstantsCircuit<E2>,
    step: &C,
    inp: Option<&CfInputs<E1, E2>>,
) -> Result<Vec<AllocatedNum<E1::Scalar>>, SynthesisError>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    C: StepCircuit<E1::Scalar>,
    CS: PhasedCs<E1::Scalar>,
{
    if cfg.mode == ChallengeMode::PerFold {
        return Err(SynthesisError::Unsatisfiable(
            "the CycleFold primary draws its challenges per run, not per fold".into(),
        ));
    }
    let parts = cfg.primary_parts();
    cs.set_region(cfg.last_region());
    let pp = alloc(cs.namespace(|| "pp"), "v", inp.map(|p| p.pp))?;
    let i = alloc(cs.namespace(|| "i"), "v", inp.map(|p| E1::Scalar::from(p.i)))?;
    let blind = alloc(cs.namespace(|| "blind"), "v", inp.map(|p| p.blind))?;
    let blind_next = alloc(cs.namespace(|| "blind next"), "v", inp.map(|p| p.blind_next))?;
    let h0 = alloc(cs.namespace(|| "h0"), "v", inp.map(|p| p.h0))?;
    let z = (0..cfg.state_len())
        .map(|k| alloc(cs.namespace(|| format!("z{k}")), "v", inp.map(|p| p.z[k])))
        .collect::<Result<Vec<_>, _>>()?;
    let chain = (0..cfg.chain_len())
        .map(|k| alloc(cs.namespace(|| format!("chain{k}")), "v", inp.map(|p| p.chain[k])))
        .collect::<Result<Vec<_>, _>>()?;
    let zero = alloc_zero(cs.namespace(|| "zero"));
    let first = alloc_num_equals(cs.namespace(|| "first fold"), &i, &zero)?;
    let first_b = Boolean::from(first.clone());

    let run1 = AllocOwnRunning::alloc::<E1, _>(cs.namespace(|| "U"), inp.and_then(|p| p.run1.as_ref()), parts, PRIMARY_IO)?;
    let inc1 = AllocOwnIncoming::alloc::<E1, _>(cs.namespace(|| "u"), inp.and_then(|p| p.inc1.as_ref()), parts, PRIMARY_IO)?;
    let t1 = OwnPoint::alloc::<E1, _>(cs.namespace(|| "T"), inp.and_then(|p| p.t1.as_ref()), true)?;
    let next = inp.and_then(|p| p.next1.as_ref());
    let out = (0..=parts)
        .map(|k| {
            let c = next.map(|u| if k < parts { &u.comm_w[k] } else { &u.comm_e });
            OwnPoint::alloc::<E1, _>(cs.namespace(|| format!("R{k}")), c, true)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let cf_io = cf_io_len(cfg);
    let runcf = AllocRunning::<E2>::alloc(cs.namespace(|| "U_cf"), inp.and_then(|p| p.runcf.as_ref()), 1, cf_io)?;
    let cfw = point::<E2, _>(cs.namespace(|| "u_cf W"), inp.and_then(|p| p.inccf.as_ref()).map(|u| &u.comm_w[0]))?;
    let tcf = point::<E2, _>(cs.namespace(|| "T_cf"), inp.and_then(|p| p.tcf.as_ref()))?;

    // 1. u carries the state hash of (U, U_cf)
    let h0_in = unless_first(cs.namespace(|| "h0 in"), &h0, &first)?;
    let mut state = vec![h0_in];
    state.extend(z.iter().cloned());
    state.extend(chain.iter().cloned());
    let hash = state_hash_circuit::<E1, E2, _>(cs.namespace(|| "hash in"), ro, &pp, &i, &state, &run1, &runcf, &blind)?;
    check_hash(cs.namespace(|| "check in"), &hash, &inc1.x[PRIMARY_IO - 1], &first);

    // 2. r₁ from u and T; u and X fold natively, the commitments are R
    let mut h = E2::ROCircuit::new_with_mode(ro.clone(), RO_MODE);
    h.absorb(&pp);
    // u's parts packed once: r₁'s sponge and the chains read them
    let u_packed = inc1
        .w
        .iter()
        .enumerate()
        .map(|(k, p)| p.packed(cs.namespace(|| format!("u W{k} packed"))))
        .collect::<Result<Vec<_>, _>>()?;
    for v in u_packed.iter().flatten().chain(&inc1.x) {
        h.absorb(v);
    }
    t1.absorb_packed(cs.namespace(|| "T absorbed"), &mut h)?;
    let k1 = h.squeeze(cs.namespace(|| "K1"), CHALLENGE_BITS, false)?;
    let r1 = odd_challenge_num(cs.namespace(|| "r1"), &k1)?;
    let one = AllocatedNum::one::<CS>();
    let u_next = mul_add(cs.namespace(|| "u + r1"), &run1.u, &r1, &one)?;
    let x_next = run1
        .x
        .iter()
        .zip(&inc1.x)
        .enumerate()
        .map(|(k, (a, b))| mul_add(cs.namespace(|| format!("X{k} + r1·x{k}")), a, &r1, b))
        .collect::<Result<Vec<_>, _>>()?;
    let next1 = AllocOwnRunning {
        w: out[..parts].to_vec(),
        e: out[parts].clone(),
        u: u_next,
        x: x_next,
    };

    // 3. u_cf's public IO: K₁, then (P, Q, R) for each part and for E
    let mut x_cf = vec![k_limbs(cs.namespace(|| "K1 limbs"), &k1, &zero)?];
    for (j, r) in out.iter().enumerate() {
        let (p, q) = if j < parts { (&run1.w[j], &inc1.w[j]) } else { (&run1.e, &t1) };
        for pt in [p, q, r] {
            x_cf.extend(pt.io());
        }
    }

    // 4. K_cf from the same sponge, after R, u_cf and T_cf; U_cf folds u_cf
    for (k, r) in out.iter().enumerate() {
        r.absorb_packed(cs.namespace(|| format!("R{k} absorbed")), &mut h)?;
    }
    cfw.absorb_in_ro(&mut h)?;
    tcf.absorb_in_ro(&mut h)?;
    let kcf = h.squeeze(cs.namespace(|| "Kcf"), CHALLENGE_BITS, false)?;
    let folded_cf = runcf.fold_by(cs.namespace(|| "fold U_cf"), &[cfw], &x_cf, std::slice::from_ref(&tcf), &kcf)?;

    // the first fold folds nothing
    let zero_own = AllocOwnRunning::zero(&zero, parts, PRIMARY_IO);
    let run1_next = AllocOwnRunning::select(cs.namespace(|| "U next"), &zero_own, &next1, &first_b)?;
    let zero_cf = AllocRunning::<E2>::zero(cs.namespace(|| "zero U_cf"), 1, cf_io)?;
    let runcf_next = AllocRunning::select(cs.namespace(|| "U_cf next"), &zero_cf, &folded_cf, &first_b)?;
    let h0_next = conditionally_select(cs.namespace(|| "h0 next"), &hash, &h0, &first_b)?;
    let i_next = next_count(cs.namespace(|| "i next"), &i)?;

    // 5. chain k links u's part k (0 after the first fold, which has no u)
    let chain_next = chain
        .iter()
        .enumerate()
        .map(|(k, prev)| {
            let link = chain_link_circuit::<E2, _>(cs.namespace(|| format!("chain{k} link")), ro, prev, &u_packed[k])?;
            conditionally_select(cs.namespace(|| format!("chain{k} next")), &zero, &link, &first_b)
        })
        .collect::<Result<Vec<_>, _>>()?;

    let z_next = run_step(cs, cfg, step, &z, vec![])?;
    let mut state = vec![h0_next];
    state.extend(z_next.iter().cloned());
    state.extend(chain_next);
    let out_hash = state_hash_circuit::<E1, E2, _>(
        cs.namespace(|| "hash out"),
        ro,
        &pp,
        &i_next,
        &state,
        &run1_next,
        &runcf_next,
        &blind_next,
    )?;
    out_hash.inputize(cs.namespace(|| "output the hash"))?;
    Ok(z_next)
}
