//! Test support: a constraint system that records every variable and
//! constraint, so a test can ask which private variables are free (can
//! change alone without breaking a constraint). Used by the gadgets' own
//! tests and by `circuits/tests/unconstrained.rs` for whole folds.

use crate::expr::Fr;
use ff::Field;
use nova_snark::frontend::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};

/// One recorded constraint `a · b = c`.
pub type Recorded = (
    LinearCombination<Fr>,
    LinearCombination<Fr>,
    LinearCombination<Fr>,
);

/// A constraint system that records everything (input 0 is the constant 1).
pub struct Rec {
    /// Public inputs.
    pub inputs: Vec<Fr>,
    /// Private variables.
    pub aux: Vec<Fr>,
    /// Constraints.
    pub cons: Vec<Recorded>,
}

impl Default for Rec {
    fn default() -> Self {
        Rec {
            inputs: vec![Fr::ONE],
            aux: vec![],
            cons: vec![],
        }
    }
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
    /// Whether constraint k holds.
    pub fn holds(&self, k: usize) -> bool {
        let (a, b, c) = &self.cons[k];
        a.eval(&self.inputs, &self.aux) * b.eval(&self.inputs, &self.aux)
            == c.eval(&self.inputs, &self.aux)
    }

    /// Whether every constraint holds.
    pub fn all_hold(&self) -> bool {
        (0..self.cons.len()).all(|k| self.holds(k))
    }

    /// The private variables from `first` on that can be bumped by one alone
    /// without breaking any constraint they occur in (with a non-zero
    /// coefficient): each is a witness the constraints do not pin.
    pub fn free_variables(&mut self, first: usize) -> Vec<usize> {
        let mut uses: Vec<Vec<usize>> = vec![vec![]; self.aux.len()];
        for (k, (a, b, c)) in self.cons.iter().enumerate() {
            for lc in [a, b, c] {
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
        for (v, used_in) in uses.iter().enumerate().skip(first) {
            let old = self.aux[v];
            self.aux[v] = old + Fr::ONE;
            if !used_in.iter().any(|&k| !self.holds(k)) {
                free.push(v);
            }
            self.aux[v] = old;
        }
        free
    }
}
