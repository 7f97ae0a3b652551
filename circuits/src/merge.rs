//! π_merge: the circuit that proves a round's federated merge
//! (docs/SEMANTICS.md §7; native definition `zkstep_core::merge::merge`).
//!
//! The checkpoints are folded as their commitments are made: one record per
//! output unit (`commit::param_record_values`, layers last to first), a
//! fold holding `units` consecutive records of every input (N nodes), of the
//! centre (the previous global model) and of the global model. Per record
//! position k of an active unit (namespaces `u{u}/…`):
//!
//! - every value is allocated in W₁ with a 64-bit range check (the packing
//!   into the commitment chains is injective only on such values), packed
//!   and absorbed into its own chain (`chain{c}`), so the chains end at the
//!   statement's commitments exactly when the fold held those records;
//! - the merge: `2·Σᵢ ρᵢ·xᵢ + off = q·2Σρ + r` with `0 ≤ r < 2Σρ` (two
//!   range checks, `merge/k{k}/…`), q the global value, ρᵢ the weights and
//!   off = Σρ (half-up) or 0 (floor): `q = div_round(Σρx, Σρ)`;
//! - on parameter positions (W and b, not optimizer state) each node's
//!   `(xᵢ − c)²`, added to its distance Dᵢ in the state (masked units add 0).
//!
//! The weights are constants of the state: ρᵢ = Rᵢ·(1 − sᵢ), with the
//! public reputations Rᵢ and zeroed flags sᵢ, set in z₀ by the verifier.
//! Where the last unit is absorbed (`remaining` reaches 0) the fold checks
//! the outlier rule for every node, `sᵢ = 1 ⇒ Dᵢ > τ²` and `sᵢ = 0 ⇒
//! Dᵢ ≤ τ²` (one range check of the gated difference, `final/n{i}`), and
//! sets every Dᵢ to 0, so the distances never leave the proof. Range checks
//! are LogUp lookups at the run's challenge α (the table's 2ᴸ entries
//! sliced across the folds, as the step circuit does).
//!
//! Under `CommitScheme::Evaluation` (merge keys on KZG points,
//! docs/design/kzg-checkpoints.md) the chains give way to running
//! evaluations of each checkpoint's coefficients at ζ, added in the second
//! phase (Horner's rule on each unit's packed record, as the step circuit's
//! rows do) and combined with powers of r into one running value; the state
//! then holds that value, r and ζ (which the verifier derives from α and the
//! statement's commitments), α (required to be the drawn one) and the
//! running power ζ^k. The statement's commitments are then hashes of the
//! checkpoints' points, and the proof opens Σ_c r^c·C_c at ζ to the last
//! state's value (`theta::MergeOpening`).

use crate::error::CircuitError;
use crate::layout::{limb_bits, table_slice, CommitScheme};
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::test_shape_cs::TestShapeCS;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use std::sync::Arc;
use zkstep_core::commit::{param_record, param_record_values, params_chain_init};
use zkstep_core::fixed::Rounding;
use zkstep_core::merge::{MAX_NODES, MAX_REPUTATION};
use zkstep_core::model::Checkpoint;
use zkstep_core::poseidon::{fr_from_i128, fr_from_u128};
use zkstep_core::spec::ModelSpec;
use zkstep_fold::StepCircuit;
use zkstep_gadgets::expr::{
    add, add_assign, alloc, cst, enforce_bool, enforce_mul, materialise, mul, scale,
    sub, var, zero, Expr, Fr,
};
use zkstep_gadgets::hash::{chain_absorb_if, pack};
use zkstep_gadgets::lookup::{LogUp, Tally};
use zkstep_gadgets::range::RangeCheck;

/// Bits of every stored value (the checkpoints' i64).
const VALUE_BITS: u32 = 64;
/// Both sides of a merge remainder: `2Σρ ≤ 2·2¹⁶·2³² = 2⁴⁹`.
const REMAINDER_BITS: u32 = 64;
/// The outlier rule's gated difference: `Dᵢ < 2^(2·64 + 40)` for any model
/// below 2⁴⁰ values, τ² < 2¹²⁶.
const DISTANCE_BITS: u32 = 176;

/// How a spec's checkpoints are cut into merge folds.
#[derive(Clone, Debug)]
pub struct MergeLayout {
    /// The spec's digest (inside every commitment chain's first link).
    pub spec_digest: Fr,
    /// The spec's rounding (the merge's division).
    pub rounding: Rounding,
    /// N, the nodes merged.
    pub nodes: usize,
    /// Values of one unit's record.
    pub record_len: usize,
    /// Whether each record position is a parameter (W or b) rather than
    /// optimizer state: the distances cover parameters only.
    pub is_param: Vec<bool>,
    /// Every unit (layer, output) in commitment order.
    pub units: Vec<(usize, usize)>,
    /// Units a fold holds.
    pub units_per_fold: usize,
    /// Bits of the range checks' limbs (the table has 2^limb_bits entries).
    pub limb_bits: u32,
    /// Table entries each fold holds (a power of two).
    pub table_slice: usize,
    /// How the checkpoints are bound (chains, or evaluations at ζ).
    pub scheme: CommitScheme,
}

/// Slots of the merge's IVC state.
#[derive(Clone, Copy, Debug)]
struct Slots {
    n: usize,
    /// The evaluation scheme: one combined evaluation in place of the N + 2
    /// chains, and r, α, ζ and ζ^k after the others.
    evaluated: bool,
}

impl Slots {
    const TBASE: usize = 0;
    const REMAINING: usize = 1;
    /// Chains: nodes 0..N, then the centre, then the global model.
    fn chain(self, c: usize) -> usize {
        2 + c
    }
    /// Evaluations: Σ_c r^c·y_c, every checkpoint's running evaluation at ζ
    /// combined with powers of r (in the chains' order).
    fn combined(self) -> usize {
        2
    }
    /// The slots the checkpoints' commitments take.
    fn heads(self) -> usize {
        if self.evaluated {
            1
        } else {
            self.n + 2
        }
    }
    fn dist(self, i: usize) -> usize {
        2 + self.heads() + i
    }
    fn weight(self, i: usize) -> usize {
        2 + self.heads() + self.n + i
    }
    fn zeroed(self, i: usize) -> usize {
        2 + self.heads() + 2 * self.n + i
    }
    fn tau_sq(self) -> usize {
        2 + self.heads() + 3 * self.n
    }
    fn queries(self) -> usize {
        3 + self.heads() + 3 * self.n
    }
    fn table(self) -> usize {
        4 + self.heads() + 3 * self.n
    }
    /// Evaluations: r, the combination.
    fn r(self) -> usize {
        5 + self.heads() + 3 * self.n
    }
    /// Evaluations: α, as drawn.
    fn alpha(self) -> usize {
        6 + self.heads() + 3 * self.n
    }
    /// Evaluations: ζ.
    fn zeta(self) -> usize {
        7 + self.heads() + 3 * self.n
    }
    /// Evaluations: ζ^k, k the next coefficient's index.
    fn power(self) -> usize {
        8 + self.heads() + 3 * self.n
    }
    fn arity(self) -> usize {
        5 + self.heads() + 3 * self.n + if self.evaluated { 4 } else { 0 }
    }
}

impl MergeLayout {
    /// The layout a merge key file describes.
    pub fn from_shape(shape: &crate::files::MergeShape) -> Result<(ModelSpec, Self), CircuitError> {
        let spec = ModelSpec::from_toml_str(&shape.spec_toml)
            .map_err(|e| CircuitError::Synthesis(format!("the key's spec: {e}")))?;
        let too_many = |what: &str| CircuitError::Synthesis(format!("the key's {what} does not fit this machine"));
        let nodes = usize::try_from(shape.nodes).map_err(|_| too_many("node count"))?;
        let units = usize::try_from(shape.units_per_fold).map_err(|_| too_many("units a fold"))?;
        let lay = Self::new(&spec, nodes, units)?.with_commit_scheme(shape.commit_scheme);
        if lay.units_per_fold != units {
            return Err(CircuitError::Synthesis(format!(
                "the key says {units} units a fold, the spec has {}",
                lay.units.len()
            )));
        }
        Ok((spec, lay))
    }

    /// What a key file says of this layout.
    pub fn shape(&self, spec: &ModelSpec) -> crate::files::MergeShape {
        crate::files::MergeShape {
            spec_toml: spec.to_toml(),
            nodes: self.nodes as u64,
            units_per_fold: self.units_per_fold as u64,
            commit_scheme: self.scheme,
        }
    }

    /// A layout of `units_per_fold` units a fold for N = `nodes`.
    pub fn new(spec: &ModelSpec, nodes: usize, units_per_fold: usize) -> Result<Self, CircuitError> {
        if units_per_fold == 0 {
            return Err(CircuitError::ZeroRows);
        }
        if nodes == 0 || nodes > MAX_NODES {
            return Err(CircuitError::Synthesis(format!(
                "a merge takes 1 to {MAX_NODES} nodes, not {nodes}"
            )));
        }
        let width = spec.record_width();
        let states = spec.optimizer.state_names().len();
        let (w, s) = (vec![true; width], vec![false; width]);
        let mut rows: Vec<&[bool]> = vec![&w];
        rows.extend(std::iter::repeat_n(s.as_slice(), states));
        let mut biases = vec![true];
        biases.extend(std::iter::repeat_n(false, states));
        let is_param = param_record(&rows, &biases);
        let units: Vec<(usize, usize)> = (0..spec.layers.len())
            .rev()
            .flat_map(|l| (0..spec.layers[l].outputs).map(move |j| (l, j)))
            .collect();
        let units_per_fold = units_per_fold.min(units.len().max(1));
        let mut lay = MergeLayout {
            spec_digest: spec.digest(),
            rounding: spec.rounding,
            nodes,
            record_len: is_param.len(),
            is_param,
            units,
            units_per_fold,
            limb_bits: zkstep_core::lookup::MAX_LIMB_BITS,
            table_slice: 0,
            scheme: CommitScheme::Chain,
        };
        let folds = lay.num_folds();
        let lookups16 = units_per_fold * lay.record_len * ((nodes + 2) * 4 + 8);
        lay.limb_bits = limb_bits(folds, lookups16);
        lay.table_slice = table_slice(folds, lay.table_size());
        Ok(lay)
    }

    /// The most units a fold within `budget` constraints (the merge's
    /// circuit, measured on one and two units: it is linear in them).
    pub fn fit(spec: &ModelSpec, nodes: usize, budget: usize) -> Result<Self, CircuitError> {
        Self::fit_in(spec, nodes, budget, CommitScheme::Chain)
    }

    /// [`MergeLayout::fit`] with the checkpoints bound by `scheme`.
    pub fn fit_in(spec: &ModelSpec, nodes: usize, budget: usize, scheme: CommitScheme) -> Result<Self, CircuitError> {
        let new = |units| Self::new(spec, nodes, units).map(|l| l.with_commit_scheme(scheme));
        let one = new(1)?;
        let c1 = one.num_constraints()?;
        let all = one.units.len();
        if all < 2 {
            return Ok(one);
        }
        let c2 = new(2)?.num_constraints()?;
        let per = c2.saturating_sub(c1).max(1);
        if c1 > budget {
            return Err(CircuitError::Synthesis(format!(
                "a merge of {nodes} checkpoints needs {c1} constraints a fold for one unit's records, more than the fold budget {budget}: raise --fold-budget"
            )));
        }
        let mut units = (1 + (budget - c1) / per).min(all);
        loop {
            let lay = new(units)?;
            if units == 1 || lay.num_constraints()? <= budget {
                return Ok(lay);
            }
            units -= 1;
        }
    }

    /// Folds of the merge.
    pub fn num_folds(&self) -> usize {
        self.units.len().div_ceil(self.units_per_fold)
    }

    /// Entries of the lookup table.
    pub fn table_size(&self) -> usize {
        1 << self.limb_bits
    }

    /// Slots of the IVC state.
    pub fn arity(&self) -> usize {
        self.slots().arity()
    }

    fn slots(&self) -> Slots {
        Slots {
            n: self.nodes,
            evaluated: self.scheme == CommitScheme::Evaluation,
        }
    }

    /// The same layout with the checkpoints bound by `scheme`.
    pub fn with_commit_scheme(mut self, scheme: CommitScheme) -> Self {
        self.scheme = scheme;
        self
    }

    /// Packed values of one unit's record (coefficients of a checkpoint a unit adds).
    fn packed_len(&self) -> usize {
        self.record_len.div_ceil(zkstep_core::commit::PACK)
    }

    /// ζ of a merge whose lookups drew `alpha` and whose statement's
    /// commitments digest to `anchors` ([`MergeStatement::anchors`]: the
    /// points are fixed before ζ is drawn, as α is after every W₁).
    pub fn zeta(&self, alpha: Fr, anchors: Fr) -> Fr {
        let mut input = [Fr::from(0u64); zkstep_core::poseidon::RATE];
        input[0] = Fr::from(crate::transcript::domain::ZETA);
        input[1] = self.spec_digest;
        input[2] = alpha;
        input[3] = anchors;
        zkstep_core::poseidon::h24(&input)
    }

    /// The checkpoints' G1 powers a key on this layout must hold beyond
    /// its folds' (one a coefficient of a checkpoint under KZG points).
    pub fn powers_needed(&self, spec: &ModelSpec) -> usize {
        match self.scheme {
            CommitScheme::Chain => 0,
            CommitScheme::Evaluation => zkstep_core::commit::coefficient_count(spec),
        }
    }

    /// Constraints of one fold (its shape).
    pub fn num_constraints(&self) -> Result<usize, CircuitError> {
        let mut cs = TestShapeCS::<crate::engine::E1>::new();
        let c = MergeCircuit::shape(Arc::new(self.clone()));
        let z: Vec<AllocatedNum<Fr>> = (0..self.arity())
            .map(|i| alloc(cs.namespace(|| format!("z{i}")), Some(Fr::from(0u64))))
            .collect::<Result<_, _>>()
            .map_err(|e| CircuitError::Synthesis(e.to_string()))?;
        let ch = alloc(cs.namespace(|| "alpha"), Some(Fr::from(0u64)))
            .map_err(|e| CircuitError::Synthesis(e.to_string()))?;
        let carry = c
            .first(&mut cs, &z)
            .map_err(|e| CircuitError::Synthesis(e.to_string()))?;
        c.second(&mut cs, carry, &[ch])
            .map_err(|e| CircuitError::Synthesis(e.to_string()))?;
        Ok(cs.num_constraints())
    }
}

/// The public statement of a merge proof.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MergeStatement {
    /// The nodes' (and the global model's) step.
    pub step: u64,
    /// The previous global model's step.
    pub centre_step: u64,
    /// Each node's reputation Rᵢ.
    pub reputations: Vec<u64>,
    /// Which nodes the outlier rule zeroed.
    pub zeroed: Vec<bool>,
    /// τ at S (the outlier bound; the circuit compares with τ²).
    pub tau_fx: i64,
    /// Each node's Commit(θ).
    pub c_nodes: Vec<Fr>,
    /// Commit of the previous global model (the centre).
    pub c_centre: Fr,
    /// Commit of the merged global model.
    pub c_global: Fr,
}

impl MergeStatement {
    /// The statement of `m`, the reference merge of `nodes` (with these
    /// reputations, in this order) around `centre` under τ = `tau_fx`: the
    /// commitments computed side by side.
    pub fn of(
        spec: &ModelSpec,
        centre: &Checkpoint,
        nodes: &[&Checkpoint],
        reputations: &[u64],
        tau_fx: i64,
        m: &zkstep_core::merge::Merged,
    ) -> Self {
        let mut all: Vec<&Checkpoint> = nodes.to_vec();
        all.push(centre);
        all.push(&m.global);
        let (cs, _) = zkstep_core::commit::commit_all(spec, &all, &[]);
        Self::with_commitments(nodes.len(), reputations, tau_fx, m, centre.step, &cs)
    }

    /// The statement of `m` (N = `n` nodes) whose checkpoints' commitments
    /// are `cs` (the nodes', the centre's, the global model's, in order:
    /// chains, or under KZG points their points' hashes).
    pub fn with_commitments(
        n: usize,
        reputations: &[u64],
        tau_fx: i64,
        m: &zkstep_core::merge::Merged,
        centre_step: u64,
        cs: &[Fr],
    ) -> Self {
        MergeStatement {
            step: m.global.step,
            centre_step,
            reputations: reputations.to_vec(),
            zeroed: (0..n).map(|i| m.zeroed(i)).collect(),
            tau_fx,
            c_nodes: cs[..n].to_vec(),
            c_centre: cs[n],
            c_global: cs[n + 1],
        }
    }

    /// Refuse a statement the circuit's bounds do not cover.
    pub fn check(&self, lay: &MergeLayout) -> Result<(), CircuitError> {
        let n = lay.nodes;
        let bad = |m: String| Err(CircuitError::Synthesis(format!("merge statement: {m}")));
        if self.reputations.len() != n || self.zeroed.len() != n || self.c_nodes.len() != n {
            return bad(format!("{n} nodes expected"));
        }
        if let Some(r) = self.reputations.iter().find(|&&r| r > MAX_REPUTATION) {
            return bad(format!("reputation {r} above {MAX_REPUTATION}"));
        }
        if self.weights().iter().all(|&w| w == 0) {
            return bad("every weight is zero".into());
        }
        if self.tau_fx < 0 {
            return bad(format!("τ must be ≥ 0, got {} at scale 10^9", self.tau_fx));
        }
        Ok(())
    }

    /// τ² at S² (below 2¹²⁶).
    pub fn tau_sq(&self) -> u128 {
        let t = self.tau_fx.unsigned_abs() as u128;
        t * t
    }

    /// Whether these are the inputs and the merged model the statement
    /// speaks of: the commitments, and the reference merge
    /// (`zkstep_core::merge::merge`) giving these flags and this model.
    /// `commitments` are theirs under the merge's scheme (the nodes', the
    /// centre's, the global model's, in order).
    pub fn check_inputs(
        &self,
        spec: &ModelSpec,
        nodes: &[&Checkpoint],
        centre: &Checkpoint,
        global: &Checkpoint,
        commitments: &[Fr],
    ) -> Result<(), String> {
        let n = nodes.len();
        if n != self.c_nodes.len() || n != self.reputations.len() || commitments.len() != n + 2 {
            return Err(format!("{n} checkpoints for a statement of {} nodes", self.c_nodes.len()));
        }
        if let Some(i) = (0..n).find(|&i| commitments[i] != self.c_nodes[i]) {
            return Err(format!("node {i}'s checkpoint is not the one the statement commits to"));
        }
        if commitments[n] != self.c_centre || centre.step != self.centre_step {
            return Err("the previous global model is not the one the statement commits to".into());
        }
        let mn: Vec<zkstep_core::merge::MergeNode> = nodes
            .iter()
            .zip(&self.reputations)
            .map(|(ckpt, &reputation)| zkstep_core::merge::MergeNode { ckpt, reputation })
            .collect();
        let m = zkstep_core::merge::merge(spec, centre, &mn, self.tau_fx).map_err(|e| e.to_string())?;
        if let Some(i) = (0..nodes.len()).find(|&i| m.zeroed(i) != self.zeroed[i]) {
            return Err(format!(
                "node {i} is {} by the outlier rule, the statement says otherwise",
                if m.zeroed(i) { "zeroed" } else { "kept" }
            ));
        }
        if m.global != *global || commitments[n + 1] != self.c_global || global.step != self.step {
            return Err("the global model is not the merge of the inputs".into());
        }
        Ok(())
    }

    /// Every checkpoint's commitment with its step, in the state's order
    /// (the nodes, the centre, the global model).
    pub fn commitments(&self) -> Vec<(u64, Fr)> {
        let mut all: Vec<(u64, Fr)> = self.c_nodes.iter().map(|&c| (self.step, c)).collect();
        all.push((self.centre_step, self.c_centre));
        all.push((self.step, self.c_global));
        all
    }

    /// The digest ζ absorbs: every commitment, in order, chained in chunks
    /// (H(MERGE_ANCHORS, acc, c…), acc = 0 first).
    pub fn anchors(&self) -> Fr {
        use zkstep_core::poseidon::RATE;
        let cs: Vec<Fr> = self.commitments().into_iter().map(|(_, c)| c).collect();
        cs.chunks(RATE - 2).fold(Fr::from(0u64), |acc, chunk| {
            let mut input = [Fr::from(0u64); RATE];
            input[0] = Fr::from(crate::transcript::domain::MERGE_ANCHORS);
            input[1] = acc;
            input[2..2 + chunk.len()].copy_from_slice(chunk);
            zkstep_core::poseidon::h24(&input)
        })
    }

    /// ρᵢ = Rᵢ, or 0 where zeroed.
    pub fn weights(&self) -> Vec<u64> {
        self.reputations
            .iter()
            .zip(&self.zeroed)
            .map(|(&r, &z)| if z { 0 } else { r })
            .collect()
    }

    fn state(&self, lay: &MergeLayout, chains: impl Fn(usize) -> Fr, tbase: usize, remaining: usize) -> Vec<Fr> {
        let s = lay.slots();
        if s.evaluated {
            // refused, not guessed: an evaluated layout's states need α
            return vec![];
        }
        let mut z = vec![Fr::from(0u64); s.arity()];
        z[Slots::TBASE] = Fr::from(tbase as u64);
        z[Slots::REMAINING] = Fr::from(remaining as u64);
        for c in 0..lay.nodes + 2 {
            z[s.chain(c)] = chains(c);
        }
        for (i, w) in self.weights().into_iter().enumerate() {
            z[s.weight(i)] = Fr::from(w);
            z[s.zeroed(i)] = Fr::from(u64::from(self.zeroed[i]));
        }
        z[s.tau_sq()] = fr_from_u128(self.tau_sq());
        z
    }

    /// z₀: each chain's first link, every unit remaining, the weights.
    pub fn z0(&self, lay: &MergeLayout) -> Vec<Fr> {
        let node = params_chain_init(lay.spec_digest, Fr::from(self.step));
        let centre = params_chain_init(lay.spec_digest, Fr::from(self.centre_step));
        self.state(
            lay,
            |c| if c == lay.nodes { centre } else { node },
            0,
            lay.units.len(),
        )
    }

    /// z₀ and the last state under `CommitScheme::Evaluation` for the
    /// lookups' drawn `alpha`: the combined evaluation from 0 to the
    /// claimed `y` (Σ_c r^c·y_c over the nodes, the centre and the global
    /// model, r = `theta::combination_r(ζ)`), the power from 1 to ζ^K (K
    /// the coefficients of a checkpoint).
    pub fn evaluated_states(&self, lay: &MergeLayout, alpha: Fr, y: Fr) -> (Vec<Fr>, Vec<Fr>) {
        use ff::Field;
        let s = lay.slots();
        let zeta = lay.zeta(alpha, self.anchors());
        let state = |tbase: usize, remaining: usize, y: Fr, power: Fr| {
            let mut z = vec![Fr::from(0u64); s.arity()];
            z[Slots::TBASE] = Fr::from(tbase as u64);
            z[Slots::REMAINING] = Fr::from(remaining as u64);
            z[s.combined()] = y;
            for (i, w) in self.weights().into_iter().enumerate() {
                z[s.weight(i)] = Fr::from(w);
                z[s.zeroed(i)] = Fr::from(u64::from(self.zeroed[i]));
            }
            z[s.tau_sq()] = fr_from_u128(self.tau_sq());
            z[s.r()] = crate::theta::combination_r(zeta);
            z[s.alpha()] = alpha;
            z[s.zeta()] = zeta;
            z[s.power()] = power;
            z
        };
        let k = (lay.units.len() * lay.packed_len()) as u64;
        let tbase = (lay.num_folds() * lay.table_slice) % lay.table_size();
        (
            state(0, lay.units.len(), Fr::from(0u64), Fr::from(1u64)),
            state(tbase, 0, y, zeta.pow_vartime([k])),
        )
    }

    /// What the last fold must leave: every chain at its commitment,
    /// nothing remaining, the distances and lookup sums reset.
    pub fn z_final(&self, lay: &MergeLayout) -> Vec<Fr> {
        let tbase = (lay.num_folds() * lay.table_slice) % lay.table_size();
        self.state(
            lay,
            |c| match c {
                c if c < lay.nodes => self.c_nodes[c],
                c if c == lay.nodes => self.c_centre,
                _ => self.c_global,
            },
            tbase,
            0,
        )
    }
}

/// One fold's values.
#[derive(Clone, Debug)]
pub struct MergeWitness {
    /// Per unit slot: whether it holds a unit.
    pub mask: Vec<bool>,
    /// `[chain][unit slot]` records: the nodes, the centre, the global model.
    pub records: Vec<Vec<Vec<i64>>>,
    /// `[unit slot][position]` the merge's remainders r (what the identity
    /// leaves: in `[0, 2Σρ)` exactly when the global value is the merge's).
    pub rem: Vec<Vec<i128>>,
    /// The fold's slice of the table's multiplicities (late: 0 until known).
    pub mult: Vec<u64>,
}

/// The merge's inputs, read by each fold's witness.
pub struct MergeInputs<'a> {
    /// The nodes' checkpoints, in the statement's order.
    pub nodes: &'a [&'a Checkpoint],
    /// The previous global model.
    pub centre: &'a Checkpoint,
    /// The merged global model.
    pub global: &'a Checkpoint,
    /// The weights ρᵢ.
    pub weights: &'a [u64],
}

impl MergeWitness {
    /// Fold `f`'s values (multiplicities still 0).
    pub fn build(lay: &MergeLayout, spec: &ModelSpec, inp: &MergeInputs<'_>, f: usize) -> Self {
        let width = spec.record_width();
        let slots: Vec<Option<(usize, usize)>> = (0..lay.units_per_fold)
            .map(|u| lay.units.get(f * lay.units_per_fold + u).copied())
            .collect();
        let record = |c: &Checkpoint| -> Vec<Vec<i64>> {
            slots
                .iter()
                .map(|s| match s {
                    Some((l, j)) => param_record_values(c, *l, *j, width),
                    None => vec![0; lay.record_len],
                })
                .collect()
        };
        let mut records: Vec<Vec<Vec<i64>>> = inp.nodes.iter().map(|c| record(c)).collect();
        records.push(record(inp.centre));
        records.push(record(inp.global));
        let total: i128 = inp.weights.iter().map(|&w| w as i128).sum();
        let d2 = 2 * total;
        let off = lay.rounding.offset(d2);
        let rem = (0..lay.units_per_fold)
            .map(|u| {
                (0..lay.record_len)
                    .map(|k| {
                        let p: i128 = (0..lay.nodes)
                            .map(|i| inp.weights[i] as i128 * records[i][u][k] as i128)
                            .sum();
                        let q = records[lay.nodes + 1][u][k] as i128;
                        2 * p + off - q * d2
                    })
                    .collect()
            })
            .collect();
        MergeWitness {
            mask: slots.iter().map(Option::is_some).collect(),
            records,
            rem,
            mult: vec![0; lay.table_slice],
        }
    }
}

/// One merge fold's circuit; `witness: None` synthesises the shape.
#[derive(Clone, Debug)]
pub struct MergeCircuit {
    /// The merge's layout.
    pub layout: Arc<MergeLayout>,
    /// This fold's values.
    pub witness: Option<Arc<MergeWitness>>,
    /// Where a prover's first pass counts the lookups.
    pub tally: Option<Tally>,
}

/// What the first phase hands the second.
pub struct MergeCarry {
    z: Vec<AllocatedNum<Fr>>,
    /// Evaluations: each unit slot's mask and its packed records, per checkpoint.
    records: Vec<(Expr, Vec<Vec<Expr>>)>,
    queries: Vec<Expr>,
    units: Vec<zkstep_fold::UnitTag>,
    mult: Vec<AllocatedNum<Fr>>,
    is_final: Expr,
    tbase: Expr,
}

impl MergeCircuit {
    /// A circuit for shape synthesis (keygen).
    pub fn shape(layout: Arc<MergeLayout>) -> Self {
        MergeCircuit {
            layout,
            witness: None,
            tally: None,
        }
    }

    /// A fold's circuit with its values.
    pub fn fold(layout: Arc<MergeLayout>, witness: MergeWitness) -> Self {
        MergeCircuit {
            layout,
            witness: Some(Arc::new(witness)),
            tally: None,
        }
    }

    /// Both phases at a given α (tests).
    pub fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<Fr>],
        alpha: &AllocatedNum<Fr>,
    ) -> Result<Vec<AllocatedNum<Fr>>, SynthesisError> {
        let carry = self.first(cs, z)?;
        self.second(cs, carry, std::slice::from_ref(alpha))
    }
}

/// `[e = 0]`: a flag f and an inverse h with `e·h = 1 − f` and `e·f = 0`
/// (f = 1 iff e = 0, whatever h the prover picks).
fn is_zero<CS: ConstraintSystem<Fr>>(mut cs: CS, e: &Expr) -> Result<Expr, SynthesisError> {
    use ff::Field;
    let v = e.get_value();
    let h = alloc(cs.namespace(|| "inv"), v.map(|v| Option::from(v.invert()).unwrap_or(Fr::ZERO)))?;
    let f = alloc(cs.namespace(|| "flag"), v.map(|v| Fr::from(u64::from(bool::from(v.is_zero())))))?;
    enforce_mul(cs.namespace(|| "inv_def"), e, &var(&h), &sub(&one::<CS>(), &var(&f)));
    enforce_mul(cs.namespace(|| "zero"), e, &var(&f), &zero());
    Ok(var(&f))
}

fn one<CS: ConstraintSystem<Fr>>() -> Expr {
    cst::<CS>(Fr::from(1u64))
}

/// What every unit of a merge fold reads: the reputations, 2Σρ and the
/// rounding's offset.
struct Shared<'a> {
    weights: &'a [Expr],
    d2: &'a Expr,
    off: &'a Expr,
}

impl MergeCircuit {
    /// Unit u of a fold: its mask (added to `active`), every checkpoint's
    /// record range-checked (absorbed into `chains` unless evaluated at ζ),
    /// the merge identity at each position, its distances added to `dist`.
    /// Returns the mask and the packed records (for ζ).
    #[allow(clippy::type_complexity)]
    fn unit<CS: ConstraintSystem<Fr>>(
        &self,
        cu: &mut CS,
        rc: &mut LogUp,
        u: usize,
        sh: &Shared,
        (chains, dist, active): (&mut [AllocatedNum<Fr>], &mut [Expr], &mut Expr),
    ) -> Result<(Expr, Vec<Vec<Expr>>), SynthesisError> {
        let lay = &*self.layout;
        let (s, n, w) = (lay.slots(), lay.nodes, self.witness.as_deref());
        let m = alloc(cu.namespace(|| "mask"), w.map(|w| Fr::from(u64::from(w.mask[u]))))?;
        enforce_bool(cu.namespace(|| "mask_bool"), &var(&m));
        add_assign(active, &var(&m));
        // position k of unit u, in every checkpoint: one unit of the
        // circuit (its values, their range checks, its identity and its
        // distances), alike for every position and unit
        let at = |k: usize| u * lay.record_len + k;
        // every chain's record, range-checked
        let mut recs: Vec<Vec<Expr>> = Vec::with_capacity(n + 2);
        let mut packs: Vec<Vec<Expr>> = Vec::with_capacity(n + 2);
        for c in 0..n + 2 {
            let mut cc = cu.namespace(|| format!("chain{c}"));
            let vals = (0..lay.record_len)
                .map(|k| {
                    zkstep_fold::in_unit("merge", at(k), || {
                        let v = alloc(
                            cc.namespace(|| format!("v{k}")),
                            w.map(|w| fr_from_i128(w.records[c][u][k] as i128)),
                        )?;
                        rc.signed(cc.namespace(|| format!("range{k}")), &var(&v), VALUE_BITS)?;
                        Ok(var(&v))
                    })
                })
                .collect::<Result<Vec<_>, SynthesisError>>()?;
            if s.evaluated {
                // added at ζ in the second phase
                packs.push(pack::<CS>(&vals));
            } else if let Some(chain) = chains.get_mut(c) {
                *chain = chain_absorb_if(cc.namespace(|| "absorb"), &var(&m), &var(chain), &pack::<CS>(&vals))?;
            }
            recs.push(vals);
        }
        // the merge identity and the distances, position by position
        let mut sq: Vec<Expr> = vec![zero(); n];
        let mut cm = cu.namespace(|| "merge");
        for (k, &param) in lay.is_param.iter().enumerate() {
            let rem = w.map(|w| fr_from_i128(w.rem[u][k]));
            zkstep_fold::in_unit("merge", at(k), || {
                position(cm.namespace(|| format!("k{k}")), rc, sh, (&recs, k, rem), param.then_some(&mut sq))
            })?;
        }
        drop(cm);
        for (i, (d, q)) in dist.iter_mut().zip(&sq).enumerate() {
            let g = mul(cu.namespace(|| format!("dist{i}")), &var(&m), q)?;
            add_assign(d, &var(&g));
        }
        Ok((var(&m), packs))
    }
}

/// Position k of a unit: the merged value's identity 2p + off − r = q·2Σρ
/// with p = Σᵢ ρᵢ·wᵢ[k] and 0 ≤ r < 2Σρ, and, for a parameter, each node's
/// squared difference from the centre added to `sq`. `recs`: the unit's
/// records (the N nodes', the centre, the merged one); `rem`: r's value.
fn position<CS: ConstraintSystem<Fr>>(
    mut ck: CS,
    rc: &mut LogUp,
    sh: &Shared,
    (recs, k, rem): (&[Vec<Expr>], usize, Option<Fr>),
    sq: Option<&mut Vec<Expr>>,
) -> Result<(), SynthesisError> {
    let n = sh.weights.len();
    let mut p = zero();
    for (i, wi) in sh.weights.iter().enumerate() {
        let t = mul(ck.namespace(|| format!("rho{i}")), wi, &recs[i][k])?;
        add_assign(&mut p, &var(&t));
    }
    let r = alloc(ck.namespace(|| "r"), rem)?;
    rc.bits(ck.namespace(|| "r_ge_0"), &var(&r), REMAINDER_BITS)?;
    let slack = sub(&sub(sh.d2, &one::<CS>()), &var(&r));
    rc.bits(ck.namespace(|| "r_lt_d"), &slack, REMAINDER_BITS)?;
    // 2p + off − r = q·2Σρ
    let lhs = sub(&add(&scale(&p, Fr::from(2u64)), sh.off), &var(&r));
    enforce_mul(ck.namespace(|| "div"), &recs[n + 1][k], sh.d2, &lhs);
    if let Some(sq) = sq {
        for (i, acc) in sq.iter_mut().enumerate() {
            let d = sub(&recs[i][k], &recs[n][k]);
            let d_sq = mul(ck.namespace(|| format!("sq{i}")), &d, &d)?;
            add_assign(acc, &var(&d_sq));
        }
    }
    Ok(())
}

impl StepCircuit<Fr> for MergeCircuit {
    type Carry = MergeCarry;

    fn arity(&self) -> usize {
        self.layout.arity()
    }

    // α, for the lookups
    fn num_challenges(&self) -> usize {
        1
    }

    fn late(&self) -> usize {
        self.layout.table_slice
    }

    // only the lookup sums depend on α
    fn provisional_next(&self, carry: &Self::Carry) -> Option<Vec<Fr>> {
        carry.z.iter().map(|v| v.get_value()).collect()
    }

    fn first<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<Fr>],
    ) -> Result<MergeCarry, SynthesisError> {
        let lay = &*self.layout;
        let s = lay.slots();
        let w = self.witness.as_deref();
        let n = lay.nodes;
        let mut rc = LogUp::new(lay.limb_bits, self.tally.clone());
        let zv = |k: usize| var(&z[k]);
        let weights: Vec<Expr> = (0..n).map(|i| zv(s.weight(i))).collect();
        let mut total = zero();
        for wi in &weights {
            add_assign(&mut total, wi);
        }
        let d2 = scale(&total, Fr::from(2u64));
        let off = match lay.rounding {
            Rounding::HalfUp => total.clone(),
            Rounding::Floor => zero(),
        };
        // evaluations keep no chains (the second phase adds the records at ζ)
        let mut chains: Vec<AllocatedNum<Fr>> = match s.evaluated {
            true => vec![],
            false => (0..n + 2).map(|c| z[s.chain(c)].clone()).collect(),
        };
        let mut dist: Vec<Expr> = (0..n).map(|i| zv(s.dist(i))).collect();
        let mut packed: Vec<(Expr, Vec<Vec<Expr>>)> = vec![];
        let mut active = zero();
        let shared = Shared { weights: &weights, d2: &d2, off: &off };
        for u in 0..lay.units_per_fold {
            let mut cu = cs.namespace(|| format!("u{u}"));
            packed.push(self.unit(&mut cu, &mut rc, u, &shared, (&mut chains, &mut dist, &mut active))?);
        }
        // where the last unit was absorbed: is_final = [remaining − active = 0]
        let left = sub(&zv(Slots::REMAINING), &active);
        let mut cf = cs.namespace(|| "final");
        let is_final = is_zero(cf.namespace(|| "flag"), &left)?;
        // the outlier rule: e = (τ² − D) + s·(2D − 2τ² − 1) ≥ 0, checked where final
        let tau = zv(s.tau_sq());
        let mut next_dist = Vec::with_capacity(n);
        for (i, d) in dist.iter().enumerate() {
            let mut ci = cf.namespace(|| format!("n{i}"));
            let far = sub(&sub(&scale(d, Fr::from(2u64)), &scale(&tau, Fr::from(2u64))), &one::<CS>());
            let sf = mul(ci.namespace(|| "side"), &zv(s.zeroed(i)), &far)?;
            let e = add(&sub(&tau, d), &var(&sf));
            let g = mul(ci.namespace(|| "gate"), &is_final, &e)?;
            rc.bits(ci.namespace(|| "outlier"), &var(&g), DISTANCE_BITS)?;
            // the distance leaves with 0 where final
            let keep = sub(&one::<CS>(), &is_final);
            next_dist.push(mul(ci.namespace(|| "next"), &keep, d)?);
        }
        drop(cf);
        // the table slice's base: + slice, back to 0 at the table's end
        let tb = zv(Slots::TBASE);
        let stepped = add(&tb, &cst::<CS>(Fr::from(lay.table_slice as u64)));
        let size = Fr::from(lay.table_size() as u64);
        let at_end = sub(&stepped, &cst::<CS>(size));
        let wrap = is_zero(cs.namespace(|| "tbase_wrap"), &at_end)?;
        let tnext = sub(&stepped, &scale(&wrap, size));
        // the next state (lookup sums as they came: the second phase adds)
        let mut out: Vec<AllocatedNum<Fr>> = z.to_vec();
        out[Slots::TBASE] = materialise(cs.namespace(|| "next_tbase"), &tnext)?;
        out[Slots::REMAINING] = materialise(cs.namespace(|| "next_remaining"), &left)?;
        for (c, h) in chains.into_iter().enumerate() {
            out[s.chain(c)] = h;
        }
        for (i, d) in next_dist.into_iter().enumerate() {
            out[s.dist(i)] = d;
        }
        // the table slice's multiplicities, allocated last (the late values)
        let mut cl = cs.namespace(|| "lookup");
        let mult = (0..lay.table_slice)
            .map(|k| {
                alloc(
                    cl.namespace(|| format!("m{k}")),
                    w.map(|w| Fr::from(w.mult.get(k).copied().unwrap_or(0))),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (queries, units) = rc.into_tagged_queries();
        Ok(MergeCarry {
            z: out,
            records: packed,
            queries,
            units,
            mult,
            is_final,
            tbase: tb,
        })
    }

    fn second<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        p: MergeCarry,
        challenges: &[AllocatedNum<Fr>],
    ) -> Result<Vec<AllocatedNum<Fr>>, SynthesisError> {
        let s = self.layout.slots();
        let sums = crate::fold::lookup::Sums {
            queries: &p.queries,
            units: &p.units,
            tbase: &p.tbase,
            mult: &p.mult,
            is_final: &p.is_final,
        };
        let (q, t) = sums.close(
            cs.namespace(|| "lookup_sums"),
            &var(&challenges[0]),
            (&p.z[s.queries()], &p.z[s.table()]),
        )?;
        let mut out = p.z;
        out[s.queries()] = q;
        out[s.table()] = t;
        if s.evaluated {
            evaluate_units(cs.namespace(|| "at_zeta"), &self.layout, &p.records, &challenges[0], &mut out)?;
        }
        Ok(out)
    }
}

/// Evaluations: the state's α must be the drawn one; then each unit's
/// packed records at the running power of ζ, every checkpoint's combined
/// with powers of r: `y += m·ζ^k·Σ_c r^c·Σ_i e_{c,i}·ζ^i` (Horner's rule in
/// ζ, then in r), `ζ^k ← ζ^k + m·ζ^k·(ζ^L − 1)`, L a record's packed length.
fn evaluate_units<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    lay: &MergeLayout,
    records: &[(Expr, Vec<Vec<Expr>>)],
    alpha: &AllocatedNum<Fr>,
    out: &mut [AllocatedNum<Fr>],
) -> Result<(), SynthesisError> {
    use zkstep_gadgets::expr::{enforce_eq, horner};
    let s = lay.slots();
    enforce_eq(cs.namespace(|| "alpha_drawn"), &var(&out[s.alpha()]), &var(alpha));
    let zeta = var(&out[s.zeta()]);
    let zl = crate::fold::challenges::power(cs.namespace(|| "zeta_l"), &zeta, lay.packed_len())?;
    let r = var(&out[s.r()]);
    let mut y = var(&out[s.combined()]);
    let mut pw = var(&out[s.power()]);
    for (u, (mask, packs)) in records.iter().enumerate() {
        zkstep_fold::in_unit("merge at zeta", u, || -> Result<(), SynthesisError> {
            let mut cu = cs.namespace(|| format!("u{u}"));
            let q = var(&mul(cu.namespace(|| "masked_power"), mask, &pw)?);
            // Σ_c r^c·(record c at ζ), by Horner's rule in r from the last checkpoint
            let mut comb: Option<Expr> = None;
            for (c, e) in packs.iter().enumerate().rev() {
                let h = horner(cu.namespace(|| format!("horner{c}")), &zeta, e)?;
                comb = Some(match comb {
                    None => h,
                    Some(acc) => add(&var(&mul(cu.namespace(|| format!("by_r{c}")), &acc, &r)?), &h),
                });
            }
            let t = mul(cu.namespace(|| "term"), &q, &comb.unwrap_or_else(zero))?;
            add_assign(&mut y, &var(&t));
            let step = mul(cu.namespace(|| "advance"), &q, &sub(&var(&zl), &one::<CS>()))?;
            pw = add(&pw, &var(&step));
            Ok(())
        })?;
    }
    out[s.combined()] = materialise(cs.namespace(|| "y"), &y)?;
    out[s.power()] = materialise(cs.namespace(|| "power"), &pw)?;
    Ok(())
}

/// Each fold's multiplicities from the whole merge's lookup counts.
pub fn fill_multiplicities(lay: &MergeLayout, ws: &mut [MergeWitness], counts: &[u64]) {
    for (f, w) in ws.iter_mut().enumerate() {
        w.mult = slice_of(lay, counts, f);
    }
}

/// Fold `f`'s slice of the multiplicities (a slice met again, when the
/// folds cover the table more than once, gets its counts only the first time).
pub fn slice_of(lay: &MergeLayout, counts: &[u64], f: usize) -> Vec<u64> {
    let base = (f * lay.table_slice) % lay.table_size();
    let first_round = f * lay.table_slice < lay.table_size();
    (0..lay.table_slice)
        .map(|k| if first_round { counts.get(base + k).copied().unwrap_or(0) } else { 0 })
        .collect()
}

/// Accept a merge proof (its folds and compressed proof) for `stmt` under
/// the verifier key `vk` of `lay`, or say why not. Under keys on KZG points
/// (`theta`: the key's opening key and the proof's opening) the statement's
/// commitments are the points' hashes and the states hold their evaluations
/// at ζ, which the opening ties to the points; `known` holds the hashes a
/// proof file's reader already took of those points (reused where spec,
/// step and point are unchanged; `PointHashes::default()` for none).
pub fn verify_merge(
    lay: &MergeLayout,
    vk: &crate::engine::VerifierKey,
    num_folds: u64,
    snark: &crate::engine::CompressedSnark,
    stmt: &MergeStatement,
    theta: (Option<&crate::theta::ThetaKey>, Option<&crate::theta::MergeOpening>),
    known: &crate::theta::PointHashes,
) -> Result<(), String> {
    stmt.check(lay).map_err(|e| e.to_string())?;
    if num_folds != lay.num_folds() as u64 {
        return Err(format!(
            "the proof has {num_folds} folds, the merge's layout {}",
            lay.num_folds()
        ));
    }
    // the states beside the SNARKs, and beside the states' hashes the
    // checkpoints' opening at the values the states take from it
    let states = || -> Result<(Vec<Fr>, Vec<Fr>), String> {
        match (lay.scheme, theta) {
            (CommitScheme::Chain, (None, None)) => Ok((stmt.z0(lay), stmt.z_final(lay))),
            (CommitScheme::Evaluation, (Some(_), Some(o))) => Ok(stmt.evaluated_states(lay, o.alpha, o.value)),
            (CommitScheme::Evaluation, (Some(_), None)) => {
                Err("the merge key binds checkpoints by KZG points and the proof carries no opening of them (a proof made under other keys)".into())
            }
            (CommitScheme::Chain, (None, Some(_))) => {
                Err("the proof carries an opening of KZG points, and the merge key binds checkpoints by hash chains (a proof made under other keys)".into())
            }
            _ => Err("the merge key's commitment scheme and its opening key disagree".into()),
        }
    };
    let opening = || match theta {
        (Some(key), Some(o)) => {
            let zeta = lay.zeta(o.alpha, stmt.anchors());
            crate::theta::check_merge(key, lay.spec_digest, &stmt.commitments(), o, zeta, known)
        }
        _ => Ok(()),
    };
    // the last state is the statement's (inputs, weights, flags, global
    // model): a proof of any other does not verify against it
    snark
        .verify_with(vk, lay.num_folds(), states, opening)?
        .map_err(|e| format!("the compressed proof does not verify from the statement's first state to its last: {e}"))
}
