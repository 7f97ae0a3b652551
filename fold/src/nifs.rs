//! Nova's non-interactive folding of committed relaxed R1CS, natively: the
//! cross term T, the challenge r = H(pp, u, T) (as `AllocRunning::fold`
//! computes it in the other curve's circuit), and the folded instance and
//! witness. Also the fold of two running instances, which compression uses
//! to mask the final instance with a random one.

use crate::commit::commit_on;
use crate::sums::combine;
use crate::error::{FoldError, Result};
use crate::hash::{fold_challenge, relaxed_challenge};
use crate::instance::{
    Commitment, CommitmentKey, FoldInstance, FoldWitness, RunningInstance, RunningWitness,
};
use ff::Field;
use nova_snark::r1cs::R1CSShape;
use nova_snark::traits::{Engine, ROConstants};
use rayon::prelude::*;

/// Z = (W, u, X) of a relaxed instance and its witness.
fn z_of<E: Engine>(w: &[E::Scalar], u: E::Scalar, x: &[E::Scalar]) -> Vec<E::Scalar> {
    let mut z = Vec::with_capacity(w.len() + 1 + x.len());
    z.extend_from_slice(w);
    z.push(u);
    z.extend_from_slice(x);
    z
}

/// The cross term of folding (Z₁, u₁, E₁) with (Z₂, u₂, E₂):
/// T = A·Z ∘ B·Z − u·C·Z − E₁ − E₂ for Z = Z₁ + Z₂, u = u₁ + u₂ (the
/// middle coefficient of the fold at r, computed once on the sum).
fn cross_term<E: Engine>(
    shape: &R1CSShape<E>,
    z1: &[E::Scalar],
    u1: E::Scalar,
    e1: &[E::Scalar],
    z2: &[E::Scalar],
    u2: E::Scalar,
    e2: Option<&[E::Scalar]>,
) -> Result<Vec<E::Scalar>> {
    if z1.len() != z2.len() {
        return Err(FoldError::Invalid("instances of different lengths".into()));
    }
    let z: Vec<E::Scalar> = z1.par_iter().zip(z2).map(|(a, b)| *a + *b).collect();
    let u = u1 + u2;
    let (az, bz, cz) = shape.multiply_vec(&z)?;
    Ok((0..az.len())
        .into_par_iter()
        .map(|k| {
            let mut t = az[k] * bz[k] - u * cz[k] - e1[k];
            if let Some(e2) = e2 {
                t -= e2[k];
            }
            t
        })
        .collect())
}

/// Fold the fresh `(u, w)` into the running `(U, W)`: returns comm_T and the
/// folded pair. `pp` is the parameters' digest as an `E::Base` element.
#[allow(clippy::too_many_arguments)]
pub fn fold<E: Engine + 'static>(
    ck: &CommitmentKey<E>,
    ro: &ROConstants<E>,
    pp: E::Base,
    shape: &R1CSShape<E>,
    big_u: &RunningInstance<E>,
    big_w: &RunningWitness<E>,
    u: &FoldInstance<E>,
    w: &FoldWitness<E>,
) -> Result<(Commitment<E>, RunningInstance<E>, RunningWitness<E>)> {
    fold_with(ck, shape, big_u, big_w, u, w, |t| fold_challenge::<E>(ro, pp, u, t))
}

/// [`fold`] with the challenge r drawn by `challenge` from comm_T (the
/// CycleFold shape draws it from a sponge that has absorbed more).
pub fn fold_with<E: Engine + 'static>(
    ck: &CommitmentKey<E>,
    shape: &R1CSShape<E>,
    big_u: &RunningInstance<E>,
    big_w: &RunningWitness<E>,
    u: &FoldInstance<E>,
    w: &FoldWitness<E>,
    challenge: impl FnOnce(&Commitment<E>) -> E::Scalar,
) -> Result<(Commitment<E>, RunningInstance<E>, RunningWitness<E>)> {
    let z1 = z_of::<E>(&big_w.w, big_u.u, &big_u.x);
    let z2 = z_of::<E>(&w.w, E::Scalar::ONE, &u.x);
    let t = cross_term(shape, &z1, big_u.u, &big_w.e, &z2, E::Scalar::ONE, None)?;
    let r_t = E::Scalar::random(&mut rand::rngs::OsRng);
    let comm_t = commit_on::<E>(ck, 0, &t, &r_t);
    let r = challenge(&comm_t);
    let folded = fold_instance(big_u, u, &comm_t, r);
    let wf = RunningWitness {
        w: big_w.w.par_iter().zip(&w.w).map(|(a, b)| *a + r * b).collect(),
        blinds: big_w
            .blinds
            .iter()
            .zip(&w.blinds)
            .map(|(a, b)| *a + r * b)
            .collect(),
        e: big_w.e.par_iter().zip(&t).map(|(a, b)| *a + r * b).collect(),
        r_e: big_w.r_e + r * r_t,
    };
    Ok((comm_t, folded, wf))
}

/// The instance side of [`fold`] (what the verifier and the circuit compute).
pub fn fold_instance<E: Engine + 'static>(
    big_u: &RunningInstance<E>,
    u: &FoldInstance<E>,
    comm_t: &Commitment<E>,
    r: E::Scalar,
) -> RunningInstance<E> {
    let one = E::Scalar::ONE;
    RunningInstance {
        comm_w: big_u
            .comm_w
            .iter()
            .zip(&u.comm_w)
            .map(|(a, b)| combine::<E>(&[(*a, one), (*b, r)]))
            .collect(),
        comm_e: combine::<E>(&[(big_u.comm_e, one), (*comm_t, r)]),
        u: big_u.u + r,
        x: big_u.x.iter().zip(&u.x).map(|(a, b)| *a + r * b).collect(),
    }
}

/// Fold two running pairs (the second is a random instance that masks the
/// first before compression): E = E₁ + r·T + r²·E₂.
#[allow(clippy::too_many_arguments)]
pub fn fold_relaxed<E: Engine + 'static>(
    ck: &CommitmentKey<E>,
    ro: &ROConstants<E>,
    pp: E::Base,
    shape: &R1CSShape<E>,
    u1: &RunningInstance<E>,
    w1: &RunningWitness<E>,
    u2: &RunningInstance<E>,
    w2: &RunningWitness<E>,
) -> Result<(Commitment<E>, RunningInstance<E>, RunningWitness<E>)> {
    let z1 = z_of::<E>(&w1.w, u1.u, &u1.x);
    let z2 = z_of::<E>(&w2.w, u2.u, &u2.x);
    let t = cross_term(shape, &z1, u1.u, &w1.e, &z2, u2.u, Some(&w2.e))?;
    let r_t = E::Scalar::random(&mut rand::rngs::OsRng);
    let comm_t = commit_on::<E>(ck, 0, &t, &r_t);
    let r = relaxed_challenge::<E>(ro, pp, u1, u2, &comm_t);
    let folded = fold_relaxed_instance(u1, u2, &comm_t, r);
    let r2 = r * r;
    let wf = RunningWitness {
        w: w1.w.par_iter().zip(&w2.w).map(|(a, b)| *a + r * b).collect(),
        blinds: w1
            .blinds
            .iter()
            .zip(&w2.blinds)
            .map(|(a, b)| *a + r * b)
            .collect(),
        e: (0..w1.e.len())
            .into_par_iter()
            .map(|k| w1.e[k] + r * t[k] + r2 * w2.e[k])
            .collect(),
        r_e: w1.r_e + r * r_t + r2 * w2.r_e,
    };
    Ok((comm_t, folded, wf))
}

/// The instance side of [`fold_relaxed`], with r recomputed.
pub fn verify_relaxed<E: Engine + 'static>(
    ro: &ROConstants<E>,
    pp: E::Base,
    u1: &RunningInstance<E>,
    u2: &RunningInstance<E>,
    comm_t: &Commitment<E>,
) -> RunningInstance<E> {
    let r = relaxed_challenge::<E>(ro, pp, u1, u2, comm_t);
    fold_relaxed_instance(u1, u2, comm_t, r)
}

/// The instance side of [`fold`], with r recomputed.
pub fn verify_fold<E: Engine + 'static>(
    ro: &ROConstants<E>,
    pp: E::Base,
    big_u: &RunningInstance<E>,
    u: &FoldInstance<E>,
    comm_t: &Commitment<E>,
) -> RunningInstance<E> {
    let r = fold_challenge::<E>(ro, pp, u, comm_t);
    fold_instance(big_u, u, comm_t, r)
}

fn fold_relaxed_instance<E: Engine + 'static>(
    u1: &RunningInstance<E>,
    u2: &RunningInstance<E>,
    comm_t: &Commitment<E>,
    r: E::Scalar,
) -> RunningInstance<E> {
    let (one, r2) = (E::Scalar::ONE, r * r);
    RunningInstance {
        comm_w: u1
            .comm_w
            .iter()
            .zip(&u2.comm_w)
            .map(|(a, b)| combine::<E>(&[(*a, one), (*b, r)]))
            .collect(),
        comm_e: combine::<E>(&[(u1.comm_e, one), (*comm_t, r), (u2.comm_e, r2)]),
        u: u1.u + r * u2.u,
        x: u1.x.iter().zip(&u2.x).map(|(a, b)| *a + r * b).collect(),
    }
}
