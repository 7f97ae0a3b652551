//! Pedersen commitments on the secondary curve through `zkstep-pippenger`.
//!
//! Why: nova-snark commits on Grumpkin with halo2curves' `msm_best`, whose
//! window is c = ⌈ln n⌉ and which below c = 10 (n < 8,103) falls back to
//! projective buckets: 8,100 full scalars took 91.6 ms against 49.2 ms for
//! 8,110 on the project's host, and the secondary's vectors (8,115 values
//! since format 27) sit just under that edge. zkstep-pippenger's affine
//! buckets take 22–31 ms at all these sizes. The primary's (BN254) MSMs
//! already reach it through the `blitzar` shim; this module does the same for
//! the secondary, whose engine nova-snark never sends there.
//!
//! How: nova-snark's commitment functions are generic over the engine and
//! its commitment has no public constructor from a point, so [`commit_on`]
//! recognises Grumpkin's Pedersen key at run time (`Any`), sums on its public
//! generators, adds h·r through nova-snark's own `derandomize`, and turns the
//! point into a commitment through its serde form (one point, microseconds).
//! Any other engine (or a key it does not recognise) takes nova-snark's path,
//! so the result is the same commitment either way (tested against it).

use std::any::Any;

use ff::Field;
use nova_snark::{
    provider::{bn256_grumpkin::grumpkin, pedersen, GrumpkinEngine},
    traits::{
        commitment::CommitmentEngineTrait, evm_serde::CustomSerdeTrait, Engine,
    },
};
use serde::{Serialize, Serializer};

// nova-snark's types spelled out here, not taken from `instance` (which commits through this module)
type Commitment<E> = <<E as Engine>::CE as CommitmentEngineTrait<E>>::Commitment;
type CommitmentKey<E> = <<E as Engine>::CE as CommitmentEngineTrait<E>>::CommitmentKey;

/// Com of `values` on the generators from column `from` on, with blind h·`blind`:
/// `Σ values[i]·G[from + i] + blind·H`, the commitment nova-snark's `commit`
/// (from = 0) or `commit_sparse` (on the consecutive columns) returns.
pub fn commit_on<E: Engine + 'static>(
    ck: &CommitmentKey<E>,
    from: usize,
    values: &[E::Scalar],
    blind: &E::Scalar,
) -> Commitment<E> {
    if let Some(c) = grumpkin_commit::<E>(ck, from, values, blind) {
        return c;
    }
    if from == 0 {
        return E::CE::commit(ck, values, blind);
    }
    let idx: Vec<usize> = (from..from + values.len()).collect();
    E::CE::commit_sparse(ck, &idx, values, blind)
}

/// [`commit_on`] where `E` is Grumpkin with its Pedersen key; `None` otherwise
/// (or when the columns run past the key, which nova-snark's path reports).
fn grumpkin_commit<E: Engine + 'static>(
    ck: &CommitmentKey<E>,
    from: usize,
    values: &[E::Scalar],
    blind: &E::Scalar,
) -> Option<Commitment<E>> {
    type G = GrumpkinEngine;
    // an engine whose key is Grumpkin's but whose commitment is not one
    // point (`crate::rows`) commits row by row through this function
    if std::any::TypeId::of::<Commitment<E>>() != std::any::TypeId::of::<pedersen::Commitment<G>>() {
        return None;
    }
    let key = (ck as &dyn Any).downcast_ref::<pedersen::CommitmentKey<G>>()?;
    let bases = key.generators().get(from..from.checked_add(values.len())?)?;
    // the key matched, so E is Grumpkin's engine: these casts are identities
    let scalars = *(Box::new(values.to_vec()) as Box<dyn Any>)
        .downcast::<Vec<grumpkin::Scalar>>()
        .ok()?;
    let r = *(Box::new(*blind) as Box<dyn Any>).downcast::<grumpkin::Scalar>().ok()?;
    let sum = commitment_of(&zkstep_pippenger::msm(&scalars, bases))?;
    let c = if bool::from(r.is_zero()) {
        sum
    } else {
        // h·r as nova-snark adds it: 0 − h·(−r)
        let dk = <G as Engine>::CE::derand_key(key);
        sum + <G as Engine>::CE::derandomize(&dk, &Default::default(), &-r)
    };
    (Box::new(c) as Box<dyn Any>).downcast::<Commitment<E>>().ok().map(|b| *b)
}

/// Σ sᵢ·Cᵢ over Grumpkin Pedersen commitments, on zkstep-pippenger.
pub(crate) fn grumpkin_combine(terms: &[(pedersen::Commitment<GrumpkinEngine>, grumpkin::Scalar)]) -> Option<pedersen::Commitment<GrumpkinEngine>> {
    use nova_snark::traits::commitment::CommitmentTrait;
    let mut points = Vec::with_capacity(terms.len());
    let mut scalars = Vec::with_capacity(terms.len());
    for (c, s) in terms {
        let (x, y, infinity) = c.to_coordinates();
        if !infinity {
            points.push(Option::<grumpkin::Affine>::from(halo2curves::CurveAffine::from_xy(x, y))?);
            scalars.push(*s);
        }
    }
    commitment_of(&zkstep_pippenger::msm(&scalars, &points))
}

/// A Grumpkin point as nova-snark's commitment to it: the commitment's wire
/// form is its point's (`CustomSerdeTrait`), so a round trip builds it.
fn commitment_of(p: &grumpkin::Point) -> Option<pedersen::Commitment<GrumpkinEngine>> {
    struct Wire<'a>(&'a grumpkin::Point);
    impl Serialize for Wire<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            CustomSerdeTrait::serialize(self.0, s)
        }
    }
    let bytes = postcard::to_stdvec(&Wire(p)).ok()?;
    postcard::from_bytes(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::provider::Bn256EngineKZG;
    use nova_snark::traits::commitment::CommitmentTrait;
    use rand::rngs::OsRng;

    type G = GrumpkinEngine;

    #[test]
    fn a_grumpkin_commitment_is_nova_snarks_at_every_offset_size_and_blind() {
        let ck = <G as Engine>::CE::setup(b"commit-test", 9000).unwrap();
        // sizes on both sides of halo2curves' window edge, offsets, zeros and small values
        for (n, from) in [(0, 0), (1, 0), (1, 7), (5, 3), (300, 0), (300, 100), (8100, 0), (8110, 5)] {
            let mut v: Vec<grumpkin::Scalar> = (0..n).map(|_| grumpkin::Scalar::random(OsRng)).collect();
            for (i, x) in v.iter_mut().enumerate() {
                match i % 5 {
                    0 => *x = grumpkin::Scalar::ZERO,
                    1 => *x = grumpkin::Scalar::from(i as u64),
                    2 => *x = -grumpkin::Scalar::from(i as u64),
                    _ => {}
                }
            }
            for r in [grumpkin::Scalar::ZERO, grumpkin::Scalar::random(OsRng)] {
                let ours = grumpkin_commit::<G>(&ck, from, &v, &r).expect("Grumpkin's key is recognised");
                let theirs = if from == 0 {
                    <G as Engine>::CE::commit(&ck, &v, &r)
                } else {
                    let idx: Vec<usize> = (from..from + n).collect();
                    <G as Engine>::CE::commit_sparse(&ck, &idx, &v, &r)
                };
                assert_eq!(ours, theirs, "n = {n}, from = {from}");
                assert_eq!(commit_on::<G>(&ck, from, &v, &r), theirs);
            }
        }
        // a commitment to all zeros with no blind is the identity, as nova-snark's
        let zero = grumpkin_commit::<G>(&ck, 0, &[grumpkin::Scalar::ZERO; 4], &grumpkin::Scalar::ZERO).unwrap();
        assert!(zero.to_coordinates().2);
        // one value changed changes the commitment
        let v = vec![grumpkin::Scalar::from(3u64); 16];
        let mut w = v.clone();
        w[9] += grumpkin::Scalar::ONE;
        assert_ne!(commit_on::<G>(&ck, 0, &v, &grumpkin::Scalar::ZERO), commit_on::<G>(&ck, 0, &w, &grumpkin::Scalar::ZERO));
    }

    #[test]
    fn columns_past_the_key_and_other_engines_take_nova_snarks_path() {
        let ck = <G as Engine>::CE::setup(b"commit-test", 16).unwrap();
        let len = ck.generators().len();
        let v = vec![grumpkin::Scalar::ONE; 4];
        assert!(grumpkin_commit::<G>(&ck, len - 3, &v, &grumpkin::Scalar::ZERO).is_none());
        assert!(grumpkin_commit::<G>(&ck, usize::MAX, &v, &grumpkin::Scalar::ZERO).is_none());
        // the primary's KZG key is not Grumpkin's: its commitments are nova-snark's own
        let kzg = <Bn256EngineKZG as Engine>::CE::setup(b"commit-test", 8).unwrap();
        let s: Vec<_> = (1..=4u64).map(<Bn256EngineKZG as Engine>::Scalar::from).collect();
        let z = <Bn256EngineKZG as Engine>::Scalar::ZERO;
        assert!(grumpkin_commit::<Bn256EngineKZG>(&kzg, 0, &s, &z).is_none());
        assert_eq!(
            commit_on::<Bn256EngineKZG>(&kzg, 2, &s[..2], &z),
            <Bn256EngineKZG as Engine>::CE::commit_sparse(&kzg, &[2, 3], &s[..2], &z)
        );
    }
}
