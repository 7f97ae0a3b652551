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
//! | [`softmax`] | cross-entropy: the tile's share of each sample's softmax, its loss identities, the claimed maximum and sum | `softmax/s{i}/…`, `softmax_claims/…` |
//! | [`produce`] | τA records, Aρ shares, F3 left side, D(X), D(Y) | `out/…` |
//! | [`consume`] | τA and Aρ claims about the layer's input | `in/…` |
//! | [`rows`] | W, W′, b, b′, the optimizer's update, F1/F2/F3, commitments | `rows/row{t}/…` |
//! | [`inputs`] | X columns, D(X), layer 1's claims about X | `x/…` |
//! | [`settle`] | claims, the second transcript T2, c_batch, the next state | `state/…` |
//! | [`lookup`] | the table slice, then (second phase) the LogUp sums | `lookup/…` |
//!
//! Range checks go through one [`RangeCheck`] for the whole fold: a LogUp
//! lookup (`zkstep_gadgets::lookup`), whose limbs are the circuit's first
//! phase; the [`lookup`] component allocates the fold's slice of the table
//! (its multiplicities last: the late values) and, in the second phase at
//! the challenge α, adds both sums to the state and checks them equal where
//! the step closes. docs/SOUNDNESS.md says why each constraint family is there.
//!
//! Three challenges come from the folding layer (`PerRunTwice`): α (the
//! lookups) and ρ (the matrix identities), drawn after every fold's first
//! phase is committed, and γ (the τA links between layers), drawn after
//! every fold's second part W₂ is committed too; every fold requires the
//! state's ρ and γ to be the drawn ones. Whatever depends on ρ but not on γ
//! (its powers, the identities' sums, the consumed vectors) is allocated
//! through [`zkstep_fold::after_challenges`] and so lands in W₂, though the
//! page runs it in the first phase; whatever depends on γ (its powers, the
//! sums at γ, the claims and the next state) through
//! [`zkstep_fold::after_late_challenges`], in W₃; the stored values,
//! remainders, limbs and the commitment chains stay in W₁. A range check
//! refuses to run after either ([`Phase1Only`]): its limbs must be
//! committed before α.

pub mod cells;
pub(crate) mod challenges;
pub mod consume;
pub(crate) mod ctx;
pub(crate) mod desc;
pub(crate) mod inputs;
pub mod lookup;
pub(crate) mod produce;
pub mod rows;
pub(crate) mod settle;
pub mod softmax;

use crate::layout::Layout;
use crate::update::{adam::Adam, momentum::Momentum, sgd::Sgd, UpdateGadget};
use crate::witness::TileWitness;
use ctx::{Ctx, Var};
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_fold::{after_challenges, after_late_challenges, is_after_challenges, StepCircuit};
use std::sync::Arc;
use zkstep_core::spec::Optimizer;
use zkstep_gadgets::expr::{Expr, Fr};
pub use zkstep_gadgets::lookup::Tally;
use zkstep_gadgets::lookup::LogUp;
use zkstep_gadgets::range::RangeCheck;

/// One fold's circuit. `witness: None` synthesises the shape only.
#[derive(Clone, Debug)]
pub struct TileCircuit {
    /// The proof's layout (shared by all folds).
    pub layout: Arc<Layout>,
    /// This fold's witness.
    pub witness: Option<Arc<TileWitness>>,
    /// Where the first phase counts its lookups (a prover's first pass,
    /// which learns the step's multiplicities from it); None otherwise.
    pub tally: Option<Tally>,
}

impl TileCircuit {
    /// A circuit for shape synthesis (keygen).
    pub fn shape(layout: Arc<Layout>) -> Self {
        TileCircuit {
            layout,
            witness: None,
            tally: None,
        }
    }

    /// A fold's circuit with its witness.
    pub fn fold(layout: Arc<Layout>, witness: TileWitness) -> Self {
        TileCircuit {
            layout,
            witness: Some(Arc::new(witness)),
            tally: None,
        }
    }
}

impl StepCircuit<Fr> for TileCircuit {
    type Carry = lookup::FirstPhase;

    fn arity(&self) -> usize {
        self.layout.arity()
    }

    // α (the lookups) and ρ (the matrix identities), drawn after every
    // fold's first phase; γ (the τA links) after every fold's W₂
    fn num_challenges(&self) -> usize {
        crate::engine::NUM_CHALLENGES
    }

    fn num_late_challenges(&self) -> usize {
        crate::engine::NUM_LATE_CHALLENGES
    }

    // the table slice's multiplicities count the whole step's lookups
    fn late(&self) -> usize {
        self.layout.table_slice
    }

    // the second phase changes only the lookup sums, which depend on α (the
    // slots that depend on ρ were computed at the first pass's stand-in ρ)
    fn provisional_next(&self, carry: &Self::Carry) -> Option<Vec<Fr>> {
        carry.z.iter().map(|v| v.get_value()).collect()
    }

    fn first<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        z: &[Var],
    ) -> Result<Self::Carry, SynthesisError> {
        self.first_phase(cs, z)
    }

    fn second<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        carry: Self::Carry,
        challenges: &[Var],
    ) -> Result<Vec<Var>, SynthesisError> {
        close(cs, &self.layout, carry, challenges)
    }
}

impl TileCircuit {
    /// The first phase: the whole fold (every check but the lookups'
    /// sums), its range checks recorded as lookups, then the table slice's
    /// multiplicities (allocated last: the late values).
    pub fn first_phase<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        z: &[Var],
    ) -> Result<lookup::FirstPhase, SynthesisError> {
        let ctx = Ctx::new(&self.layout, z);
        let w = self.witness.as_deref();
        let mut rc = Phase1Only(LogUp::new(self.layout.limb_bits, self.tally.clone()));
        let (z_next, desc) = match self.layout.spec.optimizer {
            Optimizer::Sgd { lr_fx } => synthesize(cs, &mut rc, &ctx, &Sgd { lr_fx }, w),
            Optimizer::Momentum { lr_fx, mu_fx } => {
                synthesize(cs, &mut rc, &ctx, &Momentum { lr_fx, mu_fx }, w)
            }
            Optimizer::Adam(h) => synthesize(cs, &mut rc, &ctx, &Adam { h }, w),
        }?;
        lookup::first(
            cs.namespace(|| "multiplicities"),
            &self.layout,
            z_next,
            desc,
            rc.0.into_tagged_queries(),
            w.map(|w| w.mult.as_slice()),
            (
                z[self.layout.slots.statement.rho].clone(),
                z[self.layout.slots.transcript.gamma].clone(),
            ),
        )
    }

    /// Both phases at the challenges `[α, ρ, γ]` (tests and shape statistics):
    /// zᵢ ↦ zᵢ₊₁.
    pub fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        z: &[Var],
        challenges: &[Var],
    ) -> Result<Vec<Var>, SynthesisError> {
        let p = self.first_phase(cs, z)?;
        close(cs, &self.layout, p, challenges)
    }
}

/// The second phase: the state's ρ and γ are the drawn ones, then the lookup sums at α.
fn close<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    lay: &Layout,
    p: lookup::FirstPhase,
    challenges: &[Var],
) -> Result<Vec<Var>, SynthesisError> {
    let [alpha, rho, gamma] = challenges else {
        return Err(SynthesisError::Unsatisfiable(format!(
            "{} challenges for a fold that draws three",
            challenges.len()
        )));
    };
    for (name, state, drawn) in [("rho_drawn", &p.rho, rho), ("gamma_drawn", &p.gamma, gamma)] {
        zkstep_gadgets::expr::enforce_eq(
            cs.namespace(|| name),
            &zkstep_gadgets::expr::var(state),
            &zkstep_gadgets::expr::var(drawn),
        );
    }
    lookup::close(cs.namespace(|| "lookup"), lay, p, alpha)
}

/// A range check that refuses to run after the challenges: LogUp's limbs
/// must be in W₁, committed before α (and every range-checked value is one
/// the identities at ρ test or one the commitments bind).
pub struct Phase1Only<R>(pub R);

impl<R: RangeCheck> Phase1Only<R> {
    fn refuse_late() -> Result<(), SynthesisError> {
        if is_after_challenges() {
            return Err(SynthesisError::Unsatisfiable(
                "a range check after the challenges (its limbs must be committed before them)"
                    .into(),
            ));
        }
        Ok(())
    }
}

impl<R: RangeCheck> RangeCheck for Phase1Only<R> {
    fn bits<C: ConstraintSystem<Fr>>(&mut self, cs: C, e: &Expr, bits: u32) -> Result<(), SynthesisError> {
        Self::refuse_late()?;
        self.0.bits(cs, e, bits)
    }

    fn signed<C: ConstraintSystem<Fr>>(&mut self, cs: C, e: &Expr, bits: u32) -> Result<(), SynthesisError> {
        Self::refuse_late()?;
        self.0.signed(cs, e, bits)
    }

    fn two_sided_width(&self, bits: u32) -> u32 {
        self.0.two_sided_width(bits)
    }

    fn below<C: ConstraintSystem<Fr>>(&mut self, cs: C, e: &Expr, bound: u128) -> Result<(), SynthesisError> {
        Self::refuse_late()?;
        self.0.below(cs, e, bound)
    }

    fn finish<C: ConstraintSystem<Fr>>(self, cs: C) -> Result<(), SynthesisError> {
        self.0.finish(cs)
    }
}

/// The page: every component in order, with the spec's optimizer gadget;
/// returns z_{i+1} (the lookup sums passed through) and the descriptor.
fn synthesize<CS: ConstraintSystem<Fr>, R: RangeCheck, G: UpdateGadget>(
    cs: &mut CS,
    rc: &mut R,
    ctx: &Ctx,
    g: &G,
    w: Option<&TileWitness>,
) -> Result<(Vec<Var>, desc::Desc), SynthesisError> {
    let desc = desc::synthesize(cs.namespace(|| "desc"), ctx, w.map(|w| &w.desc))?;
    let pw = after_challenges(|| challenges::synthesize(cs.namespace(|| "pow"), ctx, &desc.flags))?;
    let cells = cells::synthesize(
        cs.namespace(|| "cells"),
        rc,
        ctx,
        &desc,
        w.map(|w| w.cells.as_slice()),
    )?;
    let sm = match ctx.lay.slots.softmax {
        Some(_) => Some(softmax::synthesize(
            cs.namespace(|| "softmax"),
            rc,
            ctx,
            &desc,
            &cells,
            w.map(|w| &w.softmax),
        )?),
        None => None,
    };
    let (produced, consumed, sm_claims) = after_challenges(|| {
        let produced = produce::synthesize(cs.namespace(|| "out"), ctx, &desc, &pw, &cells)?;
        let consumed =
            consume::synthesize(cs.namespace(|| "in"), ctx, &desc, &pw, w.map(|w| &w.links))?;
        let sm_claims = match &sm {
            Some(sv) => Some(softmax::claims(
                cs.namespace(|| "softmax_claims"),
                ctx,
                &desc,
                &pw,
                sv,
            )?),
            None => None,
        };
        Ok::<_, SynthesisError>((produced, consumed, sm_claims))
    })?;
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
        produced: &produced,
        consumed: &consumed,
        rows: &rows_out,
        inputs: &x,
        softmax: sm_claims,
    };
    let z_next = after_late_challenges(|| {
        settle::synthesize(
            cs.namespace(|| "state"),
            ctx,
            &parts,
            w.map(|w| w.salt),
            w.map(|w| w.next),
        )
    })?;
    Ok((z_next, desc))
}
