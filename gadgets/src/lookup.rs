//! Range checks by lookup (LogUp over T = {0, …, 2ᴸ − 1}), in two phases.
//!
//! Phase one, [`LogUp`] behind [`RangeCheck`]: `0 ≤ e < 2ⁿ` allocates e's
//! L-bit limbs and one constraint, `e = Σ lᵢ·2^(L·i)` (`…/recompose`, the
//! same name as a bit decomposition's), and records the limbs (and a narrow
//! top limb shifted to the table's top) as queries. Phase two, after a
//! challenge α drawn from the committed limbs: [`query_sum`] (one inverse
//! and one constraint a query) and [`table_sum`] (one a table entry, with
//! the entry's multiplicity). The circuit that uses them requires the two
//! sums of a step to be equal. With 16-bit limbs a 64-bit value costs
//! 1 + 4 constraints instead of 65. Native twin: `zkstep_core::lookup`.

use crate::expr::{add_assign, alloc, cst, enforce_eq, enforce_mul, scale, sub, var, zero, Expr, Fr};
use crate::range::{pow2, RangeCheck};
use crate::Result;
use ff::{BatchInvert, Field};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use std::sync::{Arc, Mutex};
use zkstep_core::lookup::{limbs, narrow_top, small};
use zkstep_fold::UnitTag;

/// The widest check [`RangeCheck::two_sided_width`] widens to: both sides
/// stay far below the field's modulus (2²⁵⁴).
const TWO_SIDED_MAX: u32 = 250;

/// A count of how often each table value was looked up (what a prover
/// needs to know a step's multiplicities); shared by the folds it tallies.
pub type Tally = Arc<Mutex<Vec<u64>>>;

/// Phase one of lookup range checks: the queries so far.
pub struct LogUp {
    limb: u32,
    queries: Vec<Expr>,
    // each query's unit (zkstep_fold::in_unit): its inverse is that unit's too
    units: Vec<UnitTag>,
    tally: Option<Tally>,
}

impl LogUp {
    /// Range checks with `limb`-bit limbs that count their queries into
    /// `tally` (2^limb counts) when given.
    pub fn new(limb: u32, tally: Option<Tally>) -> Self {
        assert!((1..=zkstep_core::lookup::MAX_LIMB_BITS).contains(&limb));
        LogUp {
            limb,
            queries: vec![],
            units: vec![],
            tally,
        }
    }

    /// The queries recorded, in order (phase two's input).
    pub fn into_queries(self) -> Vec<Expr> {
        self.queries
    }

    /// The queries and the unit each was made in ([`query_sum`] puts its
    /// inverse there).
    pub fn into_tagged_queries(self) -> (Vec<Expr>, Vec<UnitTag>) {
        (self.queries, self.units)
    }

    /// Queries recorded so far.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// Whether nothing was looked up yet.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    fn query(&mut self, q: Expr) {
        if let (Some(t), Some(v)) = (&self.tally, q.get_value().as_ref().and_then(small)) {
            if let Ok(mut t) = t.lock() {
                if let Some(c) = t.get_mut(v as usize) {
                    *c += 1;
                }
            }
        }
        self.queries.push(q);
        self.units.push(zkstep_fold::current_unit());
    }
}

impl RangeCheck for LogUp {
    /// Whole limbs: a 30-bit pair costs 2 + 2 queries, not 3 + 3.
    fn two_sided_width(&self, bits: u32) -> u32 {
        let w = bits.div_ceil(self.limb) * self.limb;
        if w <= TWO_SIDED_MAX {
            w
        } else {
            bits
        }
    }

    fn bits<CS: ConstraintSystem<Fr>>(&mut self, mut cs: CS, e: &Expr, bits: u32) -> Result<()> {
        assert!(
            bits > 0 && bits <= 250,
            "lookup range check: width {bits} out of 1..=250"
        );
        let lb = self.limb;
        let values = e.get_value().map(|v| limbs(&v, bits, lb));
        let k = bits.div_ceil(lb);
        let mut sum = zero();
        for i in 0..k {
            let l = alloc(
                cs.namespace(|| format!("limb{i}")),
                values.as_ref().map(|v| Fr::from(v[i as usize])),
            )?;
            add_assign(&mut sum, &scale(&var(&l), pow2(i * lb)));
            self.query(var(&l));
        }
        if let Some(shift) = narrow_top(bits, lb) {
            // the top limb l < 2^(L − shift) iff l·2^shift is in the table too
            let top = self.queries[self.queries.len() - 1].clone();
            self.query(scale(&top, pow2(shift)));
        }
        enforce_eq(cs.namespace(|| "recompose"), &sum, e);
        Ok(())
    }

    fn finish<CS: ConstraintSystem<Fr>>(self, _cs: CS) -> Result<()> {
        Ok(())
    }
}

/// Σ 1/(α − q) over the queries: one inverse and one constraint each
/// (`…/inv{k}`: (α − q)·h = 1), each in its query's unit (`units`, from
/// [`LogUp::into_tagged_queries`]; none past its end), so that a unit's
/// inverses are laid out beside its other rows and variables.
pub fn query_sum<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    alpha: &Expr,
    queries: &[Expr],
    units: &[UnitTag],
) -> Result<Expr> {
    let one = cst::<CS>(Fr::ONE);
    let d: Vec<Expr> = queries.iter().map(|q| sub(alpha, q)).collect();
    let inv = inverses(&d);
    let mut sum = zero();
    for (k, d) in d.iter().enumerate() {
        let h = zkstep_fold::with_unit(units.get(k).copied().flatten(), || {
            let h = alloc(cs.namespace(|| format!("h{k}")), inv.as_ref().map(|v| v[k]))?;
            enforce_mul(cs.namespace(|| format!("inv{k}")), d, &var(&h), &one);
            Ok::<_, SynthesisError>(h)
        })?;
        add_assign(&mut sum, &var(&h));
    }
    Ok(sum)
}

/// The expressions' values inverted together (one field inversion for all;
/// 0 stands for the inverse of 0, which leaves its constraint unsatisfied).
fn inverses(d: &[Expr]) -> Option<Vec<Fr>> {
    let mut v: Vec<Fr> = d.iter().map(|e| e.get_value()).collect::<Option<_>>()?;
    v.iter_mut().batch_invert();
    Some(v)
}

/// Σ mₖ/(α − base − k) over a slice of the table: one constraint an entry
/// (`…/entry{k}`: (α − base − k)·g = mₖ).
pub fn table_sum<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    alpha: &Expr,
    base: &Expr,
    mult: &[AllocatedNum<Fr>],
) -> Result<Expr> {
    let start = sub(alpha, base);
    let d: Vec<Expr> = (0..mult.len())
        .map(|k| sub(&start, &cst::<CS>(Fr::from(k as u64))))
        .collect();
    let inv = inverses(&d);
    let mut sum = zero();
    for (k, (d, m)) in d.iter().zip(mult).enumerate() {
        let g = alloc(
            cs.namespace(|| format!("g{k}")),
            inv.as_ref().zip(m.get_value()).map(|(v, m)| v[k] * m),
        )?;
        enforce_mul(cs.namespace(|| format!("entry{k}")), d, &var(&g), &var(m));
        add_assign(&mut sum, &var(&g));
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::var;
    use nova_snark::frontend::test_cs::TestConstraintSystem;
    use zkstep_core::lookup::{queries, tally};
    use zkstep_core::poseidon::fr_from_i128;

    /// Range-check each (value, bits) in phase one, let `forge` change the
    /// queries (a dishonest prover's limbs), tally them into a table slice
    /// [0, slice), let `off` change the multiplicities, and close; returns
    /// (satisfied, first failing constraint, balanced).
    fn run(
        checks: &[(Fr, u32)],
        slice: usize,
        forge: impl Fn(&mut Vec<Expr>),
        off: impl Fn(&mut Vec<u64>),
    ) -> (bool, Option<String>, bool) {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let mut rc = LogUp::new(16, None);
        for (k, (v, n)) in checks.iter().enumerate() {
            let a = alloc(cs.namespace(|| format!("a{k}")), Some(*v)).unwrap();
            rc.bits(cs.namespace(|| format!("rc{k}")), &var(&a), *n).unwrap();
        }
        let mut qs = rc.into_queries();
        forge(&mut qs);
        let mut m = tally(qs.iter().filter_map(|q| q.get_value().as_ref().and_then(small)), 1 << 16);
        m.truncate(slice);
        off(&mut m);
        let mv: Vec<_> = m
            .iter()
            .enumerate()
            .map(|(k, c)| alloc(cs.namespace(|| format!("m{k}")), Some(Fr::from(*c))).unwrap())
            .collect();
        let alpha = cst::<TestConstraintSystem<Fr>>(Fr::from(0xdead_beef_u64) * Fr::from(1009u64));
        let q = query_sum(cs.namespace(|| "q"), &alpha, &qs, &[]).unwrap();
        let t = table_sum(cs.namespace(|| "t"), &alpha, &zero(), &mv).unwrap();
        let balanced = q.get_value() == t.get_value();
        (cs.is_satisfied(), cs.which_is_unsatisfied().map(String::from), balanced)
    }

    fn queries_of(checks: &[(Fr, u32)]) -> Vec<u64> {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let mut rc = LogUp::new(16, None);
        for (k, (v, n)) in checks.iter().enumerate() {
            let a = alloc(cs.namespace(|| format!("a{k}")), Some(*v)).unwrap();
            rc.bits(cs.namespace(|| format!("rc{k}")), &var(&a), *n).unwrap();
        }
        rc.into_queries()
            .iter()
            .map(|q| small(&q.get_value().unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn honest_checks_balance_and_match_the_native_queries() {
        // the gadget's queries are the native twin's, in order
        let wide = [
            (Fr::from(u64::MAX), 64),
            (Fr::from(0u64), 64),
            (Fr::from((1u64 << 37) - 1), 37),
            (Fr::from(12345u64), 16),
            (fr_from_i128(1i128 << 100), 101),
        ];
        let want: Vec<u64> = wide
            .iter()
            .flat_map(|(v, n)| queries(v, *n, 16).unwrap())
            .collect();
        assert_eq!(queries_of(&wide), want);
        // satisfied and balanced, on values whose limbs stay in a small slice
        let small_limbs = [
            (Fr::from(0x03ff_0100_0000_0007u64), 64),
            (Fr::from(5u64 << 32 | 9), 37),
            (Fr::from(600u64), 16),
        ];
        let (ok, which, balanced) = run(&small_limbs, 1 << 14, |_| {}, |_| {});
        assert!(ok, "{which:?}");
        assert!(balanced);
    }

    #[test]
    fn out_of_range_values_and_forged_limbs_are_rejected() {
        // one past the range: the limbs do not recompose
        for (v, n) in [(Fr::from(1u64 << 37), 37u32), (-Fr::ONE, 64), (Fr::from(1u64 << 16), 16)] {
            let (ok, which, _) = run(&[(v, n)], 64, |_| {}, |_| {});
            assert!(!ok && which.unwrap().contains("recompose"), "{v:?} {n}");
        }
        let c = |v: u64| cst::<TestConstraintSystem<Fr>>(Fr::from(v));
        // 7 as a 32-bit value with limbs (2¹⁶ + 7, −1): they recompose, but
        // neither is a table value, so nothing balances them
        let (_, _, balanced) = run(&[(Fr::from(7u64), 32)], 64, |qs| {
            qs[0] = c((1 << 16) + 7);
            qs[1] = cst::<TestConstraintSystem<Fr>>(-Fr::ONE);
        }, |_| {});
        assert!(!balanced);
        // a narrow top limb (5 bits) holding 40: 40·2¹¹ is past the table
        let (_, _, balanced) = run(&[(Fr::from(40u64 << 16), 21)], 64, |qs| {
            qs[1] = c(40);
            qs[2] = c(40 << 11);
        }, |_| {});
        assert!(!balanced);
        // a multiplicity off by one
        let (_, _, balanced) = run(&[(Fr::from(7u64), 32)], 64, |_| {}, |m| m[7] += 1);
        assert!(!balanced);
    }

    /// Satisfied, the first failing constraint and the queries of `body`
    /// run with lookups.
    fn with_logup(
        body: impl FnOnce(&mut TestConstraintSystem<Fr>, &mut LogUp),
    ) -> (bool, Option<String>, Vec<Expr>) {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let mut rc = LogUp::new(16, None);
        body(&mut cs, &mut rc);
        (cs.is_satisfied(), cs.which_is_unsatisfied().map(String::from), rc.into_queries())
    }

    /// Pairs that bound a value from both sides use whole limbs (issue 26):
    /// `below(S)` costs 2 + 2 queries instead of 3 + 3 and still admits
    /// exactly [0, S): a value one past, or inside the widened window
    /// (2³⁰ ≤ r < 2³²), or −1 fails; the edges pass with every query in T.
    /// The same for a division's remainder (65 → 80 bits) and a root's
    /// slack (33 → 48 bits), each one off either way.
    #[test]
    fn two_sided_pairs_on_whole_limbs_pin_the_same_interval() {
        use crate::arith::{div_rem, isqrt};
        use ff::PrimeField;
        let in_table = |qs: &[Expr]| qs.iter().all(|q| small(&q.get_value().unwrap()).is_some_and(|v| v < 1 << 16));
        let s: i128 = 1_000_000_000;
        assert_eq!(LogUp::new(16, None).two_sided_width(30), 32);
        assert_eq!(LogUp::new(16, None).two_sided_width(65), 80);
        assert_eq!(LogUp::new(16, None).two_sided_width(249), 249);
        for (v, good) in [(0, true), (s - 1, true), (s, false), ((1 << 30) + s, false), ((1 << 32) - 1, false), (-1, false)] {
            let (ok, which, qs) = with_logup(|cs, rc| {
                let a = alloc(cs.namespace(|| "a"), Some(fr_from_i128(v))).unwrap();
                rc.below(cs.namespace(|| "rem"), &var(&a), s as u128).unwrap();
            });
            assert_eq!(qs.len(), 4, "{v}");
            assert_eq!(ok, good, "{v}: {which:?}");
            if good {
                assert!(in_table(&qs), "{v}");
            } else {
                assert!(which.unwrap().contains("recompose"), "{v}");
            }
        }
        // n = q·d + r with d of 65 bits: r = d − 1 and 5 pass; r = d (q − 1),
        // r = d + 5 (q − 1) and r = 5 − d (q + 1) fail
        let d: i128 = (1 << 64) + 12345;
        for (n, q, r, good) in [
            (7 * d + 5, 7, 5, true),
            (8 * d - 1, 7, d - 1, true),
            (7 * d, 6, d, false),
            (7 * d + 5, 6, d + 5, false),
            (7 * d + 5, 8, 5 - d, false),
        ] {
            let (ok, which, qs) = with_logup(|cs, rc| {
                let nv = alloc(cs.namespace(|| "n"), Some(fr_from_i128(n))).unwrap();
                let dv = alloc(cs.namespace(|| "d"), Some(fr_from_i128(d))).unwrap();
                div_rem(cs.namespace(|| "div"), rc, &var(&nv), &var(&dv), 65, 64, Some(q), Some(r)).unwrap();
            });
            assert_eq!(ok, good, "q {q} r {r}: {which:?}");
            assert_eq!(qs.len(), 4 + 5 + 5, "q, then 80 bits a side");
            if !good {
                assert!(which.unwrap().contains("recompose"));
            }
        }
        // ⌊√x⌋ of a 64-bit x: the root, one lower, one higher
        let x: u128 = (3_000_000_007u128 * 3_000_000_007) + 6_000_000_014; // (r + 1)² − 1
        let r = 3_000_000_007u128;
        for (root, good) in [(r, true), (r - 1, false), (r + 1, false)] {
            let (ok, which, qs) = with_logup(|cs, rc| {
                let xv = alloc(cs.namespace(|| "x"), Some(Fr::from_u128(x))).unwrap();
                isqrt(cs.namespace(|| "sqrt"), rc, &var(&xv), 64, Some(root)).unwrap();
            });
            assert_eq!(ok, good, "root {root}: {which:?}");
            assert_eq!(qs.len(), 3 + 3, "48 bits a side (the root needs no check of its own)");
            if good {
                assert!(in_table(&qs));
            }
        }
        // a root that is no integer, (c + p)/2 for an odd c beside 2r: its
        // 2r is as small as an honest one, its square is not
        for c in [2 * r - 1, 2 * r + 1] {
            let half = Fr::from_u128(c) * Fr::from(2u64).invert().unwrap();
            let (ok, which, _) = with_logup(|cs, rc| {
                let xv = alloc(cs.namespace(|| "x"), Some(Fr::from_u128(x))).unwrap();
                crate::arith::isqrt_fr(cs.namespace(|| "sqrt"), rc, &var(&xv), 64, Some(half)).unwrap();
            });
            assert!(!ok && which.unwrap().contains("r_sq_le_x"), "c {c}");
        }
    }

    #[test]
    fn a_bound_of_one_pins_zero_without_a_lookup() {
        for (v, good) in [(0, true), (1, false), (-1, false)] {
            let (ok, which, qs) = with_logup(|cs, rc| {
                let a = alloc(cs.namespace(|| "a"), Some(fr_from_i128(v))).unwrap();
                rc.below(cs.namespace(|| "rem"), &var(&a), 1).unwrap();
            });
            assert!(qs.is_empty(), "{v}");
            assert_eq!(ok, good, "{v}: {which:?}");
            if !good {
                assert!(which.unwrap().contains("r_lt_d"), "{v}");
            }
        }
    }

    #[test]
    fn a_64_bit_check_costs_one_constraint_then_four() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let a = alloc(cs.namespace(|| "a"), Some(Fr::from(99u64))).unwrap();
        let mut rc = LogUp::new(16, None);
        rc.signed(cs.namespace(|| "rc"), &var(&a), 64).unwrap();
        assert_eq!((cs.num_constraints(), rc.len()), (1, 4));
        let before = cs.num_constraints();
        let alpha = cst::<TestConstraintSystem<Fr>>(Fr::from(5u64) + Fr::from(1u64 << 40));
        query_sum(cs.namespace(|| "q"), &alpha, &rc.into_queries(), &[]).unwrap();
        assert_eq!(cs.num_constraints() - before, 4);
    }
}
