//! Sums of commitments with public factors, Σ sᵢ·Cᵢ (the folds'
//! U + r·u and E + r·T + r²·E₂, Spartan's batched claims).
//!
//! Why: nova-snark's `C·s` is halo2curves' constant-time
//! double-and-add-always, ≈ 512 projective operations a product, and a
//! verifier's folds and batched claims multiply commitments by public
//! challenges only (≈ 4 ms of a fresh check's CPU, by a profile, most of
//! it on the secondary's chain). How: Grumpkin's Pedersen commitments (one
//! point) and the rows' ([`crate::rows`]) are summed as one small MSM on
//! zkstep-pippenger (Straus at these sizes: one doubling chain for all the
//! terms), recognised at run time by type as [`crate::commit::commit_on`]
//! does; any other commitment by its own operations. Variable time: for
//! public factors only.

use std::any::{Any, TypeId};

use ff::Field;
use nova_snark::provider::{bn256_grumpkin::grumpkin, pedersen, GrumpkinEngine};
use nova_snark::traits::{commitment::CommitmentEngineTrait, Engine};

use crate::commit::grumpkin_combine;
use crate::rows::RowCommitment;

type Commitment<E> = <<E as Engine>::CE as CommitmentEngineTrait<E>>::Commitment;

/// Σ sᵢ·Cᵢ over commitments of `E`, for public scalars (module header):
/// ≈ 254 doublings for all the terms and 42 additions a term on Grumpkin,
/// ≈ 2.5× less than nova-snark's products at three terms, the conversions
/// included. Any other commitment is summed by its own operations, a
/// factor of one taken as it is.
pub fn combine<E: Engine + 'static>(terms: &[(Commitment<E>, E::Scalar)]) -> Commitment<E> {
    type Row = pedersen::Commitment<GrumpkinEngine>;
    let same = |t: TypeId| TypeId::of::<Commitment<E>>() == t && TypeId::of::<E::Scalar>() == TypeId::of::<grumpkin::Scalar>();
    let fast: Option<Commitment<E>> = if same(TypeId::of::<Row>()) {
        let rows: Vec<(Row, grumpkin::Scalar)> = terms.iter().filter_map(|(c, s)| cast(&(*c, *s))).collect();
        (rows.len() == terms.len()).then(|| grumpkin_combine(&rows)).flatten().and_then(|c| cast(&c))
    } else if same(TypeId::of::<RowCommitment>()) {
        let rc: Vec<(RowCommitment, grumpkin::Scalar)> = terms.iter().filter_map(|(c, s)| cast(&(*c, *s))).collect();
        (rc.len() == terms.len()).then(|| crate::rows::combine(&rc)).flatten().and_then(|c| cast(&c))
    } else {
        None
    };
    fast.unwrap_or_else(|| {
        terms.iter().fold(Commitment::<E>::default(), |acc, (c, s)| if *s == E::Scalar::ONE { acc + *c } else { acc + *c * *s })
    })
}

/// `x` as a `U`, where the two are one type (checked by `Any`).
fn cast<T: Any + Copy, U: Any + Copy>(x: &T) -> Option<U> {
    (x as &dyn Any).downcast_ref::<U>().copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::provider::Bn256EngineKZG;
    use rand::rngs::OsRng;

    type G = GrumpkinEngine;

    /// Σ sᵢ·Cᵢ by `combine` is the sum nova-snark's operations give, on
    /// Grumpkin's commitments, on commitments in rows and on the primary's
    /// (its own path): factors of one, zero and random, the identity among
    /// the terms, equal and opposite terms.
    #[test]
    fn combine_is_the_sum_of_products() {
        use crate::rows::{GrumpkinRows, RowEngine};
        type S = grumpkin::Scalar;
        let naive = |t: &[(pedersen::Commitment<G>, S)]| t.iter().fold(Default::default(), |a: pedersen::Commitment<G>, (c, s)| a + *c * *s);
        let ck = <G as Engine>::CE::setup(b"combine-test", 8).unwrap();
        let c = |k: u64| <G as Engine>::CE::commit(&ck, &[S::from(k), S::random(OsRng)], &S::ZERO);
        let (a, b, d) = (c(1), c(2), c(3));
        let zero = pedersen::Commitment::<G>::default();
        let cases: Vec<Vec<(pedersen::Commitment<G>, S)>> = vec![
            vec![],
            vec![(a, S::ONE)],
            vec![(a, S::ONE), (b, S::random(OsRng))],
            vec![(a, S::ONE), (b, S::random(OsRng)), (d, S::random(OsRng))],
            vec![(zero, S::random(OsRng)), (a, S::ZERO), (b, -S::ONE)],
            vec![(a, S::from(5u64)), (a, -S::from(5u64))],
            vec![(a, S::from(5u64)), (a, S::from(7u64))],
        ];
        for t in &cases {
            assert_eq!(combine::<G>(t), naive(t));
        }
        // in rows: each row the sum of its rows' products
        let rk = RowEngine::setup(b"combine-test", 64).unwrap();
        let v = |k: u64| (0..60).map(|i| S::from(i * k + 1)).collect::<Vec<_>>();
        let (p, q) = (RowEngine::commit(&rk, &v(2), &S::random(OsRng)), RowEngine::commit(&rk, &v(3), &S::ZERO));
        let (r1, r2) = (S::random(OsRng), S::random(OsRng));
        let rows = combine::<GrumpkinRows>(&[(p, S::ONE), (q, r1), (p, r2)]);
        assert_eq!(rows, p + q * r1 + p * r2);
        // the primary's commitments take their own operations
        type K = Bn256EngineKZG;
        let kzg = <K as Engine>::CE::setup(b"combine-test", 4).unwrap();
        let f = |k: u64| <K as Engine>::CE::commit(&kzg, &[<K as Engine>::Scalar::from(k)], &<K as Engine>::Scalar::ZERO);
        let r = <K as Engine>::Scalar::random(OsRng);
        assert_eq!(combine::<K>(&[(f(1), <K as Engine>::Scalar::ONE), (f(2), r)]), f(1) + f(2) * r);
    }
}
