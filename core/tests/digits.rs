//! The real dataset: a 64-32-10 MLP trained on UCI digits with the reference
//! executor learns (loss falls, accuracy far above chance).
#![allow(clippy::unwrap_used, clippy::needless_range_loop)]

use std::path::PathBuf;
use zkstep_core::data::make_batch;
use zkstep_core::exec::predict;
use zkstep_core::fixed::to_real;
use zkstep_core::format::read_dataset;
use zkstep_core::model::seeded_salt;
use zkstep_core::{step, Checkpoint, ModelSpec};

fn digits_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/data/digits.safetensors")
}

#[test]
fn digits_mlp_learns() {
    let spec = ModelSpec::from_toml_str("batch_size = 32\n[optimizer]\nkind = \"momentum\"\nlr = 0.05\nmu = 0.9\n[[layers]]\ninputs = 64\noutputs = 32\nactivation = \"relu\"\n[[layers]]\ninputs = 32\noutputs = 10\n").unwrap();
    let ds = read_dataset(&digits_path(), spec.value_range).unwrap();
    assert_eq!((ds.x.rows, ds.x.cols, ds.y.cols), (1797, 64, 10));
    assert!(ds.report.max_abs_err <= 0.5e-9);
    let eval = |ck: &Checkpoint| {
        let out = predict(&spec, ck, &ds.x).unwrap();
        let mut loss = 0.0;
        let mut correct = 0;
        for i in 0..out.rows {
            let row = out.row(i);
            let pred = (0..10).max_by_key(|&j| row[j]).unwrap();
            let truth = (0..10).max_by_key(|&j| ds.y.at(i, j)).unwrap();
            correct += usize::from(pred == truth);
            loss += (0..10)
                .map(|j| (to_real(row[j]) - to_real(ds.y.at(i, j))).powi(2))
                .sum::<f64>();
        }
        (
            loss / (out.rows * 10) as f64,
            correct as f64 / out.rows as f64,
        )
    };
    let mut ck = Checkpoint::init(&spec, 5);
    let (l0, _) = eval(&ck);
    for t in 0..300 {
        ck = step(&spec, &ck, &make_batch(&ds, 32, t, 1, seeded_salt(1, t)))
            .unwrap()
            .after;
    }
    let (l1, acc) = eval(&ck);
    assert!(l1 < 0.5 * l0, "loss {l0} -> {l1}");
    assert!(acc > 0.6, "accuracy {acc}");
}
