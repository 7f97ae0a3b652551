//! Range checks behind one interface, [`RangeCheck`], so that how a range is
//! checked can change without touching a caller: every gadget and circuit
//! component takes `&mut impl RangeCheck` and asks for `bits`, `signed` or
//! `below`; the fold calls [`RangeCheck::finish`] once after its last check
//! (where a lookup argument would add its table and running sums).
//!
//! Today's implementation is [`BitDecomposition`]: `e ∈ [0, 2ⁿ)` costs n + 1
//! constraints (n booleans and one recomposition), checked on the spot. R1CS
//! in Nova has no lookups, so this is the price of every range check; the
//! circuits are designed to need as few as possible. Native twin:
//! `ValueRange::contains`.

use crate::expr::{alloc, var, Expr, Fr};
use crate::Result;
use ff::{Field, PrimeField, PrimeFieldBits};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::ConstraintSystem;

/// Given the little-endian bits of e (booleans), enforce `e ≤ c`
/// (`c < 2^bits.len()`, its top bit set): see [`BitDecomposition::below`].
pub fn below_constant<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    bits: &[AllocatedNum<Fr>],
    c: u128,
) -> Result<()> {
    let n = bits.len();
    let bit = |i: usize| (c >> i) & 1 == 1;
    // eq: None while it is the constant 1 (the prefix above is empty or all equal)
    let mut eq: Option<Expr> = None;
    let mut i = n;
    while i > 0 {
        // the run of equal constant bits [j, i)
        let one = bit(i - 1);
        let mut j = i - 1;
        while j > 0 && bit(j - 1) == one {
            j -= 1;
        }
        if one {
            if j == 0 {
                break; // the last run of ones: e ≤ c whatever these bits are
            }
            for k in (j..i).rev() {
                eq = Some(match eq {
                    None => var(&bits[k]),
                    Some(p) => var(&crate::expr::mul(
                        cs.namespace(|| format!("eq{k}")),
                        &p,
                        &var(&bits[k]),
                    )?),
                });
            }
        } else {
            let sum = (j..i).fold(crate::expr::zero(), |s, k| {
                crate::expr::add(&s, &var(&bits[k]))
            });
            let p = eq
                .clone()
                .unwrap_or_else(|| crate::expr::cst::<CS>(Fr::ONE));
            crate::expr::enforce_mul(
                cs.namespace(|| format!("zero{j}")),
                &p,
                &sum,
                &crate::expr::zero(),
            );
        }
        i = j;
    }
    Ok(())
}

/// Enforce `0 ≤ e < 2^bits` (bits ≤ 250); returns the bits, least
/// significant first. If the witness value is outside, the recomposition
/// constraint `…/recompose` is unsatisfied.
pub fn range_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    e: &Expr,
    bits: u32,
) -> Result<Vec<AllocatedNum<Fr>>> {
    assert!(
        bits > 0 && bits <= 250,
        "range_bits: width {bits} out of 1..=250"
    );
    let le = e.get_value().map(|v| v.to_le_bits());
    let mut acc = nova_snark::frontend::LinearCombination::zero();
    let mut coeff = Fr::ONE;
    let mut out = Vec::with_capacity(bits as usize);
    for i in 0..bits as usize {
        let bit_val = le.as_ref().map(|b| if b[i] { Fr::ONE } else { Fr::ZERO });
        let b = alloc(cs.namespace(|| format!("bit{i}")), bit_val)?;
        cs.enforce(
            || format!("bool{i}"),
            |lc| lc + b.get_variable(),
            |lc| lc + CS::one() - b.get_variable(),
            |lc| lc,
        );
        acc = acc + (coeff, b.get_variable());
        coeff = coeff.double();
        out.push(b);
    }
    cs.enforce(
        || "recompose",
        |_| acc,
        |lc| lc + CS::one(),
        |_| e.lc(Fr::ONE),
    );
    Ok(out)
}

/// How a circuit checks ranges. Namespaces the implementation creates under
/// the `cs` it is given are part of the soundness tests' vocabulary:
/// `bits` and `signed` fail at `…/recompose`, `below` at `…/r_ge_0/…` (e < 0)
/// or `…/r_lt_d/…` (e ≥ bound).
pub trait RangeCheck {
    /// Enforce `0 ≤ e < 2^bits`.
    fn bits<CS: ConstraintSystem<Fr>>(&mut self, cs: CS, e: &Expr, bits: u32) -> Result<()>;

    /// Enforce `−2^(bits−1) ≤ e < 2^(bits−1)` (the declared range of a stored value).
    fn signed<CS: ConstraintSystem<Fr>>(&mut self, cs: CS, e: &Expr, bits: u32) -> Result<()> {
        let shifted = e.clone().add(&crate::expr::cst::<CS>(pow2(bits - 1)));
        self.bits(cs, &shifted, bits)
    }

    /// The width a pair of checks that bound a value from both sides should
    /// use, at least `bits`: the cheapest this range check offers. Both
    /// `a ∈ [0, 2^w)` and `c − a ∈ [0, 2^w)` hold, for a `c < 2^bits`, iff
    /// `0 ≤ a ≤ c`, whatever w with `2^(w+1) < p` (neither side can wrap in
    /// the field), so a wider w loses nothing and may cost less (a lookup's
    /// top limb is then full and needs no second query).
    fn two_sided_width(&self, bits: u32) -> u32 {
        bits
    }

    /// Enforce `0 ≤ e < bound` with both sides checked: a single
    /// ⌈log₂ bound⌉-bit check would admit `e ∈ [bound, 2^⌈log₂ bound⌉)`.
    fn below<CS: ConstraintSystem<Fr>>(&mut self, mut cs: CS, e: &Expr, bound: u128) -> Result<()> {
        if bound == 1 {
            // [0, 1): e is 0, nothing to look up (a remainder of c·x by a d
            // that divides c, as an integer learning rate at scale S makes)
            crate::expr::enforce_eq(cs.namespace(|| "r_lt_d"), e, &crate::expr::zero());
            return Ok(());
        }
        let nb = self.two_sided_width(bit_len(bound - 1));
        self.bits(cs.namespace(|| "r_ge_0"), e, nb)?;
        let upper = crate::expr::sub(&crate::expr::cst::<CS>(Fr::from_u128(bound - 1)), e);
        self.bits(cs.namespace(|| "r_lt_d"), &upper, nb)
    }

    /// Close the fold's range checks (after every other check of the fold).
    fn finish<CS: ConstraintSystem<Fr>>(self, cs: CS) -> Result<()>;
}

/// Range checks by bit decomposition, each enforced where it is asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct BitDecomposition;

impl RangeCheck for BitDecomposition {
    fn bits<CS: ConstraintSystem<Fr>>(&mut self, cs: CS, e: &Expr, bits: u32) -> Result<()> {
        range_bits(cs, e, bits).map(|_| ())
    }

    /// `0 ≤ e < bound` from one decomposition: e's n bits (`…/r_ge_0`), then
    /// `e ≤ bound − 1` by comparing them with the constant's bits, most
    /// significant first (`…/r_lt_d`): `eq` is 1 while e's bits above agree
    /// with the constant's; over a run of ones it is multiplied by e's bits
    /// (one constraint a bit), and over a run of zeros `eq·Σ bits = 0` (one
    /// constraint a run) forbids a 1 where the constant has a 0 under an equal
    /// prefix, which is exactly `e > bound − 1`. The last run of ones needs
    /// nothing. For S² this is 33 constraints instead of a second 60-bit
    /// decomposition (61), for S 17 instead of 31.
    fn below<CS: ConstraintSystem<Fr>>(&mut self, mut cs: CS, e: &Expr, bound: u128) -> Result<()> {
        let c = bound - 1;
        let nb = bit_len(c);
        if nb == 0 {
            // bound 1: e = 0
            let b = range_bits(cs.namespace(|| "r_ge_0"), e, 1)?;
            crate::expr::enforce_eq(cs.namespace(|| "r_lt_d"), &var(&b[0]), &crate::expr::zero());
            return Ok(());
        }
        let bits = range_bits(cs.namespace(|| "r_ge_0"), e, nb)?;
        below_constant(cs.namespace(|| "r_lt_d"), &bits, c)
    }

    fn finish<CS: ConstraintSystem<Fr>>(self, _cs: CS) -> Result<()> {
        Ok(())
    }
}

/// `2^k` in the field (from a table for k < 256: every limb asks).
pub fn pow2(k: u32) -> Fr {
    static TABLE: std::sync::OnceLock<Vec<Fr>> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        std::iter::successors(Some(Fr::ONE), |p| Some(p.double()))
            .take(256)
            .collect()
    });
    t.get(k as usize)
        .copied()
        .unwrap_or_else(|| Fr::from(2u64).pow_vartime([k as u64]))
}

/// Number of bits needed to write `x` (0 for 0).
pub fn bit_len(x: u128) -> u32 {
    128 - x.leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::var;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use zkstep_core::fixed::ValueRange;
    use zkstep_core::poseidon::fr_from_i128;

    fn check_signed(v: i128, bits: u32) -> (bool, Option<String>) {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let a = alloc(cs.namespace(|| "a"), Some(fr_from_i128(v))).unwrap();
        BitDecomposition
            .signed(cs.namespace(|| "rc"), &var(&a), bits)
            .unwrap();
        (
            cs.is_satisfied(),
            cs.which_is_unsatisfied().map(String::from),
        )
    }

    #[test]
    fn signed_range_matches_native_at_the_edges() {
        for bits in [16u32, 32, 64] {
            let r = ValueRange { bits };
            for v in [
                r.min(),
                r.min() + 1,
                -1,
                0,
                1,
                r.max() - 1,
                r.max(),
                r.max() + 1,
                r.min() - 1,
                1i128 << 100,
            ] {
                let (ok, which) = check_signed(v, bits);
                assert_eq!(ok, r.contains(v), "bits {bits} v {v}");
                if !ok {
                    assert!(which.unwrap().contains("rc/recompose"));
                }
            }
        }
    }

    fn check_below(v: i128, bound: u128) -> (bool, Option<String>, usize) {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let a = alloc(cs.namespace(|| "a"), Some(fr_from_i128(v))).unwrap();
        let before = cs.num_constraints();
        BitDecomposition
            .below(cs.namespace(|| "rem"), &var(&a), bound)
            .unwrap();
        (
            cs.is_satisfied(),
            cs.which_is_unsatisfied().map(String::from),
            cs.num_constraints() - before,
        )
    }

    #[test]
    fn below_agrees_with_native_exhaustively_on_small_bounds() {
        for bound in 1u128..=40 {
            for v in -3i128..50 {
                let (ok, which, _) = check_below(v, bound);
                assert_eq!(ok, 0 <= v && (v as u128) < bound, "v {v} bound {bound}");
                // beyond n bits the decomposition fails; below, the comparator
                let n = bit_len(bound - 1).max(1);
                if !ok && v >= 0 {
                    let at = if v < 1 << n { "r_lt_d" } else { "r_ge_0" };
                    assert!(which.unwrap().contains(at), "v {v} bound {bound}");
                }
            }
        }
    }

    #[test]
    fn below_the_scales_rejects_one_past_and_costs_less_than_two_decompositions() {
        use zkstep_core::fixed::{SCALE_I128, SCALE_SQ};
        for (d, cost) in [(SCALE_I128, 31 + 17), (SCALE_SQ, 61 + 33)] {
            let nb = bit_len(d as u128 - 1);
            for v in [0, 1, d / 2, d - 1] {
                let (ok, _, c) = check_below(v, d as u128);
                assert!(ok, "{v} < {d}");
                assert_eq!(c, cost);
            }
            for v in [d, d + 17, (1 << nb) - 1] {
                let (ok, which, _) = check_below(v, d as u128);
                assert!(!ok && which.unwrap().contains("r_lt_d"), "{v} ≥ {d}");
            }
            let (ok, which, _) = check_below(-1, d as u128);
            assert!(!ok && which.unwrap().contains("r_ge_0"));
        }
    }

    #[test]
    fn cost_is_bits_plus_one() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let a = alloc(cs.namespace(|| "a"), Some(Fr::from(5u64))).unwrap();
        range_bits(cs.namespace(|| "rc"), &var(&a), 30).unwrap();
        assert_eq!(cs.num_constraints(), 31);
    }
}
