//! Specs that are allowed must fit the machine, and arithmetic on step
//! indices is checked: the limits of docs/SEMANTICS.md and README.
#![allow(clippy::unwrap_used)]

use zkstep_core::model::seeded_salt;
use zkstep_core::spec::{MAX_LAYERS, MAX_PARAMS};
use zkstep_core::{step, Batch, Checkpoint, Matrix, ModelSpec};

fn spec_err(toml: &str) -> String {
    ModelSpec::from_toml_str(toml).unwrap_err().to_string()
}

#[test]
fn a_layer_too_large_to_allocate_is_refused_at_parse_time() {
    // 65,536 × 65,536 is inside the width limit but is 32 GiB of weights
    let e = spec_err(
        "batch_size = 1\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 65536\noutputs = 65536\n",
    );
    assert!(
        e.contains("layers") && e.contains(&MAX_PARAMS.to_string()),
        "{e}"
    );
    // the largest allowed model still parses
    assert!(ModelSpec::from_toml_str(
        "batch_size = 1\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 16383\noutputs = 16384\n"
    )
    .is_ok());
}

#[test]
fn too_many_layers_are_refused() {
    let mut t = String::from("batch_size = 1\n[optimizer]\nlr = 0.1\n");
    for _ in 0..=MAX_LAYERS {
        t += "[[layers]]\ninputs = 1\noutputs = 1\n";
    }
    let e = spec_err(&t);
    assert!(
        e.contains("layers") && e.contains(&MAX_LAYERS.to_string()),
        "{e}"
    );
}

#[test]
fn init_refuses_weights_that_do_not_fit_value_bits() {
    let spec = ModelSpec::from_toml_str(
        "batch_size = 1\nvalue_bits = 20\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 32\noutputs = 64\nactivation = \"relu\"\n",
    )
    .unwrap();
    let e = Checkpoint::init_checked(&spec, 0).unwrap_err().to_string();
    assert!(
        e.contains("of 2048 initial weights") && e.contains("value_bits = 20"),
        "{e}"
    );
    let wide = ModelSpec::from_toml_str("batch_size = 1\nvalue_bits = 40\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 32\noutputs = 64\n").unwrap();
    assert!(Checkpoint::init_checked(&wide, 0).is_ok());
}

#[test]
fn the_step_index_cannot_overflow() {
    let spec = ModelSpec::from_toml_str(
        "batch_size = 1\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 1\noutputs = 1\n",
    )
    .unwrap();
    let mut ck = Checkpoint::init(&spec, 0);
    ck.step = u64::MAX;
    let batch = Batch {
        x: Matrix::zeros(1, 1),
        y: Matrix::zeros(1, 1),
        salt: seeded_salt(0, 0),
    };
    let e = step(&spec, &ck, &batch).unwrap_err().to_string();
    assert!(e.contains("step index"), "{e}");
}
