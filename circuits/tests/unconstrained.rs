//! No unconstrained witness: in a fold of a small spec, every private
//! variable occurs in some constraint, and changing it alone breaks one.
#![allow(
    clippy::unwrap_used,
    clippy::type_complexity,
    clippy::needless_range_loop
)]
use crate::common::*;
use nova_snark::frontend::num::AllocatedNum;
use zkstep_circuits::TileCircuit;
use zkstep_core::Fr;
use zkstep_gadgets::testing::Rec;

const WIDE_ROWS: &str = "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 300\noutputs = 2\nactivation = \"relu\"\n[[layers]]\ninputs = 2\noutputs = 1\n";

#[test]
fn every_private_variable_is_constrained() {
    for toml in [
        TWO_LAYER.to_string(),
        TWO_LAYER.replace("lr = 0.1", "kind = \"momentum\"\nlr = 0.1\nmu = 0.9"),
        TWO_LAYER.replace("lr = 0.1", "kind = \"adam\"\nlr = 0.1\nweight_decay = 0.01"),
        TWO_LAYER.replace("lr = 0.1", "kind = \"adamw\"\nlr = 0.1"),
        TWO_LAYER.replace("[optimizer]", "loss = \"cross_entropy\"\n[optimizer]"),
        // whole rows of 300 inputs padded to 345: 45 slots a row are constants
        WIDE_ROWS.to_string(),
        WIDE_ROWS.replace("lr = 0.1", "kind = \"adam\"\nlr = 0.1"),
    ] {
        let chained = case(&toml, Some(2), 7);
        // and θ bound by its evaluations at ζ (the default keys' scheme), where
        // the record differs: SGD, Adam's state rows, padded rows
        let evaluated = [TWO_LAYER, WIDE_ROWS].contains(&toml.as_str()) || toml.contains("adamw");
        let mut cases = vec![chained];
        if evaluated {
            let b = &cases[0];
            let lay = zkstep_circuits::Layout::clone(&b.layout)
                .with_commit_scheme(zkstep_circuits::layout::CommitScheme::Evaluation);
            cases.push(case_in(b.spec.clone(), b.before.clone(), b.batch.clone(), lay));
        }
        for c in cases {
            // a middle fold (layer 1, which has a layer above and below) and the last fold (which settles the claims about X)
            for f in [
                c.witnesses.iter().position(|w| w.desc.layer == 1).unwrap(),
                c.witnesses.len() - 1,
            ] {
                let mut z = c.z0.clone();
                for w in &c.witnesses[..f] {
                    z = run_fold(&c.layout, w, &z).unwrap();
                }
                let mut cs = Rec::default();
                let zin: Vec<AllocatedNum<Fr>> = z
                    .iter()
                    .map(|v| AllocatedNum::alloc(&mut cs, || Ok(*v)).unwrap())
                    .collect();
                let drawn = vec![
                    AllocatedNum::alloc(&mut cs, || Ok(test_alpha())).unwrap(),
                    AllocatedNum::alloc(&mut cs, || Ok(test_rho())).unwrap(),
                    AllocatedNum::alloc(&mut cs, || Ok(test_gamma())).unwrap(),
                ];
                let first_private = cs.aux.len();
                let circuit = TileCircuit::fold(c.layout.clone(), c.witnesses[f].clone());
                // both phases: W₁ (the fold, its limbs and multiplicities), W₂ and W₃ (what depends on the challenges)
                circuit.synthesize(&mut cs, &zin, &drawn).unwrap();
                assert!(cs.all_hold());
                let free = cs.free_variables(first_private);
                assert!(free.is_empty(), "fold {f}: {} of {} private variables can change alone without breaking a constraint (first: {:?})", free.len(), cs.aux.len() - first_private, &free[..free.len().min(10)]);
            }
        }
    }
}
