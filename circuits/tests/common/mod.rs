//! Shared helpers of the circuit tests: run every fold of a step in a test
//! constraint system, carrying the state, and report the first failing
//! constraint by fold and namespace.
#![allow(dead_code, clippy::unwrap_used)]

use nova_snark::frontend::num::AllocatedNum;
use zkstep_gadgets::testing::Checker;
use nova_snark::frontend::ConstraintSystem;
use std::sync::Arc;
use zkstep_circuits::witness::{build_step, TileWitness};
use zkstep_circuits::layout::CommitScheme;
use zkstep_circuits::{Layout, TileCircuit};
use zkstep_core::commit::commit_params;
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Batch, Checkpoint, Fr, Matrix, ModelSpec};

pub struct Case {
    pub spec: ModelSpec,
    pub before: Checkpoint,
    pub batch: Batch,
    pub after: Checkpoint,
    pub layout: Arc<Layout>,
    pub witnesses: Vec<TileWitness>,
    pub z0: Vec<Fr>,
}

pub fn case(toml: &str, rows: Option<usize>, seed: u64) -> Case {
    case_cut(toml, rows, 1, seed)
}

/// A case whose rows are cut into `segments` folds (one row a tile).
pub fn case_segmented(toml: &str, segments: usize, seed: u64) -> Case {
    case_cut(toml, Some(1), segments, seed)
}

fn case_cut(toml: &str, rows: Option<usize>, segments: usize, seed: u64) -> Case {
    let spec = ModelSpec::from_toml_str(toml).unwrap();
    let before = Checkpoint::init(&spec, seed);
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let b = spec.batch_size;
    let x = Matrix::from_vec(
        b,
        spec.input_width(),
        (0..b * spec.input_width())
            .map(|_| rng.gen_range(-1_000_000_000i64..1_000_000_000))
            .collect(),
    )
    .unwrap();
    let y = Matrix::from_vec(
        b,
        spec.output_width(),
        (0..b * spec.output_width())
            .map(|_| rng.gen_range(-1_000_000_000i64..1_000_000_000))
            .collect(),
    )
    .unwrap();
    let batch = Batch {
        x,
        y,
        salt: seeded_salt(seed, 0),
    };
    let layout = match (rows, segments) {
        (Some(r), s) => Layout::with_segments(&spec, r, s).unwrap(),
        (None, _) => {
            zkstep_circuits::sizing::fit(&spec, zkstep_circuits::DEFAULT_FOLD_BUDGET).unwrap()
        }
    };
    case_in(spec, before, batch, layout)
}

pub fn case_from(spec: ModelSpec, before: Checkpoint, batch: Batch, rows: Option<usize>) -> Case {
    let layout =
        zkstep_circuits::sizing::layout_for(&spec, rows, zkstep_circuits::DEFAULT_FOLD_BUDGET)
            .unwrap();
    case_in(spec, before, batch, layout)
}

pub fn case_in(spec: ModelSpec, before: Checkpoint, batch: Batch, layout: Layout) -> Case {
    let trace = step(&spec, &before, &batch).unwrap();
    let layout = Arc::new(layout);
    let (mut witnesses, statement) =
        build_step(&layout, &trace, &before, &batch, test_ch(), test_anchors()).unwrap();
    let z0 = layout.first_state(&statement);
    with_multiplicities(&layout, &mut witnesses, &z0);
    Case {
        spec,
        before,
        batch,
        after: trace.after,
        layout,
        witnesses,
        z0,
    }
}

/// The lookups' challenge the tests fold at (any fixed value: these tests
/// check constraints; the challenge's soundness is zkstep-fold's).
pub fn test_alpha() -> Fr {
    Fr::from(0x1234_5678_9abc_u64) * Fr::from(0xdef0_1357_u64) + Fr::from(7u64)
}

/// The matrix identities' challenge ρ the tests build witnesses and fold at
/// (any fixed value; its order after the first phases is zkstep-fold's).
pub fn test_rho() -> Fr {
    Fr::from(0x0bad_cafe_f00d_u64) * Fr::from(0x1357_9bdf_u64) + Fr::from(3u64)
}

/// The τA links' challenge γ the tests build witnesses and fold at (any
/// fixed value; its order after the second parts is zkstep-fold's).
pub fn test_gamma() -> Fr {
    Fr::from(0x5eed_1e55_u64) * Fr::from(0x2468_ace0_u64) + Fr::from(11u64)
}

/// The statement's challenges at the test values.
/// The first and last commitments ζ absorbs in these tests (under KZG
/// points a proof's; any two values here).
pub fn test_anchors() -> [Fr; 2] {
    [Fr::from(0xa5u64), Fr::from(0x5au64)]
}

pub fn test_ch() -> zkstep_circuits::transcript::Challenges {
    zkstep_circuits::transcript::Challenges {
        rho: test_rho(),
        gamma: test_gamma(),
    }
}

/// A case's witnesses (multiplicities counted) and z₀ built at the drawn
/// challenges `[α, ρ, γ]` (α is the folding layer's alone).
pub fn witnesses_at(c: &Case, drawn: [Fr; 3]) -> (Vec<TileWitness>, Vec<Fr>) {
    let trace = step(&c.spec, &c.before, &c.batch).unwrap();
    let ch = zkstep_circuits::transcript::Challenges {
        rho: drawn[1],
        gamma: drawn[2],
    };
    let (mut ws, st) = build_step(&c.layout, &trace, &c.before, &c.batch, ch, test_anchors()).unwrap();
    let z0 = c.layout.first_state(&st);
    with_multiplicities(&c.layout, &mut ws, &z0);
    (ws, z0)
}

/// The drawn challenges `[α, ρ, γ]` at the test values.
pub fn test_drawn() -> [Fr; 3] {
    [test_alpha(), test_rho(), test_gamma()]
}

/// The drawn challenges `[α, ρ, γ]` allocated in `cs` at the test values.
pub fn test_challenges<CS: ConstraintSystem<Fr>>(mut cs: CS) -> Vec<AllocatedNum<Fr>> {
    test_drawn()
        .iter()
        .enumerate()
        .map(|(k, v)| {
            AllocatedNum::alloc(cs.namespace(|| format!("challenge{k}")), || Ok(*v)).unwrap()
        })
        .collect()
}

/// Count one step's lookups (every fold's first phase, from `z0`) and give
/// each fold its slice of the multiplicities, as a prover's first pass does.
pub fn with_multiplicities(layout: &Arc<Layout>, ws: &mut [TileWitness], z0: &[Fr]) {
    use zkstep_circuits::fold::Tally;
    let tally: Tally = Arc::new(std::sync::Mutex::new(vec![0; layout.table_size()]));
    let mut z = z0.to_vec();
    for w in ws.iter() {
        let mut cs = nova_snark::frontend::solver::SatisfyingAssignment::<zkstep_circuits::engine::E1>::new();
        let zin: Vec<AllocatedNum<Fr>> = z
            .iter()
            .enumerate()
            .map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("z{i}")), || Ok(*v)).unwrap())
            .collect();
        let c = TileCircuit {
            tally: Some(tally.clone()),
            ..TileCircuit::fold(layout.clone(), w.clone())
        };
        let p = c.first_phase(&mut cs, &zin).unwrap();
        z = p.z.iter().map(|a| a.get_value().unwrap()).collect();
    }
    let counts = tally.lock().unwrap().clone();
    zkstep_circuits::witness::fill_multiplicities(layout, ws, &counts).unwrap();
}

/// Run one fold (both phases, at [`test_drawn`]); Ok(z_next) or Err(failing constraint path).
pub fn run_fold(layout: &Arc<Layout>, w: &TileWitness, z: &[Fr]) -> Result<Vec<Fr>, String> {
    run_fold_at(layout, w, z, test_drawn())
}

/// [`run_fold`] with the drawn challenges `[α, ρ, γ]` given.
pub fn run_fold_at(
    layout: &Arc<Layout>,
    w: &TileWitness,
    z: &[Fr],
    drawn: [Fr; 3],
) -> Result<Vec<Fr>, String> {
    let mut cs = Checker::default();
    let zin: Vec<AllocatedNum<Fr>> = z
        .iter()
        .enumerate()
        .map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("z{i}")), || Ok(*v)).unwrap())
        .collect();
    let ch: Vec<AllocatedNum<Fr>> = drawn
        .iter()
        .enumerate()
        .map(|(k, v)| AllocatedNum::alloc(cs.namespace(|| format!("drawn{k}")), || Ok(*v)).unwrap())
        .collect();
    let c = TileCircuit::fold(layout.clone(), w.clone());
    let out = c
        .synthesize(&mut cs.namespace(|| "step"), &zin, &ch)
        .map_err(|e| format!("synthesis: {e}"))?;
    if let Some(which) = cs.which_is_unsatisfied() {
        return Err(which.to_string());
    }
    Ok(out.iter().map(|a| a.get_value().unwrap()).collect())
}

/// Run all folds; Ok(z_n) or Err((fold, path)).
pub fn run_all(
    layout: &Arc<Layout>,
    ws: &[TileWitness],
    z0: &[Fr],
) -> Result<Vec<Fr>, (usize, String)> {
    let mut z = z0.to_vec();
    for (f, w) in ws.iter().enumerate() {
        z = run_fold(layout, w, &z).map_err(|e| (f, e))?;
    }
    Ok(z)
}

pub fn num_constraints(layout: &Arc<Layout>, w: &TileWitness) -> usize {
    let mut cs = Checker::default();
    let zin: Vec<AllocatedNum<Fr>> = (0..layout.arity())
        .map(|i| {
            AllocatedNum::alloc(cs.namespace(|| format!("z{i}")), || Ok(Fr::from(0u64))).unwrap()
        })
        .collect();
    let ch = test_challenges(cs.namespace(|| "drawn"));
    let c = TileCircuit::fold(layout.clone(), w.clone());
    let before = cs.num_constraints();
    c.synthesize(&mut cs.namespace(|| "step"), &zin, &ch).unwrap();
    cs.num_constraints() - before
}

pub const TWO_LAYER: &str = "batch_size = 3\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 3\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 2\n";

/// k consecutive steps from a fresh init, each on its own batch, folded as
/// one segment: every step's last fold carries the next step's opening.
pub struct Segment {
    pub layout: Arc<Layout>,
    pub witnesses: Vec<TileWitness>,
    pub z0: Vec<Fr>,
    pub openings: Vec<zkstep_circuits::layout::StepOpening>,
    pub end: Checkpoint,
}

pub fn segment(toml: &str, rows: usize, seed: u64, k: usize) -> Segment {
    segment_with(toml, rows, seed, k, &|_, _, _| None)
}

/// What [`segment_with`] lets a test change in step s: its trace, rebuilt
/// from its before-checkpoint (the steps after it start from the changed
/// after-checkpoint), and, when it returns them, the Adam constants its
/// opening carries.
pub type StepEdit<'a> = dyn Fn(usize, &Checkpoint, &mut zkstep_core::StepTrace) -> Option<(Fr, Fr)> + 'a;

/// [`segment`], with each step's trace passed through `edit` before its
/// witness is built: a forger's segment, every fold of which is satisfied.
pub fn segment_with(toml: &str, rows: usize, seed: u64, k: usize, edit: &StepEdit<'_>) -> Segment {
    segment_in(toml, rows, seed, k, edit, CommitScheme::Chain)
}

/// [`segment_with`] under a commitment scheme.
pub fn segment_in(
    toml: &str,
    rows: usize,
    seed: u64,
    k: usize,
    edit: &StepEdit<'_>,
    scheme: CommitScheme,
) -> Segment {
    use zkstep_circuits::witness::NextStep;
    let spec = ModelSpec::from_toml_str(toml).unwrap();
    let layout = Arc::new(Layout::new(&spec, rows).unwrap().with_commit_scheme(scheme));
    let mut cp = Checkpoint::init(&spec, seed);
    let mut steps: Vec<(Vec<TileWitness>, zkstep_circuits::layout::StepOpening)> = vec![];
    for s in 0..k {
        let batch = case(toml, Some(rows), seed + 100 * s as u64 + 1).batch;
        let mut trace = step(&spec, &cp, &batch).unwrap();
        let adam = edit(s, &cp, &mut trace);
        let mut built = build_step(&layout, &trace, &cp, &batch, test_ch(), test_anchors()).unwrap();
        if let Some(a) = adam {
            built.1.adam = a;
        }
        steps.push(built);
        cp = trace.after;
    }
    let openings: Vec<_> = steps.iter().map(|s| s.1).collect();
    let o = openings[0];
    let z0 = layout.step_start(&o, layout.segment_init(true), layout.segment_init(false));
    let mut witnesses = vec![];
    let mut z = z0.clone();
    for (s, (mut ws, _)) in steps.into_iter().enumerate() {
        if let Some(o) = openings.get(s + 1) {
            ws.last_mut().unwrap().next = NextStep::of(o);
        }
        with_multiplicities(&layout, &mut ws, &z);
        // the next step's first state, as this step's last fold leaves it
        z = run_all(&layout, &ws, &z).unwrap();
        witnesses.extend(ws);
    }
    Segment {
        layout,
        witnesses,
        z0,
        openings,
        end: cp,
    }
}

impl Segment {
    /// The final state the verifier derives from the segment's statement.
    pub fn expected_final(&self, c_batches: &[Fr], t: u64, k: u64) -> Vec<Fr> {
        let lay = &self.layout;
        let zeta = self.openings[0].zeta;
        let end = [&self.end; 2];
        let c_end = lay.theta_values([commit_params(&lay.spec, &self.end); 2], end, zeta)[0];
        lay.final_state(
            (c_end, zeta),
            Fr::from(t + k),
            lay.batches_digest(c_batches),
            lay.adam_digest(t, k).unwrap(),
        )
    }

    pub fn c_batches(&self) -> Vec<Fr> {
        self.openings.iter().map(|o| o.c_batch).collect()
    }
}
