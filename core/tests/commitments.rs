//! Commitment properties that need whole checkpoints: swapping two tensors of
//! equal shape changes Commit(θ); the spec digest is bound in; momentum state
//! is committed too.
#![allow(clippy::unwrap_used, clippy::needless_range_loop)]

use zkstep_core::commit::commit_params;
use zkstep_core::{Checkpoint, ModelSpec};

const SQUARE: &str = "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 3\noutputs = 3\nactivation = \"relu\"\n[[layers]]\ninputs = 3\noutputs = 3\nactivation = \"relu\"\n[[layers]]\ninputs = 3\noutputs = 3\n";

#[test]
fn swapping_two_equal_shaped_tensors_changes_the_commitment() {
    let spec = ModelSpec::from_toml_str(SQUARE).unwrap();
    let ck = Checkpoint::init(&spec, 3);
    let h = commit_params(&spec, &ck);
    let mut sw = ck.clone();
    sw.layers.swap(0, 1);
    assert_ne!(sw, ck);
    assert_ne!(commit_params(&spec, &sw), h);
    let mut sw = ck.clone();
    let (b0, b1) = (sw.layers[2].b.clone(), sw.layers[1].w.data[..3].to_vec());
    sw.layers[2].b = b1;
    sw.layers[1].w.data[..3].copy_from_slice(&b0);
    if sw != ck {
        assert_ne!(commit_params(&spec, &sw), h);
    }
}

#[test]
fn same_values_under_another_spec_commit_differently() {
    let spec = ModelSpec::from_toml_str(SQUARE).unwrap();
    let other = ModelSpec::from_toml_str(&SQUARE.replace("lr = 0.1", "lr = 0.2")).unwrap();
    let ck = Checkpoint::init(&spec, 3);
    assert_ne!(commit_params(&spec, &ck), commit_params(&other, &ck));
}

#[test]
fn momentum_state_is_committed() {
    let spec = ModelSpec::from_toml_str(
        &SQUARE.replace("lr = 0.1", "kind = \"momentum\"\nlr = 0.1\nmu = 0.9"),
    )
    .unwrap();
    let ck = Checkpoint::init(&spec, 3);
    let h = commit_params(&spec, &ck);
    let mut v = ck.clone();
    v.layers[1].state[0].w.data[4] = 1;
    assert_ne!(commit_params(&spec, &v), h);
    let mut v = ck.clone();
    v.layers[0].state[0].b[2] = -1;
    assert_ne!(commit_params(&spec, &v), h);
}
