//! The reference trace satisfies every fold, and the final state is what the
//! verifier requires (schedule, both commitments, challenge).
#![allow(clippy::unwrap_used)]
use crate::common::*;

#[test]
fn two_layer_sgd_trace_satisfies_every_fold() {
    let c = case(TWO_LAYER, Some(2), 1);
    let zn = run_all(&c.layout, &c.witnesses, &c.z0)
        .unwrap_or_else(|(f, e)| panic!("fold {f} ({:?}) unsatisfied at {e}", c.witnesses[f].desc));
    c.layout.check_final(&c.z0, &zn).unwrap();
}

use proptest::prelude::*;

fn arb_spec() -> impl Strategy<Value = (String, usize, u64)> {
    (
        1usize..=3,
        1usize..=3,
        prop::collection::vec(1usize..=5, 4),
        prop::collection::vec(any::<bool>(), 3),
        0u8..4,
        1usize..=3,
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(|(nl, b, widths, relu, opt, rows, seed, floor)| {
            let mut t = format!("batch_size = {b}\n");
            if floor {
                t += "rounding = \"floor\"\n";
            }
            t += match opt {
                0 => "[optimizer]\nlr = 0.1\n",
                1 => "[optimizer]\nkind = \"momentum\"\nlr = 0.05\nmu = 0.9\n",
                2 => "[optimizer]\nkind = \"adam\"\nlr = 0.01\nweight_decay = 0.01\n",
                _ => "[optimizer]\nkind = \"adamw\"\n",
            };
            for l in 0..nl {
                let act = if relu[l] { "relu" } else { "identity" };
                t += &format!(
                    "[[layers]]\ninputs = {}\noutputs = {}\nactivation = \"{act}\"\n",
                    widths[l],
                    widths[l + 1]
                );
            }
            // a tile holds at most the widest layer's rows (narrower layers
            // still get masked rows)
            let widest = widths[..=nl].iter().copied().max().unwrap_or(1);
            (t, rows.min(widest), seed)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_specs_satisfy_every_fold((toml, rows, seed) in arb_spec()) {
        let c = case(&toml, Some(rows), seed);
        let zn = run_all(&c.layout, &c.witnesses, &c.z0).map_err(|(f, e)| TestCaseError::fail(format!("{toml}\nfold {f} ({:?}) unsatisfied at {e}", c.witnesses[f].desc)))?;
        prop_assert_eq!(c.layout.check_final(&c.z0, &zn), Ok(()));
    }
}

#[test]
fn momentum_with_several_tiles_per_layer() {
    let toml = "batch_size = 2\n[optimizer]\nkind = \"momentum\"\nlr = 0.05\nmu = 0.9\n[[layers]]\ninputs = 5\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 3\nactivation = \"relu\"\n[[layers]]\ninputs = 3\noutputs = 2\n";
    let spec = zkstep_core::ModelSpec::from_toml_str(toml).unwrap();
    let mut before = zkstep_core::Checkpoint::init(&spec, 9);
    // non-zero velocities so μ·v is exercised
    for lp in before.layers.iter_mut() {
        set_state(&mut lp.state[0], |n| (n as i64 % 7 - 3) * 12_345_678);
    }
    let c0 = case(toml, Some(1), 9);
    let c = case_from(spec, before, c0.batch.clone(), Some(1));
    let zn = run_all(&c.layout, &c.witnesses, &c.z0)
        .unwrap_or_else(|(f, e)| panic!("fold {f} unsatisfied at {e}"));
    c.layout.check_final(&c.z0, &zn).unwrap();
}

/// Fill a state tensor's weights with `f(n)` and its biases with multiples of 1_000_001.
fn set_state(st: &mut zkstep_core::StateTensor, f: impl Fn(usize) -> i64) {
    for (n, v) in st.w.data.iter_mut().enumerate() {
        *v = f(n);
    }
    for (j, v) in st.b.iter_mut().enumerate() {
        *v = j as i64 * 1_000_001;
    }
}

/// A spec from `toml` and a checkpoint of it mid-run: initialised from
/// `seed`, at `step`, state tensor s of every layer filled with `f(s, n)`.
fn mid_run(
    toml: &str,
    seed: u64,
    step: u64,
    f: impl Fn(usize, usize) -> i64,
) -> (zkstep_core::ModelSpec, zkstep_core::Checkpoint) {
    let spec = zkstep_core::ModelSpec::from_toml_str(toml).unwrap();
    let mut before = zkstep_core::Checkpoint::init(&spec, seed);
    before.step = step;
    for lp in before.layers.iter_mut() {
        for (s, st) in lp.state.iter_mut().enumerate() {
            set_state(st, |n| f(s, n));
        }
    }
    (spec, before)
}

/// Adam and AdamW, mid-run (step 6, moments non-zero), several tiles a
/// layer: the trace satisfies every fold and the verifier's final checks,
/// with k₁ and c₂ taken from the step; the same folds under another step's
/// constants do not.
#[test]
fn adam_mid_run_with_several_tiles_per_layer() {
    for kind in ["kind = \"adam\"\nweight_decay = 0.01", "kind = \"adamw\""] {
        let toml = format!("batch_size = 2\n[optimizer]\n{kind}\n[[layers]]\ninputs = 5\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 3\n");
        let (spec, before) = mid_run(&toml, 9, 6, |s, n| match s {
            0 => (n as i64 % 7 - 3) * 1_234_567,
            _ => (n as i64 % 5) * 2_000_000,
        });
        let c0 = case(&toml, Some(2), 9);
        let c = case_from(spec, before, c0.batch.clone(), Some(2));
        let zn = run_all(&c.layout, &c.witnesses, &c.z0)
            .unwrap_or_else(|(f, e)| panic!("{kind}: fold {f} unsatisfied at {e}"));
        c.layout.check_final(&c.z0, &zn).unwrap();
        // step 7's constants in z₀: the first weight's update breaks
        let adam = c.layout.slots.adam.unwrap();
        let k = c.layout.adam_step(7).unwrap();
        let mut z0 = c.z0.clone();
        z0[adam.k1] = zkstep_core::poseidon::fr_from_i128(k.k1);
        z0[adam.c2] = zkstep_core::poseidon::fr_from_i128(k.c2);
        assert!(run_fold(&c.layout, &c.witnesses[0], &z0).is_err(), "{kind}");
    }
}

/// Softmax cross-entropy on the top layer, with SGD and with Adam: the top
/// tile holds every output (3 rows) or more (4 rows, one inactive), lower
/// layers take several tiles, half-up and floor; every fold is satisfied
/// and the final state is the verifier's.
#[test]
fn cross_entropy_satisfies_every_fold() {
    let net = "[[layers]]\ninputs = 4\noutputs = 5\nactivation = \"relu\"\n[[layers]]\ninputs = 5\noutputs = 3\n";
    // a tile of the whole top layer, and tiles of 1 and 2 of its 3 units
    // (the softmax's maximum and sum carried between them)
    for (opt, rows, rounding) in [
        ("lr = 0.1", 3, "half-up"),
        ("kind = \"adam\"\nlr = 0.01", 4, "floor"),
        ("kind = \"adamw\"\nlr = 0.01", 1, "half-up"),
        ("kind = \"momentum\"\nlr = 0.01\nmu = 0.9", 2, "floor"),
    ] {
        let toml = format!("batch_size = 2\nloss = \"cross_entropy\"\nrounding = \"{rounding}\"\n[optimizer]\n{opt}\n{net}");
        let c = case(&toml, Some(rows), 21);
        let zn = run_all(&c.layout, &c.witnesses, &c.z0)
            .unwrap_or_else(|(f, e)| panic!("{opt}: fold {f} unsatisfied at {e}"));
        c.layout.check_final(&c.z0, &zn).unwrap();
    }
}

/// The first phase's W₁ does not depend on the challenges: a prover commits
/// it before they are drawn (at a stand-in ρ) and folds it at the drawn ρ;
/// nor W₂ on γ. Built at two ρ (witnesses, claims, every fold's input
/// state), every fold's W₁ is the same; built at two γ, W₁ and W₂ are; and
/// no range check runs after the challenges (its limbs must be in W₁).
#[test]
fn the_first_phase_does_not_depend_on_the_challenges() {
    use nova_snark::frontend::num::AllocatedNum;
    use nova_snark::frontend::ConstraintSystem;
    use zkstep_circuits::TileCircuit;
    use zkstep_core::Fr;
    use zkstep_fold::cs::{PhasedCs, Region, WitnessRecorder};
    use zkstep_fold::StepCircuit;
    for toml in [
        TWO_LAYER.to_string(),
        TWO_LAYER.replace("lr = 0.1", "kind = \"momentum\"\nlr = 0.1\nmu = 0.9"),
        TWO_LAYER.replace("lr = 0.1", "kind = \"adamw\"\nlr = 0.1"),
        TWO_LAYER.replace("[optimizer]", "loss = \"cross_entropy\"\n[optimizer]"),
    ] {
        let c = case(&toml, Some(2), 11);
        // every fold's W₁ and W₂ at the drawn challenges [α, ρ, γ]
        let parts_at = |drawn: [Fr; 3]| -> Vec<(Vec<Fr>, Vec<Fr>)> {
            let (ws, mut z) = witnesses_at(&c, drawn);
            let mut out = vec![];
            for w in &ws {
                let mut cs = WitnessRecorder::<Fr>::new(3);
                cs.set_region(Region::Third);
                let zin: Vec<AllocatedNum<Fr>> = z
                    .iter()
                    .enumerate()
                    .map(|(k, v)| AllocatedNum::alloc(cs.namespace(|| format!("z{k}")), || Ok(*v)).unwrap())
                    .collect();
                let dv: Vec<AllocatedNum<Fr>> = drawn
                    .iter()
                    .map(|v| AllocatedNum::alloc(&mut cs, || Ok(*v)).unwrap())
                    .collect();
                let circuit = TileCircuit::fold(c.layout.clone(), w.clone());
                cs.set_region(Region::First);
                let carry = circuit.first(&mut cs, &zin).unwrap();
                cs.set_region(Region::Second);
                circuit.second(&mut cs, carry, &dv).unwrap();
                out.push((
                    cs.values_in(Region::First).copied().collect(),
                    cs.values_in(Region::Second).copied().collect(),
                ));
                z = run_fold_at(&c.layout, w, &z, drawn).unwrap();
            }
            out
        };
        let a = parts_at(test_drawn());
        let mut other = test_drawn();
        other[1] += Fr::from(5u64);
        let b = parts_at(other);
        assert!(a.iter().all(|(w1, w2)| !w1.is_empty() && !w2.is_empty()));
        // W₁ is the same at another ρ, and W₂ at another γ
        let w1 = |v: &[(Vec<Fr>, Vec<Fr>)]| v.iter().map(|p| p.0.clone()).collect::<Vec<_>>();
        assert_eq!(w1(&a), w1(&b), "{toml}");
        let mut other = test_drawn();
        other[2] += Fr::from(5u64);
        let b = parts_at(other);
        assert_eq!(a, b, "{toml}");
        // the whole page after the challenges: its first range check refuses
        let mut cs = WitnessRecorder::<Fr>::new(2);
        let zin: Vec<AllocatedNum<Fr>> = c
            .z0
            .iter()
            .map(|v| AllocatedNum::alloc(&mut cs, || Ok(*v)).unwrap())
            .collect();
        let late = zkstep_fold::after_challenges(|| {
            TileCircuit::fold(c.layout.clone(), c.witnesses[0].clone()).first_phase(&mut cs, &zin)
        });
        let err = late.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("a range check after the challenges"), "{err}");
    }
}

/// The circuit accepts what the executor's exact sums accept (docs/SEMANTICS.md
/// §1): a forward sum whose partial sums leave i128 in one order, and a bias
/// gradient accumulator beyond the declared value range.
#[test]
fn edge_cases_of_the_semantics_satisfy_every_fold() {
    use zkstep_core::model::seeded_salt;
    use zkstep_core::{Batch, Checkpoint, Matrix, ModelSpec};
    let (lo, hi) = (i64::MIN, i64::MAX);
    // Σ = 2⁶⁴ through an i128 overflow of the partial sums; Y = Z so dA = 0
    let spec = ModelSpec::from_toml_str(
        "batch_size = 1\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 4\noutputs = 1\nactivation = \"identity\"\n",
    )
    .unwrap();
    let mut ck = Checkpoint::init(&spec, 1);
    ck.layers[0].w.data = vec![lo; 4];
    ck.layers[0].b = vec![0];
    let z = ((1i128 << 64) as f64 / 1e9).round() as i64;
    let batch = Batch {
        x: Matrix::from_vec(1, 4, vec![lo, lo, hi, hi]).unwrap(),
        y: Matrix::from_vec(1, 1, vec![z]).unwrap(),
        salt: seeded_salt(1, 0),
    };
    let c = case_from(spec, ck, batch, Some(1));
    let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(c.layout.check_final(&c.z0, &zn).is_ok());
    // db_acc = 824,633,720,832 > 2³⁹ at value_bits 40
    let spec = ModelSpec::from_toml_str(
        "batch_size = 2\nvalue_bits = 40\n[optimizer]\nlr_fx = 1000\n[[layers]]\ninputs = 1\noutputs = 1\nactivation = \"identity\"\n",
    )
    .unwrap();
    let mut ck = Checkpoint::init(&spec, 1);
    ck.layers[0].w.data = vec![0];
    ck.layers[0].b = vec![0];
    let y = -412_316_860_416;
    let batch = Batch {
        x: Matrix::zeros(2, 1),
        y: Matrix::from_vec(2, 1, vec![y, y]).unwrap(),
        salt: seeded_salt(1, 0),
    };
    let c = case_from(spec, ck, batch, Some(1));
    let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(c.layout.check_final(&c.z0, &zn).is_ok());
}

/// Rows with optimizer state cut into segments (momentum and Adam, mid-run with non-zero state; 300 inputs, 5 segments of 69 weights): every
/// fold holds and the final state is the verifier's, so each segment's
/// state rows are absorbed where the native record puts them. A checkpoint
/// whose state differs in one weight of an earlier segment, proven in full,
/// does not open the statement of the checkpoint it claims.
#[test]
fn stateful_rows_cut_into_segments_satisfy_every_fold() {
    use zkstep_circuits::Layout;
    for kind in [
        "kind = \"momentum\"\nlr = 0.01\nmu = 0.9",
        "kind = \"adam\"\nweight_decay = 0.01",
    ] {
        let toml = format!("batch_size = 2\n[optimizer]\n{kind}\n[[layers]]\ninputs = 300\noutputs = 2\nactivation = \"relu\"\n[[layers]]\ninputs = 2\noutputs = 1\n");
        let (spec, before) = mid_run(&toml, 9, 6, |s, n| (n as i64 % 7 - 3 + s as i64 * 4) * 1_234_567);
        let batch = case_segmented(&toml, 5, 9).batch;
        let layout = || Layout::with_segments(&spec, 1, 5).unwrap();
        let c = case_in(spec.clone(), before.clone(), batch.clone(), layout());
        assert_eq!((c.layout.seg_w, c.layout.num_folds()), (69, 15), "{kind}");
        let zn = run_all(&c.layout, &c.witnesses, &c.z0)
            .unwrap_or_else(|(f, e)| panic!("{kind}: fold {f} unsatisfied at {e}"));
        c.layout.check_final(&c.z0, &zn).unwrap();
        // the last state tensor, layer 1, unit 1, weight 100 (its second segment)
        let mut other = before.clone();
        let st = other.layers[0].state.last_mut().unwrap();
        st.w.data[300 + 100] += 1;
        let o = case_in(spec.clone(), other, batch.clone(), layout());
        if let Ok(zo) = run_all(&o.layout, &o.witnesses, &c.z0) {
            assert!(c.layout.check_final(&c.z0, &zo).is_err(), "{kind}");
        }
    }
}

#[test]
fn rows_cut_into_segments_satisfy_every_fold() {
    // 300 inputs: records padded to 345 = 5 blocks of 69; 5 segments of 69
    let toml = "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 300\noutputs = 2\nactivation = \"relu\"\n[[layers]]\ninputs = 2\noutputs = 1\n";
    let c = case_segmented(toml, 5, 3);
    assert_eq!((c.layout.n_max, c.layout.seg_w), (345, 69));
    // layer 2: 1 row × 5 segments, layer 1: 2 rows × 5 segments
    assert_eq!(c.layout.num_folds(), 15);
    let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap();
    c.layout.check_final(&c.z0, &zn).unwrap();
}

/// Whole rows wider than a segment's minimum (300 inputs: records padded to
/// 345 = 5 blocks of 69): the 45 slots past the widest input are constant
/// zeros in the circuit, not weights. Every fold holds and the final state
/// is the verifier's, so the chains absorb the zeros Commit(θ) pads with,
/// for SGD, momentum and Adam mid-run (their state padded alike); a
/// checkpoint one unit off in its last weight does not open the same
/// statement.
#[test]
fn whole_rows_padded_to_whole_blocks_satisfy_every_fold() {
    for kind in [
        "lr = 0.1",
        "kind = \"momentum\"\nlr = 0.05\nmu = 0.9",
        "kind = \"adam\"\nweight_decay = 0.01",
    ] {
        let toml = format!("batch_size = 2\n[optimizer]\n{kind}\n[[layers]]\ninputs = 300\noutputs = 2\nactivation = \"relu\"\n[[layers]]\ninputs = 2\noutputs = 1\n");
        let (spec, before) = mid_run(&toml, 4, 3, |s, n| (n as i64 % 5 - 2 + s as i64 * 3) * 7_654_321);
        let c0 = case(&toml, Some(2), 4);
        let c = case_from(spec.clone(), before.clone(), c0.batch.clone(), Some(2));
        assert_eq!((c.layout.n_max, c.layout.seg_w, c.layout.live_slots()), (345, 345, 300));
        let zn = run_all(&c.layout, &c.witnesses, &c.z0)
            .unwrap_or_else(|(f, e)| panic!("{kind}: fold {f} unsatisfied at {e}"));
        c.layout.check_final(&c.z0, &zn).unwrap();
        let mut other = before.clone();
        other.layers[0].w.data[299] += 1;
        let o = case_from(spec, other, c0.batch.clone(), Some(2));
        if let Ok(zo) = run_all(&o.layout, &o.witnesses, &c.z0) {
            assert!(c.layout.check_final(&c.z0, &zo).is_err(), "{kind}");
        }
    }
}
