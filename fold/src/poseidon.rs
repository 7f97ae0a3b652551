//! nova-snark's wide Poseidon sponge as a circuit with fewer non-zeros.
//!
//! Why: nova-snark's sponge circuit keeps every lane a linear combination
//! and multiplies it by itself for each S-box (x² = x·x, x⁵ = x⁴·x), so a
//! 25-lane combination enters its matrices three times: ≈ 29k non-zeros a
//! wide permutation for 778 constraints. The primary's two state hashes
//! and its fold challenge are most of its layer's non-zeros, and the
//! verifier evaluates the matrices at (r_x, r_y) term by term (the largest
//! share of its work after the IPA). Here an S-box whose input has more
//! than two terms first allocates that input once (one constraint), so the
//! combination enters once: ≈ 13k non-zeros for ≈ 1,036 constraints.
//!
//! What: the same permutation, schedule and sponge as nova-snark's
//! (`Sponge` in `Simplex` mode, one absorb then one squeeze; its
//! `hash_optimized_static`: compressed round constants, the pre-sparse
//! matrix, the sparse matrices of the partial rounds). The constants are
//! nova-snark's own, read through their serde form (their fields are
//! private); the value is therefore nova-snark's `PoseidonRO` hash, which
//! stays the native twin (tested here for every length the layer uses).

use ff::PrimeField;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, LinearCombination, SynthesisError};
use nova_snark::gadgets::ecc::AllocatedPoint;
use nova_snark::traits::{Engine, ROCircuitTrait, ROConstantsCircuit};
use serde::Deserialize;

/// A matrix as nova-snark stores it: rows of field elements.
type Matrix<F> = Vec<Vec<F>>;

/// nova-snark's MDS matrices, in the order they are written.
#[derive(Deserialize)]
#[serde(bound = "F: PrimeField + serde::de::DeserializeOwned")]
#[allow(dead_code)] // the derived matrices are read past, not used
struct Mds<F> {
    m: Matrix<F>,
    m_inv: Matrix<F>,
    m_hat: Matrix<F>,
    m_hat_inv: Matrix<F>,
    m_prime: Matrix<F>,
    m_double_prime: Matrix<F>,
}

/// A partial round's sparse matrix: its dense first column and first row.
#[derive(Deserialize)]
#[serde(bound = "F: PrimeField + serde::de::DeserializeOwned")]
struct Sparse<F> {
    w_hat: Vec<F>,
    v_rest: Vec<F>,
}

/// The leading fields of nova-snark's `PoseidonConstants` as it writes them
/// (mds, crc, psm, sm, strength, rf, rp; the hash type after them is not read).
#[derive(Deserialize)]
#[serde(bound = "F: PrimeField + serde::de::DeserializeOwned")]
struct Written<F> {
    mds: Mds<F>,
    crc: Vec<F>,
    psm: Matrix<F>,
    sm: Vec<Sparse<F>>,
    _strength: u32,
    rf: usize,
    rp: usize,
}

/// `PoseidonConstantsCircuit`: the wide constants first (the narrow after them are not read).
#[derive(Deserialize)]
#[serde(bound = "F: PrimeField + serde::de::DeserializeOwned")]
struct WrittenBoth<F> {
    wide: Written<F>,
}

/// The wide permutation's constants, checked for shape.
pub struct Plan<F> {
    m: Matrix<F>,
    crc: Vec<F>,
    psm: Matrix<F>,
    sparse: Vec<Sparse<F>>,
    half: usize,
    partial: usize,
}

impl<F: PrimeField + serde::Serialize + serde::de::DeserializeOwned> Plan<F> {
    /// The wide constants of nova-snark's RO constants (an error when the RO
    /// is not its Poseidon, or the constants are not shaped as expected).
    pub fn wide<E: Engine<Base = F>>(c: &ROConstantsCircuit<E>) -> Result<Self, SynthesisError> {
        let bad = |why: &str| SynthesisError::Unsatisfiable(format!("Poseidon constants: {why}"));
        let bytes = postcard::to_stdvec(c).map_err(|e| bad(&e.to_string()))?;
        let w: WrittenBoth<F> = postcard::from_bytes(&bytes).map_err(|e| bad(&e.to_string()))?;
        Self::written(w.wide)
    }

    /// The constants of one sponge (`PoseidonConstants<F, A>` of any width:
    /// zkstep's own short and wide hashes), checked for shape.
    pub fn of<C: serde::Serialize>(c: &C) -> Result<Self, SynthesisError> {
        let bad = |why: &str| SynthesisError::Unsatisfiable(format!("Poseidon constants: {why}"));
        let bytes = postcard::to_stdvec(c).map_err(|e| bad(&e.to_string()))?;
        let w: Written<F> = postcard::from_bytes(&bytes).map_err(|e| bad(&e.to_string()))?;
        Self::written(w)
    }

    fn written(w: Written<F>) -> Result<Self, SynthesisError> {
        let bad = |why: &str| SynthesisError::Unsatisfiable(format!("Poseidon constants: {why}"));
        let t = w.mds.m.len();
        let square = |m: &Matrix<F>| m.len() == t && m.iter().all(|r| r.len() == t);
        let half = w.rf / 2;
        let shaped = t >= 2
            && w.rf.is_multiple_of(2)
            && half >= 1
            && square(&w.mds.m)
            && square(&w.psm)
            && w.sm.len() == w.rp
            && w.sm.iter().all(|s| s.w_hat.len() == t && s.v_rest.len() == t - 1)
            && w.crc.len() == t * (w.rf) + w.rp;
        if !shaped {
            return Err(bad("not the shape of nova-snark's wide sponge"));
        }
        Ok(Plan { m: w.mds.m, crc: w.crc, psm: w.psm, sparse: w.sm, half, partial: w.rp })
    }
}

impl<F> Plan<F> {
    /// Lanes of the state.
    fn width(&self) -> usize {
        self.m.len()
    }
}

/// A lane: a linear combination and its value.
#[derive(Clone)]
struct Lane<F: PrimeField> {
    lc: LinearCombination<F>,
    val: Option<F>,
}

impl<F: PrimeField> Lane<F> {
    fn constant<CS: ConstraintSystem<F>>(c: F) -> Self {
        Lane { lc: LinearCombination::zero() + (c, CS::one()), val: Some(c) }
    }

    fn add_const<CS: ConstraintSystem<F>>(self, c: F) -> Self {
        Lane { lc: self.lc + (c, CS::one()), val: self.val.map(|v| v + c) }
    }

    fn add(self, o: &Lane<F>) -> Self {
        let val = self.val.zip(o.val).map(|(a, b)| a + b);
        Lane { lc: self.lc + &o.lc, val }
    }

    /// Σ kᵢ·lanesᵢ.
    fn combine<'a>(terms: impl Iterator<Item = (F, &'a Lane<F>)>) -> Self {
        let mut lc = LinearCombination::zero();
        let mut val = Some(F::ZERO);
        for (k, l) in terms {
            for (v, c) in l.lc.iter() {
                lc = lc + (*c * k, v);
            }
            val = val.zip(l.val).map(|(a, b)| a + k * b);
        }
        Lane { lc, val }
    }
}

/// One allocated value `v` with the constraint a·b = v.
fn product<F: PrimeField, CS: ConstraintSystem<F>>(
    cs: &mut CS,
    name: &str,
    a: &LinearCombination<F>,
    b: &LinearCombination<F>,
    v: Option<F>,
) -> Result<LinearCombination<F>, SynthesisError> {
    let n = AllocatedNum::alloc(cs.namespace(|| name.to_string()), || v.ok_or(SynthesisError::AssignmentMissing))?;
    cs.enforce(|| format!("{name} = a·b"), |lc| lc + a, |lc| lc + b, |lc| lc + n.get_variable());
    Ok(LinearCombination::zero() + n.get_variable())
}

/// x⁵ as a fresh variable. A combination of more than two terms is
/// allocated first (x = y: one constraint, its terms once); a shorter one
/// is used as it is (three terms at most twice beat an extra constraint);
/// a constant lane (the capacity's tag, a lane nothing was absorbed into)
/// stays a constant.
fn quintic<F: PrimeField, CS: ConstraintSystem<F>>(mut cs: CS, x: &Lane<F>) -> Result<Lane<F>, SynthesisError> {
    let one = LinearCombination::zero() + CS::one();
    if x.lc.iter().all(|(v, _)| v == CS::one()) {
        let c = x.lc.iter().map(|(_, c)| *c).sum::<F>();
        return Ok(Lane::constant::<CS>(c.square().square() * c));
    }
    let y = if x.lc.len() > 2 {
        product(&mut cs, "x", &x.lc, &one, x.val)?
    } else {
        x.lc.clone()
    };
    let v2 = x.val.map(|v| v.square());
    let x2 = product(&mut cs, "x2", &y, &y, v2)?;
    let x4 = product(&mut cs, "x4", &x2, &x2, v2.map(|v| v.square()))?;
    let v5 = v2.zip(x.val).map(|(v2, v)| v2.square() * v);
    let x5 = product(&mut cs, "x5", &x4, &y, v5)?;
    Ok(Lane { lc: x5, val: v5 })
}

/// nova-snark's `hash_optimized_static` on the lanes.
fn permute<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    p: &Plan<F>,
    lanes: Vec<Lane<F>>,
) -> Result<Vec<Lane<F>>, SynthesisError> {
    let t = p.width();
    let mut keys = p.crc.iter().copied();
    let mut next = || keys.next().ok_or_else(|| SynthesisError::Unsatisfiable("Poseidon constants ran out".into()));
    let mut s = lanes
        .into_iter()
        .map(|l| Ok(l.add_const::<CS>(next()?)))
        .collect::<Result<Vec<_>, SynthesisError>>()?;
    let rounds = 2 * p.half + p.partial;
    for round in 0..rounds {
        let mut cs = cs.namespace(|| format!("round {round}"));
        let full = round < p.half || round >= p.half + p.partial;
        let last = round + 1 == rounds;
        let boxed = if full { t } else { 1 };
        for (k, lane) in s.iter_mut().enumerate().take(boxed) {
            let mut out = quintic(cs.namespace(|| format!("s-box {k}")), lane)?;
            if !last {
                out = out.add_const::<CS>(next()?);
            }
            *lane = out;
        }
        s = if round + 1 == p.half {
            // vector × pre-sparse matrix
            (0..t).map(|j| Lane::combine((0..t).map(|i| (p.psm[i][j], &s[i])))).collect()
        } else if round >= p.half && round < p.half + p.partial {
            let m = &p.sparse[round - p.half];
            let first = Lane::combine(m.w_hat.iter().copied().zip(s.iter()));
            let mut n = vec![first];
            for j in 1..t {
                n.push(s[j].clone().add(&Lane::combine(std::iter::once((m.v_rest[j - 1], &s[0])))));
            }
            n
        } else {
            // MDS × vector
            (0..t).map(|i| Lane::combine(p.m[i].iter().copied().zip(s.iter()))).collect()
        };
    }
    if keys.next().is_some() {
        return Err(SynthesisError::Unsatisfiable("Poseidon constants left over".into()));
    }
    Ok(s)
}

/// The hash of `inputs` by nova-snark's wide sponge (absorb all, squeeze
/// one), as [`PoseidonRO`](nova_snark::provider::poseidon::PoseidonRO) in
/// `ROMode::Wide` computes it natively.
pub fn hash<F: PrimeField, CS: ConstraintSystem<F>>(
    cs: CS,
    p: &Plan<F>,
    inputs: &[AllocatedNum<F>],
) -> Result<AllocatedNum<F>, SynthesisError> {
    let lanes: Vec<_> = inputs
        .iter()
        .map(|x| (LinearCombination::zero() + x.get_variable(), x.get_value()))
        .collect();
    hash_combinations(cs, p, &lanes)
}

/// [`hash`] of linear combinations (each with its value): a combination
/// of more than two terms enters the matrices once, where its first S-box
/// allocates it.
pub fn hash_combinations<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    p: &Plan<F>,
    inputs: &[(LinearCombination<F>, Option<F>)],
) -> Result<AllocatedNum<F>, SynthesisError> {
    let t = p.width();
    let rate = t - 1;
    let n = u32::try_from(inputs.len())
        .ok()
        .filter(|n| n >> 31 == 0)
        .ok_or_else(|| SynthesisError::Unsatisfiable("too many values for one sponge".into()))?;
    // the capacity lane holds the IO pattern's tag: Absorb(n), Squeeze(1)
    let mut repr = F::Repr::default();
    repr.as_mut()[..16].copy_from_slice(&io_tag(n).to_le_bytes());
    let tag = Option::from(F::from_repr(repr))
        .ok_or_else(|| SynthesisError::Unsatisfiable("Poseidon tag out of range".into()))?;
    let mut s = vec![Lane::constant::<CS>(tag)];
    s.extend((1..t).map(|_| Lane::constant::<CS>(F::ZERO)));
    let mut pos = 0;
    let mut perms = 0;
    for x in inputs {
        if pos == rate {
            s = permute(cs.namespace(|| format!("permutation {perms}")), p, s)?;
            perms += 1;
            pos = 0;
        }
        s[1 + pos] = s[1 + pos].clone().add(&Lane { lc: x.0.clone(), val: x.1 });
        pos += 1;
    }
    // squeezing after an absorb always permutes first
    s = permute(cs.namespace(|| format!("permutation {perms}")), p, s)?;
    let out = &s[1];
    let h = AllocatedNum::alloc(cs.namespace(|| "hash"), || out.val.ok_or(SynthesisError::AssignmentMissing))?;
    cs.enforce(|| "hash = lane 1", |lc| lc + &out.lc, |lc| lc + CS::one(), |lc| lc + h.get_variable());
    Ok(h)
}

/// Which sponge circuit a hash uses: nova-snark's (the secondary, whose
/// size sits at 2¹³'s edge) or [`hash`] on a plan (the primary): the same
/// value either way.
#[derive(Clone, Copy)]
pub enum Hasher<'a, F> {
    /// nova-snark's `PoseidonROCircuit`.
    Nova,
    /// [`hash`] on these constants.
    Own(&'a Plan<F>),
}

/// A wide sponge being filled in a circuit over `E::Base`.
pub enum Sponge<'a, E: Engine> {
    /// nova-snark's circuit.
    Nova(E::ROCircuit),
    /// Ours: the values absorbed so far, hashed when squeezed.
    Own(&'a Plan<E::Base>, Vec<AllocatedNum<E::Base>>),
}

impl<'a, E: Engine> Sponge<'a, E> {
    /// An empty sponge of `h`'s kind on nova-snark's constants `c`.
    pub fn new(h: Hasher<'a, E::Base>, c: &ROConstantsCircuit<E>) -> Self {
        match h {
            Hasher::Nova => Sponge::Nova(crate::hash::ro_circuit::<E>(c)),
            Hasher::Own(p) => Sponge::Own(p, vec![]),
        }
    }

    /// Absorb one value.
    pub fn absorb(&mut self, x: &AllocatedNum<E::Base>) {
        match self {
            Sponge::Nova(ro) => ro.absorb(x),
            Sponge::Own(_, v) => v.push(x.clone()),
        }
    }

    /// Absorb a point as nova-snark's `AllocatedPoint::absorb_in_ro` does: x, y, its infinity flag.
    pub fn absorb_point(&mut self, p: &AllocatedPoint<E>) {
        self.absorb(&p.x);
        self.absorb(&p.y);
        self.absorb(&p.is_infinity);
    }

    /// The hash of everything absorbed (the whole field element).
    pub fn squeeze<CS: ConstraintSystem<E::Base>>(self, mut cs: CS) -> Result<AllocatedNum<E::Base>, SynthesisError> {
        match self {
            Sponge::Nova(mut ro) => ro.squeeze_scalar(cs.namespace(|| "squeeze")),
            Sponge::Own(p, v) => hash(cs.namespace(|| "sponge"), p, &v),
        }
    }
}

/// nova-snark's `IOPattern::value` for [Absorb(n), Squeeze(1)] and domain
/// separator 0: Σ xⁱ·opᵢ over u128 with x = −159 (wrapping), where an
/// absorb of nothing adds no term.
fn io_tag(n: u32) -> u128 {
    let x = 0u128.wrapping_sub(159);
    let ops: &[u32] = if n == 0 { &[1, 0] } else { &[n + (1 << 31), 1, 0] };
    let (mut xi, mut state) = (1u128, 0u128);
    for &a in ops {
        xi = xi.wrapping_mul(x);
        state = state.wrapping_add(xi.wrapping_mul(u128::from(a)));
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use nova_snark::provider::GrumpkinEngine;
    use nova_snark::traits::{ROConstants, ROMode, ROTrait};
    use rand::rngs::OsRng;

    type E = GrumpkinEngine; // its base field is BN254's scalar field, the primary's circuit field
    type F = <E as Engine>::Base;

    fn inputs(cs: &mut TestConstraintSystem<F>, n: usize) -> (Vec<F>, Vec<AllocatedNum<F>>) {
        let v: Vec<F> = (0..n).map(|_| F::random(OsRng)).collect();
        let a = v
            .iter()
            .enumerate()
            .map(|(i, x)| AllocatedNum::alloc(cs.namespace(|| format!("in {i}")), || Ok(*x)).unwrap())
            .collect();
        (v, a)
    }

    #[test]
    fn the_sponge_is_nova_snarks_hash_at_every_length() {
        let c = ROConstantsCircuit::<E>::default();
        let plan = Plan::wide::<E>(&c).unwrap();
        let native = ROConstants::<E>::default();
        // none, one value, the rate's edges, and past two and three permutations
        for n in [0, 1, 2, 23, 24, 25, 47, 48, 49, 66, 72, 73] {
            let mut cs = TestConstraintSystem::<F>::new();
            let (v, a) = inputs(&mut cs, n);
            let h = hash(cs.namespace(|| "ours"), &plan, &a).unwrap();
            let mut ro = <E as Engine>::RO::new_with_mode(native.clone(), ROMode::Wide);
            v.iter().for_each(|x| ro.absorb(*x));
            let want = ro.squeeze(F::NUM_BITS as usize, false);
            assert_eq!(h.get_value(), Some(want), "n = {n}");
            assert!(cs.is_satisfied(), "n = {n}: {:?}", cs.which_is_unsatisfied());
            // nova-snark's own circuit gives the same value
            let mut theirs = <E as Engine>::ROCircuit::new_with_mode(c.clone(), ROMode::Wide);
            a.iter().for_each(|x| theirs.absorb(x));
            let t = theirs.squeeze_scalar(cs.namespace(|| "theirs")).unwrap();
            assert_eq!(t.get_value(), Some(want));
        }
    }

    #[test]
    fn every_witness_value_of_the_sponge_is_bound() {
        // the hash of 30 values (two permutations) recorded as a shape and a
        // witness; each value changed alone, the S-boxes' inputs and powers,
        // the hash and the inputs themselves, leaves some constraint unmet —
        // with the values as variables (`hash`) and as combinations of three
        // terms (`hash_combinations`, as zkstep's gadgets hash packed records)
        use crate::cs::{ShapeRecorder, WitnessRecorder};
        let plan = Plan::wide::<E>(&ROConstantsCircuit::<E>::default()).unwrap();
        let v: Vec<F> = (0..31).map(|_| F::random(OsRng)).collect();
        fn synth<CS: ConstraintSystem<F>>(cs: &mut CS, plan: &Plan<F>, v: &[F], combos: bool) {
            // 31 values make 30 combinations of neighbours; 30 values as they are
            let v = if combos { v } else { &v[..30] };
            let a: Vec<_> = v
                .iter()
                .enumerate()
                .map(|(i, x)| AllocatedNum::alloc(cs.namespace(|| format!("in {i}")), || Ok(*x)).unwrap())
                .collect();
            if combos {
                let two = F::from(2u64);
                let lanes: Vec<_> = a
                    .windows(2)
                    .map(|w| {
                        let lc = LinearCombination::zero() + w[0].get_variable() + (two, w[1].get_variable()) + (F::ONE, CS::one());
                        let val = w[0].get_value().zip(w[1].get_value()).map(|(x, y)| x + two * y + F::ONE);
                        (lc, val)
                    })
                    .collect();
                hash_combinations(cs.namespace(|| "h"), plan, &lanes).unwrap();
            } else {
                hash(cs.namespace(|| "h"), plan, &a).unwrap();
            }
        }
        for combos in [false, true] {
            let mut shape = ShapeRecorder::<F>::new(1);
            synth(&mut shape, &plan, &v, combos);
            let (shape, layout) = shape.into_shape::<nova_snark::provider::Bn256EngineKZG>().unwrap();
            let mut wit = WitnessRecorder::<F>::new(1);
            synth(&mut wit, &plan, &v, combos);
            let w = wit.witness(&layout).unwrap();
            let z = |w: &[F]| [w, &[F::ONE][..], wit.public()].concat();
            let met = |w: &[F]| {
                let (a, b, c) = shape.multiply_vec(&z(w)).unwrap();
                (0..a.len()).all(|k| a[k] * b[k] == c[k])
            };
            assert!(met(&w), "combos {combos}");
            for k in 0..w.len() {
                let mut forged = w.clone();
                forged[k] += F::ONE;
                assert!(!met(&forged), "combos {combos}: witness value {k} of {} changed and every constraint still met", w.len());
            }
        }
    }

    #[test]
    fn fewer_non_zeros_than_nova_snarks_circuit() {
        let c = ROConstantsCircuit::<E>::default();
        let plan = Plan::wide::<E>(&c).unwrap();
        let count = |ours: bool| {
            let mut cs = crate::cs::ShapeRecorder::<F>::new(1);
            let a: Vec<_> = (0..47)
                .map(|i| AllocatedNum::alloc(cs.namespace(|| format!("in {i}")), || Ok(F::ONE)).unwrap())
                .collect();
            if ours {
                hash(cs.namespace(|| "h"), &plan, &a).unwrap();
            } else {
                let mut ro = <E as Engine>::ROCircuit::new_with_mode(c.clone(), ROMode::Wide);
                a.iter().for_each(|x| ro.absorb(x));
                ro.squeeze_scalar(cs.namespace(|| "h")).unwrap();
            }
            (cs.num_constraints(), cs.num_nonzeros())
        };
        let (ours, theirs) = (count(true), count(false));
        println!("47 values, two permutations: ours {ours:?}, nova-snark's {theirs:?}");
        assert!(ours.1 * 2 < theirs.1, "ours {ours:?}, theirs {theirs:?}");
    }
}
