//! Snapshot of the fold's size for a few specs, so a change in circuit size
//! shows in review (`UPDATE_EXPECT=1 cargo test -p zkstep-circuits --test suite snapshot::`
//! to accept a deliberate change).
#![allow(clippy::unwrap_used)]
use crate::common::*;
use expect_test::expect;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::shape_cs::ShapeCS;
use nova_snark::frontend::test_shape_cs::TestShapeCS;
use nova_snark::frontend::ConstraintSystem;
use nova_snark::provider::Bn256EngineKZG;
use std::sync::Arc;
use zkstep_circuits::{Layout, TileCircuit};
use zkstep_core::spec::demo_spec;
use zkstep_core::{Fr, ModelSpec};

/// A fold's shape synthesised into `cs` (its state and challenges first,
/// the step circuit under "step").
fn synth<CS: ConstraintSystem<Fr>>(cs: &mut CS, lay: &Arc<Layout>) {
    let z: Vec<AllocatedNum<Fr>> = (0..lay.arity())
        .map(|i| {
            AllocatedNum::alloc(cs.namespace(|| format!("z{i}")), || Ok(Fr::from(0u64))).unwrap()
        })
        .collect();
    let drawn: Vec<AllocatedNum<Fr>> = ["alpha", "rho", "gamma"]
        .iter()
        .map(|n| AllocatedNum::alloc(cs.namespace(|| *n), || Ok(Fr::from(0u64))).unwrap())
        .collect();
    TileCircuit::shape(lay.clone())
        .synthesize(&mut cs.namespace(|| "step"), &z, &drawn)
        .unwrap();
}

fn shape(layout: &Layout) -> String {
    let lay = Arc::new(layout.clone());
    let mut cs = ShapeCS::<Bn256EngineKZG>::new();
    synth(&mut cs, &lay);
    // (allocating the state and the challenges adds no constraint)
    let n = cs.num_constraints();
    assert_eq!(n, zkstep_circuits::sizing::count_constraints(&lay).unwrap());
    format!(
        "rows {} folds {} arity {} limbs {} slice {} constraints/fold {n}",
        lay.rows,
        lay.num_folds(),
        lay.arity(),
        lay.limb_bits,
        lay.table_slice
    )
}

#[test]
fn constraint_counts() {
    let tiny = ModelSpec::from_toml_str(TWO_LAYER).unwrap();
    expect!["rows 2 folds 3 arity 39 limbs 8 slice 128 constraints/fold 8820"]
        .assert_eq(&shape(&Layout::new(&tiny, 2).unwrap()));
    let mom = ModelSpec::from_toml_str(
        &TWO_LAYER.replace("lr = 0.1", "kind = \"momentum\"\nlr = 0.1\nmu = 0.9"),
    )
    .unwrap();
    expect!["rows 1 folds 6 arity 39 limbs 8 slice 64 constraints/fold 7128"]
        .assert_eq(&shape(&Layout::new(&mom, 1).unwrap()));
    for (kind, want) in [
        (
            "kind = \"adam\"\nlr = 0.1\nweight_decay = 0.01",
            expect!["rows 1 folds 6 arity 42 limbs 8 slice 64 constraints/fold 8208"],
        ),
        (
            "kind = \"adamw\"\nlr = 0.1",
            expect!["rows 1 folds 6 arity 42 limbs 8 slice 64 constraints/fold 8213"],
        ),
    ] {
        let adam = ModelSpec::from_toml_str(&TWO_LAYER.replace("lr = 0.1", kind)).unwrap();
        want.assert_eq(&shape(&Layout::new(&adam, 1).unwrap()));
    }
    let ce = ModelSpec::from_toml_str(
        &TWO_LAYER.replace("[optimizer]", "loss = \"cross_entropy\"\n[optimizer]"),
    )
    .unwrap();
    expect!["rows 2 folds 3 arity 41 limbs 8 slice 128 constraints/fold 10396"]
        .assert_eq(&shape(&Layout::new(&ce, ce.output_width()).unwrap()));
    // the softmax cut across folds: one class a fold
    expect!["rows 1 folds 6 arity 41 limbs 8 slice 64 constraints/fold 7702"]
        .assert_eq(&shape(&Layout::new(&ce, 1).unwrap()));
    // the classifier of issue 27 on defaults: 64-16-10, Adam, cross-entropy, batch 8
    let classifier = ModelSpec::from_toml_str(
        "batch_size = 8\nloss = \"cross_entropy\"\n[optimizer]\nkind = \"adam\"\nlr = 0.001\n[[layers]]\ninputs = 64\noutputs = 16\nactivation = \"relu\"\n[[layers]]\ninputs = 16\noutputs = 10\n",
    )
    .unwrap();
    expect!["rows 5 folds 6 arity 54 limbs 8 slice 64 constraints/fold 116898"].assert_eq(&shape(
        &zkstep_circuits::sizing::fit(&classifier, zkstep_circuits::DEFAULT_FOLD_BUDGET).unwrap(),
    ));
    expect!["rows 16 folds 3 arity 49 limbs 8 slice 128 constraints/fold 48515"].assert_eq(&shape(
        &zkstep_circuits::sizing::fit(&demo_spec(), zkstep_circuits::DEFAULT_FOLD_BUDGET).unwrap(),
    ));
    let wide = ModelSpec::from_toml_str(
        "batch_size = 8\n[optimizer]\nlr = 0.01\n[[layers]]\ninputs = 64\noutputs = 64\n",
    )
    .unwrap();
    expect!["rows 21 folds 4 arity 49 limbs 16 slice 16384 constraints/fold 120232"].assert_eq(&shape(
        &zkstep_circuits::sizing::fit(&wide, zkstep_circuits::DEFAULT_FOLD_BUDGET).unwrap(),
    ));
    // a row of 300 inputs (records padded to 345 = 5 blocks) cut into 5 folds
    let seg = ModelSpec::from_toml_str(
        "batch_size = 8\n[optimizer]\nlr = 0.01\n[[layers]]\ninputs = 300\noutputs = 4\n",
    )
    .unwrap();
    expect!["rows 1 folds 20 arity 53 limbs 8 slice 16 constraints/fold 19944"]
        .assert_eq(&shape(&Layout::with_segments(&seg, 1, 5).unwrap()));
    // the same row whole: its 45 slots past the 300 inputs are constant zeros
    expect!["rows 1 folds 4 arity 49 limbs 8 slice 64 constraints/fold 71621"]
        .assert_eq(&shape(&Layout::new(&seg, 1).unwrap()));
    // the same with Adam: its moments cut alike
    let seg_adam = ModelSpec::from_toml_str(
        "batch_size = 8\n[optimizer]\nkind = \"adam\"\nlr = 0.01\n[[layers]]\ninputs = 300\noutputs = 4\n",
    )
    .unwrap();
    expect!["rows 1 folds 20 arity 56 limbs 8 slice 16 constraints/fold 34707"]
        .assert_eq(&shape(&Layout::with_segments(&seg_adam, 1, 5).unwrap()));
    // θ bound by its evaluations at ζ instead of the chains (the default keys' scheme)
    use zkstep_circuits::layout::CommitScheme::Evaluation;
    expect!["rows 2 folds 3 arity 40 limbs 8 slice 128 constraints/fold 5951"]
        .assert_eq(&shape(&Layout::new(&tiny, 2).unwrap().with_commit_scheme(Evaluation)));
    expect!["rows 1 folds 4 arity 50 limbs 8 slice 64 constraints/fold 59776"]
        .assert_eq(&shape(&Layout::new(&seg, 1).unwrap().with_commit_scheme(Evaluation)));
    expect!["rows 1 folds 20 arity 57 limbs 8 slice 16 constraints/fold 26776"].assert_eq(&shape(
        &Layout::with_segments(&seg_adam, 1, 5).unwrap().with_commit_scheme(Evaluation),
    ));
}

/// Every sample adds at least 2·`MIN_SAMPLE_COST` constraints to the
/// smallest fold, for every loss and optimizer (what lets `check_provable`
/// refuse a large batch without synthesising its fold); a batch too large
/// for the budget is refused, a 784-input Adam classifier at batch 32 (its
/// unit over the budget, its row cut in two) is not.
#[test]
fn unprovable_specs_are_refused_before_keygen() {
    use zkstep_circuits::sizing::{check_provable, count_constraints, MIN_SAMPLE_COST};
    use zkstep_circuits::{CircuitError, DEFAULT_FOLD_BUDGET};
    let spec = |batch: usize, loss: &str, opt: &str, inputs: usize| {
        ModelSpec::from_toml_str(&format!(
            "batch_size = {batch}\nloss = \"{loss}\"\n[optimizer]\n{opt}\n[[layers]]\ninputs = {inputs}\noutputs = 8\nactivation = \"relu\"\n[[layers]]\ninputs = 8\noutputs = 10\n"
        ))
        .unwrap()
    };
    for loss in ["mse", "cross_entropy"] {
        for opt in ["lr = 0.01", "kind = \"adamw\"\nlr = 0.01"] {
            let at = |b| count_constraints(&Layout::new(&spec(b, loss, opt, 4), 1).unwrap()).unwrap();
            let per = (at(16) - at(8)) / 8;
            assert!(per >= 2 * MIN_SAMPLE_COST, "{loss} {opt}: {per}");
        }
    }
    let opt = "kind = \"adam\"\nlr = 0.001";
    assert!(matches!(
        check_provable(&spec(8192, "cross_entropy", opt, 4), DEFAULT_FOLD_BUDGET),
        Err(CircuitError::Unprovable { batch: 8192, .. })
    ));
    assert!(matches!(
        check_provable(&spec(1024, "cross_entropy", opt, 4), DEFAULT_FOLD_BUDGET),
        Err(CircuitError::Unprovable { batch: 1024, .. })
    ));
    check_provable(&spec(256, "cross_entropy", opt, 4), DEFAULT_FOLD_BUDGET).unwrap();
    check_provable(&spec(32, "cross_entropy", opt, 784), DEFAULT_FOLD_BUDGET).unwrap();
}

/// Keygen's sizing policy: Spartan by default while the fold's padded size
/// is within `SPARTAN_FIT_MAX_PADDED` (MicroSpartan past it), MicroSpartan's
/// folds within `MAX_PADDED` when it is asked for, and the default layout
/// the fastest the cost model knows among the largest fold within the
/// budget and its halvings down to one unit.
#[test]
fn sizing_picks_spartan_and_the_fastest_fold() {
    use zkstep_circuits::engine::Compression;
    use zkstep_circuits::sizing::*;
    let wide = ModelSpec::from_toml_str(
        "batch_size = 8\n[optimizer]\nlr = 0.01\n[[layers]]\ninputs = 64\noutputs = 64\n",
    )
    .unwrap();
    let budget = zkstep_circuits::DEFAULT_FOLD_BUDGET;
    let picked = fit_fastest(&wide, budget).unwrap();
    let st = shape_stats(&picked).unwrap();
    assert_eq!(default_compression(&st), Compression::Spartan);
    assert_eq!(compression_for(&picked).unwrap(), Compression::Spartan);
    let mut past = st;
    past.nonzeros = SPARTAN_FIT_MAX_PADDED + 1;
    assert!(padded_size(&past) > SPARTAN_FIT_MAX_PADDED);
    assert_eq!(default_compression(&past), Compression::MicroSpartan);
    // the pick beats the largest fold within the budget (and Spartan's
    // padded bound) and every halving of it
    let largest = fit_within(&wide, budget, SPARTAN_FIT_MAX_PADDED).unwrap();
    let t = estimated_prove_s(&picked).unwrap();
    let mut rows = largest.rows;
    while rows >= 1 {
        let l = Layout::new(&wide, rows).unwrap();
        assert!(t <= estimated_prove_s(&l).unwrap(), "{rows} rows beat the pick of {}", picked.rows);
        rows /= 2;
    }
    assert!(picked.rows <= largest.rows);
    // MicroSpartan's folds stay within its padded bound, on request
    let micro = fit_fastest_with(&wide, budget, Some(Compression::MicroSpartan)).unwrap();
    assert!(padded_size(&shape_stats(&micro).unwrap()) <= MAX_PADDED);
    assert_eq!(
        layout_for(&wide, Some(3), budget).unwrap().rows,
        3,
        "rows given are rows kept"
    );
}

/// The layer above's claim about a layer's output is opened on a non-top
/// layer's first tile only: a spec of one layer, every fold of which is
/// the top layer's, has no constraint of it (format 33); a spec of two has.
#[test]
fn only_a_spec_of_several_layers_opens_the_claim_from_above() {
    let names = |toml: &str| -> Vec<String> {
        let spec = ModelSpec::from_toml_str(toml).unwrap();
        let lay = Arc::new(Layout::new(&spec, 1).unwrap());
        let mut cs = TestShapeCS::<Bn256EngineKZG>::new();
        synth(&mut cs, &lay);
        cs.constraints.into_iter().map(|c| c.3).collect()
    };
    let up = |n: &[String]| n.iter().filter(|s| s.contains("up_digest") || s.contains("up_claim")).count();
    assert!(up(&names(TWO_LAYER)) > 0);
    let one = "batch_size = 3\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 3\noutputs = 2\n";
    assert_eq!(up(&names(one)), 0);
    let lay = Layout::new(&ModelSpec::from_toml_str(one).unwrap(), 1).unwrap();
    assert!(lay.schedule.iter().all(|d| d.is_top));
}

