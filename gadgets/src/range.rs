//! Range checks by bit decomposition: `e ∈ [0, 2ⁿ)` costs n + 1 constraints
//! (n booleans and one recomposition). R1CS in Nova has no lookups, so this is
//! the price of every range check; the circuits are designed to need as few
//! as possible. Native twin: `ValueRange::contains`.

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

/// `2^k` in the field.
pub fn pow2(k: u32) -> Fr {
    Fr::from_u128(1) * Fr::from(2u64).pow_vartime([k as u64])
}

/// Enforce `−2^(bits−1) ≤ e < 2^(bits−1)` (the declared range of a stored value).
pub fn signed_range<CS: ConstraintSystem<Fr>>(cs: CS, e: &Expr, bits: u32) -> Result<()> {
    let shifted = e.clone().add(&crate::expr::cst::<CS>(pow2(bits - 1)));
    range_bits(cs, &shifted, bits)
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
        signed_range(cs.namespace(|| "rc"), &var(&a), bits).unwrap();
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
