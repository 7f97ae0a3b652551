//! The reference executor against an f64 implementation of the same step,
//! within a rounding-error bound derived alongside (see docs/SEMANTICS.md §5),
//! and a check that training with it really learns.
#![allow(clippy::unwrap_used, clippy::needless_range_loop)]

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use zkstep_core::data::{make_batch, two_moons};
use zkstep_core::exec::predict;
use zkstep_core::fixed::{to_fixed, to_real, ValueRange, SCALE};
use zkstep_core::model::{seeded_salt, LayerParams, StateTensor};
use zkstep_core::spec::demo_spec;
use zkstep_core::bound::{real_step, BoundOptions, RealLayer};
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};

const U: f64 = 1.0 / SCALE as f64;

/// The step in real arithmetic with §5's bounds (`zkstep_core::bound`), at
/// rounding unit `rho` (None: the spec's). None when a ReLU selector is
/// ambiguous.
fn f64_step(spec: &ModelSpec, ck: &Checkpoint, batch: &Batch, rho: Option<f64>) -> Option<(Vec<RealLayer>, Checkpoint)> {
    let t = step(spec, ck, batch).unwrap();
    let opts = BoundOptions { rho, input_err: 0.0 };
    real_step(spec, ck, batch, &t, opts).map(|r| (r, t.after))
}

fn within(got: i64, real: f64, bound: f64) -> bool {
    // bound from the analysis + slack for f64's own rounding (≈1e-15 relative)
    (to_real(got) - real).abs() <= bound * (1.0 + 1e-9) + 1e-12 * (1.0 + real.abs())
}

fn arb_case() -> impl Strategy<Value = (ModelSpec, Checkpoint, Batch)> {
    (
        1usize..=3,
        1usize..=4,
        prop::collection::vec(1usize..=6, 4),
        prop::collection::vec(any::<bool>(), 3),
        any::<bool>(),
        1u32..500,
        50u32..950,
        any::<u64>(),
    )
        .prop_map(
            |(nl, bsz, widths, relu, momentum, lr_milli, mu_milli, seed)| {
                let mut toml = format!("batch_size = {bsz}\n[optimizer]\n");
                if momentum {
                    toml += &format!(
                        "kind = \"momentum\"\nlr_fx = {}\nmu_fx = {}\n",
                        lr_milli as i64 * 1_000_000,
                        mu_milli as i64 * 1_000_000
                    );
                } else {
                    toml += &format!("lr_fx = {}\n", lr_milli as i64 * 1_000_000);
                }
                for l in 0..nl {
                    let act = if relu[l] && l + 1 < nl {
                        "relu"
                    } else {
                        "identity"
                    };
                    toml += &format!(
                        "[[layers]]\ninputs = {}\noutputs = {}\nactivation = \"{act}\"\n",
                        widths[l],
                        widths[l + 1]
                    );
                }
                let spec = ModelSpec::from_toml_str(&toml).unwrap();
                use rand::{Rng, SeedableRng};
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
                let r = ValueRange::default();
                let mut rnd = |n: usize, a: f64| -> Vec<i64> {
                    (0..n)
                        .map(|_| to_fixed(rng.gen_range(-a..a), r).unwrap())
                        .collect()
                };
                let layers = spec
                    .layers
                    .iter()
                    .map(|ls| LayerParams {
                        w: Matrix::from_vec(
                            ls.outputs,
                            ls.inputs,
                            rnd(ls.outputs * ls.inputs, 1.0),
                        )
                        .unwrap(),
                        b: rnd(ls.outputs, 0.5),
                        state: momentum
                            .then(|| StateTensor {
                                w: Matrix::from_vec(
                                    ls.outputs,
                                    ls.inputs,
                                    rnd(ls.outputs * ls.inputs, 0.2),
                                )
                                .unwrap(),
                                b: rnd(ls.outputs, 0.2),
                            })
                            .into_iter()
                            .collect(),
                    })
                    .collect();
                let x =
                    Matrix::from_vec(bsz, spec.input_width(), rnd(bsz * spec.input_width(), 1.0))
                        .unwrap();
                let y = Matrix::from_vec(
                    bsz,
                    spec.output_width(),
                    rnd(bsz * spec.output_width(), 1.0),
                )
                .unwrap();
                (
                    spec,
                    Checkpoint { step: 0, layers },
                    Batch {
                        x,
                        y,
                        salt: seeded_salt(seed, 0),
                    },
                )
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn fixed_point_step_tracks_f64((spec, ck, batch) in arb_case()) {
        let Some((ex, after)) = f64_step(&spec, &ck, &batch, None) else { return Ok(()) };
        for (l, lp) in after.layers.iter().enumerate() {
            let x = &ex[l];
            for n in 0..lp.w.data.len() {
                prop_assert!(within(lp.w.data[n], x.w.v[n], x.w.e[n]),
                    "layer {} W'[{}]: fixed {} real {} bound {}", l + 1, n, to_real(lp.w.data[n]), x.w.v[n], x.w.e[n]);
            }
            for j in 0..lp.b.len() {
                prop_assert!(within(lp.b[j], x.b.v[j], x.b.e[j]), "layer {} b'[{}]", l + 1, j);
            }
            if let (Some(st), Some((vw, vb))) = (lp.state.first(), x.state.first()) {
                for n in 0..st.w.data.len() {
                    prop_assert!(within(st.w.data[n], vw.v[n], vw.e[n]), "layer {} vW'[{}]", l + 1, n);
                }
                for j in 0..st.b.len() {
                    prop_assert!(within(st.b[j], vb.v[j], vb.e[j]), "layer {} vb'[{}]", l + 1, j);
                }
            }
        }
    }
}

#[test]
fn bound_is_tight_enough_to_catch_a_wrong_rounding() {
    // The same comparison must FAIL for an executor that floors instead of rounding:
    // run the floor-rounding spec but check it against the half-up bound on many cases.
    let mut caught = false;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..200 {
        let (mut spec, ck, batch) = arb_case().new_tree(&mut runner).unwrap().current();
        spec.rounding = zkstep_core::fixed::Rounding::Floor;
        // the half-up bound (ρ = ½ ulp), not the floor spec's own
        let Some((ex, after)) = f64_step(&spec, &ck, &batch, Some(U / 2.0)) else {
            continue;
        };
        let bad = after.layers.iter().enumerate().any(|(l, lp)| {
            lp.w.data
                .iter()
                .enumerate()
                .any(|(n, &w)| !within(w, ex[l].w.v[n], ex[l].w.e[n]))
        });
        caught |= bad;
    }
    assert!(
        caught,
        "the bound check cannot tell floor from half-up: it is too loose to mean anything"
    );
}

#[test]
fn training_really_learns_on_the_demo_data() {
    let spec = demo_spec();
    let ds = two_moons(256, 0.1, 42);
    let mut ck = Checkpoint::init(&spec, 1);
    let loss_on = |ck: &Checkpoint| {
        let out = predict(&spec, ck, &ds.x).unwrap();
        out.data
            .iter()
            .zip(&ds.y.data)
            .map(|(&a, &y)| (to_real(a) - to_real(y)).powi(2))
            .sum::<f64>()
            / out.data.len() as f64
    };
    let initial = loss_on(&ck);
    for t in 0..200 {
        let batch = make_batch(&ds, spec.batch_size, t, 7, seeded_salt(7, t));
        ck = step(&spec, &ck, &batch).unwrap().after;
    }
    let fin = loss_on(&ck);
    assert!(
        fin < 0.5 * initial,
        "loss did not fall enough: {initial} -> {fin}"
    );
    assert_eq!(ck.step, 200);
}

#[test]
fn overflow_is_an_error_naming_layer_tensor_index() {
    let spec = ModelSpec::from_toml_str(
        "batch_size = 1\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 2\n",
    )
    .unwrap();
    let mut ck = Checkpoint::init(&spec, 1);
    ck.layers[0].w.data[3] = i64::MAX;
    let batch = Batch {
        x: Matrix::from_vec(1, 2, vec![i64::MAX, i64::MAX]).unwrap(),
        y: Matrix::zeros(1, 2),
        salt: seeded_salt(1, 1),
    };
    let e = step(&spec, &ck, &batch).unwrap_err().to_string();
    assert!(
        e.contains("layer 1") && e.contains("tensor Z") && e.contains("(0,1)"),
        "{e}"
    );
}

#[test]
fn narrower_value_range_is_enforced() {
    let spec = ModelSpec::from_toml_str("batch_size = 1\nvalue_bits = 32\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 1\noutputs = 1\n").unwrap();
    let ck = Checkpoint::init(&spec, 1);
    let batch = Batch {
        x: Matrix::from_vec(1, 1, vec![3 * SCALE]).unwrap(),
        y: Matrix::zeros(1, 1),
        salt: seeded_salt(1, 1),
    };
    let e = step(&spec, &ck, &batch).unwrap_err().to_string();
    assert!(e.contains("32-bit") && e.contains("X"), "{e}");
}

#[test]
fn the_f64_comparison_is_not_vacuous() {
    // Most random cases must be compared (not skipped for an ambiguous ReLU selector).
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let compared = (0..200)
        .filter(|_| {
            let (spec, ck, batch) = arb_case().new_tree(&mut runner).unwrap().current();
            f64_step(&spec, &ck, &batch, None).is_some()
        })
        .count();
    assert!(compared >= 150, "only {compared}/200 cases compared");
}

/// docs/SEMANTICS.md §1: every Σ is the exact integer sum, so the order of
/// its terms cannot decide whether a step is accepted. The products
/// {2¹²⁶, 2¹²⁶, −(2¹²⁶−2⁶³), −(2¹²⁶−2⁶³)} sum to 2⁶⁴ in either order, though
/// [+,+,−,−] overflows i128 halfway.
#[test]
fn sums_are_exact_whatever_the_order_of_their_terms() {
    let spec = ModelSpec::from_toml_str(
        "batch_size = 1\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 4\noutputs = 1\nactivation = \"identity\"\n",
    )
    .unwrap();
    let (lo, hi) = (i64::MIN, i64::MAX); // −2⁶³ and 2⁶³ − 1
    let mut ck = Checkpoint::init(&spec, 1);
    ck.layers[0].w.data = vec![lo; 4];
    ck.layers[0].b = vec![0];
    let z_of = |x: Vec<i64>| {
        let x = Matrix::from_vec(1, 4, x).unwrap();
        zkstep_core::exec::forward_layer(&spec, 0, &ck.layers[0], &x).map(|f| f.z.at(0, 0))
    };
    let exact = (1i128 << 64) as f64 / 1e9; // 2⁶⁴ at scale S, rescaled
    let a = z_of(vec![lo, lo, hi, hi]).expect("[+,+,−,−] is accepted");
    let b = z_of(vec![lo, hi, lo, hi]).expect("[+,−,+,−] is accepted");
    assert_eq!(a, b);
    assert_eq!(a as f64, exact.round());
    // a sum whose exact value is beyond i128 is a range error naming the tensor
    let e = z_of(vec![lo, lo, lo, lo]).unwrap_err().to_string();
    assert!(
        e.contains("tensor Z") && e.contains("declared range"),
        "{e}"
    );
}

/// docs/SEMANTICS.md §1: the bias-gradient accumulator `db_acc` is a sum,
/// not a stored value: it is not bounded by `value_bits` (only every dZ it
/// sums is). At value_bits 40, db_acc = 824,633,720,832 > 2³⁹ is accepted.
#[test]
fn bias_gradient_accumulator_is_not_a_stored_value() {
    let spec = ModelSpec::from_toml_str(
        "batch_size = 2\nvalue_bits = 40\n[optimizer]\nlr_fx = 1000\n[[layers]]\ninputs = 1\noutputs = 1\nactivation = \"identity\"\n",
    )
    .unwrap();
    let mut ck = Checkpoint::init(&spec, 1);
    ck.layers[0].w.data = vec![0];
    ck.layers[0].b = vec![0];
    let y = -412_316_860_416; // dA = rescale_S(c·(0 − y)) with c = S
    let batch = Batch {
        x: Matrix::zeros(2, 1),
        y: Matrix::from_vec(2, 1, vec![y, y]).unwrap(),
        salt: seeded_salt(1, 1),
    };
    let t = step(&spec, &ck, &batch).expect("accepted");
    assert_eq!(t.backward[0].db_acc[0], 824_633_720_832);
    assert!(t.backward[0].db_acc[0] > 1 << 39);
    // b′ = −rescale_S(lr·db_acc) = −rescale_S(824,633,720,832,000) = −824,634 (half up)
    assert_eq!(t.after.layers[0].b[0], -824_634);
}

/// docs/SEMANTICS.md §1: a dataset's floats are quantised by the rule of
/// every rescale, round half up on the float's exact value (the tie
/// −59,570,312.5 becomes −59,570,312, not −59,570,313).
#[test]
fn dataset_quantisation_rounds_ties_up() {
    let dir = std::env::temp_dir().join(format!("zkstep-quant-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tie.safetensors");
    // ±61/1024: exact in f32, so the products with 10⁹ are exact ties
    let x = [-61.0f32 / 1024.0, 61.0 / 1024.0];
    zkstep_core::format::write_float_dataset(&path, &x, [1, 2], &[0.5], [1, 1]).unwrap();
    let ds = zkstep_core::format::read_dataset(&path, ValueRange::default()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(ds.x.data, vec![-59_570_312, 59_570_313]);
    assert_eq!(ds.y.data, vec![500_000_000]);
}
