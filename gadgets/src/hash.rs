//! Poseidon in the circuit: `h24` (one permutation absorbing 24 elements,
//! the same sponge, IO pattern and constants as `zkstep_core::poseidon::h24`)
//! and the short `h8` (width 9, `zkstep_core::poseidon::h8_of`),
//! packing of range-checked values three to an element (free: a linear
//! combination), and hash chains over records, optionally skipped by a
//! boolean so that one fixed circuit shape serves padded rows and columns.
//! Native twins: `zkstep_core::{poseidon::h24, commit::{pack_values, chain_absorb}}`.

use crate::expr::{add, add_assign, cst, materialise, scale, select, var, zero, Expr, Fr};
use crate::range::pow2;
use crate::Result;
use ff::Field;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use std::sync::OnceLock;
use zkstep_core::commit::{CHUNK, PACK, SHORT_CHUNK};
use zkstep_core::poseidon::{constants, constants8, RATE, RATE8};
use zkstep_fold::poseidon::{hash_combinations, Plan};

/// The two sponges' constants as zkstep-fold's Poseidon circuit reads
/// them (read once): the wide (24) and the short (8).
fn plans() -> std::result::Result<&'static (Plan<Fr>, Plan<Fr>), SynthesisError> {
    type Plans = std::result::Result<(Plan<Fr>, Plan<Fr>), String>;
    static P: OnceLock<Plans> = OnceLock::new();
    P.get_or_init(|| {
        Ok((
            Plan::of(constants()).map_err(|e| e.to_string())?,
            Plan::of(constants8()).map_err(|e| e.to_string())?,
        ))
    })
    .as_ref()
    .map_err(|e| SynthesisError::Unsatisfiable(e.clone()))
}

/// One absorption of all of `inputs` into the sponge of `plan` and one
/// squeeze (zkstep-fold's circuit of nova-snark's sponge: the same value,
/// each combination entering the matrices once).
fn sponge<CS: ConstraintSystem<Fr>>(mut cs: CS, plan: &Plan<Fr>, inputs: &[Expr]) -> Result<AllocatedNum<Fr>> {
    let lanes: Vec<_> = inputs.iter().map(|e| (e.lc(Fr::ONE), e.get_value())).collect();
    hash_combinations(cs.namespace(|| "poseidon"), plan, &lanes)
}

/// Poseidon hash of exactly 24 expressions.
pub fn h24<CS: ConstraintSystem<Fr>>(cs: CS, inputs: &[Expr]) -> Result<AllocatedNum<Fr>> {
    assert_eq!(inputs.len(), RATE, "h24 takes exactly {RATE} inputs");
    sponge(cs, &plans()?.0, inputs)
}

/// Poseidon hash of up to 8 expressions, zero-padded (width 9; native twin
/// `zkstep_core::poseidon::h8_of`): the proof-internal short hashes.
pub fn h8<CS: ConstraintSystem<Fr>>(cs: CS, inputs: &[Expr]) -> Result<AllocatedNum<Fr>> {
    assert!(inputs.len() <= RATE8, "h8 takes at most {RATE8} inputs");
    let mut padded = inputs.to_vec();
    padded.resize(RATE8, zero());
    sponge(cs, &plans()?.1, &padded)
}

/// Pack signed values (each range-checked to 64 bits elsewhere) three to an
/// element: `Σ (vᵢ + 2⁶³)·2^(64·i)`; missing limbs are 0.
pub fn pack<CS: ConstraintSystem<Fr>>(values: &[Expr]) -> Vec<Expr> {
    values
        .chunks(PACK)
        .map(|c| {
            let mut acc = zero();
            for (i, v) in c.iter().enumerate() {
                let limb = add(v, &cst::<CS>(pow2(63)));
                add_assign(&mut acc, &scale(&limb, pow2(64 * i as u32)));
            }
            acc
        })
        .collect()
}

/// Absorb a record into a chain: chunks of 23 beside the running digest,
/// a chunk of at most 7 by `h8` (native twin `zkstep_core::commit::chain_absorb`).
pub fn chain_absorb<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    h: &Expr,
    record: &[Expr],
) -> Result<AllocatedNum<Fr>> {
    let mut cur = h.clone();
    let mut last = None;
    for (n, chunk) in record.chunks(CHUNK).enumerate() {
        let mut input = Vec::with_capacity(RATE);
        input.push(cur.clone());
        input.extend(chunk.iter().cloned());
        let out = if chunk.len() <= SHORT_CHUNK {
            h8(cs.namespace(|| format!("chunk{n}")), &input)?
        } else {
            input.resize(RATE, zero());
            h24(cs.namespace(|| format!("chunk{n}")), &input)?
        };
        cur = var(&out);
        last = Some(out);
    }
    match last {
        Some(o) => Ok(o),
        None => materialise(cs.namespace(|| "empty"), h),
    }
}

/// Absorb a record only if the boolean `active` is 1; otherwise keep `h`.
pub fn chain_absorb_if<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    active: &Expr,
    h: &Expr,
    record: &[Expr],
) -> Result<AllocatedNum<Fr>> {
    let absorbed = chain_absorb(cs.namespace(|| "absorb"), h, record)?;
    select(
        cs.namespace(|| "keep_or_absorb"),
        active,
        &var(&absorbed),
        h,
    )
}

/// The chain's first link `H(domain, spec_digest, 0, …)` for a constant spec digest expression.
pub fn chain_init<CS: ConstraintSystem<Fr>>(
    cs: CS,
    domain: u64,
    spec_digest: &Expr,
) -> Result<AllocatedNum<Fr>> {
    let mut input = vec![cst::<CS>(Fr::from(domain)), spec_digest.clone()];
    input.resize(RATE, zero());
    h24(cs, &input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::alloc;
    use ff::Field;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use zkstep_core::commit::{
        chain_absorb as native_absorb, chain_init as native_init, pack_values, DOMAIN_PARAMS,
    };
    use zkstep_core::poseidon::{fr_from_i128, h24 as native_h24};

    type Circuit = fn(&mut TestConstraintSystem<Fr>, &[Expr]) -> Result<AllocatedNum<Fr>>;

    /// Hash `n` allocated values with `circuit`: (the value, its constraints).
    fn hash_in_circuit(n: usize, circuit: Circuit) -> (Vec<Fr>, Fr, usize) {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let vals: Vec<Fr> = (0..n).map(|i| Fr::from(i as u64 * 7 + 1)).collect();
        let ins: Vec<Expr> = vals
            .iter()
            .enumerate()
            .map(|(i, v)| var(&alloc(cs.namespace(|| format!("x{i}")), Some(*v)).unwrap()))
            .collect();
        let before = cs.num_constraints();
        let out = circuit(&mut cs, &ins).unwrap();
        let cost = cs.num_constraints() - before;
        assert!(cs.is_satisfied());
        (vals, out.get_value().unwrap(), cost)
    }

    #[test]
    fn h24_and_h8_match_native_and_cost_what_we_budget() {
        let (vals, out, cost) = hash_in_circuit(24, |cs, ins| h24(cs.namespace(|| "h"), ins));
        let arr: [Fr; 24] = vals.try_into().unwrap();
        assert_eq!(out, native_h24(&arr));
        // zkstep-fold's sponge circuit: ≈ 1,000 constraints for ≈ 13k
        // non-zeros, where nova-snark's took ≈ 780 for ≈ 29k
        assert!(cost < 1100, "h24 costs {cost} constraints");
        use zkstep_core::poseidon::h8_of;
        let (vals, out, cost8) = hash_in_circuit(5, |cs, ins| h8(cs.namespace(|| "h"), ins));
        assert_eq!(out, h8_of(&vals));
        assert_ne!(h8_of(&vals), h8_of(&vals[..4]));
        assert!(2 * cost8 < cost + 100, "h8 costs {cost8}, h24 {cost}");
    }

    /// Records of every length around the chunk rule (7 by h8, 8 by h24,
    /// a tail of 1 or 7 after a whole chunk) hash as natively, at most at
    /// the cost of their sponges (a lane left zero costs no S-box of its
    /// own in the first round).
    #[test]
    fn chains_of_short_and_long_chunks_match_native() {
        let (_, _, c24) = hash_in_circuit(24, |cs, ins| h24(cs.namespace(|| "h"), ins));
        let (_, _, c8) = hash_in_circuit(8, |cs, ins| h8(cs.namespace(|| "h"), ins));
        for (len, h8s, h24s) in [(1, 1, 0), (7, 1, 0), (8, 0, 1), (23, 0, 1), (24, 1, 1), (30, 1, 1), (46, 0, 2)] {
            let (vals, out, cost) = hash_in_circuit(len + 1, |cs, ins| {
                chain_absorb(cs.namespace(|| "c"), &ins[0], &ins[1..])
            });
            assert_eq!(out, native_absorb(vals[0], &vals[1..]), "{len}");
            let full = h8s * c8 + h24s * c24;
            assert!(cost <= full && 10 * cost >= 9 * full, "{len}: {cost} against {full}");
        }
    }

    #[test]
    fn packed_chain_matches_native() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let values: Vec<i64> = (0..50)
            .map(|i| (i as i64 - 25) * 1_000_000_007)
            .chain([i64::MIN, i64::MAX])
            .collect();
        let ins: Vec<Expr> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                var(&alloc(
                    cs.namespace(|| format!("v{i}")),
                    Some(fr_from_i128(*v as i128)),
                )
                .unwrap())
            })
            .collect();
        let spec = Fr::from(99u64);
        let h0 = chain_init(
            cs.namespace(|| "init"),
            DOMAIN_PARAMS,
            &cst::<TestConstraintSystem<Fr>>(spec),
        )
        .unwrap();
        let h1 = chain_absorb(
            cs.namespace(|| "rec"),
            &var(&h0),
            &pack::<TestConstraintSystem<Fr>>(&ins),
        )
        .unwrap();
        assert!(cs.is_satisfied());
        let native = native_absorb(native_init(DOMAIN_PARAMS, spec), &pack_values(&values));
        assert_eq!(h1.get_value(), Some(native));
    }

    #[test]
    fn conditional_absorb_skips_or_absorbs() {
        for active in [false, true] {
            let mut cs = TestConstraintSystem::<Fr>::new();
            let a = alloc(
                cs.namespace(|| "act"),
                Some(if active { Fr::ONE } else { Fr::ZERO }),
            )
            .unwrap();
            let h = alloc(cs.namespace(|| "h"), Some(Fr::from(5u64))).unwrap();
            let x = alloc(cs.namespace(|| "x"), Some(Fr::from(6u64))).unwrap();
            let out =
                chain_absorb_if(cs.namespace(|| "c"), &var(&a), &var(&h), &[var(&x)]).unwrap();
            assert!(cs.is_satisfied());
            let expect = if active {
                native_absorb(Fr::from(5u64), &[Fr::from(6u64)])
            } else {
                Fr::from(5u64)
            };
            assert_eq!(out.get_value(), Some(expect));
        }
    }
}
