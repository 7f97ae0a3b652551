//! The shape of a proof: how a spec's training step is cut into folds.
//!
//! Every fold runs the same circuit (Nova folds one shape), a *tile*: up to
//! `rows` output units of one layer, padded to the spec's widest input
//! `n_max`, and an *X section* of `xcols` columns of the batch input X.
//! Folds go layer L, L−1, …, 1; the X sections of consecutive folds take
//! X's columns in order, so the input costs no folds of its own unless it is
//! wider than the layers' folds can carry (then layer 1 gets extra tiles with
//! no active rows). The sequence of tile descriptors is the *schedule*; the
//! circuit hashes each fold's descriptor into the state, and the verifier
//! compares the final hash with the schedule it derives from the spec, so
//! folds cannot be reordered, skipped or repeated.

use crate::error::CircuitError;
use crate::slots::FoldSlots;
pub use crate::state::CommitScheme;
use crate::state::{Final, Init, StatementField};
pub use crate::transcript::Challenges;
use crate::transcript::{domain, segment_absorb};
use serde::{Deserialize, Serialize};
use zkstep_core::commit::{chain_init, evaluate, param_coefficients, params_chain_init, CHUNK, PACK};
use zkstep_core::optim::adam::AdamStep;
use zkstep_core::poseidon::{fr_from_i128, h24, Fr, RATE};
use zkstep_core::spec::Activation;
use zkstep_core::{Checkpoint, ModelSpec};

/// Fields of a tile descriptor; the first [`DESC_NUMBERS`] are numbers, the rest flags.
pub const DESC_FIELDS: usize = 16;
/// The descriptor's numeric fields (layer, j0, rows_active, n_in, x0, x_active, seg, tbase).
pub const DESC_NUMBERS: usize = 8;

/// What one fold does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileDesc {
    /// Layer 1..=L.
    pub layer: usize,
    /// First output unit (row) of the tile.
    pub j0: usize,
    /// Rows in use (≤ `rows`).
    pub rows_active: usize,
    /// Input width of the layer.
    pub n_in: usize,
    /// First column of X in this fold's X section.
    pub x0: usize,
    /// X columns in use (≤ `xcols`).
    pub x_active: usize,
    /// Segment of the row (its weights `seg·seg_w …`; 0 when rows are whole).
    pub seg: usize,
    /// First entry of the lookup table's slice this fold holds
    /// (`fold · table_slice mod 2¹⁶`).
    pub tbase: usize,
    /// ReLU layer.
    pub is_relu: bool,
    /// The last layer (its outputs feed the loss).
    pub is_top: bool,
    /// First tile of its layer.
    pub first: bool,
    /// Last tile of its layer.
    pub last: bool,
    /// The last fold of the proof.
    pub is_final: bool,
    /// A tile of the layer's first output units (j0 = 0): it fixes the
    /// consumed vectors the others must use.
    pub first_row: bool,
    /// The row's first segment.
    pub first_seg: bool,
    /// The row's last segment (the row's cells, bias and identities are checked there).
    pub last_seg: bool,
}

impl TileDesc {
    /// The descriptor as field elements, in the order the circuit absorbs them.
    pub fn fields(&self) -> [u64; DESC_FIELDS] {
        [
            self.layer as u64,
            self.j0 as u64,
            self.rows_active as u64,
            self.n_in as u64,
            self.x0 as u64,
            self.x_active as u64,
            self.seg as u64,
            self.tbase as u64,
            self.is_relu as u64,
            self.is_top as u64,
            self.first as u64,
            self.last as u64,
            self.is_final as u64,
            self.first_row as u64,
            self.first_seg as u64,
            self.last_seg as u64,
        ]
    }
}

/// Everything that fixes the circuit and the fold sequence of a spec.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The spec.
    pub spec: ModelSpec,
    /// Its digest.
    pub spec_digest: Fr,
    /// Padded row width (the spec's record width: its widest input, in
    /// whole hash blocks when segments are possible).
    pub n_max: usize,
    /// Segments a row is cut into (1: whole rows, `rows` of them a tile).
    pub segments: usize,
    /// Weights of a row in one fold (`n_max / segments`).
    pub seg_w: usize,
    /// Batch size B.
    pub batch: usize,
    /// Rows (output units) per tile.
    pub rows: usize,
    /// Columns of X per fold (the X section).
    pub xcols: usize,
    /// Columns of X (layer 1's input width).
    pub x_width: usize,
    /// Fold sequence.
    pub schedule: Vec<TileDesc>,
    /// Values per weight record (W row + b, and a row + bias per optimizer state tensor).
    pub record_len: usize,
    /// How θ_t and θ_{t+1} are bound.
    pub commit_scheme: CommitScheme,
    /// The IVC state's slots, by owning component.
    pub slots: FoldSlots,
    /// Bits of a range check's limbs (the lookup table is 2^limb_bits
    /// values; [`limb_bits`]).
    pub limb_bits: u32,
    /// Entries of the lookup table each fold holds: the step's folds cover
    /// the table at least once (a power of two, so a slice never crosses
    /// the table's end; [`table_slice`]).
    pub table_slice: usize,
    /// The schedule chain's final value, hashed once (O(folds) hashes): a
    /// constant of the circuit, which checks it where each step closes.
    schedule_digest: std::sync::OnceLock<Fr>,
}

/// The table entries each of a step's `folds` holds of a table of `size`
/// (a power of two): the least power of two with `folds · slice ≥ size`
/// (a power of two dividing the size never crosses the table's end; folds
/// past one cover round again from 0).
pub fn table_slice(folds: usize, size: usize) -> usize {
    size.div_ceil(folds.max(1)).next_power_of_two().min(size)
}

/// The limb width of a layout's range checks: 16 bits (4 lookups a 64-bit
/// value) when the 2¹⁶-entry table's share a fold is at most the fold's own
/// lookups (`lookups16`, estimated from its weights, cells and X section at
/// 16 bits), else 8 bits (twice the lookups, a 256-entry table): a step of
/// few folds would pay more for the wide table than its limbs save.
pub fn limb_bits(folds: usize, lookups16: usize) -> u32 {
    let max = zkstep_core::lookup::MAX_LIMB_BITS;
    if table_slice(folds, 1 << max) <= lookups16 {
        max
    } else {
        8
    }
}

/// Ceil division.
pub fn ceil_div(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// Permutations needed to absorb a record of `values` packed values.
pub fn perms_for_values(values: usize) -> usize {
    ceil_div(ceil_div(values, PACK), CHUNK).max(1)
}

impl Layout {
    /// Lay out a spec with `rows` output units per tile (at least 1). Pure:
    /// choosing `rows` for a fold budget is [`crate::sizing::fit`]'s job.
    pub fn new(spec: &ModelSpec, rows: usize) -> Result<Layout, CircuitError> {
        Layout::with_segments(spec, rows, 1)
    }

    /// Lay out a spec with `rows` output units per tile, each row cut into
    /// `segments` folds (more than 1 only with one row per tile and a record
    /// width of whole blocks that `segments` divides).
    pub fn with_segments(
        spec: &ModelSpec,
        rows: usize,
        segments: usize,
    ) -> Result<Layout, CircuitError> {
        if rows == 0 {
            return Err(CircuitError::ZeroRows);
        }
        let widest = widest_of(spec);
        if rows > widest {
            return Err(CircuitError::TooManyRows { rows, widest });
        }
        let n_max = spec.record_width();
        let blocks = n_max / zkstep_core::spec::RECORD_BLOCK;
        let segmentable = spec.max_inputs() > zkstep_core::spec::SEGMENT_MIN_WIDTH && rows == 1;
        if segments == 0 || (segments > 1 && (!segmentable || !blocks.is_multiple_of(segments))) {
            return Err(CircuitError::Segments { segments, rows });
        }
        let record_len = (n_max + 1) * (1 + spec.optimizer.state_names().len());
        let x_width = spec.input_width();
        let layer_folds: usize = segments
            * spec
                .layers
                .iter()
                .map(|l| ceil_div(l.outputs, rows))
                .sum::<usize>();
        // X spread over every fold, but an X section never much larger than
        // the weight rows (≈ 70 constraints an input value, ≈ 260 a weight):
        // a wide input to a narrow net gets extra folds instead.
        let cap = (4 * rows * (n_max / segments) / spec.batch_size.max(1)).max(1);
        let xcols = ceil_div(x_width, layer_folds.max(1)).clamp(1, cap);
        let mut layout = Layout {
            spec: spec.clone(),
            spec_digest: spec.digest(),
            n_max,
            segments,
            seg_w: n_max / segments,
            batch: spec.batch_size,
            rows,
            xcols,
            x_width,
            schedule: vec![],
            limb_bits: 16,
            table_slice: 0,
            record_len,
            commit_scheme: CommitScheme::Chain,
            slots: crate::slots::register(
                spec.batch_size,
                segments,
                spec.optimizer.adam().is_some(),
                spec.loss == zkstep_core::spec::Loss::CrossEntropy,
                CommitScheme::Chain,
            ),
            schedule_digest: std::sync::OnceLock::new(),
        };
        layout.schedule = layout.make_schedule();
        let folds = layout.schedule.len();
        let per_fold = 12 * (rows * layout.seg_w + layout.batch * rows) + 4 * layout.batch * xcols;
        layout.limb_bits = limb_bits(folds, per_fold);
        let size = layout.table_size();
        layout.table_slice = table_slice(folds, size);
        for (f, d) in layout.schedule.iter_mut().enumerate() {
            d.tbase = (f * layout.table_slice) % size;
        }
        Ok(layout)
    }

    /// The same layout with θ bound by `scheme` (the state's slots follow it).
    pub fn with_commit_scheme(mut self, scheme: CommitScheme) -> Layout {
        self.commit_scheme = scheme;
        self.slots = crate::slots::register(
            self.batch,
            self.segments,
            self.spec.optimizer.adam().is_some(),
            self.spec.loss == zkstep_core::spec::Loss::CrossEntropy,
            scheme,
        );
        self
    }

    /// The statement's values for θ (`c_before`, `c_after` of a
    /// [`StepOpening`]) under this layout's scheme: the commitments (given),
    /// or the evaluations of the checkpoints' coefficients at ζ.
    pub fn theta_values(&self, commitments: [Fr; 2], theta: [&Checkpoint; 2], zeta: Fr) -> [Fr; 2] {
        match self.commit_scheme {
            CommitScheme::Chain => commitments,
            CommitScheme::Evaluation => theta.map(|c| evaluate(&param_coefficients(&self.spec, c), zeta)),
        }
    }

    /// The evaluation point of a proof under these challenges (zero under
    /// chains): H(ZETA, spec, ρ, c_start, c_end), with `anchors` the
    /// proof's first and last commitments, so drawn after every fold's
    /// first phase and after the checkpoints' points they hash
    /// (`theta::point_commitment`).
    pub fn zeta(&self, ch: &crate::transcript::Challenges, anchors: [Fr; 2]) -> Fr {
        match self.commit_scheme {
            CommitScheme::Chain => Fr::from(0u64),
            CommitScheme::Evaluation => {
                let mut input = [Fr::from(0u64); zkstep_core::poseidon::RATE];
                input[0] = Fr::from(domain::ZETA);
                input[1] = self.spec_digest;
                input[2] = ch.rho;
                input[3] = anchors[0];
                input[4] = anchors[1];
                h24(&input)
            }
        }
    }

    /// The widest layer (output units, or the input width): more rows per
    /// tile than this never helps.
    pub fn widest_layer(&self) -> usize {
        widest_of(&self.spec)
    }

    fn make_schedule(&self) -> Vec<TileDesc> {
        let nl = self.spec.layers.len();
        let mut s = vec![];
        for l in (1..=nl).rev() {
            let ls = &self.spec.layers[l - 1];
            let tiles = ceil_div(ls.outputs, self.rows);
            let segs = self.segments;
            for t in 0..tiles {
                let j0 = t * self.rows;
                for seg in 0..segs {
                    s.push(TileDesc {
                        layer: l,
                        j0,
                        rows_active: (ls.outputs - j0).min(self.rows),
                        n_in: ls.inputs,
                        x0: 0,
                        x_active: 0,
                        seg,
                        tbase: 0,
                        is_relu: ls.activation == Activation::Relu,
                        is_top: l == nl,
                        first: t == 0 && seg == 0,
                        last: t + 1 == tiles && seg + 1 == segs,
                        is_final: false,
                        first_row: t == 0,
                        first_seg: seg == 0,
                        last_seg: seg + 1 == segs,
                    });
                }
            }
        }
        // X wider than the folds carry: layer 1 continues with tiles that
        // have no active rows (its last tile is then the last of these)
        let x_folds = ceil_div(self.x_width, self.xcols);
        if let Some(&l1) = s.last() {
            for _ in s.len()..x_folds {
                let prev = s.last_mut().expect("layer 1 has a tile");
                prev.last = false;
                s.push(TileDesc {
                    j0: l1.j0 + l1.rows_active,
                    rows_active: 0,
                    seg: 0,
                    first: false,
                    last: true,
                    first_row: false,
                    first_seg: true,
                    last_seg: true,
                    ..l1
                });
            }
        }
        for (f, d) in s.iter_mut().enumerate() {
            d.x0 = (f * self.xcols).min(self.x_width);
            d.x_active = (self.x_width - d.x0).min(self.xcols);
        }
        if let Some(last) = s.last_mut() {
            last.is_final = true;
        }
        s
    }

    /// Number of folds (IVC steps).
    pub fn num_folds(&self) -> usize {
        self.schedule.len()
    }

    /// Length of the IVC state vector.
    pub fn arity(&self) -> usize {
        self.slots.registry.arity()
    }

    /// State slots that carry private values between folds; the last fold
    /// clears them (z_n is public) and the verifier requires them zero.
    pub fn private_slots(&self) -> Vec<usize> {
        self.slots.registry.private()
    }

    /// Adam's constants of the update that follows checkpoint `step` (None
    /// for another optimizer, or where they are undefined, which no valid
    /// step reaches: the executor refuses it).
    pub fn adam_step(&self, step: u64) -> Option<AdamStep> {
        let h = self.spec.optimizer.adam()?;
        AdamStep::at(&h, step.checked_add(1)?, self.spec.rounding)
    }

    /// Weight slots of a fold's row that some fold fills: `seg_w`, or with
    /// whole rows the widest layer's input width. The record pads every row
    /// to whole hash blocks (`n_max`), so with whole rows the slots past the
    /// widest input hold zero in every fold: the circuit makes them
    /// constants (no range checks, no update), and the commitment chains
    /// absorb the same zeros Commit(θ) does.
    pub fn live_slots(&self) -> usize {
        if self.segments == 1 {
            self.spec.max_inputs().min(self.seg_w)
        } else {
            self.seg_w
        }
    }

    /// Entries of the lookup table, 2^limb_bits.
    pub fn table_size(&self) -> usize {
        1 << self.limb_bits
    }

    /// Highest power of ρ a fold needs (ρ^0 … ρ^{max(n_max, rows, xcols)}).
    pub fn max_pow(&self) -> usize {
        self.n_max.max(self.rows).max(self.xcols)
    }

    /// z₀ of a proof whose first step `st` opens (one step, or a segment's
    /// first): the step's start with fresh segment chains.
    pub fn first_state(&self, st: &StepOpening) -> Vec<Fr> {
        self.step_start(st, self.segment_init(true), self.segment_init(false))
    }

    /// Adam's (k₁, c₂) for the update after checkpoint `step` as field
    /// elements (zero if undefined, which no valid step reaches, or for
    /// another optimizer).
    pub fn adam_constants(&self, step: u64) -> (Fr, Fr) {
        self.adam_step(step)
            .map_or((Fr::from(0u64), Fr::from(0u64)), |k| {
                (fr_from_i128(k.k1), fr_from_i128(k.c2))
            })
    }

    /// First link of the segment chain of batches (`true`) or of Adam's constants.
    pub fn segment_init(&self, batches: bool) -> Fr {
        let d = if batches {
            domain::SEGMENT_BATCHES
        } else {
            domain::SEGMENT_ADAM
        };
        chain_init(d, self.spec_digest)
    }

    /// The state at a step's first fold (every slot's [`Init`] rule), with
    /// the segment chains at `batches` and `adam_chain`. The circuit builds
    /// the same state at every step's last fold for the step that follows.
    pub fn step_start(&self, o: &StepOpening, batches: Fr, adam_chain: Fr) -> Vec<Fr> {
        self.slots
            .registry
            .slots()
            .iter()
            .map(|slot| match slot.init {
                Init::Statement(f) => match f {
                    StatementField::Spec => self.spec_digest,
                    StatementField::CBefore => o.c_before,
                    StatementField::CAfter => o.c_after,
                    StatementField::CBatch => o.c_batch,
                    StatementField::Rho => o.challenges.rho,
                    StatementField::Step => o.step,
                    StatementField::Gamma => o.challenges.gamma,
                    StatementField::AdamK1 => o.adam.0,
                    StatementField::AdamC2 => o.adam.1,
                    StatementField::Zeta => o.zeta,
                },
                Init::Chain(domain) => chain_init(domain, self.spec_digest),
                Init::ParamsChain(after) => {
                    params_chain_init(self.spec_digest, o.step + Fr::from(u64::from(after)))
                }
                Init::Zero => Fr::from(0u64),
                Init::One => Fr::from(1u64),
                Init::Segment(_) => match slot.last {
                    Final::AbsorbsAdam => adam_chain,
                    _ => batches,
                },
            })
            .collect()
    }

    /// The state after the last step of a proof ending at parameters that
    /// commit to `c_end` at step `step_end`: the next step's start with
    /// every value the prover would choose for it zero, ζ as it was, and
    /// the segment chains at `batches` and `adam_chain`. Everything in it
    /// follows from the statement, so the verifier requires z_n to be
    /// exactly this.
    pub fn final_state(
        &self,
        (c_end, zeta): (Fr, Fr),
        step_end: Fr,
        batches: Fr,
        adam_chain: Fr,
    ) -> Vec<Fr> {
        let zero = Fr::from(0u64);
        let opening = StepOpening {
            zeta,
            c_before: c_end,
            c_after: zero,
            c_batch: zero,
            step: step_end,
            challenges: Challenges {
                rho: zero,
                gamma: zero,
            },
            adam: (zero, zero),
        };
        self.step_start(&opening, batches, adam_chain)
    }

    /// The segment chain of batch commitments, in order.
    pub fn batches_digest(&self, c_batches: &[Fr]) -> Fr {
        c_batches
            .iter()
            .fold(self.segment_init(true), |h, c| segment_absorb(h, &[*c]))
    }

    /// The segment chain of Adam's constants of the steps `t .. t + k` (the
    /// chain's first link for another optimizer; None where a step's
    /// constants are undefined).
    pub fn adam_digest(&self, t: u64, k: u64) -> Option<Fr> {
        let mut h = self.segment_init(false);
        if self.spec.optimizer.adam().is_some() {
            for s in t..t.checked_add(k)? {
                let a = self.adam_step(s)?;
                h = segment_absorb(h, &[fr_from_i128(a.k1), fr_from_i128(a.c2)]);
            }
        }
        Some(h)
    }

    /// The schedule chain's final value, as the verifier expects it
    /// (computed on first use, then cached).
    pub fn expected_schedule_digest(&self) -> Fr {
        *self.schedule_digest.get_or_init(|| {
            let mut h = chain_init(domain::SCHEDULE, self.spec_digest);
            for d in &self.schedule {
                h = schedule_absorb(h, d);
            }
            h
        })
    }

    /// First link of Aρ claim digests.
    pub fn ar_init(&self) -> Fr {
        chain_init(domain::A_RHO, self.spec_digest)
    }
}

/// One link of the schedule chain: `H(h, descriptor fields, 0, …)`.
pub fn schedule_absorb(h: Fr, d: &TileDesc) -> Fr {
    let mut input = [Fr::from(0u64); RATE];
    input[0] = h;
    for (i, f) in d.fields().iter().enumerate() {
        input[1 + i] = Fr::from(*f);
    }
    h24(&input)
}

/// The public values that open one step: what its first fold's state
/// holds beyond the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepOpening {
    /// Commit(θ_t).
    pub c_before: Fr,
    /// Commit(θ_{t+1}).
    pub c_after: Fr,
    /// Commit(batch).
    pub c_batch: Fr,
    /// t.
    pub step: Fr,
    /// The step's challenges.
    pub challenges: Challenges,
    /// Adam's (k₁, c₂) of update t + 1 (zero for another optimizer).
    pub adam: (Fr, Fr),
    /// ζ ([`CommitScheme::Evaluation`]; zero under chains).
    pub zeta: Fr,
}

/// Why a final state is not acceptable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinalStateError {
    /// The state vector has the wrong length.
    Arity,
    /// A slot is not what the statement gives (its name).
    Slot(&'static str),
}

impl std::fmt::Display for FinalStateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FinalStateError::Arity => write!(f, "the final state has the wrong length"),
            FinalStateError::Slot(name) => {
                let what = match *name {
                    "c_before" => "the proven parameters after the last step do not open the statement's final commitment",
                    "step" => "the proof ends at another step than the statement's",
                    "segment's batches" => "the proof is for other batches than the statement's",
                    "segment's Adam constants" => "the proof used other Adam constants than its steps give",
                    _ => "the final state is not the one the statement gives",
                };
                write!(f, "{what} (slot {name})")
            }
        }
    }
}

impl Layout {
    /// The verifier's check of z_n beyond Nova's own: every slot exactly as
    /// `expected` ([`Layout::final_state`]); the step-closing checks (the
    /// schedule, the commitments, the challenges) ran in the circuit.
    pub fn check_final_state(&self, expected: &[Fr], zn: &[Fr]) -> Result<(), FinalStateError> {
        if expected.len() != self.arity() || zn.len() != self.arity() {
            return Err(FinalStateError::Arity);
        }
        let slots = self.slots.registry.slots();
        match (0..zn.len()).find(|&i| zn[i] != expected[i]) {
            Some(i) => Err(FinalStateError::Slot(slots[i].name)),
            None => Ok(()),
        }
    }

    /// [`Layout::check_final_state`] for a one-step proof that started at `z0`.
    pub fn check_final(&self, z0: &[Fr], zn: &[Fr]) -> Result<(), FinalStateError> {
        if z0.len() != self.arity() {
            return Err(FinalStateError::Arity);
        }
        let (st, seg) = (&self.slots.statement, &self.slots.segment);
        let adam = match (self.slots.adam, seg.adam) {
            (Some(a), Some(i)) => segment_absorb(z0[i], &[z0[a.k1], z0[a.c2]]),
            _ => self.segment_init(false),
        };
        let zeta = self.slots.commit.eval.map_or(Fr::from(0u64), |e| z0[e.zeta]);
        let expected = self.final_state(
            (z0[st.c_after], zeta),
            z0[st.step] + Fr::from(1u64),
            segment_absorb(z0[seg.batches], &[z0[st.c_batch]]),
            adam,
        );
        self.check_final_state(&expected, zn)
    }
}

/// The widest layer of a spec (output units, or the input width).
fn widest_of(spec: &ModelSpec) -> usize {
    spec.layers
        .iter()
        .map(|l| l.outputs)
        .chain([spec.input_width()])
        .max()
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(inputs: usize, momentum: bool) -> ModelSpec {
        let opt = if momentum {
            "kind = \"momentum\"\nlr = 0.1\nmu = 0.9"
        } else {
            "lr = 0.1"
        };
        ModelSpec::from_toml_str(&format!(
            "batch_size = 2\n[optimizer]\n{opt}\n[[layers]]\ninputs = {inputs}\noutputs = 3\n"
        ))
        .unwrap()
    }

    #[test]
    fn segments_only_where_a_row_can_be_cut() {
        // 300 inputs: 345 = 5 blocks
        let l = Layout::with_segments(&spec(300, false), 1, 5).unwrap();
        assert_eq!((l.n_max, l.seg_w, l.num_folds()), (345, 69, 15));
        let d = &l.schedule;
        assert!(d[0].first && d[0].first_row && d[0].first_seg && !d[0].last_seg);
        assert!(d[4].last_seg && !d[4].last && d[14].last && d[14].is_final);
        assert!(!d[5].first_row && d[5].first_seg);
        for (segments, rows, s) in [
            (2, 1, spec(300, false)),
            (5, 2, spec(300, false)),
            (2, 1, spec(200, false)),
            (0, 1, spec(300, false)),
        ] {
            assert!(
                matches!(
                    Layout::with_segments(&s, rows, segments),
                    Err(CircuitError::Segments { .. })
                ),
                "{segments} segments, {rows} rows"
            );
        }
        // rows with optimizer state are cut alike
        let m = Layout::with_segments(&spec(300, true), 1, 5).unwrap();
        assert_eq!((m.seg_w, m.num_folds()), (69, 15));
        // narrow rows keep their width (records unchanged)
        assert_eq!(Layout::new(&spec(200, false), 1).unwrap().n_max, 200);
    }
}
