//! Soundness at the constraint level: every constraint family rejects a
//! mutated witness, naming the failing namespace; what the constraints cannot
//! see (which commitment, which schedule, which challenge) the final-state
//! check rejects.
#![allow(clippy::unwrap_used)]
use crate::common::*;
use zkstep_circuits::layout::FinalStateError;
use zkstep_circuits::Layout;
use zkstep_circuits::update::{sgd::SgdRow, RowUpdate};
use zkstep_circuits::witness::TileWitness;

/// Apply `mutate` to fold `f`'s witness; expect a failure in a fold whose
/// namespace contains `needle`.
fn rejects(c: &Case, f: usize, needle: &str, mutate: impl Fn(&mut TileWitness)) {
    let mut ws = c.witnesses.clone();
    mutate(&mut ws[f]);
    match run_all(&c.layout, &ws, &c.z0) {
        Ok(zn) => panic!(
            "mutation in fold {f} was accepted by every constraint (final check: {:?})",
            c.layout.check_final(&c.z0, &zn)
        ),
        Err((g, path)) => assert!(
            path.contains(needle),
            "fold {g} failed at {path}, expected a failure at …{needle}…"
        ),
    }
}

/// Fold index of the first tile of a layer.
fn fold_of(c: &Case, layer: usize) -> usize {
    c.witnesses
        .iter()
        .position(|w| w.desc.layer == layer)
        .unwrap()
}

fn sgd(u: &RowUpdate) -> &SgdRow {
    match u {
        RowUpdate::Sgd(r) => r,
        _ => panic!("an SGD case"),
    }
}

fn two() -> Case {
    case(TWO_LAYER, Some(2), 3)
}

#[test]
fn weight_after_off_by_one_is_rejected() {
    let c = two();
    for layer in [1, 2] {
        let f = fold_of(&c, layer);
        rejects(&c, f, "weight_grad", |w| w.rows[0].w_new[1] += 1);
    }
}

#[test]
fn bias_after_off_by_one_is_rejected() {
    let c = two();
    rejects(&c, fold_of(&c, 2), "lr_db", |w| w.rows[0].b_new -= 1);
}

#[test]
fn weight_before_off_by_one_is_rejected() {
    let c = two();
    rejects(&c, fold_of(&c, 1), "forward", |w| w.rows[0].w[0] += 1);
}

#[test]
fn flipped_relu_selector_is_rejected_for_positive_and_zero_preactivations() {
    let c = two();
    let f = fold_of(&c, 1);
    let cidx = c.witnesses[f].cells.iter().position(|c| c.z > 0).unwrap();
    rejects(&c, f, "relu/sign", |w| {
        w.cells[cidx].s = 1 - w.cells[cidx].s
    });
    // a zero pre-activation: force Z = 0 with its selector 0, then flip
    let mut zc = c.witnesses.clone();
    zc[f].cells[cidx].z = 0;
    zc[f].cells[cidx].s = 1;
    let err = run_all(&c.layout, &zc, &c.z0).unwrap_err();
    assert!(err.1.contains("relu/sign"), "{err:?}");
}

#[test]
fn remainder_of_scale_with_quotient_one_lower_is_rejected() {
    // r + 10⁹ must stay below 2³⁰ so that only the upper remainder bound can catch
    // it; floor rounding makes small remainders common enough to find one.
    let toml = TWO_LAYER.replace("batch_size = 3", "batch_size = 4\nrounding = \"floor\"");
    let c = case(&toml, Some(2), 5);
    let s = 1_000_000_000i64;
    let find = |pick: &dyn Fn(&TileWitness) -> Option<usize>| {
        c.witnesses
            .iter()
            .enumerate()
            .find_map(|(f, w)| pick(w).map(|i| (f, i)))
    };
    let (f, i) = find(&|w| {
        (0..w.cells.len())
            .find(|&i| i % c.layout.rows < w.desc.rows_active && w.cells[i].z_r + s < 1 << 30)
    })
    .expect("a small Z remainder");
    rejects(&c, f, "z_r/r_lt_d", |w| {
        w.cells[i].z -= 1;
        w.cells[i].z_r += s;
    });
    let (f, i) = find(&|w| {
        (0..w.cells.len())
            .find(|&i| i % c.layout.rows < w.desc.rows_active && w.cells[i].da_r + s < 1 << 30)
    })
    .expect("a small dA remainder");
    rejects(&c, f, "da_r/r_lt_d", |w| {
        w.cells[i].da -= 1;
        w.cells[i].da_r += s;
    });
    let (f, i) = find(&|w| {
        let n = c.layout.n_max;
        (0..w.rows.len() * n).find(|&i| {
            i / n < w.desc.rows_active
                && i % n < w.desc.n_in
                && sgd(&w.rows[i / n].update).weights[i % n].r + s * s < 1 << 60
        })
    })
    .expect("a small update remainder");
    let n = c.layout.n_max;
    rejects(&c, f, "upd_r/r_lt_d", |w| {
        let row = &mut w.rows[i / n];
        row.w_new[i % n] += 1; // quotient W − W' one lower
        if let RowUpdate::Sgd(u) = &mut row.update {
            u.weights[i % n].r += s * s;
        }
    });
}

#[test]
fn quotient_out_of_the_declared_range_is_rejected() {
    let toml = TWO_LAYER.replace("batch_size = 3", "batch_size = 3\nvalue_bits = 40");
    let c = case(&toml, Some(2), 4);
    rejects(&c, fold_of(&c, 2), "z/range", |w| w.cells[0].z += 1 << 40);
}

#[test]
fn another_batch_is_rejected() {
    let c = two();
    // another target under the same gradient: the loss constraint
    rejects(&c, fold_of(&c, 2), "loss", |w| w.cells[0].y += 1);
    // another input: layer 1's claims about X no longer hold when the last fold settles them
    let f0 = c
        .witnesses
        .iter()
        .position(|w| w.desc.x_active > 0)
        .unwrap();
    rejects(&c, f0, "x_ta_settled", |w| w.x[0] += 1);
}

#[test]
fn wrong_incoming_gradient_is_rejected_when_its_layer_settles() {
    let c = two();
    // a cell whose ReLU is off: dZ = 0 whatever dA is, so only the input-gradient identity sees it
    let f = fold_of(&c, 1);
    let cells = &c.witnesses[f].cells;
    let cidx = (0..cells.len())
        .find(|&i| cells[i].s == 0 && i % c.layout.rows < c.witnesses[f].desc.rows_active)
        .expect("an inactive unit");
    rejects(&c, f, "da_settled", |w| w.cells[cidx].da += 1);
}

#[test]
fn wrong_claims_are_rejected() {
    let c = two();
    let f = fold_of(&c, 1);
    rejects(&c, f, "", |w| {
        w.links.ta_in[0] += zkstep_core::Fr::from(1u64)
    });
    rejects(&c, f, "", |w| {
        w.links.ar_in[1] += zkstep_core::Fr::from(1u64)
    });
}

/// The layer above's claim about layer 1's output ("up"), opened on layer
/// 1's first tile against the state's digest: another vector is refused.
#[test]
fn the_claim_from_the_layer_above_is_opened_on_a_layers_first_tile() {
    let c = two();
    let f = fold_of(&c, 1);
    assert!(c.witnesses[f].desc.first && !c.witnesses[f].desc.is_top);
    rejects(&c, f, "up_claim", |w| {
        w.links.ar_up[0] += zkstep_core::Fr::from(1u64)
    });
}

/// Mutate every fold of `layer` alike (a consistent lie across the layer).
fn rejects_layer(c: &Case, layer: usize, needle: &str, mutate: impl Fn(&mut TileWitness)) {
    let mut ws = c.witnesses.clone();
    for w in ws.iter_mut().filter(|w| w.desc.layer == layer) {
        mutate(w);
    }
    match run_all(&c.layout, &ws, &c.z0) {
        Ok(_) => panic!("a consistent mutation of layer {layer} was accepted"),
        Err((g, path)) => assert!(
            path.contains(needle),
            "fold {g} failed at {path}, expected …{needle}…"
        ),
    }
}

#[test]
fn consumed_tau_a_must_be_what_the_layer_below_produced() {
    let c = two();
    // Layer 1 reads 3 inputs out of n_max = 4: its τA[3] meets only zero
    // weights, so the forward check cannot see it. Claimed alike in all of
    // layer 1's folds, only the γ-combination settled against the X sections can.
    assert!(c.layout.spec.layers[0].inputs < c.layout.n_max);
    rejects_layer(&c, 1, "x_ta_settled", |w| {
        w.links.ta_in[3] += zkstep_core::Fr::from(1u64)
    });
    // and a different vector in one fold only breaks the layer's digest
    let f = fold_of(&c, 1) + 1;
    assert_eq!(c.witnesses[f].desc.layer, 1);
    rejects(&c, f, "ta_claim", |w| {
        w.links.ta_in[3] += zkstep_core::Fr::from(1u64)
    });
}

#[test]
fn another_learning_rate_is_rejected() {
    let c = two();
    // lr 0.3 has lr 0.1's remainder class (gcd with S² is 10⁸ for both):
    // the lr-0.1 witness fails the update identities themselves
    let other = case(&TWO_LAYER.replace("lr = 0.1", "lr = 0.3"), Some(2), 3);
    let err = run_all(&other.layout, &c.witnesses, &c.z0).unwrap_err();
    assert!(
        err.1.contains("weight_grad") || err.1.contains("lr_db"),
        "{err:?}"
    );
    // under lr 0.2 (gcd 2·10⁸) its remainders are not even of the class
    let other = case(&TWO_LAYER.replace("lr = 0.1", "lr = 0.2"), Some(2), 3);
    let err = run_all(&other.layout, &c.witnesses, &c.z0).unwrap_err();
    assert!(
        err.1.contains("weight_grad") || err.1.contains("lr_db") || err.1.contains("upd_r"),
        "{err:?}"
    );
}

#[test]
fn swapped_folds_fail_the_schedule_or_the_constraints() {
    let c = two();
    let mut ws = c.witnesses.clone();
    let (a, b) = (fold_of(&c, 2), fold_of(&c, 1));
    ws.swap(a, b);
    if let Ok(zn) = run_all(&c.layout, &ws, &c.z0) {
        assert!(c.layout.check_final(&c.z0, &zn).is_err());
    }
}

/// What closes a step is checked in the circuit, at the step's last fold:
/// each of these starts one value off and fails there or earlier.
#[test]
fn closing_checks_reject_wrong_statements() {
    let c = two();
    let (st, tr) = (&c.layout.slots.statement, &c.layout.slots.transcript);
    let one = zkstep_core::Fr::from(1u64);
    let fails = |slot: usize, needle: &str| {
        let mut z0 = c.z0.clone();
        z0[slot] += one;
        match run_all(&c.layout, &c.witnesses, &z0) {
            Ok(_) => panic!("z0[{slot}] + 1 was accepted by every fold"),
            Err((_, path)) => assert!(
                needle.is_empty() || path.contains(needle),
                "z0[{slot}] + 1 failed at {path}, expected …{needle}…"
            ),
        }
    };
    fails(st.c_after, "closes_h_after");
    fails(st.c_before, "closes_h_before");
    fails(c.layout.slots.schedule.sched, "closes_schedule");
    fails(st.c_batch, "c_batch_opened");
    // another ρ breaks the identities first (the witnesses are at the
    // drawn one); another γ is only not the drawn one: nothing fixed before
    // it depends on it
    fails(st.rho, "");
    fails(tr.gamma, "gamma_drawn");
    // the next step's values are zero except where a step closes: each of
    // them set on the first fold (which does not close) fails there, by name
    // (Adam's k₁ and c₂ where the spec has them)
    let next_nonzero = |c: &Case, name: &str, set: &dyn Fn(&mut zkstep_circuits::witness::NextStep)| {
        let mut ws = c.witnesses.clone();
        set(&mut ws[0].next);
        let err = run_all(&c.layout, &ws, &c.z0).unwrap_err();
        assert_eq!(err.0, 0, "{name}: {err:?}");
        assert!(err.1.contains(&format!("next_{name}_zero")), "{name}: {err:?}");
    };
    next_nonzero(&c, "c_after", &|n| n.c_after = one);
    next_nonzero(&c, "c_batch", &|n| n.c_batch = one);
    next_nonzero(&c, "rho", &|n| n.rho = one);
    next_nonzero(&c, "gamma", &|n| n.gamma = one);
    let adam = case(&TWO_LAYER.replace("lr = 0.1", "kind = \"adam\"\nlr = 0.1"), Some(2), 5);
    next_nonzero(&adam, "k1", &|n| n.adam.0 = one);
    next_nonzero(&adam, "c2", &|n| n.adam.1 = one);
}

/// ρ is the folding layer's: a step whose witnesses, claims and z₀ are
/// consistent at a ρ of the prover's choosing fails at `rho_drawn` in its
/// first fold when the drawn ρ is another.
#[test]
fn a_rho_of_the_provers_choosing_is_rejected() {
    let c = two();
    let one = zkstep_core::Fr::from(1u64);
    // ρ, then γ, of the prover's choosing
    for (k, name) in [(1, "rho_drawn"), (2, "gamma_drawn")] {
        let mut chosen = test_drawn();
        chosen[k] += one;
        let (ws, z0) = witnesses_at(&c, chosen);
        // consistent at the chosen challenges: every fold holds when they are the drawn ones
        let mut z = z0.clone();
        for w in &ws {
            z = run_fold_at(&c.layout, w, &z, chosen).unwrap();
        }
        let err = run_fold_at(&c.layout, &ws[0], &z0, test_drawn()).unwrap_err();
        assert!(err.contains(name), "{err}");
    }
}

/// z_n follows from the statement alone: the verifier names the slot that
/// is not what the statement gives.
#[test]
fn final_state_checks_reject_wrong_statements() {
    let c = two();
    let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap();
    c.layout.check_final(&c.z0, &zn).unwrap();
    let one = zkstep_core::Fr::from(1u64);
    let st = &c.layout.slots.statement;
    for (slot, name) in [
        (st.c_before, "c_before"),
        (st.step, "step"),
        (c.layout.slots.segment.batches, "segment's batches"),
        (c.layout.slots.links.prod_ta, "prod_ta"),
    ] {
        let mut z = zn.clone();
        z[slot] += one;
        assert_eq!(
            c.layout.check_final(&c.z0, &z),
            Err(FinalStateError::Slot(name))
        );
    }
    // another c_batch in the statement: the segment's batch chain differs
    let mut z0 = c.z0.clone();
    z0[st.c_batch] += one;
    assert_eq!(
        c.layout.check_final(&z0, &zn),
        Err(FinalStateError::Slot("segment's batches"))
    );
}

/// z_n is public, and it is exactly what the statement gives: with the same
/// θ, X and Y but another salt, z_n differs only through c_batch, and each
/// is the state `final_state` derives from its own statement.
#[test]
fn final_state_reveals_nothing_unsalted() {
    let c = two();
    let mut other = c.batch.clone();
    other.salt += zkstep_core::Fr::from(1u64);
    let d = case_from(c.spec.clone(), c.before.clone(), other, Some(2));
    let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap();
    let zd = run_all(&d.layout, &d.witnesses, &d.z0).unwrap();
    c.layout.check_final(&c.z0, &zn).unwrap();
    d.layout.check_final(&d.z0, &zd).unwrap();
    let differ: Vec<usize> = (0..zn.len()).filter(|&i| zn[i] != zd[i]).collect();
    assert_eq!(differ, vec![c.layout.slots.segment.batches]);
}

#[test]
fn wrong_salt_is_rejected_at_the_last_fold() {
    let c = two();
    let last = c.witnesses.len() - 1;
    rejects(&c, last, "c_batch_opened", |w| {
        w.salt += zkstep_core::Fr::from(1u64)
    });
}

#[test]
fn an_input_wider_than_the_folds_gets_layer_one_tiles_without_rows() {
    // one output unit, 5 inputs, batch 8: the X section is capped at 2 columns,
    // so layer 1 continues with two tiles that carry only X
    let toml = "batch_size = 8\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 5\noutputs = 1\n";
    let c = case(toml, Some(1), 5);
    let s = &c.layout.schedule;
    assert_eq!((c.layout.xcols, s.len()), (2, 3));
    assert!(s[1..].iter().all(|d| d.layer == 1 && d.rows_active == 0));
    assert!(s[2].last && s[2].is_final && !s[0].last);
    assert_eq!(
        s.iter().map(|d| (d.x0, d.x_active)).collect::<Vec<_>>(),
        vec![(0, 2), (2, 2), (4, 1)]
    );
    let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap();
    c.layout.check_final(&c.z0, &zn).unwrap();
    // X in a row-less tile is still settled against layer 1's claims
    rejects(&c, 2, "x_ta_settled", |w| w.x[0] += 1);
    // a masked column contributes nothing, so it cannot cancel a wrong claim
    // after γ is known: with garbage in it every fold still holds (were it
    // counted, x_ta_settled would fail)
    let mut ws = c.witnesses.clone();
    assert_eq!(ws[2].desc.x_active, 1);
    ws[2].x[1] = 7;
    // (its limbs are still looked up: the step's multiplicities count them)
    with_multiplicities(&c.layout, &mut ws, &c.z0);
    assert_eq!(run_all(&c.layout, &ws, &c.z0).unwrap(), zn);
    // an input one past the declared range
    let c32 = case(
        &toml.replace("batch_size", "value_bits = 32\nbatch_size"),
        Some(1),
        5,
    );
    rejects(&c32, 1, "x/x0/v0/range", |w| w.x[0] = 1 << 31);
}

/// An integer learning rate (lr = 2: S divides lr·S, so the bias update's
/// remainder has one value, the offset, and nothing is looked up for it)
/// satisfies every fold; a bias remainder one off is rejected (before the
/// fix a bound of 1 asked the lookup for a 0-bit check and panicked).
#[test]
fn an_integer_learning_rate_pins_its_remainder() {
    let c = case(&TWO_LAYER.replace("lr = 0.1", "lr = 2"), Some(2), 3);
    let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap_or_else(|(f, e)| panic!("fold {f}: {e}"));
    c.layout.check_final(&c.z0, &zn).unwrap();
    rejects(&c, 0, "lr_db/r/r_lt_d", |w| match &mut w.rows[0].update {
        RowUpdate::Sgd(r) => r.bias_r += 1,
        _ => panic!("an SGD case"),
    });
}

/// θ bound by its evaluations at ζ ([`CommitScheme::Evaluation`], not yet
/// in proofs): a step with whole rows, an Adam step (state rows in the
/// record) and rows cut into segments are accepted with the statement's
/// values the native evaluations, and a claimed evaluation of another θ_t
/// or θ_{t+1} (one weight or one bias changed) is rejected where the step
/// closes.
#[test]
fn evaluations_at_zeta_bind_both_checkpoints() {
    use zkstep_circuits::layout::CommitScheme;
    use zkstep_core::commit::{evaluate, param_coefficients};
    let adam = TWO_LAYER.replace("lr = 0.1", "kind = \"adam\"\nlr = 0.1");
    let wide = "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 300\noutputs = 2\nactivation = \"relu\"\n[[layers]]\ninputs = 2\noutputs = 1\n";
    for base in [case(TWO_LAYER, Some(2), 5), case(&adam, Some(1), 6), case_segmented(wide, 5, 3)] {
        let lay = Layout::clone(&base.layout).with_commit_scheme(CommitScheme::Evaluation);
        let c = case_in(base.spec.clone(), base.before.clone(), base.batch.clone(), lay);
        let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap();
        c.layout.check_final(&c.z0, &zn).unwrap();
        let (st, ev) = (&c.layout.slots.statement, c.layout.slots.commit.eval.unwrap());
        let zeta = c.z0[ev.zeta];
        let at = |ck: &zkstep_core::Checkpoint| evaluate(&param_coefficients(&c.spec, ck), zeta);
        assert_eq!((c.z0[st.c_before], c.z0[st.c_after]), (at(&c.before), at(&c.after)));
        for (slot, needle, ck) in [
            (st.c_before, "closes_y_before", &c.before),
            (st.c_after, "closes_y_after", &c.after),
        ] {
            for layer in [0, 1] {
                let mut other = ck.clone();
                other.layers[layer].w.data[1] += 1;
                let mut third = ck.clone();
                third.layers[layer].b[0] -= 1;
                for o in [other, third] {
                    let mut z0 = c.z0.clone();
                    z0[slot] = at(&o);
                    let err = run_all(&c.layout, &c.witnesses, &z0).unwrap_err();
                    assert!(err.1.contains(needle), "{err:?}");
                }
            }
        }
    }
}

#[test]
fn segments_of_a_row_are_checked_together() {
    let toml = "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 300\noutputs = 2\nactivation = \"relu\"\n[[layers]]\ninputs = 2\noutputs = 1\n";
    let c = case_segmented(toml, 5, 3);
    // layer 1's second row, its third segment (of five): fold 5 + 5 + 2
    let f = 12;
    let d = c.witnesses[f].desc;
    assert_eq!((d.layer, d.j0, d.seg), (1, 1, 2));
    // a weight of θ_{t+1} off by one: the row's F2, settled on its last segment
    rejects(&c, f, "weight_grad", |w| w.rows[0].w_new[3] += 1);
    // a weight of θ_t off by one: the row's F1
    rejects(&c, f, "forward", |w| w.rows[0].w[3] += 1);
    // another τA segment than the first row fixed for this segment
    rejects(&c, f, "ta_claim", |w| {
        w.links.ta_in[0] += zkstep_core::Fr::from(1u64)
    });
    // segments are not interchangeable: the schedule pins each fold's
    let mut ws = c.witnesses.clone();
    ws.swap(f, f + 1);
    if let Ok(zn) = run_all(&c.layout, &ws, &c.z0) {
        assert!(c.layout.check_final(&c.z0, &zn).is_err());
    }
}

/// A fold's Adam row witness (the case is an Adam one).
fn adam(u: &mut RowUpdate) -> &mut zkstep_circuits::update::adam::AdamRow {
    match u {
        RowUpdate::Adam(r) => r,
        _ => panic!("an Adam case"),
    }
}

/// An Adam row cut into segments (300 inputs, five of 69 weights): in an
/// earlier segment a moment before, a moment after and θ′ off by one are
/// each rejected in that fold; the bias, checked on the last segment only,
/// off by one there.
#[test]
fn an_adam_row_cut_into_segments_rejects_its_mutations() {
    let toml = "batch_size = 2\n[optimizer]\nkind = \"adamw\"\nlr = 0.01\n[[layers]]\ninputs = 300\noutputs = 2\n";
    let c = case_segmented(toml, 5, 4);
    let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap_or_else(|(f, e)| panic!("fold {f}: {e}"));
    c.layout.check_final(&c.z0, &zn).unwrap();
    let f = 1;
    assert!(!c.witnesses[f].desc.last_seg && c.witnesses[f].desc.seg == 1);
    rejects(&c, f, "adam/m_rescale", |w| {
        adam(&mut w.rows[0].update).weights[5].el.m += 1
    });
    rejects(&c, f, "adam/v_rescale", |w| {
        adam(&mut w.rows[0].update).weights[5].el.trace.v += 1
    });
    rejects(&c, f, "adam/theta_new", |w| w.rows[0].w_new[7] += 1);
    rejects(&c, 4, "adam_b/theta_new", |w| w.rows[0].b_new += 1);
}

/// Adam's fold: θ′ or b′ off by one, a moment after off by one, the
/// gradient the moments see off by one, and a moment before that is not
/// the trace's.
#[test]
fn adam_mutations_are_rejected_in_the_fold() {
    let c = case(
        &TWO_LAYER.replace("lr = 0.1", "kind = \"adamw\"\nlr = 0.1"),
        Some(2),
        3,
    );
    let f = fold_of(&c, 1);
    rejects(&c, f, "adam/theta_new", |w| w.rows[0].w_new[1] += 1);
    rejects(&c, f, "adam_b/theta_new", |w| w.rows[1].b_new -= 1);
    rejects(&c, f, "adam/m_rescale", |w| {
        adam(&mut w.rows[0].update).weights[0].el.trace.m += 1
    });
    rejects(&c, f, "adam/v_rescale", |w| {
        adam(&mut w.rows[0].update).weights[0].el.trace.v += 1
    });
    // (the moments see it first; F2 stands behind them)
    rejects(&c, f, "row0/k2/adam/m_rescale", |w| {
        adam(&mut w.rows[0].update).weights[2].dw_q += 1
    });
    // a moment before that is not the trace's: m′ no longer follows
    rejects(&c, f, "adam/m_rescale", |w| {
        adam(&mut w.rows[0].update).weights[0].el.m += 1
    });
}

/// Re-derive fold `w`'s softmax of sample `i` from a claimed maximum `m` and
/// sum `sum`, as a prover who claims them would: every exponential and
/// probability consistent with the claims, the hit left where it was (the
/// top layer here has no ReLU: A = Z).
fn claim_softmax(c: &Case, w: &mut TileWitness, i: usize, m: i128, sum: i128) {
    use zkstep_core::softmax::exp_neg;
    let rounding = c.layout.spec.rounding;
    let rows = c.layout.rows;
    let checked = if w.desc.last_seg { w.desc.rows_active } else { 0 };
    let sm = &mut w.softmax.samples[i];
    sm.m = m;
    sm.sum = sum;
    for t in 0..rows {
        let a = w.cells[i * rows + t].z as i128;
        let x = if t < checked { a - m } else { 0 };
        // above the maximum there is no exponential to give: keep the old one
        if let Some(e) = exp_neg(x, rounding) {
            sm.exp[t] = e;
        }
        let (p, r) =
            zkstep_core::fixed::div_round(sm.exp[t].value * 1_000_000_000, sum, rounding).unwrap();
        sm.p[t] = p;
        sm.p_rem[t] = r;
    }
}

/// Claims (M, Σ) about a row `z` other than its own under which every
/// probability of the row stays what it is (so that only the softmax's
/// claims checks can tell): with `move_max`, M + δ and the sum of the
/// exponentials under it; else the true M and Σ + δ; the least δ ≥ 1.
fn claim_keeping_p(z: &[i128], rounding: zkstep_core::fixed::Rounding, move_max: bool) -> (i128, i128) {
    use zkstep_core::softmax::{exp_neg, softmax_trace};
    let honest = softmax_trace(z, rounding).unwrap();
    let probs = |m: i128, sum: Option<i128>| -> (i128, Vec<i128>) {
        let e: Vec<i128> = z.iter().map(|&a| exp_neg(a - m, rounding).unwrap().value).collect();
        let sum = sum.unwrap_or_else(|| e.iter().sum());
        let p = e
            .iter()
            .map(|&v| zkstep_core::fixed::div_round(v * 1_000_000_000, sum, rounding).unwrap().0)
            .collect();
        (sum, p)
    };
    for delta in 1..10_000 {
        let (m, sum) = if move_max {
            (honest.m + delta, None)
        } else {
            (honest.m, Some(honest.sum + delta))
        };
        let (sum, p) = probs(m, sum);
        if p == honest.p && (m, sum) != (honest.m, honest.sum) {
            return (m, sum);
        }
    }
    panic!("no claim keeps every probability of {z:?}");
}

/// Cross-entropy's softmax, cut across the top layer's folds (5 classes, 2
/// a tile: three top folds, the last with a padded row): each claim and
/// each value is rejected when wrong, and where.
#[test]
fn cross_entropy_mutations_are_rejected() {
    let toml = "batch_size = 2\nloss = \"cross_entropy\"\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 3\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 5\n";
    let c = case(toml, Some(2), 8);
    let tops: Vec<usize> = (0..c.witnesses.len())
        .filter(|&f| c.witnesses[f].desc.is_top)
        .collect();
    assert_eq!(tops.len(), 3, "5 classes in tiles of 2");
    let f = tops[0];
    let full = |i: usize| c.witnesses[f].softmax.samples[i].clone();
    // where sample 0's maximum is, and a checked unit that is not it
    let holder = *tops
        .iter()
        .find(|&&g| c.witnesses[g].softmax.argmax[0].is_some())
        .unwrap();
    let hit = c.witnesses[holder].softmax.argmax[0].unwrap();
    let across = |needle: &str, mutate: &dyn Fn(&mut TileWitness)| {
        let mut ws = c.witnesses.clone();
        for &g in &tops {
            mutate(&mut ws[g]);
        }
        match run_all(&c.layout, &ws, &c.z0) {
            Ok(_) => panic!("a mutation of every top fold was accepted ({needle})"),
            Err((g, path)) => assert!(path.contains(needle), "fold {g} failed at {path}, expected …{needle}…"),
        }
    };
    // sample i's whole row (A = Z: no ReLU on top) and softmax
    let trace = zkstep_core::step(&c.spec, &c.before, &c.batch).unwrap();
    let row = |i: usize| -> Vec<i128> {
        trace.forward[1].out.row(i).iter().map(|&v| v as i128).collect()
    };
    let rounding = c.layout.spec.rounding;
    // a wrong maximum, claimed alike in every top fold with every value
    // derived from it and every probability unchanged (so no loss identity
    // sees it): above the row's, no unit attains it
    let (m0, sum0) = claim_keeping_p(&row(0), rounding, true);
    across(&format!("softmax/s0/hit{hit}_at_max"), &|w| {
        claim_softmax(&c, w, 0, m0, sum0)
    });
    // below it: the maximum's unit has no exponential (its reduction k < 0)
    let s0 = full(0);
    across("softmax/s0/exp", &|w| claim_softmax(&c, w, 0, s0.m - 1, s0.sum));
    // a wrong sum of exponentials, alike everywhere, every probability
    // unchanged: the running sums do not settle at the top layer's last fold
    let (m1, sum1) = claim_keeping_p(&row(1), rounding, false);
    across("softmax_claims/settled", &|w| claim_softmax(&c, w, 1, m1, sum1));
    let s1 = full(1);
    // another sum in one fold only: its claims are not the first fold's
    rejects(&c, tops[1], "softmax_claims/claims_kept", |w| {
        claim_softmax(&c, w, 1, s1.m, s1.sum + 1)
    });
    let elsewhere = *tops.iter().find(|&&g| g != holder && g != f).unwrap();
    rejects(&c, elsewhere, "softmax_claims/claims_kept", |w| {
        claim_softmax(&c, w, 0, m0, sum0)
    });
    // the maximum claimed at a unit that does not attain it
    rejects(&c, holder, "softmax/s0/hit", |w| {
        w.softmax.argmax[0] = Some(1 - hit)
    });
    // no unit marked: the hits do not sum to one
    rejects(&c, holder, "softmax_claims/settled", |w| {
        w.softmax.argmax[0] = None
    });
    // a hit on the last fold's padded row (which enters at the maximum)
    let last = tops[2];
    assert_eq!(c.witnesses[last].desc.rows_active, 1);
    rejects(&c, last, "softmax/s1/hit1_checked", |w| {
        w.softmax.argmax[1] = Some(1)
    });
    rejects(&c, f, "softmax/s1/exp1", |w| w.softmax.samples[1].exp[1].value += 1);
    // a probability one unit off, alone and with its remainder moved by 2Σ
    rejects(&c, f, "softmax/s0/p1", |w| w.softmax.samples[0].p[1] += 1);
    rejects(&c, f, "softmax/s0/p1/r_", |w| {
        let sm = &mut w.softmax.samples[0];
        sm.p[1] -= 1;
        sm.p_rem[1] += 2 * sm.sum;
    });
    rejects(&c, f, "softmax/s1/loss0", |w| {
        w.cells[c.layout.rows].da += 1
    });
    // another label: Y of sample 0 moved from unit 0 to unit 1
    rejects(&c, f, "softmax/s0/loss", |w| {
        w.cells[0].y -= 1_000_000_000;
        w.cells[1].y += 1_000_000_000;
    });
}

/// A top tile with no active row: X wider than the folds carry continues
/// layer 1 with such tiles, and here layer 1 is the top. It checks no unit
/// (every entry at the maximum, nothing added to the sums) but carries the
/// row's claims: the honest fold holds, and each p is still pinned by its
/// division (a p off by one, its remainder moved by 2Σ to keep the
/// identity, fails the remainder's range), its claims by the first fold's.
#[test]
fn an_empty_top_tile_keeps_its_softmax_pinned() {
    let toml = "batch_size = 32\nloss = \"cross_entropy\"\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 64\noutputs = 2\n";
    let c = case(toml, Some(2), 5);
    let f = c
        .witnesses
        .iter()
        .position(|w| w.desc.is_top && w.desc.rows_active == 0)
        .expect("the layout has a top tile with no active row");
    assert!(c.witnesses[f].softmax.samples[0].sum >= 1_000_000_000, "Σ of a row is ≥ S");
    assert!(run_all(&c.layout, &c.witnesses, &c.z0).is_ok());
    rejects(&c, f, "softmax/s0/p0", |w| {
        let sm = &mut w.softmax.samples[0];
        sm.p[0] -= 1;
        sm.p_rem[0] += 2 * sm.sum;
    });
    rejects(&c, f, "softmax/s7/p1", |w| w.softmax.samples[7].p[1] += 1);
    rejects(&c, f, "softmax_claims/claims_kept", |w| {
        let (m, sum) = (w.softmax.samples[3].m, w.softmax.samples[3].sum);
        claim_softmax(&c, w, 3, m, sum + 1)
    });
}

/// A cross-entropy row cut into segments (one unit a fold, SGD, 300
/// inputs: five segments of 69 weights): the unit is checked in its last
/// segment only, the earlier ones carry the claims; every fold holds, and a
/// probability or a claim off in an earlier segment is still rejected.
#[test]
fn a_cross_entropy_row_cut_into_segments() {
    let toml = "batch_size = 2\nloss = \"cross_entropy\"\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 300\noutputs = 3\n";
    let c = case_segmented(toml, 5, 9);
    assert_eq!(c.layout.segments, 5);
    let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap_or_else(|(f, e)| panic!("fold {f}: {e}"));
    c.layout.check_final(&c.z0, &zn).unwrap();
    let early = c
        .witnesses
        .iter()
        .position(|w| w.desc.is_top && !w.desc.last_seg && !w.desc.first)
        .unwrap();
    rejects(&c, early, "softmax/s1/p0", |w| w.softmax.samples[1].p[0] += 1);
    rejects(&c, early, "softmax_claims/claims_kept", |w| w.softmax.samples[1].m -= 1);
}

/// Three steps folded as one segment satisfy every fold and end in the
/// state the segment's statement gives; another order of batches, another
/// range of steps, or a step's opening off by one are rejected.
#[test]
fn a_segment_of_steps_chains_and_rejects_what_it_does_not_prove() {
    use zkstep_circuits::layout::CommitScheme;
    let adam = TWO_LAYER.replace("lr = 0.1", "kind = \"adam\"\nlr = 0.1");
    for (toml, scheme) in [
        (TWO_LAYER, CommitScheme::Chain),
        (&adam, CommitScheme::Chain),
        (TWO_LAYER, CommitScheme::Evaluation),
        (&adam, CommitScheme::Evaluation),
    ] {
        let s = segment_in(toml, 2, 7, 3, &|_, _, _| None, scheme);
        let zn = run_all(&s.layout, &s.witnesses, &s.z0).unwrap();
        let cb = s.c_batches();
        let lay = &s.layout;
        lay.check_final_state(&s.expected_final(&cb, 0, 3), &zn)
            .unwrap();
        // the batches in another order
        let swapped = [cb[1], cb[0], cb[2]];
        assert_eq!(
            lay.check_final_state(&s.expected_final(&swapped, 0, 3), &zn),
            Err(FinalStateError::Slot("segment's batches"))
        );
        // claimed for another range: steps 1..4 (or the first two only)
        assert!(lay
            .check_final_state(&s.expected_final(&cb, 1, 3), &zn)
            .is_err());
        assert!(lay
            .check_final_state(&s.expected_final(&cb[..2], 0, 2), &zn)
            .is_err());
        let per = lay.num_folds();
        let one = zkstep_core::Fr::from(1u64);
        // a closing fold that opens the next step with another c_after,
        // c_batch, ρ or γ: the next step cannot close
        let closes_after = format!(
            "closes_{}",
            lay.slots.registry.slots()[lay.slots.commit.h_after].name
        );
        for (what, needle) in [
            (0, closes_after.as_str()),
            (1, "c_batch_opened"),
            (2, ""),
            (3, ""),
        ] {
            let mut ws = s.witnesses.clone();
            let n = &mut ws[per - 1].next;
            match what {
                0 => n.c_after += one,
                1 => n.c_batch += one,
                2 => n.rho += one,
                _ => n.gamma += one,
            }
            let err = run_all(lay, &ws, &s.z0).unwrap_err();
            assert!(err.0 >= per, "{what}: failed in fold {}", err.0);
            assert!(err.1.contains(needle), "{what}: {err:?}");
        }
        // a fold of step 2 in place of step 1's: the schedule or the constraints
        let mut ws = s.witnesses.clone();
        ws.swap(0, per);
        if let Ok(zn) = run_all(lay, &ws, &s.z0) {
            assert!(lay
                .check_final_state(&s.expected_final(&cb, 0, 3), &zn)
                .is_err());
        }
        if lay.slots.adam.is_some() {
            // another step's Adam constants carried into step 2: k₁ and
            // c₂ each alone (either chain wrong by itself is caught)
            for which in ["k1", "c2"] {
                let mut ws = s.witnesses.clone();
                let a = &mut ws[per - 1].next.adam;
                if which == "k1" {
                    a.0 += one;
                } else {
                    a.1 += one;
                }
                match run_all(lay, &ws, &s.z0) {
                    Ok(zn) => assert_eq!(
                        lay.check_final_state(&s.expected_final(&cb, 0, 3), &zn),
                        Err(FinalStateError::Slot("segment's Adam constants")),
                        "{which}"
                    ),
                    Err((f, _)) => assert!(f >= per, "{which}: failed in fold {f}"),
                }
            }
        }
    }
}

/// A segment whose second step was taken under another c₂ (Adam's 1/√bc₂,
/// 1% larger), every element of it recomputed under that c₂ and the step
/// after it chained from the result: every fold holds, so only the
/// segment's chain of Adam constants tells it from the steps its statement
/// names, and that chain rejects it (issue 30, finding 12).
#[test]
fn a_step_under_another_c2_is_caught_by_the_segment_chain_alone() {
    use zkstep_core::optim::adam::{adam_element, AdamState};
    use zkstep_core::optim::UpdateTrace;
    use zkstep_core::poseidon::fr_from_i128;
    let toml = TWO_LAYER.replace("lr = 0.1", "kind = \"adam\"\nlr = 0.1");
    let spec = zkstep_core::ModelSpec::from_toml_str(&toml).unwrap();
    let h = spec.optimizer.adam().unwrap();
    let edit = |s: usize, before: &zkstep_core::Checkpoint, tr: &mut zkstep_core::StepTrace| {
        if s != 1 {
            return None;
        }
        let mut k = None;
        for (l, bw) in tr.backward.iter_mut().enumerate() {
            let UpdateTrace::Adam(a) = &mut bw.update else {
                panic!("an Adam spec");
            };
            a.step.c2 += a.step.c2 / 100;
            k = Some(a.step);
            let lp = &before.layers[l];
            let (m, v) = (&lp.state[0], &lp.state[1]);
            let new = &mut tr.after.layers[l];
            let el = |theta: i64, m: i64, v: i64, g: i128| {
                let st = AdamState {
                    theta: theta as i128,
                    m: m as i128,
                    v: v as i128,
                };
                adam_element(&h, &a.step, spec.rounding, st, g).unwrap()
            };
            for e in 0..a.w.len() {
                let t = el(lp.w.data[e], m.w.data[e], v.w.data[e], a.dw[e] as i128);
                (new.w.data[e], new.state[0].w.data[e], new.state[1].w.data[e]) =
                    (t.theta as i64, t.m as i64, t.v as i64);
                a.w[e] = t;
            }
            for j in 0..a.b.len() {
                let t = el(lp.b[j], m.b[j], v.b[j], bw.db_acc[j]);
                (new.b[j], new.state[0].b[j], new.state[1].b[j]) =
                    (t.theta as i64, t.m as i64, t.v as i64);
                a.b[j] = t;
            }
        }
        k.map(|k| (fr_from_i128(k.k1), fr_from_i128(k.c2)))
    };
    let honest = segment(&toml, 2, 7, 3);
    let forged = segment_with(&toml, 2, 7, 3, &edit);
    assert_ne!(forged.openings[1].adam.1, honest.openings[1].adam.1);
    assert_eq!(forged.openings[1].adam.0, honest.openings[1].adam.0, "k₁ unchanged");
    assert_ne!(
        forged.end.layers[0].w.data, honest.end.layers[0].w.data,
        "the other c₂ moved the weights"
    );
    let zn = run_all(&forged.layout, &forged.witnesses, &forged.z0)
        .expect("every fold of the forged segment holds");
    let cb = forged.c_batches();
    assert_eq!(
        forged
            .layout
            .check_final_state(&forged.expected_final(&cb, 0, 3), &zn),
        Err(FinalStateError::Slot("segment's Adam constants"))
    );
}

#[test]
fn lookup_multiplicities_must_count_the_steps_queries() {
    for toml in [
        TWO_LAYER.to_string(),
        TWO_LAYER.replace("lr = 0.1", "kind = \"adam\"\nlr = 0.1"),
    ] {
        let c = case(&toml, Some(2), 11);
        let last = c.witnesses.len() - 1;
        let zn = run_all(&c.layout, &c.witnesses, &c.z0).unwrap();
        c.layout.check_final(&c.z0, &zn).unwrap();
        // the first table value is looked up (zeros are everywhere)
        assert!(c.witnesses[0].mult[0] > 0);
        // a multiplicity off by one, in a fold before the last or in the last:
        // the step's two sums differ where it closes
        for f in [0, last] {
            let mut ws = c.witnesses.clone();
            ws[f].mult[0] += 1;
            let err = run_all(&c.layout, &ws, &c.z0).unwrap_err();
            assert_eq!(err.0, last);
            assert!(err.1.contains("lookup/balanced"), "{err:?}");
        }
        // a count moved to another table value
        let mut ws = c.witnesses.clone();
        ws[0].mult[0] -= 1;
        ws[0].mult[1] += 1;
        let err = run_all(&c.layout, &ws, &c.z0).unwrap_err();
        assert!(err.1.contains("lookup/balanced"), "{err:?}");
        // a value changed within its range in one fold: its limbs are other
        // table values than the step's multiplicities count
        let mut ws = c.witnesses.clone();
        ws[0].x.iter_mut().for_each(|x| *x += 1);
        assert!(run_all(&c.layout, &ws, &c.z0).is_err());
    }
}
