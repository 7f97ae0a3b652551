//! The shape of a proof: how a spec's training step is cut into folds.
//!
//! Every fold runs the same circuit (Nova folds one shape), a *tile*: up to
//! `rows` output units of one layer, padded to the spec's widest input
//! `n_max`. Folds go layer L, L−1, …, 1 and end with the *input tiles*
//! (layer 0) that bring the batch inputs X in. The sequence of tile
//! descriptors is the *schedule*; the circuit hashes each fold's descriptor
//! into the state, and the verifier compares the final hash with the
//! schedule it derives from the spec, so folds cannot be reordered, skipped
//! or repeated.

use crate::error::CircuitError;
use serde::{Deserialize, Serialize};
use zkstep_core::commit::{chain_init, CHUNK, PACK};
use zkstep_core::poseidon::{h24, Fr, RATE};
use zkstep_core::spec::{Activation, Optimizer};
use zkstep_core::ModelSpec;

/// Domain tags of the chains that live only inside proofs.
pub mod domain {
    /// Schedule chain.
    pub const SCHEDULE: u64 = 0x7a6b_7374_6570_0010;
    /// Transcript chain (everything the challenge must come after).
    pub const TRANSCRIPT: u64 = 0x7a6b_7374_6570_0011;
    /// Chain over the τ-folded columns of a layer's output (τA records).
    pub const TAU_A: u64 = 0x7a6b_7374_6570_0012;
    /// Digest of an Aρ claim vector.
    pub const A_RHO: u64 = 0x7a6b_7374_6570_0013;
    /// Second transcript: the τA vectors the layers consume (after ρ).
    pub const TRANSCRIPT2: u64 = 0x7a6b_7374_6570_0014;
}

/// What one fold does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileDesc {
    /// Layer 1..=L, or 0 for an input tile.
    pub layer: usize,
    /// First output unit (row) of the tile.
    pub j0: usize,
    /// Rows in use (≤ `rows`).
    pub rows_active: usize,
    /// Input width of the layer (0 for input tiles).
    pub n_in: usize,
    /// ReLU layer.
    pub is_relu: bool,
    /// The last layer (its outputs feed the loss).
    pub is_top: bool,
    /// An input tile.
    pub is_input: bool,
    /// First tile of its layer.
    pub first: bool,
    /// Last tile of its layer.
    pub last: bool,
    /// The last fold of the proof.
    pub is_final: bool,
}

impl TileDesc {
    /// The descriptor as field elements, in the order the circuit absorbs them.
    pub fn fields(&self) -> [u64; 10] {
        [
            self.layer as u64,
            self.j0 as u64,
            self.rows_active as u64,
            self.n_in as u64,
            self.is_relu as u64,
            self.is_top as u64,
            self.is_input as u64,
            self.first as u64,
            self.last as u64,
            self.is_final as u64,
        ]
    }
}

/// Indices of the IVC state vector z.
pub mod state {
    /// spec_digest (constant).
    pub const SPEC: usize = 0;
    /// c_before of the statement (constant).
    pub const C_BEFORE: usize = 1;
    /// c_after of the statement (constant).
    pub const C_AFTER: usize = 2;
    /// c_batch of the statement (constant).
    pub const C_BATCH: usize = 3;
    /// The challenge ρ (constant; must equal H(T_final)).
    pub const RHO: usize = 4;
    /// Step index (constant).
    pub const STEP: usize = 5;
    /// Schedule chain.
    pub const SCHED: usize = 6;
    /// Running Commit(θ_t) chain.
    pub const H_BEFORE: usize = 7;
    /// Running Commit(θ_{t+1}) chain.
    pub const H_AFTER: usize = 8;
    /// Transcript chain.
    pub const T: usize = 9;
    /// Running D(X).
    pub const D_X: usize = 10;
    /// Running D(Y).
    pub const D_Y: usize = 11;
    /// Digest of the τA vector the current layer consumes (equal in all its folds).
    pub const CLAIM_TA: usize = 12;
    /// The layer above's claim about the current layer's output: Σ_k τA[k]·γ^k.
    pub const OUT_TA: usize = 13;
    /// Running Σ_j τA[j]·γ^j over the current layer's output units so far.
    pub const PROD_TA: usize = 14;
    /// Digest of the Aρ vector the current layer consumes.
    pub const CLAIM_AR: usize = 15;
    /// Remaining of the input-gradient identity of the current layer's output.
    pub const REM_DA: usize = 16;
    /// Running right-hand side of the input-gradient identity of the current layer's input.
    pub const ACC_R: usize = 17;
    /// ρ^{j0} of the last tile.
    pub const RHO_OFF: usize = 18;
    /// The second challenge γ (constant; must equal H(T2_final, 1)).
    pub const GAMMA: usize = 19;
    /// Second transcript chain: every fold's consumed-τA digest.
    pub const T2: usize = 20;
    /// Σ_k τA[k]·γ^k of the vector the current layer consumes.
    pub const CLAIM_RLC: usize = 21;
    /// γ^{j0} of the last tile.
    pub const G_OFF: usize = 22;
    /// First index of the B remaining Aρ values of the current layer's output.
    pub const REM_AR: usize = 23;
}

/// Everything that fixes the circuit and the fold sequence of a spec.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The spec.
    pub spec: ModelSpec,
    /// Its digest.
    pub spec_digest: Fr,
    /// Padded row width (the spec's widest input).
    pub n_max: usize,
    /// Batch size B.
    pub batch: usize,
    /// Rows (output units) per tile.
    pub rows: usize,
    /// Fold sequence.
    pub schedule: Vec<TileDesc>,
    /// Values per weight record (W row + b, and vW row + vb for momentum).
    pub record_len: usize,
    /// The schedule chain's final value, hashed once (O(folds) hashes) or
    /// taken from the verifying key, so verification does not grow with folds.
    schedule_digest: std::sync::OnceLock<Fr>,
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
        if rows == 0 {
            return Err(CircuitError::Layout(
                "rows per tile must be at least 1".into(),
            ));
        }
        let n_max = spec.max_inputs();
        let momentum = spec.optimizer.has_state();
        let record_len = (n_max + 1) * if momentum { 2 } else { 1 };
        let mut layout = Layout {
            spec: spec.clone(),
            spec_digest: spec.digest(),
            n_max,
            batch: spec.batch_size,
            rows,
            schedule: vec![],
            record_len,
            schedule_digest: std::sync::OnceLock::new(),
        };
        layout.schedule = layout.make_schedule();
        Ok(layout)
    }

    /// The widest layer (output units, or the input width): more rows per
    /// tile than this never helps.
    pub fn widest_layer(&self) -> usize {
        self.spec
            .layers
            .iter()
            .map(|l| l.outputs)
            .chain([self.spec.input_width()])
            .max()
            .unwrap_or(1)
    }

    fn make_schedule(&self) -> Vec<TileDesc> {
        let nl = self.spec.layers.len();
        let mut s = vec![];
        let mut push_layer = |layer: usize,
                              units: usize,
                              n_in: usize,
                              is_relu: bool,
                              is_top: bool,
                              is_input: bool| {
            let tiles = ceil_div(units, self.rows);
            for t in 0..tiles {
                let j0 = t * self.rows;
                s.push(TileDesc {
                    layer,
                    j0,
                    rows_active: (units - j0).min(self.rows),
                    n_in,
                    is_relu,
                    is_top,
                    is_input,
                    first: t == 0,
                    last: t + 1 == tiles,
                    is_final: false,
                });
            }
        };
        for l in (1..=nl).rev() {
            let ls = &self.spec.layers[l - 1];
            push_layer(
                l,
                ls.outputs,
                ls.inputs,
                ls.activation == Activation::Relu,
                l == nl,
                false,
            );
        }
        push_layer(0, self.spec.input_width(), 0, false, false, true);
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
        state::REM_AR + self.batch
    }

    /// State slots that carry private values between folds; the last fold
    /// clears them (z_n is public) and the verifier requires them zero.
    pub fn private_slots(&self) -> Vec<usize> {
        let mut v = vec![
            state::D_X,
            state::D_Y,
            state::CLAIM_TA,
            state::OUT_TA,
            state::PROD_TA,
            state::CLAIM_AR,
            state::REM_DA,
            state::ACC_R,
            state::RHO_OFF,
            state::CLAIM_RLC,
            state::G_OFF,
        ];
        v.extend(state::REM_AR..state::REM_AR + self.batch);
        v
    }

    /// Whether the optimizer is momentum.
    pub fn momentum(&self) -> bool {
        matches!(self.spec.optimizer, Optimizer::Momentum { .. })
    }

    /// Highest power of ρ a fold needs (ρ^0 … ρ^{max(n_max, rows)}).
    pub fn max_pow(&self) -> usize {
        self.n_max.max(self.rows)
    }

    /// The initial state z₀ for a statement and challenge.
    pub fn initial_state(
        &self,
        c_before: Fr,
        c_after: Fr,
        c_batch: Fr,
        step: u64,
        ch: Challenges,
    ) -> Vec<Fr> {
        let mut z = vec![Fr::from(0u64); self.arity()];
        z[state::SPEC] = self.spec_digest;
        z[state::C_BEFORE] = c_before;
        z[state::C_AFTER] = c_after;
        z[state::C_BATCH] = c_batch;
        z[state::RHO] = ch.rho;
        z[state::GAMMA] = ch.gamma;
        z[state::T2] = transcript2_init(self.spec_digest, ch.rho);
        z[state::STEP] = Fr::from(step);
        z[state::SCHED] = chain_init(domain::SCHEDULE, self.spec_digest);
        z[state::H_BEFORE] = chain_init(zkstep_core::commit::DOMAIN_PARAMS, self.spec_digest);
        z[state::H_AFTER] = z[state::H_BEFORE];
        z[state::T] = transcript_init(self.spec_digest, c_before, c_after, c_batch, step);
        z[state::D_X] = chain_init(zkstep_core::commit::DOMAIN_COLUMNS, self.spec_digest);
        z[state::D_Y] = z[state::D_X];
        z
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

    /// Take the schedule digest from a trusted source (the verifying key,
    /// written by keygen from this same layout) instead of hashing every
    /// tile descriptor. Has no effect once the digest is known.
    pub fn set_schedule_digest(&self, d: Fr) {
        let _ = self.schedule_digest.set(d);
    }

    /// First link of the τA chains.
    pub fn ta_init(&self) -> Fr {
        chain_init(domain::TAU_A, self.spec_digest)
    }

    /// First link of Aρ claim digests.
    pub fn ar_init(&self) -> Fr {
        chain_init(domain::A_RHO, self.spec_digest)
    }
}

/// `T₀ = H(TRANSCRIPT, spec_digest, c_before, c_after, c_batch, step)`.
pub fn transcript_init(spec_digest: Fr, c_before: Fr, c_after: Fr, c_batch: Fr, step: u64) -> Fr {
    let mut input = [Fr::from(0u64); RATE];
    input[0] = Fr::from(domain::TRANSCRIPT);
    input[1] = spec_digest;
    input[2] = c_before;
    input[3] = c_after;
    input[4] = c_batch;
    input[5] = Fr::from(step);
    h24(&input)
}

/// `T2₀ = H(TRANSCRIPT2, spec_digest, ρ)`: the second transcript starts
/// after ρ, so γ comes after everything ρ depends on.
pub fn transcript2_init(spec_digest: Fr, rho: Fr) -> Fr {
    let mut input = [Fr::from(0u64); RATE];
    input[0] = Fr::from(domain::TRANSCRIPT2);
    input[1] = spec_digest;
    input[2] = rho;
    h24(&input)
}

/// The two Fiat–Shamir challenges of a proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenges {
    /// ρ = H(T_final): the random linear combinations of the matrix checks.
    pub rho: Fr,
    /// γ = H(T2_final, 1): binds the τA vectors between layers.
    pub gamma: Fr,
}

/// The second challenge: `γ = H(T2_final, 1, 0, …)`.
pub fn challenge2_from_transcript(t2_final: Fr) -> Fr {
    let mut input = [Fr::from(0u64); RATE];
    input[0] = t2_final;
    input[1] = Fr::from(1u64);
    h24(&input)
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

/// The challenge: `ρ = H(T_final, 0, …)`.
pub fn challenge_from_transcript(t_final: Fr) -> Fr {
    let mut input = [Fr::from(0u64); RATE];
    input[0] = t_final;
    h24(&input)
}

/// Why a final state is not acceptable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinalStateError {
    /// The state vector has the wrong length.
    Arity,
    /// A constant of the statement changed along the way.
    Constant(&'static str),
    /// The folds did not follow the spec's schedule.
    Schedule,
    /// The weights before the step do not open `c_before`.
    CBefore,
    /// The weights after the step do not open `c_after`.
    CAfter,
    /// The challenge was not derived from the transcript.
    Challenge,
    /// The second challenge was not derived from the second transcript.
    Challenge2,
    /// A slot that carries private values was not cleared by the last fold.
    NotCleared(usize),
}

impl std::fmt::Display for FinalStateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FinalStateError::Arity => write!(f, "the final state has the wrong length"),
            FinalStateError::Constant(c) => write!(f, "the statement's {c} changed between folds"),
            FinalStateError::Schedule => write!(f, "the folds do not follow the spec's schedule"),
            FinalStateError::CBefore => write!(
                f,
                "the proven parameters before the step do not open c_before"
            ),
            FinalStateError::CAfter => write!(
                f,
                "the proven parameters after the step do not open c_after"
            ),
            FinalStateError::Challenge => {
                write!(f, "the challenge is not the hash of the proof's transcript")
            }
            FinalStateError::Challenge2 => write!(
                f,
                "the second challenge is not the hash of the proof's second transcript"
            ),
            FinalStateError::NotCleared(i) => write!(
                f,
                "the final state's slot {i} was not cleared (it would carry private values)"
            ),
        }
    }
}

impl Layout {
    /// What the verifier requires of the last state z_n, beyond Nova's own checks.
    pub fn check_final(&self, z0: &[Fr], zn: &[Fr]) -> Result<(), FinalStateError> {
        if z0.len() != self.arity() || zn.len() != self.arity() {
            return Err(FinalStateError::Arity);
        }
        for (i, name) in [
            (state::SPEC, "spec digest"),
            (state::C_BEFORE, "c_before"),
            (state::C_AFTER, "c_after"),
            (state::C_BATCH, "c_batch"),
            (state::RHO, "challenge"),
            (state::STEP, "step"),
            (state::GAMMA, "second challenge"),
        ] {
            if z0[i] != zn[i] {
                return Err(FinalStateError::Constant(name));
            }
        }
        if zn[state::SCHED] != self.expected_schedule_digest() {
            return Err(FinalStateError::Schedule);
        }
        if zn[state::H_BEFORE] != z0[state::C_BEFORE] {
            return Err(FinalStateError::CBefore);
        }
        if zn[state::H_AFTER] != z0[state::C_AFTER] {
            return Err(FinalStateError::CAfter);
        }
        if challenge_from_transcript(zn[state::T]) != z0[state::RHO] {
            return Err(FinalStateError::Challenge);
        }
        if z0[state::T2] != transcript2_init(self.spec_digest, z0[state::RHO]) {
            return Err(FinalStateError::Constant("second transcript's start"));
        }
        if challenge2_from_transcript(zn[state::T2]) != z0[state::GAMMA] {
            return Err(FinalStateError::Challenge2);
        }
        if let Some(i) = self
            .private_slots()
            .into_iter()
            .find(|&i| zn[i] != Fr::from(0u64))
        {
            return Err(FinalStateError::NotCleared(i));
        }
        Ok(())
    }
}
