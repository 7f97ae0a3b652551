//! No unconstrained witness: in a fold of a small spec, every private
//! variable occurs in some constraint, and changing it alone breaks one.
#![allow(
    clippy::unwrap_used,
    clippy::type_complexity,
    clippy::needless_range_loop
)]
mod common;
use common::*;
use ff::Field;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use nova_snark::traits::circuit::StepCircuit;
use std::sync::Arc;
use zkstep_circuits::TileCircuit;
use zkstep_core::Fr;

/// A constraint system that records everything.
#[derive(Default)]
struct Rec {
    inputs: Vec<Fr>,
    aux: Vec<Fr>,
    cons: Vec<(
        LinearCombination<Fr>,
        LinearCombination<Fr>,
        LinearCombination<Fr>,
    )>,
}

impl ConstraintSystem<Fr> for Rec {
    type Root = Self;
    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }
    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        self.cons.push((
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        ));
    }
    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, _: N) {}
    fn pop_namespace(&mut self) {}
    fn get_root(&mut self) -> &mut Self {
        self
    }
}

impl Rec {
    fn holds(&self, k: usize) -> bool {
        let (a, b, c) = &self.cons[k];
        a.eval(&self.inputs, &self.aux) * b.eval(&self.inputs, &self.aux)
            == c.eval(&self.inputs, &self.aux)
    }
}

#[test]
fn every_private_variable_is_constrained() {
    for toml in [
        TWO_LAYER.to_string(),
        TWO_LAYER.replace("lr = 0.1", "kind = \"momentum\"\nlr = 0.1\nmu = 0.9"),
    ] {
        let c = case(&toml, Some(2), 7);
        // a middle fold (layer 1, which has a layer above and below) and the last fold (which settles the claims about X)
        for f in [
            c.witnesses.iter().position(|w| w.desc.layer == 1).unwrap(),
            c.witnesses.len() - 1,
        ] {
            let mut z = c.z0.clone();
            for w in &c.witnesses[..f] {
                z = run_fold(&c.layout, w, &z).unwrap();
            }
            let mut cs = Rec {
                inputs: vec![Fr::ONE],
                ..Default::default()
            };
            let zin: Vec<AllocatedNum<Fr>> = z
                .iter()
                .map(|v| AllocatedNum::alloc(&mut cs, || Ok(*v)).unwrap())
                .collect();
            let first_private = cs.aux.len();
            let circuit = TileCircuit {
                layout: c.layout.clone(),
                witness: Some(Arc::new(c.witnesses[f].clone())),
            };
            circuit.synthesize(&mut cs, &zin).unwrap();
            assert!((0..cs.cons.len()).all(|k| cs.holds(k)));
            let mut uses: Vec<Vec<usize>> = vec![vec![]; cs.aux.len()];
            for (k, (a, b, cc)) in cs.cons.iter().enumerate() {
                for lc in [a, b, cc] {
                    for (v, coeff) in lc.iter() {
                        if let Index::Aux(i) = v.get_unchecked() {
                            if *coeff != Fr::ZERO && uses[i].last() != Some(&k) {
                                uses[i].push(k);
                            }
                        }
                    }
                }
            }
            let mut free = vec![];
            for v in first_private..cs.aux.len() {
                let old = cs.aux[v];
                cs.aux[v] = old + Fr::ONE;
                if !uses[v].iter().any(|&k| !cs.holds(k)) {
                    free.push(v);
                }
                cs.aux[v] = old;
            }
            assert!(free.is_empty(), "fold {f}: {} of {} private variables can change alone without breaking a constraint (first: {:?})", free.len(), cs.aux.len() - first_private, &free[..free.len().min(10)]);
        }
    }
}
