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

use crate::expr::{alloc, Expr, Fr};
use crate::Result;
use ff::{Field, PrimeField, PrimeFieldBits};
use nova_snark::frontend::ConstraintSystem;

/// Enforce `0 ≤ e < 2^bits` (bits ≤ 250). If the witness value is outside,
/// the recomposition constraint `…/recompose` is unsatisfied.
pub fn range_bits<CS: ConstraintSystem<Fr>>(mut cs: CS, e: &Expr, bits: u32) -> Result<()> {
    assert!(
        bits > 0 && bits <= 250,
        "range_bits: width {bits} out of 1..=250"
    );
    let le = e.get_value().map(|v| v.to_le_bits());
    let mut acc = nova_snark::frontend::LinearCombination::zero();
    let mut coeff = Fr::ONE;
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
    }
    cs.enforce(
        || "recompose",
        |_| acc,
        |lc| lc + CS::one(),
        |_| e.lc(Fr::ONE),
    );
    Ok(())
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

    /// Enforce `0 ≤ e < bound` with both sides checked: a single
    /// ⌈log₂ bound⌉-bit check would admit `e ∈ [bound, 2^⌈log₂ bound⌉)`.
    fn below<CS: ConstraintSystem<Fr>>(&mut self, mut cs: CS, e: &Expr, bound: u128) -> Result<()> {
        let nb = bit_len(bound - 1);
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
        range_bits(cs, e, bits)
    }

    fn finish<CS: ConstraintSystem<Fr>>(self, _cs: CS) -> Result<()> {
        Ok(())
    }
}

/// `2^k` in the field.
pub fn pow2(k: u32) -> Fr {
    Fr::from_u128(1) * Fr::from(2u64).pow_vartime([k as u64])
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

    #[test]
    fn cost_is_bits_plus_one() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let a = alloc(cs.namespace(|| "a"), Some(Fr::from(5u64))).unwrap();
        range_bits(cs.namespace(|| "rc"), &var(&a), 30).unwrap();
        assert_eq!(cs.num_constraints(), 31);
    }
}
