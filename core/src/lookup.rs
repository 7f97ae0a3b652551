//! Range checks by lookup, natively: the table values a range check looks
//! up (the native twin of `zkstep_gadgets::lookup`), and the LogUp identity
//! that proves them in the table.
//!
//! `0 ≤ v < 2ⁿ` is checked by writing v in L-bit limbs, v = Σ lᵢ·2^(L·i),
//! and looking each limb up in T = {0, …, 2ᴸ − 1}; a top limb of r < L bits
//! is also looked up shifted to the table's top, l·2^(L−r) (in T iff
//! l < 2ʳ, given l ∈ T). The limb width L is the layout's (16, or 8 where
//! a step has too few folds to spread 2¹⁶ table entries thin). The queries q₁…q_N all lie in T iff, for multiplicities
//! m_t = #{j : q_j = t}, Σⱼ 1/(α − qⱼ) = Σ_t m_t/(α − t) as rational
//! functions; checked at one random α, the identity holds for values outside
//! T only with probability ≤ (N + |T|)/p (LogUp, Haböck 2022).

use crate::poseidon::Fr;
use ff::{Field, PrimeField, PrimeFieldBits};

/// The widest limb (the largest table, 2¹⁶ entries).
pub const MAX_LIMB_BITS: u32 = 16;

/// The limbs of `v` (little-endian, `l` bits each) for an n-bit range
/// check, from v's low n bits (an honest prover's witness; a value outside
/// the range gives limbs that do not recompose to it).
pub fn limbs(v: &Fr, n: u32, l: u32) -> Vec<u64> {
    let bits = v.to_le_bits();
    (0..n.div_ceil(l))
        .map(|i| {
            let lo = (i * l) as usize;
            let hi = (lo + l as usize).min(n as usize);
            (lo..hi).rev().fold(0u64, |acc, b| acc << 1 | u64::from(bits[b]))
        })
        .collect()
}

/// The table values an n-bit range check of `v` looks up with `l`-bit
/// limbs, in the gadget's order: each limb, and after a top limb of r < l
/// bits that limb times 2^(l−r). `None` if v is not in [0, 2ⁿ) (then no
/// honest lookup exists).
pub fn queries(v: &Fr, n: u32, l: u32) -> Option<Vec<u64>> {
    let ls = limbs(v, n, l);
    let back = ls
        .iter()
        .rev()
        .fold(Fr::ZERO, |acc, x| acc * Fr::from(1u64 << l) + Fr::from(*x));
    if back != *v {
        return None;
    }
    let mut q = ls.clone();
    if let Some(extra) = narrow_top(n, l) {
        q.push(ls[ls.len() - 1] << extra);
    }
    Some(q)
}

/// The shift of an n-bit check's narrow top limb (None when n is a
/// multiple of l: the top limb is a whole one).
pub fn narrow_top(n: u32, l: u32) -> Option<u32> {
    let top = n - l * (n.div_ceil(l) - 1);
    (top < l).then_some(l - top)
}

/// Lookups an n-bit check makes with `l`-bit limbs.
pub fn queries_for(n: u32, l: u32) -> usize {
    n.div_ceil(l) as usize + usize::from(narrow_top(n, l).is_some())
}

/// Σ 1/(α − q) over `queries` (None if some q = α).
pub fn query_sum(alpha: Fr, queries: impl IntoIterator<Item = Fr>) -> Option<Fr> {
    queries
        .into_iter()
        .try_fold(Fr::ZERO, |s, q| Option::<Fr>::from((alpha - q).invert()).map(|i| s + i))
}

/// Σ m_t/(α − t) over table entries `base + k` with multiplicities `mult[k]`.
pub fn table_sum(alpha: Fr, base: u64, mult: &[u64]) -> Option<Fr> {
    mult.iter().enumerate().try_fold(Fr::ZERO, |s, (k, m)| {
        let d = alpha - Fr::from(base + k as u64);
        Option::<Fr>::from(d.invert()).map(|i| s + i * Fr::from(*m))
    })
}

/// How often each value of a table of `size` entries occurs among
/// `queries` (values past the table are not counted: nothing balances them).
pub fn tally(queries: impl IntoIterator<Item = u64>, size: usize) -> Vec<u64> {
    let mut m = vec![0u64; size];
    for q in queries {
        if let Some(c) = m.get_mut(q as usize) {
            *c += 1;
        }
    }
    m
}

/// A field element's value if it is below 2⁶⁴.
pub fn small(v: &Fr) -> Option<u64> {
    let r = v.to_repr();
    let b = r.as_ref();
    b[8..].iter().all(|x| *x == 0).then(|| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        u64::from_le_bytes(w)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_recompose_and_cover_the_top_limb() {
        let q = queries(&Fr::from((1u64 << 37) - 1), 37, 16).unwrap();
        assert_eq!(q, vec![0xffff, 0xffff, 31, 31 << 11]);
        assert_eq!(queries(&Fr::from(1u64 << 37), 37, 16), None);
        assert_eq!(queries(&Fr::from(u64::MAX), 64, 16).unwrap(), vec![0xffff; 4]);
        assert_eq!(queries(&Fr::from(u64::MAX), 64, 8).unwrap(), vec![0xff; 8]);
        assert_eq!(queries(&Fr::from(5u64 << 8 | 3), 11, 8).unwrap(), vec![3, 5, 5 << 5]);
        assert_eq!(queries(&(-Fr::ONE), 64, 16), None);
        assert_eq!((queries_for(64, 16), queries_for(37, 16), queries_for(64, 8)), (4, 4, 8));
        assert_eq!(small(&Fr::from(u64::MAX)), Some(u64::MAX));
        assert_eq!(small(&(Fr::from(u64::MAX) + Fr::ONE)), None);
    }

    #[test]
    fn the_identity_balances_exactly_for_values_in_the_table() {
        let alpha = Fr::from(0x1234_5678_9abc_u64) * Fr::from(977u64);
        let qs: Vec<u64> = vec![3, 3, 0, 65535, 17];
        let m = tally(qs.iter().copied(), 1 << 16);
        let lhs = query_sum(alpha, qs.iter().map(|q| Fr::from(*q))).unwrap();
        assert_eq!(lhs, table_sum(alpha, 0, &m).unwrap());
        // a multiplicity off by one, or a query past the table: unbalanced
        let mut m2 = m.clone();
        m2[17] += 1;
        assert_ne!(lhs, table_sum(alpha, 0, &m2).unwrap());
        let past = query_sum(alpha, [3u64, 3, 0, 65536, 17].map(Fr::from)).unwrap();
        assert_ne!(past, table_sum(alpha, 0, &tally([3, 3, 0, 65536, 17], 1 << 16)).unwrap());
    }
}
