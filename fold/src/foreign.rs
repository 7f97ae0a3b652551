//! Folding a value of the other curve's field: X' ≡ X + ρ·x (mod p), p
//! that field's modulus, checked as the integer identity
//! X + ρ·x = X' + k·p modulo this circuit's field and modulo 2¹³⁶.
//!
//! How both circuits fold the other side's public values (`gadgets`,
//! format 25; nova-snark's BigNat fold cost ≈ 2.3k constraints a value),
//! and the building block of design step 2 (docs/design/fresh-verify.md),
//! where a CycleFold-shaped secondary moves that fold into the circuit
//! that folds its instances.
//!
//! Why it binds. Values are below 2²⁵⁴ in limbs of 68, 68 and 118 bits,
//! ρ below 2¹³⁰ (68 + 62: the fold's r = 2¹²⁸ + 2K + 1), k below 2¹³¹
//! (68 + 63), each limb range-checked by bits (ρ's where it is allocated;
//! a running value's by the fold that made it, the hash binding it since).
//! Then X + ρ·x < 2³⁸⁵ and X' + k·p < 2³⁸⁶, both below
//! q·2¹³⁶ (q ≥ 2²⁵³ this field's modulus). The identity holds modulo q
//! (one constraint over the limbs' sums) and modulo 2¹³⁶ (the two low
//! limbs with carries c₀, c₁, whose ranges keep every term far below q/2,
//! so those two constraints hold over the integers); q is odd, so it holds
//! modulo q·2¹³⁶ and, both sides being in [0, q·2¹³⁶), as integers. X' is
//! congruent to X + ρ·x, not necessarily below p: a consumer compares
//! values modulo p (an honest prover writes the reduced one).

use ff::PrimeField;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{AllocatedBit, ConstraintSystem, LinearCombination, SynthesisError};
use num_bigint::BigUint;

/// Bits of the limbs: two of 68 and a top one of 118 (254 in all).
pub const LIMBS: [u32; 3] = [68, 68, 118];
/// Bits of ρ's two limbs (ρ < 2¹³⁰).
pub const RHO_BITS: [u32; 2] = [68, 62];
/// Bits of k's two limbs (k < 2¹³¹).
const K_BITS: [u32; 2] = [68, 63];

/// A value below 2²⁵⁴ as three range-checked limbs (little-endian).
#[derive(Clone)]
pub struct Foreign<F: PrimeField> {
    /// The limbs.
    pub limbs: [AllocatedNum<F>; 3],
}

impl<F: PrimeField> Foreign<F> {
    /// Allocate `v`'s limbs and range-check them.
    pub fn alloc<CS: ConstraintSystem<F>>(cs: CS, v: Option<&BigUint>) -> Result<Self, SynthesisError> {
        Self::alloc_with(cs, v, Some(LIMBS[2]))
    }

    /// Allocate `v`'s limbs unchecked: a value a hash binds to limbs that
    /// were range-checked where they were made.
    pub fn alloc_unchecked<CS: ConstraintSystem<F>>(cs: CS, v: Option<&BigUint>) -> Result<Self, SynthesisError> {
        Self::alloc_with(cs, v, None)
    }

    /// The limbs of `x`, a number of this field below 2^(136 + `top`):
    /// range-checked (the top limb to `top` bits) and summed to x. With
    /// 136 + top below this field's bits the limbs are x's, as integers.
    pub fn of_num<CS: ConstraintSystem<F>>(
        mut cs: CS,
        x: &AllocatedNum<F>,
        top: u32,
    ) -> Result<Self, SynthesisError> {
        if top > LIMBS[2] || 136 + top >= F::NUM_BITS {
            return Err(SynthesisError::Unsatisfiable(format!("a top limb of {top} bits")));
        }
        let v = x.get_value().map(|v| field_to_big(&v));
        let f = Self::alloc_with(cs.namespace(|| "limbs"), v.as_ref(), Some(top))?;
        cs.enforce(
            || "limbs sum to x",
            |_| f.native(),
            |lc| lc + CS::one(),
            |lc| lc + x.get_variable(),
        );
        Ok(f)
    }

    /// Allocate `v`'s limbs, range-checked, the top one also below
    /// `modulus`'s top limb (`modulus` ≥ 2¹³⁶): the value is then below the
    /// modulus and the limbs are its one representation there, which is
    /// what a hash of the limbs must see. A value whose top limb equals the
    /// modulus's (for a uniform value below a 254-bit modulus, probability
    /// below 2⁻¹¹⁷) is refused.
    pub fn alloc_canonical<CS: ConstraintSystem<F>>(
        cs: CS,
        v: Option<&BigUint>,
        modulus: &BigUint,
    ) -> Result<Self, SynthesisError> {
        Self::alloc_canonical_with(cs, v, modulus, true)
    }

    /// [`Foreign::alloc_canonical`], refusing a value at or past the
    /// modulus before its constraints only when `guard` (tests allocate one
    /// to see the constraints refuse it).
    pub(crate) fn alloc_canonical_with<CS: ConstraintSystem<F>>(
        mut cs: CS,
        v: Option<&BigUint>,
        modulus: &BigUint,
        guard: bool,
    ) -> Result<Self, SynthesisError> {
        let top = split(modulus, &LIMBS)[2].clone();
        if top == BigUint::default() || (guard && v.is_some_and(|v| (v >> 136u32) >= top)) {
            return Err(SynthesisError::Unsatisfiable(
                "a value whose top limb reaches the modulus's".into(),
            ));
        }
        let f = Self::alloc(cs.namespace(|| "limbs"), v)?;
        // top − 1 − l₂ in [0, 2¹¹⁸): with l₂ ≥ 0, l₂ < top
        let t = big_to_field::<F>(&(top - 1u8));
        let gap = LinearCombination::zero() + (t, CS::one()) - f.limbs[2].get_variable();
        range(cs.namespace(|| "below the modulus"), gap, f.limbs[2].get_value().map(|l| t - l), LIMBS[2], 0)?;
        Ok(f)
    }

    /// The value 0 (three references to one zero variable).
    pub fn zero(zero: &AllocatedNum<F>) -> Self {
        Foreign { limbs: [zero.clone(), zero.clone(), zero.clone()] }
    }

    fn alloc_with<CS: ConstraintSystem<F>>(
        mut cs: CS,
        v: Option<&BigUint>,
        top: Option<u32>,
    ) -> Result<Self, SynthesisError> {
        let checks = top.map(|t| [LIMBS[0], LIMBS[1], t]);
        let limbs = alloc_limbs(cs.namespace(|| "limbs"), v, &LIMBS, checks.as_ref().map(|c| &c[..]))?;
        let limbs: [AllocatedNum<F>; 3] = limbs
            .try_into()
            .map_err(|_| SynthesisError::Unsatisfiable("three limbs".into()))?;
        Ok(Foreign { limbs })
    }

    /// `a` if `cond`, else `b`, limb by limb.
    pub fn select<CS: ConstraintSystem<F>>(
        mut cs: CS,
        a: &Self,
        b: &Self,
        cond: &nova_snark::frontend::Boolean,
    ) -> Result<Self, SynthesisError> {
        let mut limbs = Vec::with_capacity(3);
        for i in 0..3 {
            limbs.push(nova_snark::gadgets::utils::conditionally_select(
                cs.namespace(|| format!("limb {i}")),
                &a.limbs[i],
                &b.limbs[i],
                cond,
            )?);
        }
        let limbs: [AllocatedNum<F>; 3] = limbs
            .try_into()
            .map_err(|_| SynthesisError::Unsatisfiable("three limbs".into()))?;
        Ok(Foreign { limbs })
    }

    /// The value, if assigned.
    pub fn value(&self) -> Option<BigUint> {
        let mut v = BigUint::default();
        let mut shift = 0;
        for (l, bits) in self.limbs.iter().zip(LIMBS) {
            v += field_to_big(&l.get_value()?) << shift;
            shift += bits;
        }
        Some(v)
    }

    /// Σ limbᵢ·2^(68i) as a linear combination (the value modulo this field).
    fn native(&self) -> LinearCombination<F> {
        let mut lc = LinearCombination::zero();
        let mut shift = 0;
        for (l, bits) in self.limbs.iter().zip(LIMBS) {
            lc = lc + (pow2::<F>(shift), l.get_variable());
            shift += bits;
        }
        lc
    }
}

/// ρ's limbs (68 and 62 bits), range-checked.
pub fn alloc_rho<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    rho: Option<&BigUint>,
) -> Result<[AllocatedNum<F>; 2], SynthesisError> {
    let out = alloc_limbs(cs.namespace(|| "rho"), rho, &RHO_BITS, Some(&RHO_BITS))?;
    out.try_into().map_err(|_| SynthesisError::Unsatisfiable("two limbs".into()))
}

/// `v` cut into limbs of `bits` (the last takes the rest), each allocated
/// and, where `checks` is given, range-checked to its bits there.
fn alloc_limbs<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    v: Option<&BigUint>,
    bits: &[u32],
    checks: Option<&[u32]>,
) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
    let parts = v.map(|v| split(v, bits));
    let mut out = Vec::with_capacity(bits.len());
    for i in 0..bits.len() {
        let l = AllocatedNum::alloc(cs.namespace(|| format!("limb {i}")), || {
            parts.as_ref().map(|p| big_to_field(&p[i])).ok_or(SynthesisError::AssignmentMissing)
        })?;
        if let Some(n) = checks.map(|c| c[i]) {
            range(cs.namespace(|| format!("limb {i} range")), lc_of(&l), l.get_value(), n, 0)?;
        }
        out.push(l);
    }
    Ok(out)
}

/// X' = X + ρ·x mod p, X' reduced; `rho` is ρ's limbs, which the caller
/// has range-checked to 68 and 62 bits ([`alloc_rho`], or sums of bits).
pub fn fold<F: PrimeField, CS: ConstraintSystem<F>>(
    cs: CS,
    p: &BigUint,
    run: &Foreign<F>,
    x: &Foreign<F>,
    rho: &[AllocatedNum<F>; 2],
) -> Result<Foreign<F>, SynthesisError> {
    let out = match (run.value(), x.value(), rho_value(rho)) {
        (Some(a), Some(b), Some(r)) => {
            let s = a + r * b;
            Some((&s % p, &s / p))
        }
        _ => None,
    };
    fold_with(cs, p, run, x, rho, out)
}

/// [`fold`] with X' and k given (tests give wrong ones).
pub(crate) fn fold_with<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    p: &BigUint,
    run: &Foreign<F>,
    x: &Foreign<F>,
    rho: &[AllocatedNum<F>; 2],
    out: Option<(BigUint, BigUint)>,
) -> Result<Foreign<F>, SynthesisError> {
    if F::NUM_BITS < 254 || p.bits() > 254 {
        return Err(SynthesisError::Unsatisfiable(
            "a foreign fold needs a field of ≥ 254 bits and a modulus below 2²⁵⁴".into(),
        ));
    }
    let next = Foreign::alloc(cs.namespace(|| "X'"), out.as_ref().map(|o| &o.0))?;
    let kp = out.as_ref().map(|o| split(&o.1, &K_BITS));
    let k = (0..2)
        .map(|i| {
            AllocatedNum::alloc(cs.namespace(|| format!("k{i}")), || {
                kp.as_ref().map(|k| big_to_field(&k[i])).ok_or(SynthesisError::AssignmentMissing)
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    range(cs.namespace(|| "k0 range"), lc_of(&k[0]), k[0].get_value(), K_BITS[0], 0)?;
    range(cs.namespace(|| "k1 range"), lc_of(&k[1]), k[1].get_value(), K_BITS[1], 0)?;
    let pl = split(p, &LIMBS);
    let (p0, p1) = (big_to_field::<F>(&pl[0]), big_to_field::<F>(&pl[1]));
    let p_mod = big_to_field::<F>(&(p % field_modulus::<F>()));
    let two68 = pow2::<F>(68);
    let (xr, xi, xo) = (&run.limbs, &x.limbs, &next.limbs);

    // modulo this field: ρ·x = X' + k·p − X
    let rho_lc = lc_of(&rho[0]) + (two68, rho[1].get_variable());
    let k_lc = lc_of(&k[0]) + (two68, k[1].get_variable());
    cs.enforce(
        || "mod q",
        |_| rho_lc.clone(),
        |_| x.native(),
        |_| next.native() + &scaled(&k_lc, p_mod) - &run.native(),
    );

    // modulo 2¹³⁶, the low limb: ρ₀·x₀ = X'₀ + k₀·p₀ − X₀ + c₀·2⁶⁸
    let val = |a: &AllocatedNum<F>| a.get_value().map(|v| field_to_big(&v));
    let signed = |pos: Option<BigUint>, neg: Option<BigUint>| -> Option<(bool, BigUint)> {
        let (pos, neg) = (pos?, neg?);
        Some(if pos >= neg { (false, pos - neg) } else { (true, neg - pos) })
    };
    let mul = |a: Option<BigUint>, b: Option<BigUint>| Some(a? * b?);
    let add = |a: Option<BigUint>, b: Option<BigUint>| Some(a? + b?);
    let low0 = signed(
        add(val(&xr[0]), mul(val(&rho[0]), val(&xi[0]))),
        add(val(&xo[0]), mul(val(&k[0]), Some(pl[0].clone()))),
    );
    let c0v = low0.map(|(neg, m)| (neg, m >> 68));
    let c0 = alloc_signed(cs.namespace(|| "c0"), c0v.clone())?;
    range(cs.namespace(|| "c0 range"), lc_of(&c0), c0.get_value(), 70, 69)?;
    cs.enforce(
        || "mod 2^68",
        |lc| lc + rho[0].get_variable(),
        |lc| lc + xi[0].get_variable(),
        |lc| lc + xo[0].get_variable() + (p0, k[0].get_variable()) - xr[0].get_variable() + (two68, c0.get_variable()),
    );

    // the next limb: ρ₀·x₁ = X'₁ + k₀·p₁ + k₁·p₀ − X₁ − ρ₁·x₀ − c₀ + c₁·2⁶⁸
    let t = rho[1].mul(cs.namespace(|| "rho1 x0"), &xi[0])?;
    let pos1 = add(add(val(&xr[1]), mul(val(&rho[0]), val(&xi[1]))), val(&t));
    let neg1 = add(
        add(val(&xo[1]), mul(val(&k[0]), Some(pl[1].clone()))),
        mul(val(&k[1]), Some(pl[0].clone())),
    );
    let c1v = match (pos1, neg1, c0v) {
        (Some(pos), Some(neg), Some((c0neg, c0m))) => {
            let (pos, neg) = if c0neg { (pos, neg + c0m) } else { (pos + c0m, neg) };
            signed(Some(pos), Some(neg)).map(|(neg, m)| (neg, m >> 68))
        }
        _ => None,
    };
    let c1 = alloc_signed(cs.namespace(|| "c1"), c1v)?;
    range(cs.namespace(|| "c1 range"), lc_of(&c1), c1.get_value(), 72, 71)?;
    cs.enforce(
        || "mod 2^136",
        |lc| lc + rho[0].get_variable(),
        |lc| lc + xi[1].get_variable(),
        |lc| {
            lc + xo[1].get_variable() + (p1, k[0].get_variable()) + (p0, k[1].get_variable())
                - xr[1].get_variable()
                - t.get_variable()
                - c0.get_variable()
                + (two68, c1.get_variable())
        },
    );
    Ok(next)
}

/// The native reference: (X + ρ·x) mod p.
pub fn fold_native(p: &BigUint, run: &BigUint, x: &BigUint, rho: &BigUint) -> BigUint {
    (run + rho * x) % p
}

/// `v`'s limbs of [`LIMBS`] bits (v below 2²⁵⁴), as the circuit holds them.
pub fn limbs_of(v: &BigUint) -> Vec<BigUint> {
    split(v, &LIMBS)
}

fn rho_value<F: PrimeField>(rho: &[AllocatedNum<F>; 2]) -> Option<BigUint> {
    Some(field_to_big(&rho[0].get_value()?) + (field_to_big(&rho[1].get_value()?) << 68))
}

/// v + offset < 2^n, by n bits (offset makes a signed value's range [−offset, 2^n − offset)).
fn range<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    v: LinearCombination<F>,
    value: Option<F>,
    n: u32,
    offset: u32,
) -> Result<(), SynthesisError> {
    let shifted = value.map(|x| field_to_big(&(x + if offset > 0 { pow2::<F>(offset) } else { F::ZERO })));
    let mut sum = LinearCombination::zero();
    for i in 0..n {
        let b = AllocatedBit::alloc(cs.namespace(|| format!("b{i}")), shifted.as_ref().map(|s| s.bit(u64::from(i))))?;
        sum = sum + (pow2::<F>(i), b.get_variable());
    }
    let offset = if offset > 0 { pow2::<F>(offset) } else { F::ZERO };
    cs.enforce(|| "bits", |lc| lc + &sum, |lc| lc + CS::one(), |lc| lc + &v + (offset, CS::one()));
    Ok(())
}

/// A signed integer (sign, magnitude) as a field element.
fn alloc_signed<F: PrimeField, CS: ConstraintSystem<F>>(
    cs: CS,
    v: Option<(bool, BigUint)>,
) -> Result<AllocatedNum<F>, SynthesisError> {
    AllocatedNum::alloc(cs, || {
        let (neg, m) = v.ok_or(SynthesisError::AssignmentMissing)?;
        let f = big_to_field::<F>(&m);
        Ok(if neg { -f } else { f })
    })
}

fn lc_of<F: PrimeField>(a: &AllocatedNum<F>) -> LinearCombination<F> {
    LinearCombination::zero() + a.get_variable()
}

fn scaled<F: PrimeField>(lc: &LinearCombination<F>, s: F) -> LinearCombination<F> {
    LinearCombination::zero() + (s, lc)
}

fn pow2<F: PrimeField>(n: u32) -> F {
    F::from(2).pow_vartime([u64::from(n)])
}

/// `v` cut into limbs of the given bits (the last takes the rest).
fn split(v: &BigUint, bits: &[u32]) -> Vec<BigUint> {
    let mut rest = v.clone();
    let mut out = Vec::with_capacity(bits.len());
    for (i, b) in bits.iter().enumerate() {
        if i + 1 == bits.len() {
            out.push(rest.clone());
        } else {
            out.push(&rest & ((BigUint::from(1u8) << *b) - 1u8));
            rest >>= *b;
        }
    }
    out
}

/// A field element's integer (its little-endian representation, as
/// halo2curves' fields write it).
pub fn field_to_big<F: PrimeField>(f: &F) -> BigUint {
    BigUint::from_bytes_le(f.to_repr().as_ref())
}

/// An integer below the field's modulus as a field element.
pub fn big_to_field<F: PrimeField>(v: &BigUint) -> F {
    v.to_u64_digits().iter().rev().fold(F::ZERO, |acc, d| acc * pow2::<F>(64) + F::from(*d))
}

/// The field's modulus, as −1 + 1.
fn field_modulus<F: PrimeField>() -> BigUint {
    field_to_big(&-F::ONE) + 1u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use nova_snark::provider::bn256_grumpkin::bn256::{Base as Fq, Scalar as Fr};
    use rand::rngs::StdRng;
    use rand::{RngCore, SeedableRng};

    type Cs = TestConstraintSystem<Fq>;

    /// Fr's modulus: the other field, as a secondary over Fq folds it.
    fn p() -> BigUint {
        field_modulus::<Fr>()
    }

    fn random(rng: &mut StdRng) -> BigUint {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        BigUint::from_bytes_le(&b) % p()
    }

    struct Case {
        run: BigUint,
        x: BigUint,
        rho: BigUint,
    }

    fn case(seed: u64) -> Case {
        let mut rng = StdRng::seed_from_u64(seed);
        // ρ below 2¹³⁰
        let rho = (BigUint::from(rng.next_u64() & 3) << 128) + (BigUint::from(rng.next_u64()) << 64) + rng.next_u64();
        Case { run: random(&mut rng), x: random(&mut rng), rho }
    }

    /// The circuit on a case, X' and k given or honest; whether it is satisfied, and X'.
    fn run(c: &Case, out: Option<(BigUint, BigUint)>) -> (bool, Option<BigUint>, usize) {
        let mut cs = Cs::new();
        let a = Foreign::alloc(cs.namespace(|| "X"), Some(&c.run)).unwrap();
        let b = Foreign::alloc(cs.namespace(|| "x"), Some(&c.x)).unwrap();
        let rho = alloc_rho(cs.namespace(|| "rho"), Some(&c.rho)).unwrap();
        let before = cs.num_constraints();
        let next = match out {
            None => fold(cs.namespace(|| "fold"), &p(), &a, &b, &rho),
            Some(o) => fold_with(cs.namespace(|| "fold"), &p(), &a, &b, &rho, Some(o)),
        }
        .unwrap();
        (cs.is_satisfied(), next.value(), cs.num_constraints() - before)
    }

    fn honest(c: &Case) -> (BigUint, BigUint) {
        let s = &c.run + &c.rho * &c.x;
        (&s % p(), &s / p())
    }

    #[test]
    fn folds_as_the_native_reference_does() {
        for seed in 0..8 {
            let c = case(seed);
            let (ok, v, n) = run(&c, None);
            assert!(ok, "seed {seed}");
            assert_eq!(v, Some(fold_native(&p(), &c.run, &c.x, &c.rho)));
            // its cost: X', k and the carries' bits, a product, three
            // identities (ρ's limbs, 130 bits, and the incoming value's,
            // 257, are allocated before: once a fold, once a value)
            assert_eq!(n, 538, "constraints of one fold");
        }
        // the extremes: ρ = 2¹³⁰ − 1, values p − 1
        let c = Case { run: p() - 1u8, x: p() - 1u8, rho: (BigUint::from(1u8) << 130) - 1u8 };
        assert!(run(&c, None).0);
    }

    #[test]
    fn a_wrong_fold_is_unsatisfied() {
        // X + ρ·x = p + 1: X' = 1 and k = 1, small enough for every edit below
        let small = Case { run: p() - 1u8, x: BigUint::from(1u8), rho: BigUint::from(2u8) };
        for c in [case(42), small] {
            let (x1, k) = honest(&c);
            let q = field_modulus::<Fq>();
            let fits = |v: &BigUint| *v < BigUint::from(1u8) << 254;
            let wrong = |o: (BigUint, BigUint), what: &str| assert!(!run(&c, Some(o)).0, "{what}: satisfied");
            wrong((&x1 + 1u8, k.clone()), "X' off by one");
            wrong((x1.clone(), &k + 1u8), "k off by one");
            wrong((x1.clone(), &k + (BigUint::from(1u8) << 131)), "k past its 131 bits");
            // congruent modulo this field, not modulo 2¹³⁶
            if fits(&(&x1 + &q)) {
                wrong((&x1 + &q, k.clone()), "X' + q");
            }
            // X' + p with k − 1 is the same value modulo p: accepted, as the header says
            if fits(&(&x1 + p())) && k > BigUint::default() {
                assert!(run(&c, Some((&x1 + p(), &k - 1u8))).0);
                assert!(!run(&c, Some((&x1 + p(), k.clone()))).0, "X' + p with the same k");
            }
        }
    }

    #[test]
    fn limbs_out_of_range_are_unsatisfied() {
        let mut cs = Cs::new();
        let v = BigUint::from(1u8) << 68;
        // a first limb of 2⁶⁸ (one past its range), assigned directly
        let l = AllocatedNum::alloc(cs.namespace(|| "l"), || Ok(big_to_field::<Fq>(&v))).unwrap();
        range(cs.namespace(|| "range"), lc_of(&l), l.get_value(), 68, 0).unwrap();
        assert!(!cs.is_satisfied());
        let mut cs = Cs::new();
        let l = AllocatedNum::alloc(cs.namespace(|| "l"), || Ok(big_to_field::<Fq>(&(v - 1u8)))).unwrap();
        range(cs.namespace(|| "range"), lc_of(&l), l.get_value(), 68, 0).unwrap();
        assert!(cs.is_satisfied());
    }

    #[test]
    fn a_number_below_2_250_has_only_its_own_limbs() {
        // of_num with a top limb of 114 bits: x's limbs are accepted, the
        // limbs of x + q (the same number of the field) are not
        let q = field_modulus::<Fq>();
        let mut rng = StdRng::seed_from_u64(9);
        for x in [random(&mut rng) >> 4u32, BigUint::default(), (BigUint::from(1u8) << 250) - 1u8] {
            let mut cs = Cs::new();
            let n = AllocatedNum::alloc(cs.namespace(|| "x"), || Ok(big_to_field::<Fq>(&x))).unwrap();
            let f = Foreign::of_num(cs.namespace(|| "of"), &n, 114).unwrap();
            assert!(cs.is_satisfied());
            assert_eq!(f.value(), Some(x.clone()));
            // the other representative, written straight into the limbs
            let other = limbs_of(&(&x + &q));
            let mut cs = Cs::new();
            let n = AllocatedNum::alloc(cs.namespace(|| "x"), || Ok(big_to_field::<Fq>(&x))).unwrap();
            let f = Foreign::alloc_unchecked(cs.namespace(|| "limbs"), Some(&(&x + &q))).unwrap();
            for (i, l) in f.limbs.iter().enumerate() {
                let n = if i == 2 { 114 } else { LIMBS[i] };
                range(cs.namespace(|| format!("r{i}")), lc_of(l), l.get_value(), n, 0).unwrap();
            }
            cs.enforce(|| "sum", |_| f.native(), |lc| lc + Cs::one(), |lc| lc + n.get_variable());
            assert_eq!(other.len(), 3);
            assert!(!cs.is_satisfied(), "x + q's limbs accepted for x");
        }
        // a top limb wider than the field allows is refused
        let mut cs = Cs::new();
        let n = AllocatedNum::alloc(cs.namespace(|| "x"), || Ok(Fq::ONE)).unwrap();
        assert!(Foreign::of_num(cs.namespace(|| "wide"), &n, 118).is_err());
    }

    #[test]
    fn a_selection_takes_every_limb_from_one_side() {
        use nova_snark::frontend::{AllocatedBit, Boolean};
        let mut rng = StdRng::seed_from_u64(10);
        let (a, b) = (random(&mut rng), random(&mut rng));
        for c in [true, false] {
            let mut cs = Cs::new();
            let fa = Foreign::alloc(cs.namespace(|| "a"), Some(&a)).unwrap();
            let fb = Foreign::alloc(cs.namespace(|| "b"), Some(&b)).unwrap();
            let bit = Boolean::from(AllocatedBit::alloc(cs.namespace(|| "c"), Some(c)).unwrap());
            let s = Foreign::select(cs.namespace(|| "s"), &fa, &fb, &bit).unwrap();
            assert!(cs.is_satisfied());
            assert_eq!(s.value(), Some(if c { a.clone() } else { b.clone() }));
        }
    }
}
