//! The reference trace satisfies every fold, and the final state is what the
//! verifier requires (schedule, both commitments, challenge).
#![allow(clippy::unwrap_used)]
mod common;
use common::*;

#[test]
fn two_layer_sgd_trace_satisfies_every_fold() {
    let c = case(TWO_LAYER, Some(2), 1);
    let zn = run_all(&c.layout, &c.witnesses, &c.z0)
        .unwrap_or_else(|(f, e)| panic!("fold {f} ({:?}) unsatisfied at {e}", c.witnesses[f].desc));
    c.layout.check_final(&c.z0, &zn).unwrap();
}
