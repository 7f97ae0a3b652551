//! Instances of one curve allocated in the other curve's circuit, where
//! their commitments are native points and their public IO is a non-native
//! number (limbs of 68, 68 and 118 bits, folded by `foreign::fold`), and
//! the fold of an incoming instance into the running one — the in-circuit
//! twin of `nifs::fold_instance`. The state hash and the fold's challenge
//! are squeezed whole and cut here without a strict bit decomposition: a
//! cut hash's range is checked by the circuit that takes it as public IO
//! (`truncate_hash`, `split_bits`; docs/SOUNDNESS.md).

use crate::foreign::{self, field_to_big, Foreign};
use crate::hash::{CHALLENGE_BITS, HASH_BITS};
use crate::poseidon::{Hasher, Sponge};
use crate::instance::{points, points_per, Commitment, FoldInstance, RunningInstance};
use crate::ladder::{fold_point, odd_challenge_num};
use ff::{Field, PrimeField, PrimeFieldBits};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{AllocatedBit, Boolean, ConstraintSystem, LinearCombination, SynthesisError};
use nova_snark::gadgets::ecc::AllocatedPoint;
use nova_snark::gadgets::utils::{alloc_scalar_as_base, conditionally_select};
use nova_snark::traits::{Engine, ROConstantsCircuit};
use num_bigint::BigUint;

/// A fresh instance of `E`, allocated in a circuit over `E::Base`.
#[derive(Clone)]
pub struct AllocIncoming<E: Engine> {
    /// Its witness commitments' points (checked on the curve; [`points_per`] a commitment).
    pub w: Vec<AllocatedPoint<E>>,
    /// Its public IO (values below 2²⁵⁰, the same number in both fields).
    pub x: Vec<AllocatedNum<E::Base>>,
    /// The same values as range-checked limbs (the top one of 114 bits, so
    /// the limbs are the value's own: below 2²⁵⁰, no other representative).
    pub xl: Vec<Foreign<E::Base>>,
}

impl<E: Engine + 'static> AllocIncoming<E> {
    /// Allocate `inst` (None: points at infinity and zeros, for the shape
    /// and the first fold) with `parts` commitments and `io` values.
    pub fn alloc<CS: ConstraintSystem<E::Base>>(
        mut cs: CS,
        inst: Option<&FoldInstance<E>>,
        parts: usize,
        io: usize,
    ) -> Result<Self, SynthesisError> {
        let w = alloc_points(
            cs.namespace(|| "W"),
            (0..parts).map(|k| inst.map(|u| &u.comm_w[k])),
            true,
        )?;
        let x = (0..io)
            .map(|k| {
                alloc_scalar_as_base::<E, _>(cs.namespace(|| format!("X{k}")), inst.map(|u| u.x[k]))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let xl = x
            .iter()
            .enumerate()
            .map(|(k, v)| Foreign::of_num(cs.namespace(|| format!("X{k} limbs")), v, HASH_BITS as u32 - 136))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AllocIncoming { w, x, xl })
    }

    /// Absorb as `FoldInstance::absorb` does.
    pub fn absorb(&self, ro: &mut Sponge<'_, E>) {
        for p in &self.w {
            ro.absorb_point(p);
        }
        for x in &self.x {
            ro.absorb(x);
        }
    }
}

/// The points of commitments (each [`points_per`] points, in order; None:
/// points at infinity), checked on the curve if asked.
pub fn alloc_points<'a, E: Engine + 'static, CS: ConstraintSystem<E::Base>>(
    mut cs: CS,
    comms: impl IntoIterator<Item = Option<&'a Commitment<E>>>,
    on_curve: bool,
) -> Result<Vec<AllocatedPoint<E>>, SynthesisError> {
    let n = points_per::<E>();
    let mut out = Vec::new();
    for (k, c) in comms.into_iter().enumerate() {
        let pts = c.map(points::<E>);
        for j in 0..n {
            let at = pts.as_ref().map(|p| p.get(j).copied().ok_or(SynthesisError::AssignmentMissing)).transpose()?;
            let p = AllocatedPoint::alloc(cs.namespace(|| format!("{k}.{j}")), at)?;
            if on_curve {
                p.check_on_curve(cs.namespace(|| format!("{k}.{j} on the curve")))?;
            }
            out.push(p);
        }
    }
    Ok(out)
}

/// A running instance of `E`, allocated in a circuit over `E::Base`.
pub struct AllocRunning<E: Engine> {
    /// Witness commitments' points ([`points_per`] a commitment).
    pub w: Vec<AllocatedPoint<E>>,
    /// Error commitment's points.
    pub e: Vec<AllocatedPoint<E>>,
    /// The relaxation scalar (small: 1 plus a sum of 130-bit challenges).
    pub u: AllocatedNum<E::Base>,
    /// Public IO as numbers modulo `E`'s scalar field.
    pub x: Vec<Foreign<E::Base>>,
}

/// The modulus of `E`'s scalar field, the values' p.
fn scalar_modulus<E: Engine + 'static>() -> BigUint {
    field_to_big(&-E::Scalar::ONE) + 1u8
}

impl<E: Engine + 'static> AllocRunning<E> {
    /// Allocate `inst` (None: the all-zero instance's values). Nothing is
    /// range-checked: the instance is bound by the state hash that opens it.
    pub fn alloc<CS: ConstraintSystem<E::Base>>(
        mut cs: CS,
        inst: Option<&RunningInstance<E>>,
        parts: usize,
        io: usize,
    ) -> Result<Self, SynthesisError> {
        let w = alloc_points(cs.namespace(|| "W"), (0..parts).map(|k| inst.map(|u| &u.comm_w[k])), false)?;
        let e = alloc_points(cs.namespace(|| "E"), [inst.map(|u| &u.comm_e)], false)?;
        let u = alloc_scalar_as_base::<E, _>(cs.namespace(|| "u"), inst.map(|u| u.u))?;
        let x = (0..io)
            .map(|k| {
                // None: the all-zero instance's values, as the points' default
                let v = inst.map_or(BigUint::default(), |u| field_to_big(&u.x[k]));
                Foreign::alloc_unchecked(cs.namespace(|| format!("X{k}")), Some(&v))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AllocRunning { w, e, u, x })
    }

    /// The all-zero instance, as constants (points at infinity, u = 0, X = 0).
    pub fn zero<CS: ConstraintSystem<E::Base>>(
        mut cs: CS,
        parts: usize,
        io: usize,
    ) -> Result<Self, SynthesisError> {
        let inf = AllocatedPoint::default(cs.namespace(|| "infinity"))?;
        let n = points_per::<E>();
        // the point's x is the constrained zero: u and every limb of X
        Ok(AllocRunning {
            w: vec![inf.clone(); parts * n],
            e: vec![inf.clone(); n],
            u: inf.x.clone(),
            x: vec![Foreign::zero(&inf.x); io],
        })
    }

    /// A fresh instance as a running one (E at infinity, u = 1).
    pub fn from_incoming<CS: ConstraintSystem<E::Base>>(
        mut cs: CS,
        inc: &AllocIncoming<E>,
    ) -> Result<Self, SynthesisError> {
        let e = AllocatedPoint::default(cs.namespace(|| "E"))?;
        Ok(AllocRunning {
            w: inc.w.clone(),
            e: vec![e; points_per::<E>()],
            u: AllocatedNum::one::<CS>(),
            x: inc.xl.clone(),
        })
    }

    /// Absorb as `RunningInstance::absorb` does.
    pub fn absorb<CS: ConstraintSystem<E::Base>>(
        &self,
        mut cs: CS,
        ro: &mut Sponge<'_, E>,
    ) -> Result<(), SynthesisError> {
        // as `RunningInstance::absorb`: coordinates, then the flags packed
        // (each a bit here, so the packing is injective)
        let points: Vec<&AllocatedPoint<E>> = self.w.iter().chain(&self.e).collect();
        for p in &points {
            ro.absorb(&p.x);
            ro.absorb(&p.y);
        }
        let flags = AllocatedNum::alloc(cs.namespace(|| "flags"), || {
            let mut v = E::Base::ZERO;
            for p in points.iter().rev() {
                v = v.double() + p.is_infinity.get_value().ok_or(SynthesisError::AssignmentMissing)?;
            }
            Ok(v)
        })?;
        for (k, p) in points.iter().enumerate() {
            cs.enforce(
                || format!("flag {k} is a bit"),
                |lc| lc + p.is_infinity.get_variable(),
                |lc| lc + CS::one() - p.is_infinity.get_variable(),
                |lc| lc,
            );
        }
        cs.enforce(
            || "flags packed",
            |lc| {
                let mut bit = E::Base::ONE;
                let mut lc = lc;
                for p in &points {
                    lc = lc + (bit, p.is_infinity.get_variable());
                    bit = bit.double();
                }
                lc
            },
            |lc| lc + CS::one(),
            |lc| lc + flags.get_variable(),
        );
        ro.absorb(&flags);
        ro.absorb(&self.u);
        for x in &self.x {
            for limb in &x.limbs {
                ro.absorb(limb);
            }
        }
        Ok(())
    }

    /// Fold `inc` into this instance with cross term `t`:
    /// r = 2¹²⁸ + 2·H(pp, inc, T) + 1; Wₖ + r·incₖ, E + r·T, u + r,
    /// X + r·x (mod |E::Scalar|).
    #[allow(clippy::too_many_arguments)]
    pub fn fold<CS: ConstraintSystem<E::Base>>(
        &self,
        mut cs: CS,
        c: &ROConstantsCircuit<E>,
        hasher: Hasher<'_, E::Base>,
        pp: &AllocatedNum<E::Base>,
        inc: &AllocIncoming<E>,
        t: &[AllocatedPoint<E>],
    ) -> Result<Self, SynthesisError> {
        // r = 2¹²⁸ + 2K + 1 from K's bits: the ladder's odd multiplier
        let r_bits = fold_challenge_circuit(cs.namespace(|| "r bits"), Sponge::new(hasher, c), pp, inc, t)?;
        self.fold_by(cs, &inc.w, &inc.xl, t, &r_bits)
    }

    /// [`AllocRunning::fold`] at the challenge whose K has the bits `r_bits`
    /// (drawn by the caller, after everything folded here), the incoming
    /// instance given as its commitments and its IO's limbs (range-checked,
    /// or bound to limbs that were, by the caller).
    pub fn fold_by<CS: ConstraintSystem<E::Base>>(
        &self,
        mut cs: CS,
        inc_w: &[AllocatedPoint<E>],
        inc_x: &[Foreign<E::Base>],
        t: &[AllocatedPoint<E>],
        r_bits: &[AllocatedBit],
    ) -> Result<Self, SynthesisError> {
        if inc_w.len() != self.w.len() || inc_x.len() != self.x.len() || t.len() != self.e.len() {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "an instance of {} commitments and {} values folded into one of {} and {}",
                inc_w.len(),
                inc_x.len(),
                self.w.len(),
                self.x.len()
            )));
        }
        let r = odd_challenge_num(cs.namespace(|| "r"), r_bits)?;
        let w = pairwise(&self.w, inc_w, |k, a, b| fold_point(cs.namespace(|| format!("W{k} + r·w{k}")), a, b, r_bits))?;
        let e = pairwise(&self.e, t, |k, a, b| fold_point(cs.namespace(|| format!("E{k} + r·T{k}")), a, b, r_bits))?;
        let u = AllocatedNum::alloc(cs.namespace(|| "u + r"), || {
            match (self.u.get_value(), r.get_value()) {
                (Some(a), Some(b)) => Ok(a + b),
                _ => Err(SynthesisError::AssignmentMissing),
            }
        })?;
        cs.enforce(
            || "u' = u + r",
            |lc| lc,
            |lc| lc,
            |lc| lc + u.get_variable() - self.u.get_variable() - r.get_variable(),
        );
        let rho = rho_limbs(cs.namespace(|| "r limbs"), r_bits)?;
        let p = scalar_modulus::<E>();
        let x = pairwise(&self.x, inc_x, |k, acc, v| foreign::fold(cs.namespace(|| format!("X{k} + r·x{k}")), &p, acc, v, &rho))?;
        Ok(AllocRunning { w, e, u, x })
    }

    /// `a` if `cond`, else `b`.
    pub fn select<CS: ConstraintSystem<E::Base>>(
        mut cs: CS,
        a: &Self,
        b: &Self,
        cond: &Boolean,
    ) -> Result<Self, SynthesisError> {
        let w = pairwise(&a.w, &b.w, |k, p, q| {
            AllocatedPoint::conditionally_select(cs.namespace(|| format!("W{k}")), p, q, cond)
        })?;
        let e = pairwise(&a.e, &b.e, |k, p, q| {
            AllocatedPoint::conditionally_select(cs.namespace(|| format!("E{k}")), p, q, cond)
        })?;
        let u = conditionally_select(cs.namespace(|| "u"), &a.u, &b.u, cond)?;
        let x = pairwise(&a.x, &b.x, |k, p, q| Foreign::select(cs.namespace(|| format!("X{k}")), p, q, cond))?;
        Ok(AllocRunning { w, e, u, x })
    }
}

/// `f(k, aₖ, bₖ)` for each pair in order (a running instance's parts
/// selected or folded one by one).
pub(crate) fn pairwise<T, U, E>(a: &[T], b: &[T], mut f: impl FnMut(usize, &T, &T) -> Result<U, E>) -> Result<Vec<U>, E> {
    a.iter().zip(b).enumerate().map(|(k, (p, q))| f(k, p, q)).collect()
}

/// r = 2¹²⁸ + 2K + 1 as `foreign::fold` takes it, two limbs of 68 and 62
/// bits made from K's bits (so in range with no check of their own):
/// ρ₀ = 1 + 2·(K mod 2⁶⁷), ρ₁ = 2⁶⁰ + ⌊K / 2⁶⁷⌋.
fn rho_limbs<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    bits: &[AllocatedBit],
) -> Result<[AllocatedNum<F>; 2], SynthesisError> {
    if bits.len() != CHALLENGE_BITS || foreign::RHO_BITS != [68, 62] {
        return Err(SynthesisError::Unsatisfiable("r's limbs need K's 128 bits".into()));
    }
    let two = |n: u32| F::from(2).pow_vartime([u64::from(n)]);
    let limb = |cs: &mut CS, name: &str, range: std::ops::Range<usize>, shift: u32, base: F| {
        let value = bits[range.clone()].iter().enumerate().try_fold(base, |acc, (i, b)| {
            b.get_value().map(|v| if v { acc + two(i as u32 + shift) } else { acc })
        });
        let n = AllocatedNum::alloc(cs.namespace(|| name.to_string()), || {
            value.ok_or(SynthesisError::AssignmentMissing)
        })?;
        cs.enforce(
            || format!("{name} from K's bits"),
            |lc| {
                let mut lc = lc + (base, CS::one());
                for (i, b) in bits[range].iter().enumerate() {
                    lc = lc + (two(i as u32 + shift), b.get_variable());
                }
                lc
            },
            |lc| lc + CS::one(),
            |lc| lc + n.get_variable(),
        );
        Ok::<_, SynthesisError>(n)
    };
    let r0 = limb(&mut cs, "r0", 0..67, 1, F::ONE)?;
    let r1 = limb(&mut cs, "r1", 67..128, 0, two(60))?;
    Ok([r0, r1])
}

/// Circuit twin of [`crate::hash::state_hash`], hashed by `hasher`'s sponge.
#[allow(clippy::too_many_arguments)]
pub fn state_hash_circuit<E: Engine + 'static, CS: ConstraintSystem<E::Base>>(
    mut cs: CS,
    c: &ROConstantsCircuit<E>,
    hasher: Hasher<'_, E::Base>,
    pp: &AllocatedNum<E::Base>,
    i: &AllocatedNum<E::Base>,
    state: &[AllocatedNum<E::Base>],
    u: &AllocRunning<E>,
    blind: &AllocatedNum<E::Base>,
) -> Result<AllocatedNum<E::Base>, SynthesisError> {
    let mut h = Sponge::new(hasher, c);
    h.absorb(pp);
    h.absorb(i);
    for s in state {
        h.absorb(s);
    }
    u.absorb(cs.namespace(|| "U"), &mut h)?;
    h.absorb(blind);
    let full = h.squeeze(&mut cs)?;
    truncate_hash(cs.namespace(|| "value"), &full)
}

/// 254 bits, each checked, that sum to `h`: an integer below 2²⁵⁴ equal
/// to h in the field, so h itself or h + |F| (two candidates at most; the
/// strict split, only h, costs ≈ 110 constraints more). The honest bits
/// are h's canonical ones; `rep` picks another integer (a test's forgery).
fn split_bits<F: PrimeFieldBits, CS: ConstraintSystem<F>>(
    mut cs: CS,
    h: &AllocatedNum<F>,
    rep: Option<&BigUint>,
) -> Result<Vec<AllocatedBit>, SynthesisError> {
    let n = F::NUM_BITS as usize;
    let value = match rep {
        Some(r) => Some(r.clone()),
        None => h.get_value().map(|v| field_to_big(&v)),
    };
    let bits = (0..n)
        .map(|i| AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), value.as_ref().map(|v| v.bit(i as u64))))
        .collect::<Result<Vec<_>, _>>()?;
    cs.enforce(
        || "the bits sum to h",
        |_| weighted::<F>(&bits, 0),
        |lc| lc + CS::one(),
        |lc| lc + h.get_variable(),
    );
    Ok(bits)
}

/// Σ 2ⁱ·bitᵢ for bits starting at bit `from`.
fn weighted<F: PrimeField>(bits: &[AllocatedBit], from: usize) -> LinearCombination<F> {
    let mut w = F::from(2).pow_vartime([from as u64]);
    let mut lc = LinearCombination::zero();
    for b in bits {
        lc = lc + (w, b.get_variable());
        w = w.double();
    }
    lc
}

/// A squeezed hash h cut to its low [`HASH_BITS`]: L = h − 2²⁵⁰·t for t of
/// four bits, the honest L being h's canonical low bits. L's own range is
/// not checked here but where it is used: as public IO, the other
/// circuit's `AllocIncoming` takes it as limbs below 2²⁵⁰ (the last one,
/// the verifier compares with the native hash), and a hash checked in
/// equals such a value. L < 2²⁵⁰ with L + 2²⁵⁰·t < 2²⁵⁴ is h or h + |F| as
/// an integer: two candidates at most, as a 250-bit hash is, where a
/// strict decomposition of h would cost ≈ 360 constraints more
/// (docs/SOUNDNESS.md, "Hashes cut where they are used").
pub fn truncate_hash<F: PrimeFieldBits, CS: ConstraintSystem<F>>(
    cs: CS,
    h: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError> {
    truncate_with(cs, h, None)
}

/// [`truncate_hash`] with t chosen (`None`: h's own top bits), so a test
/// can cut a hash at another t.
fn truncate_with<F: PrimeFieldBits, CS: ConstraintSystem<F>>(
    mut cs: CS,
    h: &AllocatedNum<F>,
    t: Option<u64>,
) -> Result<AllocatedNum<F>, SynthesisError> {
    let n = F::NUM_BITS as usize;
    let t = t.or_else(|| {
        let bits = h.get_value()?.to_le_bits();
        Some((HASH_BITS..n).rev().fold(0u64, |acc, i| 2 * acc + u64::from(bits[i])))
    });
    let top = (HASH_BITS..n)
        .map(|i| AllocatedBit::alloc(cs.namespace(|| format!("t bit {i}")), t.map(|t| (t >> (i - HASH_BITS)) & 1 == 1)))
        .collect::<Result<Vec<_>, _>>()?;
    let shift = F::from(2).pow_vartime([HASH_BITS as u64]);
    let l = AllocatedNum::alloc(cs.namespace(|| "L"), || {
        Ok(h.get_value().ok_or(SynthesisError::AssignmentMissing)?
            - F::from(t.ok_or(SynthesisError::AssignmentMissing)?) * shift)
    })?;
    cs.enforce(
        || "h = L + 2^250·t",
        |lc| lc + l.get_variable() + &weighted::<F>(&top, HASH_BITS),
        |lc| lc + CS::one(),
        |lc| lc + h.get_variable(),
    );
    Ok(l)
}

/// Circuit twin of [`crate::hash::fold_challenge`]: r's bits, little-endian.
fn fold_challenge_circuit<E: Engine + 'static, CS: ConstraintSystem<E::Base>>(
    mut cs: CS,
    mut h: Sponge<'_, E>,
    pp: &AllocatedNum<E::Base>,
    u: &AllocIncoming<E>,
    t: &[AllocatedPoint<E>],
) -> Result<Vec<AllocatedBit>, SynthesisError> {
    h.absorb(pp);
    u.absorb(&mut h);
    for p in t {
        h.absorb_point(p);
    }
    // K: the low 128 bits of a split of the hash (`split_bits`: two
    // candidate K at most for one transcript)
    let full = h.squeeze(&mut cs)?;
    let bits = split_bits(cs.namespace(|| "bits"), &full, None)?;
    Ok(bits[..CHALLENGE_BITS].to_vec())
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{chain_link, chain_link_circuit, state_hash};
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use nova_snark::traits::commitment::{CommitmentEngineTrait, CommitmentTrait};
    use nova_snark::traits::ROConstants;
    use rand::rngs::OsRng;

    type E1 = nova_snark::provider::Bn256EngineKZG;
    type Fr = <E1 as Engine>::Scalar;
    type Fq = <E1 as Engine>::Base;

    /// A running instance of three parts, the second at infinity.
    fn instance() -> RunningInstance<E1> {
        let ck = <E1 as Engine>::CE::setup(b"gadget test", 4).unwrap();
        let com = |v: u64| <E1 as Engine>::CE::commit(&ck, &[Fr::from(v), Fr::ONE], &Fr::ZERO);
        RunningInstance {
            comm_w: vec![com(3), <E1 as Engine>::CE::commit(&ck, &[Fr::ZERO; 2], &Fr::ZERO), com(5)],
            comm_e: com(7),
            u: Fr::random(OsRng),
            x: vec![Fr::random(OsRng), Fr::random(OsRng)],
        }
    }

    fn num(cs: &mut TestConstraintSystem<Fq>, name: &str, v: Fq) -> AllocatedNum<Fq> {
        AllocatedNum::alloc(cs.namespace(|| name.to_string()), || Ok(v)).unwrap()
    }

    /// The state hash in the circuit of an allocated instance (by our
    /// sponge if `own`, else nova-snark's).
    fn hashed(cs: &mut TestConstraintSystem<Fq>, u: &AllocRunning<E1>, state: &[Fq], own: bool) -> Fq {
        let ro = ROConstantsCircuit::<E1>::default();
        let plan = crate::poseidon::Plan::wide::<E1>(&ro).unwrap();
        let hasher = if own { Hasher::Own(&plan) } else { Hasher::Nova };
        let (pp, i, b) = (num(cs, "pp", Fq::from(11)), num(cs, "i", Fq::from(2)), num(cs, "blind", Fq::from(13)));
        let s: Vec<_> = state.iter().enumerate().map(|(k, v)| num(cs, &format!("s{k}"), *v)).collect();
        let h = state_hash_circuit(cs.namespace(|| "hash"), &ro, hasher, &pp, &i, &s, u, &b).unwrap();
        h.get_value().unwrap()
    }

    #[test]
    fn a_running_instance_hashes_alike_in_and_out_of_the_circuit() {
        let inst = instance();
        let state = [Fq::from(17), Fq::from(19)];
        let native = state_hash::<E1>(&ROConstants::<E1>::default(), Fq::from(11), 2, &state, &inst, Fq::from(13));
        for own in [false, true] {
            let mut cs = TestConstraintSystem::<Fq>::new();
            let u = AllocRunning::<E1>::alloc(cs.namespace(|| "U"), Some(&inst), 3, 2).unwrap();
            assert_eq!(hashed(&mut cs, &u, &state, own), native, "own sponge: {own}");
            assert!(cs.is_satisfied());
        }
        // another point at infinity is another hash
        let mut other = inst.clone();
        other.comm_w.swap(1, 2);
        let native2 = state_hash::<E1>(&ROConstants::<E1>::default(), Fq::from(11), 2, &state, &other, Fq::from(13));
        assert_ne!(native, native2);
    }

    #[test]
    fn a_cut_hash_has_two_candidates_at_most_and_the_range_where_it_is_used_refuses_the_rest() {
        // L = h − 2²⁵⁰·t for each t of four bits, then the limbs below 2²⁵⁰
        // that L meets as the other circuit's public IO (`of_num`, 114)
        let q = field_to_big(&-Fq::ONE) + 1u8;
        let cut = |h: Fq, t: Option<u64>| {
            let mut cs = TestConstraintSystem::<Fq>::new();
            let hv = num(&mut cs, "h", h);
            let l = truncate_with(cs.namespace(|| "cut"), &hv, t).unwrap();
            Foreign::of_num(cs.namespace(|| "used"), &l, HASH_BITS as u32 - 136).unwrap();
            (cs.is_satisfied(), l.get_value().unwrap())
        };
        let mut twice = 0;
        for k in 0..64u64 {
            // uniform hashes, and ones below 2²⁵⁴ − q (where h + q has a cut too)
            let h = if k % 2 == 0 { Fq::random(OsRng) } else { Fq::from(k) * Fq::from(2).pow_vartime([248]) };
            let hb = field_to_big(&h);
            let (ok, l) = cut(h, None);
            assert!(ok);
            assert_eq!(field_to_big(&l), &hb % (BigUint::from(1u8) << HASH_BITS));
            let accepted: Vec<u64> = (0..16).filter(|t| cut(h, Some(*t)).0).collect();
            // the canonical t, and the cut of h + q where that is below 2²⁵⁴
            let mut expect = vec![u64::try_from(&hb >> HASH_BITS).unwrap()];
            let hq = &hb + &q;
            if hq.bits() <= 254 {
                expect.push(u64::try_from(&hq >> HASH_BITS).unwrap());
                twice += 1;
            }
            assert_eq!(accepted, expect, "h = {hb}");
        }
        assert!(twice > 0);
    }

    #[test]
    fn a_challenge_split_is_the_hash_or_the_hash_plus_the_modulus() {
        let q = field_to_big(&-Fq::ONE) + 1u8;
        let split = |h: Fq, rep: Option<&BigUint>| {
            let mut cs = TestConstraintSystem::<Fq>::new();
            let hv = num(&mut cs, "h", h);
            split_bits(cs.namespace(|| "split"), &hv, rep).unwrap();
            cs.is_satisfied()
        };
        for h in [Fq::random(OsRng), Fq::from(3), -Fq::ONE] {
            let hb = field_to_big(&h);
            assert!(split(h, None));
            // one off, or the other candidate where it has 254 bits
            assert!(!split(h, Some(&(&hb + 1u8))));
            assert!(!split(h, Some(&(&hb ^ BigUint::from(1u8) << 127))));
            let hq = &hb + &q;
            assert_eq!(split(h, Some(&hq)), hq.bits() <= 254);
        }
    }

    #[test]
    fn r_limbs_are_the_odd_challenge_split() {
        use crate::foreign::{field_to_big, RHO_BITS};
        for k in [0u128, 1, u128::MAX, 0x1234_5678_9abc_def0_0fed_cba9_8765_4321] {
            let mut cs = TestConstraintSystem::<Fq>::new();
            let bits: Vec<AllocatedBit> = (0..128)
                .map(|i| AllocatedBit::alloc(cs.namespace(|| format!("k{i}")), Some((k >> i) & 1 == 1)).unwrap())
                .collect();
            let [r0, r1] = rho_limbs(cs.namespace(|| "r"), &bits).unwrap();
            assert!(cs.is_satisfied());
            let rho = field_to_big(&crate::ladder::odd_challenge::<Fq>(k, 128));
            let (v0, v1) = (field_to_big(&r0.get_value().unwrap()), field_to_big(&r1.get_value().unwrap()));
            assert_eq!(v0.clone() + (v1.clone() << 68), rho);
            assert!(v0.bits() <= u64::from(RHO_BITS[0]) && v1.bits() <= u64::from(RHO_BITS[1]));
        }
    }

    #[test]
    fn an_infinity_flag_that_is_not_a_bit_is_rejected() {
        // flags (2, 0, 0, 0) pack to the number (0, 1, 0, 0) does: only the
        // bit constraints keep the packing injective
        let inst = instance();
        let mut cs = TestConstraintSystem::<Fq>::new();
        let mut u = AllocRunning::<E1>::alloc(cs.namespace(|| "U"), Some(&inst), 3, 2).unwrap();
        assert!(cs.is_satisfied());
        u.w[0].is_infinity = num(&mut cs, "forged flag", Fq::from(2));
        u.w[1].is_infinity = num(&mut cs, "forged flag 1", Fq::ZERO);
        hashed(&mut cs, &u, &[], true);
        assert_eq!(cs.which_is_unsatisfied(), Some("hash/U/flag 0 is a bit"));
    }

    #[test]
    fn a_chain_link_is_the_same_in_and_out_of_the_circuit() {
        let inst = instance();
        let ro = ROConstantsCircuit::<E1>::default();
        for c in inst.comm_w.iter().chain([&inst.comm_e]) {
            let prev = Fq::random(OsRng);
            let native = chain_link::<E1>(&ROConstants::<E1>::default(), prev, c);
            let mut cs = TestConstraintSystem::<Fq>::new();
            let p = num(&mut cs, "prev", prev);
            let pt = AllocatedPoint::<E1>::alloc(cs.namespace(|| "W"), Some(c.to_coordinates())).unwrap();
            let link = chain_link_circuit(cs.namespace(|| "link"), &ro, &p, &pt).unwrap();
            assert_eq!(link.get_value(), Some(native));
            assert!(cs.is_satisfied());
            // one narrow permutation, no bit decomposition of the output
            assert!(cs.num_constraints() < 400, "{} constraints", cs.num_constraints());
        }
    }
}
