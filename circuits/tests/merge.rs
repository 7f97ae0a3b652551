//! π_merge's circuit: an honest merge satisfies every fold and ends at the
//! statement's commitments; each mutation the issue names is rejected (a
//! global value off by one, a reputation changed, inputs swapped, a zeroed
//! model given weight, a kept model zeroed, a remainder ≥ 2Σρ).
#![allow(clippy::unwrap_used)]

use nova_snark::frontend::num::AllocatedNum;
use zkstep_gadgets::testing::Checker;
use nova_snark::frontend::ConstraintSystem;
use std::sync::{Arc, Mutex};
use zkstep_circuits::merge::{
    fill_multiplicities, MergeCircuit, MergeInputs, MergeLayout, MergeStatement, MergeWitness,
};
use zkstep_circuits::layout::CommitScheme;
use zkstep_core::commit::commit_params;
use zkstep_core::merge::{merge, MergeNode};
use zkstep_core::model::Checkpoint;
use zkstep_core::{Fr, ModelSpec};
use zkstep_fold::StepCircuit;

const SPEC: &str = "batch_size = 2\n[optimizer]\nkind = \"adam\"\n[[layers]]\ninputs = 3\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 2\n";
const TAU: i64 = 3_000_000;

fn spec(rounding: &str) -> ModelSpec {
    ModelSpec::from_toml_str(&format!("rounding = \"{rounding}\"\n{SPEC}")).unwrap()
}

fn alpha() -> Fr {
    Fr::from(0x1234_5678_9abc_u64) * Fr::from(0xdef0_1357_u64) + Fr::from(7u64)
}

/// The previous global model and four nodes near it, the last one farther than τ.
fn models(s: &ModelSpec) -> (Checkpoint, Vec<Checkpoint>) {
    let mut centre = Checkpoint::init(s, 1);
    centre.step = 2;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % (2 * m + 1)) as i64 - m as i64
    };
    for lp in centre.layers.iter_mut() {
        for st in lp.state.iter_mut() {
            st.w.data.iter_mut().for_each(|v| *v = next(1_000_000_000));
            st.b.iter_mut().for_each(|v| *v = next(1_000_000_000));
        }
    }
    let nodes = (0..4)
        .map(|i| {
            let mut c = centre.clone();
            c.step = 3;
            let spread = if i == 3 { 5_000_000 } else { 400_000 };
            for lp in c.layers.iter_mut() {
                lp.w.data.iter_mut().for_each(|v| *v += next(spread));
                lp.b.iter_mut().for_each(|v| *v += next(spread));
                for st in lp.state.iter_mut() {
                    st.w.data.iter_mut().for_each(|v| *v += next(1_000_000));
                }
            }
            c
        })
        .collect();
    (centre, nodes)
}

struct Case {
    spec: ModelSpec,
    lay: Arc<MergeLayout>,
    centre: Checkpoint,
    nodes: Vec<Checkpoint>,
    global: Checkpoint,
    stmt: MergeStatement,
}

fn case(rounding: &str, units: usize) -> Case {
    let spec = spec(rounding);
    let (centre, nodes) = models(&spec);
    let reps = [3u64, 1, 5, 2];
    let mn: Vec<MergeNode> = nodes
        .iter()
        .zip(reps)
        .map(|(ckpt, reputation)| MergeNode { ckpt, reputation })
        .collect();
    let m = merge(&spec, &centre, &mn, TAU).unwrap();
    assert_eq!(m.weight, [3, 1, 5, 0], "the fixture's last node is the outlier");
    let lay = Arc::new(MergeLayout::new(&spec, nodes.len(), units).unwrap());
    let refs: Vec<&Checkpoint> = nodes.iter().collect();
    let stmt = MergeStatement::of(&spec, &centre, &refs, &reps, TAU, &m);
    stmt.check(&lay).unwrap();
    Case {
        spec,
        lay,
        centre,
        nodes,
        global: m.global,
        stmt,
    }
}

fn alloc_z<CS: ConstraintSystem<Fr>>(cs: &mut CS, z: &[Fr]) -> Vec<AllocatedNum<Fr>> {
    z.iter()
        .enumerate()
        .map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("z{i}")), || Ok(*v)).unwrap())
        .collect()
}

impl Case {
    /// Every fold's witness with its multiplicities, for these inputs and weights.
    fn witnesses(&self, weights: &[u64], z0: &[Fr]) -> Vec<MergeWitness> {
        self.witnesses_with(weights, z0, &|_| {})
    }

    /// [`Case::witnesses`] with the values edited before the lookups are counted.
    fn witnesses_with(&self, weights: &[u64], z0: &[Fr], edit: &dyn Fn(&mut [MergeWitness])) -> Vec<MergeWitness> {
        let nodes: Vec<&Checkpoint> = self.nodes.iter().collect();
        let inp = MergeInputs {
            nodes: &nodes,
            centre: &self.centre,
            global: &self.global,
            weights,
        };
        let mut ws: Vec<MergeWitness> = (0..self.lay.num_folds())
            .map(|f| MergeWitness::build(&self.lay, &self.spec, &inp, f))
            .collect();
        edit(&mut ws);
        let tally = Arc::new(Mutex::new(vec![0u64; self.lay.table_size()]));
        let mut z = z0.to_vec();
        for w in &ws {
            let mut cs = Checker::default();
            let zin = alloc_z(&mut cs, &z);
            let c = MergeCircuit {
                tally: Some(tally.clone()),
                ..MergeCircuit::fold(self.lay.clone(), w.clone())
            };
            let carry = c.first(&mut cs, &zin).unwrap();
            z = c.provisional_next(&carry).unwrap();
        }
        let counts = tally.lock().unwrap().clone();
        fill_multiplicities(&self.lay, &mut ws, &counts);
        ws
    }

    /// Every fold from z₀; Ok(z_n) or Err((fold, the first unsatisfied constraint)).
    fn run(&self, ws: &[MergeWitness], z0: &[Fr]) -> Result<Vec<Fr>, (usize, String)> {
        let mut z = z0.to_vec();
        for (f, w) in ws.iter().enumerate() {
            let mut cs = Checker::default();
            let zin = alloc_z(&mut cs, &z);
            let a = AllocatedNum::alloc(cs.namespace(|| "alpha"), || Ok(alpha())).unwrap();
            let c = MergeCircuit::fold(self.lay.clone(), w.clone());
            let out = c.synthesize(&mut cs.namespace(|| "merge"), &zin, &a).unwrap();
            if let Some(which) = cs.which_is_unsatisfied() {
                return Err((f, which.to_string()));
            }
            z = out.iter().map(|v| v.get_value().unwrap()).collect();
        }
        Ok(z)
    }

    /// Prove-and-check the statement `stmt` from these inputs: Ok when every
    /// fold is satisfied and the last state is the statement's.
    fn check(&self, stmt: &MergeStatement) -> Result<(), String> {
        let z0 = stmt.z0(&self.lay);
        let ws = self.witnesses(&stmt.weights(), &z0);
        let zn = self.run(&ws, &z0).map_err(|(f, e)| format!("fold {f}: {e}"))?;
        if zn != stmt.z_final(&self.lay) {
            return Err("the last state is not the statement's".into());
        }
        Ok(())
    }
}

#[test]
fn an_honest_merge_satisfies_every_fold_and_opens_its_statement() {
    for (rounding, units) in [("half-up", 2), ("floor", 4), ("half-up", 6)] {
        let c = case(rounding, units);
        assert_eq!(c.lay.num_folds(), 6usize.div_ceil(units));
        c.check(&c.stmt).unwrap_or_else(|e| panic!("{rounding}, {units} units a fold: {e}"));
    }
}

#[test]
fn a_global_value_off_by_one_is_rejected() {
    let mut c = case("half-up", 2);
    // a weight, a bias and an optimizer state value, each off by one
    for edit in 0..3 {
        let mut g = c.global.clone();
        match edit {
            0 => g.layers[0].w.data[5] += 1,
            1 => g.layers[1].b[1] -= 1,
            _ => g.layers[0].state[1].w.data[2] += 1,
        }
        let mut s = c.stmt.clone();
        s.c_global = commit_params(&c.spec, &g);
        let honest = std::mem::replace(&mut c.global, g);
        let e = c.check(&s).unwrap_err();
        assert!(e.contains("merge/k") && (e.contains("r_ge_0") || e.contains("r_lt_d")), "{edit}: {e}");
        c.global = honest;
    }
}

#[test]
fn a_statement_with_another_reputation_is_rejected() {
    let c = case("half-up", 2);
    let mut s = c.stmt.clone();
    s.reputations[0] += 1;
    let e = c.check(&s).unwrap_err();
    assert!(e.contains("merge/k"), "{e}");
}

#[test]
fn inputs_in_another_order_than_the_statement_are_rejected() {
    let mut c = case("half-up", 3);
    c.nodes.swap(0, 1);
    // same weights: the merged model changes, so are the chains
    let e = c.check(&c.stmt).unwrap_err();
    assert!(e.contains("merge/k") || e.contains("last state"), "{e}");
    // another node's model in place of node 1, its reputation moved with it
    let mut c = case("half-up", 3);
    let mut s = c.stmt.clone();
    c.nodes.swap(0, 1);
    s.reputations.swap(0, 1);
    assert_eq!(c.check(&s).unwrap_err(), "the last state is not the statement's");
}

#[test]
fn the_outlier_rule_is_checked_both_ways() {
    let c = case("half-up", 2);
    // the far node given its weight: the merge is of other values, and its
    // flag contradicts its distance
    let mut s = c.stmt.clone();
    s.zeroed[3] = false;
    let e = c.check(&s).unwrap_err();
    assert!(e.contains("merge/k") || e.contains("final/n3/outlier"), "{e}");
    // the far node kept with the honest global model is caught by the rule alone:
    // a statement whose merge is of nodes 0..2 but whose flag says kept with reputation 0
    let mut s = c.stmt.clone();
    s.zeroed[3] = false;
    s.reputations[3] = 0;
    let e = c.check(&s).unwrap_err();
    assert!(e.contains("final/n3/outlier"), "{e}");
    // a near node zeroed, its reputation 0 so the merge itself is unchanged
    let mut s = c.stmt.clone();
    s.zeroed[1] = true;
    let honest_rep = s.reputations[1];
    s.reputations[1] = 0;
    let mut c2 = case("half-up", 2);
    let mn: Vec<MergeNode> = c2
        .nodes
        .iter()
        .zip(&s.reputations)
        .map(|(ckpt, &reputation)| MergeNode { ckpt, reputation })
        .collect();
    c2.global = merge(&c2.spec, &c2.centre, &mn, TAU).unwrap().global;
    s.c_global = commit_params(&c2.spec, &c2.global);
    let e = c2.check(&s).unwrap_err();
    assert!(e.contains("final/n1/outlier"), "{e}");
    // the same with the flag honest passes
    s.zeroed[1] = false;
    c2.check(&s).unwrap();
    assert_ne!(honest_rep, 0);
}

#[test]
fn a_remainder_of_two_sigma_rho_or_more_is_rejected() {
    let c = case("floor", 2);
    let z0 = c.stmt.z0(&c.lay);
    let mut ws = c.witnesses(&c.stmt.weights(), &z0);
    // q − 1 with r + 2Σρ satisfies the identity: the upper bound refuses it
    let d2: u64 = 2 * c.stmt.weights().iter().sum::<u64>();
    let w = &mut ws[1];
    let n = c.lay.nodes;
    w.records[n + 1][0][3] -= 1;
    w.rem[0][3] += d2 as i128;
    let e = c.run(&ws, &z0).unwrap_err();
    assert_eq!(e.0, 1);
    assert!(e.1.contains("merge/k3/r_lt_d"), "{}", e.1);
}

#[test]
fn a_masked_unit_slot_adds_nothing_to_the_distances() {
    // 6 units in folds of 4: the second fold's last two slots are empty;
    // a value there (never absorbed) far from the centre must not count
    // toward node 0's distance, or the rule would find node 0 past τ
    let c = case("half-up", 4);
    let z0 = c.stmt.z0(&c.lay);
    let ws = c.witnesses_with(&c.stmt.weights(), &z0, &|ws| {
        assert_eq!(ws[1].mask, [true, true, false, false]);
        // node 0 (weight 3 of Σρ = 9) at X, the rest 0: the merged value X/3
        let x = 1_200_000_000_000;
        for c in 0..6 {
            ws[1].records[c][3][0] = if c == 0 { x } else { 0 };
        }
        ws[1].records[5][3][0] = x / 3;
        ws[1].rem[3][0] = 9;
    });
    assert_eq!(c.run(&ws, &z0), Ok(c.stmt.z_final(&c.lay)));
}

/// No unconstrained witness: in the first fold every private variable is
/// read by a constraint that breaks when it alone changes. Where an is-zero
/// test meets a zero, its inverse is free — inherent to an equality test, as
/// in zkstep-fold: the second fold's table base reaches the table's end (256
/// entries, slices of 128), the last fold's `remaining` reaches 0.
#[test]
fn every_private_variable_of_a_merge_fold_is_constrained() {
    use zkstep_gadgets::testing::Rec;
    let mut c = case("half-up", 2);
    for scheme in [CommitScheme::Chain, CommitScheme::Evaluation] {
        c.lay = Arc::new(MergeLayout::clone(&c.lay).with_commit_scheme(scheme));
        let z0 = match scheme {
            CommitScheme::Chain => c.stmt.z0(&c.lay),
            CommitScheme::Evaluation => c.stmt.evaluated_states(&c.lay, alpha(), Fr::from(0u64)).0,
        };
        let ws = c.witnesses(&c.stmt.weights(), &z0);
        assert_eq!(ws.len(), 3);
        let mut z = z0.clone();
        for (f, w) in ws.iter().enumerate() {
            let mut cs = Rec::default();
            let zin: Vec<AllocatedNum<Fr>> = z.iter().map(|v| AllocatedNum::alloc(&mut cs, || Ok(*v)).unwrap()).collect();
            let a = AllocatedNum::alloc(&mut cs, || Ok(alpha())).unwrap();
            let first_private = cs.aux.len();
            let out = MergeCircuit::fold(c.lay.clone(), w.clone()).synthesize(&mut cs, &zin, &a).unwrap();
            assert!(cs.all_hold(), "fold {f}");
            let free = cs.free_variables(first_private);
            let want = usize::from(f > 0);
            assert_eq!(free.len(), want, "{scheme:?} fold {f}: free private variables {free:?}");
            z = out.iter().map(|v| v.get_value().unwrap()).collect();
        }
    }
}

/// Constraints of a merge fold (snapshot): the test spec's 15-value Adam
/// records at N = 4, 2 units a fold; and one unit of a 128-input SGD layer
/// at N = 8, whose 129-value records cost 23–25 constraints a value and node.
#[test]
fn merge_fold_constraints() {
    let c = case("half-up", 2);
    let counts = format!(
        "adam 3-4-2, N = 4, 2 units: {}\nsgd 128-128, N = 8, 1 unit: {}",
        c.lay.num_constraints().unwrap(),
        MergeLayout::new(
            &ModelSpec::from_toml_str("batch_size = 8\n[optimizer]\nlr = 0.01\n[[layers]]\ninputs = 128\noutputs = 128\n").unwrap(),
            8,
            1
        )
        .unwrap()
        .num_constraints()
        .unwrap()
    );
    expect_test::expect![[r#"
        adam 3-4-2, N = 4, 2 units: 8663
        sgd 128-128, N = 8, 1 unit: 31115"#]].assert_eq(&counts);
    // the same under evaluations at ζ (merge keys on KZG points)
    let ev = |l: MergeLayout| l.with_commit_scheme(CommitScheme::Evaluation).num_constraints().unwrap();
    let counts = format!(
        "adam 3-4-2, N = 4, 2 units: {}\nsgd 128-128, N = 8, 1 unit: {}",
        ev(MergeLayout::clone(&c.lay)),
        ev(MergeLayout::new(
            &ModelSpec::from_toml_str("batch_size = 8\n[optimizer]\nlr = 0.01\n[[layers]]\ninputs = 128\noutputs = 128\n").unwrap(),
            8,
            1
        )
        .unwrap())
    );
    expect_test::expect![[r#"
        adam 3-4-2, N = 4, 2 units: 2674
        sgd 128-128, N = 8, 1 unit: 11029"#]].assert_eq(&counts);
}

/// π_merge with every checkpoint bound by its evaluation at ζ
/// (`CommitScheme::Evaluation`, merge keys on KZG points): an honest merge
/// ends at the native evaluations of the nodes, the centre and the global
/// model combined with powers of r; the combination with another
/// checkpoint's evaluation (one value changed) is not the last state; a
/// state whose α is not the drawn one is rejected.
#[test]
fn evaluations_at_zeta_bind_every_checkpoint_of_a_merge() {
    use zkstep_core::commit::{evaluate, param_coefficients};
    for units in [2, 3] {
        let c = case("half-up", units);
        let lay = Arc::new(MergeLayout::clone(&c.lay).with_commit_scheme(CommitScheme::Evaluation));
        let zeta = lay.zeta(alpha(), c.stmt.anchors());
        let at = |ck: &Checkpoint| evaluate(&param_coefficients(&c.spec, ck), zeta);
        let mut evals: Vec<Fr> = c.nodes.iter().map(at).collect();
        evals.extend([at(&c.centre), at(&c.global)]);
        // Σ_c r^c·y_c, the one value the last state holds
        let r = zkstep_circuits::theta::combination_r(zeta);
        let combined = |ys: &[Fr]| ys.iter().rev().fold(Fr::from(0u64), |acc, y| acc * r + y);
        let (z0, zn) = c.stmt.evaluated_states(&lay, alpha(), combined(&evals));
        let ev = Case {
            spec: c.spec.clone(),
            lay: lay.clone(),
            centre: c.centre.clone(),
            nodes: c.nodes.clone(),
            global: c.global.clone(),
            stmt: c.stmt.clone(),
        };
        let ws = ev.witnesses(&c.stmt.weights(), &z0);
        assert_eq!(ev.run(&ws, &z0).unwrap(), zn);
        for k in 0..evals.len() {
            let mut other = match k {
                k if k < c.nodes.len() => c.nodes[k].clone(),
                k if k == c.nodes.len() => c.centre.clone(),
                _ => c.global.clone(),
            };
            other.layers[1].w.data[0] += 1;
            let mut wrong = evals.clone();
            wrong[k] = at(&other);
            let (_, zn_wrong) = c.stmt.evaluated_states(&lay, alpha(), combined(&wrong));
            assert_ne!(ev.run(&ws, &z0).unwrap(), zn_wrong, "checkpoint {k}");
        }
        let mut z0_other = z0.clone();
        z0_other[lay.arity() - 3] += Fr::from(1u64);
        let err = ev.run(&ws, &z0_other).unwrap_err();
        assert!(err.1.contains("alpha_drawn"), "{err:?}");
    }
}
