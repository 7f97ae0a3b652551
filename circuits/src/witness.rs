//! The witness of every fold, read from the reference executor's trace.
//!
//! Nothing is recomputed differently here: values come from `StepTrace`, the
//! two checkpoints and the batch; padding (rows and columns beyond a layer's
//! widths) gets each component's canonical padding witness (zero values,
//! remainders equal to the rounding offset). The challenge ρ is given (the
//! folding layer draws it from the commitments to every fold's first
//! phase), the ρ-dependent claims (τA, Aρ) are filled in at it, and the
//! second challenge γ is derived from the second transcript of the τA
//! vectors the folds consume.

use crate::error::CircuitError;
use crate::fold::cells::Cell;
use crate::fold::consume::LinkWitness;
use crate::fold::rows::RowWitness;
use crate::layout::{Layout, StepOpening, TileDesc};
use crate::transcript::Challenges;
use crate::update::adam::AdamRow;
use crate::update::momentum::MomentumRow;
use crate::update::sgd::SgdRow;
use crate::update::RowUpdate;
use zkstep_core::commit::commit_all;
use zkstep_core::exec::{StepTrace, UpdateTrace};
use zkstep_core::fixed::{SCALE_I128, SCALE_SQ};
use zkstep_core::poseidon::{fr_from_i128, Fr};
use crate::fold::softmax::SoftmaxWitness;
use zkstep_core::softmax::{softmax_tile, softmax_trace};
use zkstep_core::spec::{Loss, Optimizer};
use zkstep_core::{Batch, Checkpoint, Matrix};

/// Everything one fold needs, by component. Cells `(i, t)` are stored at
/// `i·rows + t`; rows `t < rows`, each padded to `n_max` columns.
#[derive(Clone, Debug)]
pub struct TileWitness {
    /// What this fold does.
    pub desc: TileDesc,
    /// The cells (B × rows).
    pub cells: Vec<Cell<i64>>,
    /// The weight rows.
    pub rows: Vec<RowWitness>,
    /// The consumer's claims (depend on the challenges).
    pub links: LinkWitness,
    /// The X section: X[i, x0 + c] at `i·xcols + c` (zero past `x_active`).
    pub x: Vec<i64>,
    /// Cross-entropy: each sample's softmax cut to the tile (empty for MSE).
    pub softmax: SoftmaxWitness,
    /// Salt of the batch commitment.
    pub salt: Fr,
    /// The next step's public values (a step's last fold in a segment; zero otherwise).
    pub next: NextStep,
    /// Multiplicities of the fold's slice of the lookup table (entries
    /// `desc.tbase …`): how often the step looks each up. Counted over the
    /// whole step, so known only after every fold's first phase ran
    /// ([`fill_multiplicities`]); zero until then.
    pub mult: Vec<u64>,
}

/// The public values of the step that follows, which a step's last fold
/// puts into the state for that step's first fold. Zero on every other fold
/// and after a proof's last step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NextStep {
    /// Its c_after.
    pub c_after: Fr,
    /// Its c_batch.
    pub c_batch: Fr,
    /// Its ρ.
    pub rho: Fr,
    /// Its γ.
    pub gamma: Fr,
    /// Its Adam constants (k₁, c₂), zero for another optimizer.
    pub adam: (Fr, Fr),
}

impl NextStep {
    /// What a closing fold carries of the step that follows.
    pub fn of(o: &StepOpening) -> Self {
        NextStep {
            c_after: o.c_after,
            c_batch: o.c_batch,
            rho: o.challenges.rho,
            gamma: o.challenges.gamma,
            adam: o.adam,
        }
    }

    /// The values in the circuit's order.
    pub fn values(&self) -> [Fr; 6] {
        [
            self.c_after,
            self.c_batch,
            self.rho,
            self.gamma,
            self.adam.0,
            self.adam.1,
        ]
    }
}

fn get(m: &Matrix, i: usize, j: usize) -> i64 {
    if i < m.rows && j < m.cols {
        m.at(i, j)
    } else {
        0
    }
}

/// A padding tile of `layout` for descriptor `d`.
fn padding(layout: &Layout, d: TileDesc, salt: Fr) -> TileWitness {
    let (r, n, bsz) = (layout.rows, layout.seg_w, layout.batch);
    let rounding = layout.spec.rounding;
    let off_s = rounding.offset(SCALE_I128) as i64;
    let off_sq = rounding.offset(SCALE_SQ) as i64;
    let update = match (layout.spec.optimizer, layout.spec.optimizer.adam()) {
        (_, Some(h)) => RowUpdate::Adam(AdamRow::padding(n, &h, rounding)),
        (Optimizer::Momentum { .. }, _) => RowUpdate::Momentum(MomentumRow::padding(n, off_s)),
        _ => RowUpdate::Sgd(SgdRow::padding(n, off_sq, off_s)),
    };
    let row = RowWitness {
        w: vec![0; n],
        w_new: vec![0; n],
        b: 0,
        b_new: 0,
        update,
    };
    TileWitness {
        desc: d,
        cells: vec![Cell::padding(off_s); bsz * r],
        rows: vec![row; r],
        links: LinkWitness {
            ta_in: vec![Fr::from(0u64); n],
            ar_in: vec![Fr::from(0u64); bsz],
            ar_up: vec![Fr::from(0u64); bsz],
        },
        x: vec![0; bsz * layout.xcols],
        softmax: SoftmaxWitness::default(),
        salt,
        next: NextStep::default(),
        mult: vec![0; layout.table_slice],
    }
}

/// Give each fold its slice of the step's lookup multiplicities `tally`
/// (how often each table value was looked up): an entry covered
/// by several folds (the slices wrap round the table) is counted in the
/// first, zero in the others.
pub fn fill_multiplicities(
    layout: &Layout,
    witnesses: &mut [TileWitness],
    tally: &[u64],
) -> Result<(), CircuitError> {
    let size = layout.table_size();
    if tally.len() != size {
        return Err(CircuitError::Lookup(format!(
            "a tally of {} values for a table of {size}",
            tally.len()
        )));
    }
    for (w, m) in witnesses.iter_mut().zip(multiplicity_slices(layout, tally)) {
        w.mult = m;
    }
    Ok(())
}

/// Each fold's slice of a step's multiplicities `tally` (one count a table
/// value), in schedule order: fold f holds entries `tbase … tbase + slice`,
/// counted where it is the first fold to cover them.
pub fn multiplicity_slices(layout: &Layout, tally: &[u64]) -> Vec<Vec<u64>> {
    let size = layout.table_size();
    let s = layout.table_slice;
    layout
        .schedule
        .iter()
        .enumerate()
        .map(|(f, d)| {
            (0..s)
                .map(|k| {
                    if f * s < size {
                        tally.get(d.tbase + k).copied().unwrap_or(0)
                    } else {
                        0
                    }
                })
                .collect()
        })
        .collect()
}

/// Row t of a layer tile: this fold's segment of W and W′ (weights `k0 …`),
/// the optimizer's values, and on the row's last segment b and b′.
fn fill_row(
    row: &mut RowWitness,
    before: &Checkpoint,
    trace: &StepTrace,
    d: &TileDesc,
    j: usize,
    k0: usize,
) -> Result<(), CircuitError> {
    let l = d.layer - 1;
    let (lp, np) = (&before.layers[l], &trace.after.layers[l]);
    let n_in = lp.w.cols;
    let (w, w_new) = (lp.w.row(j), np.w.row(j));
    for c in 0..row.w.len() {
        if k0 + c < n_in {
            row.w[c] = w[k0 + c];
            row.w_new[c] = w_new[k0 + c];
        }
    }
    if d.last_seg {
        row.b = lp.b[j];
        row.b_new = np.b[j];
    }
    match (&trace.backward[l].update, &mut row.update) {
        (UpdateTrace::Sgd(t), RowUpdate::Sgd(r)) => r.fill(t, j, n_in, k0, d.last_seg),
        (UpdateTrace::Momentum(t), RowUpdate::Momentum(r)) => {
            match (&lp.state[..], &np.state[..]) {
                ([v], [v2]) => r.fill(
                    t,
                    j,
                    (v.w.row(j), v2.w.row(j)),
                    (v.b[j], v2.b[j]),
                    (k0, d.last_seg),
                ),
                _ => return Err(CircuitError::NoOptimizerState(l + 1)),
            }
        }
        (UpdateTrace::Adam(t), RowUpdate::Adam(r)) => match &lp.state[..] {
            [m, v] => r.fill(t, j, (m, v), (k0, d.last_seg)),
            _ => return Err(CircuitError::NoOptimizerState(l + 1)),
        },
        _ => return Err(CircuitError::OptimizerMismatch(l + 1)),
    }
    Ok(())
}

/// The cells of a layer tile: Z, its remainder, the selector, Y (top) and dA.
fn fill_cells(
    tw: &mut TileWitness,
    layout: &Layout,
    trace: &StepTrace,
    batch: &Batch,
) -> Result<(), CircuitError> {
    let d = tw.desc;
    let (r, l) = (layout.rows, d.layer - 1);
    let n_out = layout.spec.layers[l].outputs;
    let fwd = &trace.forward[l];
    for t in 0..d.rows_active {
        let j = d.j0 + t;
        for i in 0..layout.batch {
            let c = &mut tw.cells[i * r + t];
            c.z = fwd.z.at(i, j);
            c.z_r = fwd.z_rem[i * n_out + j];
            c.s = (c.z >= 1) as i64;
            if d.is_top {
                c.y = get(&batch.y, i, j);
                c.da = trace.loss.da.at(i, j);
                c.da_r = trace.loss.da_rem[i * n_out + j];
            } else {
                let (m, rem) = trace.backward[l + 1]
                    .da_prev
                    .as_ref()
                    .ok_or(CircuitError::NoInputGradient(l + 2))?;
                c.da = m.at(i, j);
                c.da_r = rem[i * n_out + j];
            }
        }
    }
    Ok(())
}

/// Each sample's softmax cut to the tile: on the top layer the step's own
/// (the reference executor's trace of the whole row), elsewhere a neutral
/// one (maximum 0, sum S: every entry at the maximum, nothing checked).
/// A top fold that checks no unit (a row's earlier segment, a tile with no
/// active row) still carries the row's maximum and sum.
fn fill_softmax(tw: &mut TileWitness, layout: &Layout, trace: &StepTrace) -> Result<(), CircuitError> {
    let (d, rounding) = (tw.desc, layout.spec.rounding);
    let neutral = softmax_trace(&[0], rounding).ok_or(CircuitError::Softmax(d.layer, 0))?;
    let checked = if d.last_seg { d.rows_active } else { 0 };
    tw.softmax = SoftmaxWitness::default();
    for i in 0..layout.batch {
        let cut = if d.is_top {
            trace
                .loss
                .softmax
                .get(i)
                .and_then(|full| softmax_tile(full, d.j0, layout.rows, checked, rounding))
        } else {
            softmax_tile(&neutral, 0, layout.rows, 0, rounding)
        };
        let (t, hit) = cut.ok_or(CircuitError::Softmax(d.layer, i))?;
        tw.softmax.samples.push(t);
        tw.softmax.argmax.push(hit);
    }
    Ok(())
}

/// A step's public values, computed once from its checkpoints and batch:
/// the three commitments, the step, the challenges ρ and γ and Adam's
/// constants. The folds' first state (`Layout::step_start`), the previous
/// step's opening in a segment, the proof file's statement and the verifier
/// all read this one value.
pub type StepStatement = StepOpening;

/// All fold witnesses of one step and its statement at the challenges
/// (the folding layer's: ρ drawn after every fold's first phase, γ after
/// every fold's second part; a prover builds the witnesses at stand-ins to
/// commit the parts that do not depend on them, then again at the drawn
/// ones): each commitment and each consumed vector computed once.
/// `anchors` are the proof's first and last checkpoint commitments, which ζ
/// absorbs (`Layout::zeta`; unused under the chains).
pub fn build_step(
    layout: &Layout,
    trace: &StepTrace,
    before: &Checkpoint,
    batch: &Batch,
    challenges: Challenges,
    anchors: [Fr; 2],
) -> Result<(Vec<TileWitness>, StepStatement), CircuitError> {
    let spec = &layout.spec;
    let chained = layout.commit_scheme == crate::layout::CommitScheme::Chain;
    let ckpts: &[&Checkpoint] = if chained { &[before, &trace.after] } else { &[] };
    let (c, b) = commit_all(spec, ckpts, &[batch]);
    let zeta = layout.zeta(&challenges, anchors);
    let [c_before, c_after] = layout.theta_values(
        [c.first().copied(), c.get(1).copied()].map(|c| c.unwrap_or(Fr::from(0u64))),
        [before, &trace.after],
        zeta,
    );
    let c_batch = b[0];
    let nl = layout.spec.layers.len();
    if trace.forward.len() != nl || before.layers.len() != nl {
        return Err(CircuitError::TraceLayers);
    }
    let mut out = Vec::with_capacity(layout.num_folds());
    for d in &layout.schedule {
        let mut tw = padding(layout, *d, batch.salt);
        for t in 0..d.rows_active {
            fill_row(
                &mut tw.rows[t],
                before,
                trace,
                d,
                d.j0 + t,
                d.seg * layout.seg_w,
            )?;
        }
        if d.last_seg {
            fill_cells(&mut tw, layout, trace, batch)?;
        }
        if layout.spec.loss == Loss::CrossEntropy {
            fill_softmax(&mut tw, layout, trace)?;
        }
        for i in 0..layout.batch {
            for c in 0..d.x_active {
                tw.x[i * layout.xcols + c] = batch.x.at(i, d.x0 + c);
            }
        }
        out.push(tw);
    }
    fill_claims(layout, trace, challenges.rho, batch, &mut out);
    Ok((
        out,
        StepOpening {
            zeta,
            c_before,
            c_after,
            c_batch,
            step: Fr::from(before.step),
            challenges,
            adam: layout.adam_constants(before.step),
        },
    ))
}

/// Fill the ρ-dependent claims at `rho` (the consumed vectors).
fn fill_claims(layout: &Layout, trace: &StepTrace, rho: Fr, batch: &Batch, out: &mut [TileWitness]) {
    let (n, bsz) = (layout.n_max, layout.batch);
    let pw: Vec<Fr> = powers(rho, layout.max_pow() + 1);
    let bw: Vec<Fr> = powers(pw[n], bsz);
    let layer_output = |layer: usize| -> &Matrix {
        if layer == 0 {
            &batch.x
        } else {
            &trace.forward[layer - 1].out
        }
    };
    let tau_a = |m: &Matrix| -> Vec<Fr> {
        (0..n)
            .map(|k| {
                if k < m.cols {
                    (0..bsz)
                        .map(|i| bw[i] * fr_from_i128(m.at(i, k) as i128))
                        .sum()
                } else {
                    Fr::from(0u64)
                }
            })
            .collect()
    };
    let a_rho = |m: &Matrix| -> Vec<Fr> {
        (0..bsz)
            .map(|i| {
                (0..m.cols)
                    .map(|k| pw[k] * fr_from_i128(m.at(i, k) as i128))
                    .sum()
            })
            .collect()
    };
    // each layer's input vectors once, not once a fold
    let nl = layout.spec.layers.len();
    let ta: Vec<Vec<Fr>> = (0..nl).map(|l| tau_a(layer_output(l))).collect();
    let ar: Vec<Vec<Fr>> = (0..nl).map(|l| a_rho(layer_output(l))).collect();
    for tw in out.iter_mut() {
        let d = tw.desc;
        let k0 = d.seg * layout.seg_w;
        tw.links.ta_in = ta[d.layer - 1][k0..k0 + layout.seg_w].to_vec();
        tw.links.ar_in = ar[d.layer - 1].clone();
        if d.first && !d.is_top {
            tw.links.ar_up = ar[d.layer].clone();
        }
    }
}

/// `[1, x, x², …]` of length `len`.
pub fn powers(x: Fr, len: usize) -> Vec<Fr> {
    let mut v = Vec::with_capacity(len);
    let mut p = Fr::from(1u64);
    for _ in 0..len {
        v.push(p);
        p *= x;
    }
    v
}
