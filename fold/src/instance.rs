//! Committed instances and witnesses of one curve's circuit: a fresh fold
//! (`FoldInstance`: its witness commitments and public IO) and the running
//! relaxed instance the folds accumulate into (`RunningInstance`). A witness
//! has one commitment, or one per part on a split layout (`[comm_W₁,
//! comm_W₂]` or `[comm_W₁, comm_W₂, comm_W₃]`, on disjoint generators, so
//! their sum is an ordinary commitment to W and nova-snark's SNARKs see a
//! normal instance). A commitment of the secondary is [`crate::rows::ROWS`]
//! points ([`points`]); circuits and hashes read every one.

use crate::cs::WitnessLayout;
use crate::error::{FoldError, Result};
use crate::rows::{RowCommitment, ROWS};
use std::any::{Any, TypeId};
use ff::Field;
use nova_snark::gadgets::utils::scalar_as_base;
use nova_snark::r1cs::{R1CSShape, RelaxedR1CSInstance, RelaxedR1CSWitness, SparseMatrix};
use nova_snark::traits::commitment::{CommitmentEngineTrait, CommitmentTrait};
use nova_snark::traits::{AbsorbInROTrait, Engine, ROTrait};
use serde::{Deserialize, Serialize};

/// A commitment of `E`'s commitment engine.
pub type Commitment<E> = <<E as Engine>::CE as CommitmentEngineTrait<E>>::Commitment;
/// A commitment key of `E`'s commitment engine.
pub type CommitmentKey<E> = <<E as Engine>::CE as CommitmentEngineTrait<E>>::CommitmentKey;
/// The blinding generator of `E`'s commitment engine.
pub type DerandKey<E> = <<E as Engine>::CE as CommitmentEngineTrait<E>>::DerandKey;

/// A fresh fold's instance: its witness commitments and public IO.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct FoldInstance<E: Engine> {
    /// `[comm_W]`, or one per part on a split layout (`[comm_W₁, comm_W₂, …]`).
    pub comm_w: Vec<Commitment<E>>,
    /// Public IO.
    pub x: Vec<E::Scalar>,
}

/// A fresh fold's witness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct FoldWitness<E: Engine> {
    /// W, laid out as the shape's layout says.
    pub w: Vec<E::Scalar>,
    /// One blind per commitment.
    pub blinds: Vec<E::Scalar>,
}

/// A running (relaxed) instance: `A·Z ∘ B·Z = u·C·Z + E`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct RunningInstance<E: Engine> {
    /// Witness commitments, as in [`FoldInstance`].
    pub comm_w: Vec<Commitment<E>>,
    /// Commitment to the error vector.
    pub comm_e: Commitment<E>,
    /// The relaxation scalar.
    pub u: E::Scalar,
    /// Public IO.
    pub x: Vec<E::Scalar>,
}

/// A running instance's witness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct RunningWitness<E: Engine> {
    /// W.
    pub w: Vec<E::Scalar>,
    /// One blind per witness commitment.
    pub blinds: Vec<E::Scalar>,
    /// The error vector.
    pub e: Vec<E::Scalar>,
    /// Its blind.
    pub r_e: E::Scalar,
}

/// Commit to W as `layout` splits it, one commitment per part and blind:
/// `[Com(W)]`, `[Com(0‖W₁), Com(W₂‖0)]` (W₂ on the first m generators), or
/// `[Com(0‖0‖W₁), Com(0‖W₂‖0), Com(W₃‖0‖0)]`.
pub fn commit_witness<E: Engine + 'static>(
    ck: &CommitmentKey<E>,
    layout: &WitnessLayout,
    w: &[E::Scalar],
    blinds: &[E::Scalar],
) -> Result<Vec<Commitment<E>>> {
    if w.len() != layout.num_vars() || blinds.len() != parts(layout) {
        return Err(FoldError::Invalid(format!(
            "a witness of {} values and {} blinds for a layout of {} values in {} parts",
            w.len(),
            blinds.len(),
            layout.num_vars(),
            parts(layout)
        )));
    }
    if !layout.split() {
        return Ok(vec![commit_at::<E>(ck, 0, w, &blinds[0])]);
    }
    Ok((0..layout.parts)
        .map(|k| {
            let cols = layout.part_columns(k);
            commit_at::<E>(ck, cols.start, &w[cols], &blinds[k])
        })
        .collect())
}

/// Com of `values` on the generators from column `from` on (a prefix part
/// starting at 0 is an ordinary commitment).
pub use crate::commit::commit_on as commit_at;

/// Com(0‖W₁): W₁'s values on the generators after every later part's.
pub fn commit_first<E: Engine + 'static>(
    ck: &CommitmentKey<E>,
    layout: &WitnessLayout,
    w1: &[E::Scalar],
    blind: &E::Scalar,
) -> Commitment<E> {
    commit_at::<E>(ck, layout.first_offset(), w1, blind)
}

/// How many commitments a witness of this layout has.
pub fn parts(layout: &WitnessLayout) -> usize {
    layout.parts
}

/// How many points a commitment of `E` is: [`crate::rows::ROWS`] for the
/// secondary's commitments in rows, one for any other engine's.
pub fn points_per<E: Engine + 'static>() -> usize {
    if TypeId::of::<Commitment<E>>() == TypeId::of::<RowCommitment>() {
        ROWS
    } else {
        1
    }
}

/// A commitment's points (x, y, at infinity), row by row: what a circuit
/// over `E::Base` allocates for it and what its hashes absorb.
pub fn points<E: Engine + 'static>(c: &Commitment<E>) -> Vec<(E::Base, E::Base, bool)> {
    let rows = (c as &dyn Any).downcast_ref::<RowCommitment>().map(|rc| {
        let pts: Vec<_> = rc.rows().iter().map(|r| r.to_coordinates()).collect();
        // the commitment is in rows, so E::Base is Grumpkin's base field: an identity cast
        (Box::new(pts) as Box<dyn Any>).downcast::<Vec<(E::Base, E::Base, bool)>>()
    });
    match rows {
        Some(Ok(pts)) => *pts,
        _ => vec![c.to_coordinates()],
    }
}

/// Sum of the witness commitments (the ordinary commitment to W).
pub fn sum_commitments<E: Engine>(c: &[Commitment<E>]) -> Commitment<E> {
    c.iter()
        .copied()
        .fold(Commitment::<E>::default(), |a, b| a + b)
}

impl<E: Engine> RunningInstance<E> {
    /// The all-zero instance (what the first fold starts from).
    pub fn default_with(parts: usize, io: usize) -> Self {
        RunningInstance {
            comm_w: vec![Commitment::<E>::default(); parts],
            comm_e: Commitment::<E>::default(),
            u: E::Scalar::ZERO,
            x: vec![E::Scalar::ZERO; io],
        }
    }

    /// A fresh instance as a running one (E = 0, u = 1).
    pub fn from_fold(u: &FoldInstance<E>) -> Self {
        RunningInstance {
            comm_w: u.comm_w.clone(),
            comm_e: Commitment::<E>::default(),
            u: E::Scalar::ONE,
            x: u.x.clone(),
        }
    }

    /// nova-snark's relaxed instance (one commitment to W: the parts' sum).
    pub fn to_nova(&self) -> Result<RelaxedR1CSInstance<E>> {
        // nova-snark checks X against a shape; one with no constraints will do
        let io_shape = R1CSShape::<E>::new(
            0,
            0,
            self.x.len(),
            SparseMatrix::empty(),
            SparseMatrix::empty(),
            SparseMatrix::empty(),
        )?;
        Ok(RelaxedR1CSInstance::new(
            &io_shape,
            sum_commitments::<E>(&self.comm_w),
            self.comm_e,
            self.u,
            self.x.clone(),
        )?)
    }

    /// Absorb into `E`'s RO (over `E::Base`), as the circuit that folds it
    /// absorbs its allocation: the commitments' and E's coordinates (x, y),
    /// their infinity flags as one number `Σ 2ᵏ·infₖ` (the secondary's state
    /// hash then fits one permutation of the wide sponge), u, then X as
    /// limbs of 68, 68 and 118 bits.
    pub fn absorb(&self, ro: &mut E::RO)
    where
        E: 'static,
    {
        let mut flags = E::Base::ZERO;
        let mut bit = E::Base::ONE;
        for (x, y, inf) in self.comm_w.iter().chain([&self.comm_e]).flat_map(points::<E>) {
            ro.absorb(x);
            ro.absorb(y);
            if inf {
                flags += bit;
            }
            bit = bit.double();
        }
        ro.absorb(flags);
        ro.absorb(scalar_as_base::<E>(self.u));
        for x in &self.x {
            for limb in limbs_of::<E::Scalar>(x) {
                ro.absorb(scalar_as_base::<E>(limb));
            }
        }
    }
}

impl<E: Engine> FoldInstance<E> {
    /// Absorb into `E`'s RO (commitments, then X; X values are below 2²⁵⁰).
    pub fn absorb(&self, ro: &mut E::RO) {
        for c in &self.comm_w {
            c.absorb_in_ro(ro);
        }
        for x in &self.x {
            ro.absorb(scalar_as_base::<E>(*x));
        }
    }
}

impl<E: Engine> RunningWitness<E> {
    /// The all-zero witness of a shape.
    pub fn default_with(shape: &R1CSShape<E>, parts: usize) -> Self {
        RunningWitness {
            w: vec![E::Scalar::ZERO; shape.num_vars()],
            blinds: vec![E::Scalar::ZERO; parts],
            e: vec![E::Scalar::ZERO; shape.num_cons()],
            r_e: E::Scalar::ZERO,
        }
    }

    /// A fresh witness as a running one.
    pub fn from_fold(shape: &R1CSShape<E>, w: &FoldWitness<E>) -> Self {
        RunningWitness {
            w: w.w.clone(),
            blinds: w.blinds.clone(),
            e: vec![E::Scalar::ZERO; shape.num_cons()],
            r_e: E::Scalar::ZERO,
        }
    }

    /// nova-snark's relaxed witness (one blind: the parts' sum).
    pub fn to_nova(&self, shape: &R1CSShape<E>) -> Result<RelaxedR1CSWitness<E>> {
        let r_w = self.blinds.iter().fold(E::Scalar::ZERO, |a, b| a + b);
        Ok(RelaxedR1CSWitness::new(
            shape,
            self.w.clone(),
            r_w,
            self.e.clone(),
            self.r_e,
        )?)
    }
}

/// A scalar as the circuit holds it: limbs of 68, 68 and 118 bits
/// (little-endian, `foreign::LIMBS`).
pub fn limbs_of<F: ff::PrimeField>(x: &F) -> Vec<F> {
    crate::foreign::limbs_of(&crate::foreign::field_to_big(x))
        .iter()
        .map(crate::foreign::big_to_field)
        .collect()
}

/// Check that `(u, w)` satisfies the shape, with each commitment opened on
/// its own part (so a split commitment is checked to lie on its generators).
pub fn check_running<E: Engine + 'static>(
    ck: &CommitmentKey<E>,
    shape: &R1CSShape<E>,
    layout: &WitnessLayout,
    u: &RunningInstance<E>,
    w: &RunningWitness<E>,
) -> Result<()> {
    if commit_witness::<E>(ck, layout, &w.w, &w.blinds)? != u.comm_w {
        return Err(FoldError::Rejected(
            "a witness commitment does not open to its part of W".into(),
        ));
    }
    shape
        .is_sat_relaxed(ck, &u.to_nova()?, &w.to_nova(shape)?)
        .map_err(|e| FoldError::Rejected(e.to_string()))
}
