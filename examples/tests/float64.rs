//! N fixed-point steps beside N float64 steps (PyTorch's arithmetic) on the
//! same batches: the loss curves agree and the weights stay close, for every
//! optimizer and both losses; and the digits model learns with
//! cross-entropy and Adam.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use zkstep_core::data::make_batch;
use zkstep_core::format::{read_dataset_for, Dataset};
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Checkpoint, Matrix, ModelSpec};
use zkstep_examples::float64;

/// A deterministic dataset of `n` samples: X in ±1, Y one-hot over `classes`
/// (the class of the largest of the first `classes` inputs).
fn dataset(n: usize, d_in: usize, classes: usize) -> Dataset {
    let x: Vec<i64> = (0..n * d_in)
        .map(|i| ((i as i64 * 7919 + 13) % 2001 - 1000) * 1_000_000)
        .collect();
    let mut y = vec![0i64; n * classes];
    for i in 0..n {
        let row = &x[i * d_in..i * d_in + classes];
        let c = (0..classes).max_by_key(|&j| row[j]).unwrap();
        y[i * classes + c] = 1_000_000_000;
    }
    Dataset {
        x: Matrix::from_vec(n, d_in, x).unwrap(),
        y: Matrix::from_vec(n, classes, y).unwrap(),
        report: Default::default(),
    }
}

/// Train `steps` steps both ways; returns (worst relative loss gap, worst
/// weight difference, last fixed-point loss, first loss).
fn compare(spec: &ModelSpec, ds: &Dataset, steps: u64) -> (f64, f64, f64, f64) {
    let mut ck = Checkpoint::init(spec, 3);
    let mut real = float64::Model::from_checkpoint(spec, &ck);
    let (mut gap, mut diff, mut first, mut last) = (0f64, 0f64, 0f64, 0f64);
    for t in 0..steps {
        let b = make_batch(ds, spec.batch_size, t, 7, seeded_salt(7, t));
        let tr = step(spec, &ck, &b).unwrap();
        let l = float64::step(spec, &mut real, &float64::rows(&b.x), &float64::rows(&b.y));
        gap = gap.max((tr.loss.loss - l).abs() / l.max(1e-9));
        ck = tr.after;
        diff = diff.max(real.max_diff(&ck));
        if t == 0 {
            first = l;
        }
        last = tr.loss.loss;
    }
    (gap, diff, last, first)
}

#[test]
fn fixed_point_training_tracks_float64() {
    let ds = dataset(64, 5, 3);
    let net = "[[layers]]\ninputs = 5\noutputs = 8\nactivation = \"relu\"\n[[layers]]\ninputs = 8\noutputs = 3\n";
    for (opt, loss, max_diff) in [
        ("lr = 0.1", "mse", 1e-7),
        ("kind = \"momentum\"\nlr = 0.05\nmu = 0.9", "mse", 1e-7),
        ("lr = 0.5", "cross_entropy", 1e-7),
        ("kind = \"adam\"\nlr = 0.01", "cross_entropy", 1e-5),
        ("kind = \"adamw\"\nlr = 0.01", "cross_entropy", 1e-5),
    ] {
        let spec = ModelSpec::from_toml_str(&format!(
            "batch_size = 8\nloss = \"{loss}\"\n[optimizer]\n{opt}\n{net}"
        ))
        .unwrap();
        let (gap, diff, last, first) = compare(&spec, &ds, 60);
        eprintln!("{opt} / {loss}: loss {first:.4} → {last:.4}, worst loss gap {gap:.2e}, worst weight difference {diff:.2e}");
        assert!(gap < 1e-5, "{opt} / {loss}: loss gap {gap}");
        assert!(diff < max_diff, "{opt} / {loss}: weight difference {diff}");
        assert!(last < first, "{opt} / {loss}: no learning");
    }
}

#[test]
fn digits_learn_with_cross_entropy_and_adam() {
    let spec = ModelSpec::from_toml_str("batch_size = 32\nloss = \"cross_entropy\"\n[optimizer]\nkind = \"adam\"\nlr = 0.005\n[[layers]]\ninputs = 64\noutputs = 32\nactivation = \"relu\"\n[[layers]]\ninputs = 32\noutputs = 10\n").unwrap();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/digits.safetensors");
    let ds = read_dataset_for(&path, &spec).unwrap();
    let mut ck = Checkpoint::init(&spec, 5);
    for t in 0..200 {
        ck = step(&spec, &ck, &make_batch(&ds, 32, t, 1, seeded_salt(1, t)))
            .unwrap()
            .after;
    }
    let out = zkstep_core::exec::predict(&spec, &ck, &ds.x).unwrap();
    let argmax = |r: &[i64]| (0..r.len()).max_by_key(|&j| r[j]).unwrap();
    let correct = (0..out.rows)
        .filter(|&i| argmax(out.row(i)) == argmax(ds.y.row(i)))
        .count();
    let acc = correct as f64 / out.rows as f64;
    assert!(acc > 0.9, "accuracy {acc}");
}
