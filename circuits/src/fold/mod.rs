//! The step circuit of one fold: a tile of one layer (forward, loss or
//! incoming gradient, backward, optimizer update) and a section of the batch
//! input X, as a page of components, each in its own file with its own
//! witness type:
//!
//! | component | does | namespace |
//! | --- | --- | --- |
//! | [`desc`] | descriptor, schedule chain, row masks | `desc/…` |
//! | [`challenges`] | powers of ρ and γ, tile offsets | `pow/…` |
//! | [`cells`] | Z, ReLU, Y, dA per (sample, row) | `cells/c{i}_{t}/…` |
//! | [`produce`] | τA records, Aρ shares, F3 left side, D(X), D(Y) | `out/…` |
//! | [`consume`] | τA and Aρ claims about the layer's input | `in/…` |
//! | [`rows`] | W, W′, b, b′, the optimizer's update, F1/F2/F3, commitments | `rows/row{t}/…` |
//! | [`inputs`] | X columns, D(X), layer 1's claims about X | `x/…` |
//! | [`settle`] | claims, transcripts, c_batch, the next state | `state/…` |
//!
//! Range checks go through one [`RangeCheck`] for the whole fold, closed by
//! `finish` after the last component (where a lookup argument would add its
//! table). docs/SOUNDNESS.md says why each constraint family is there.

pub mod cells;
pub(crate) mod challenges;
pub mod consume;
pub(crate) mod ctx;
pub(crate) mod desc;
pub(crate) mod inputs;
pub(crate) mod produce;
pub mod record;
pub mod rows;
pub(crate) mod settle;

use crate::layout::Layout;
use crate::update::{adam::Adam, momentum::Momentum, sgd::Sgd, UpdateGadget};
use crate::witness::TileWitness;
use ctx::{Ctx, Var};
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_fold::StepCircuit;
use std::sync::Arc;
use zkstep_core::spec::Optimizer;
use zkstep_gadgets::expr::Fr;
use zkstep_gadgets::range::{BitDecomposition, RangeCheck};

/// One fold's circuit. `witness: None` synthesises the shape only.
#[derive(Clone, Debug)]
pub struct TileCircuit {
    /// The proof's layout (shared by all folds).
    pub layout: Arc<Layout>,
    /// This fold's witness.
    pub witness: Option<Arc<TileWitness>>,
}

impl TileCircuit {
    /// A circuit for shape synthesis (keygen).
    pub fn shape(layout: Arc<Layout>) -> Self {
        TileCircuit {
            layout,
            witness: None,
        }
    }
}

impl StepCircuit<Fr> for TileCircuit {
    type Carry = Vec<Var>;

    fn arity(&self) -> usize {
        self.layout.arity()
    }

    // one phase: no challenge is drawn from this fold's own witness (yet)
    fn first<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        z: &[Var],
    ) -> Result<Self::Carry, SynthesisError> {
        self.synthesize(cs, z)
    }

    fn second<CS: ConstraintSystem<Fr>>(
        &self,
        _: &mut CS,
        carry: Self::Carry,
        _: &[Var],
    ) -> Result<Vec<Var>, SynthesisError> {
        Ok(carry)
    }
}

impl TileCircuit {
    /// The fold's constraints: zᵢ ↦ zᵢ₊₁.
    pub fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        z: &[Var],
    ) -> Result<Vec<Var>, SynthesisError> {
        let ctx = Ctx::new(&self.layout, z);
        let w = self.witness.as_deref();
        let mut rc = BitDecomposition;
        let out = match self.layout.spec.optimizer {
            Optimizer::Sgd { lr_fx } => synthesize(cs, &mut rc, &ctx, &Sgd { lr_fx }, w),
            Optimizer::Momentum { lr_fx, mu_fx } => {
                synthesize(cs, &mut rc, &ctx, &Momentum { lr_fx, mu_fx }, w)
            }
            Optimizer::Adam(h) => synthesize(cs, &mut rc, &ctx, &Adam { h }, w),
        }?;
        rc.finish(cs.namespace(|| "range"))?;
        Ok(out)
    }
}

/// The page: every component in order, with the spec's optimizer gadget.
fn synthesize<CS: ConstraintSystem<Fr>, R: RangeCheck, G: UpdateGadget>(
    cs: &mut CS,
    rc: &mut R,
    ctx: &Ctx,
    g: &G,
    w: Option<&TileWitness>,
) -> Result<Vec<Var>, SynthesisError> {
    let desc = desc::synthesize(cs.namespace(|| "desc"), ctx, w.map(|w| &w.desc))?;
    let pw = challenges::synthesize(cs.namespace(|| "pow"), ctx, &desc.flags)?;
    let cells = cells::synthesize(
        cs.namespace(|| "cells"),
        rc,
        ctx,
        &desc,
        w.map(|w| (w.cells.as_slice(), w.softmax.as_slice())),
    )?;
    let produced = produce::synthesize(cs.namespace(|| "out"), ctx, &desc, &pw, &cells)?;
    let consumed =
        consume::synthesize(cs.namespace(|| "in"), ctx, &desc, &pw, w.map(|w| &w.links))?;
    let inputs = rows::RowInputs {
        desc: &desc,
        pw: &pw,
        cells: &cells,
        consumed: &consumed,
    };
    let rows_out = rows::synthesize(
        cs.namespace(|| "rows"),
        rc,
        ctx,
        g,
        &inputs,
        w.map(|w| w.rows.as_slice()),
    )?;
    let x = inputs::synthesize(
        cs.namespace(|| "x"),
        rc,
        ctx,
        &desc,
        &pw,
        &consumed,
        w.map(|w| w.x.as_slice()),
    )?;
    let parts = settle::Parts {
        desc: &desc,
        pw: &pw,
        cells: &cells,
        produced: &produced,
        consumed: &consumed,
        rows: &rows_out,
        inputs: &x,
    };
    settle::synthesize(
        cs.namespace(|| "state"),
        ctx,
        &parts,
        w.map(|w| w.salt),
        w.map(|w| w.next),
    )
}
