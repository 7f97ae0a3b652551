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

/// A constraint system that checks each constraint as it is enforced and
/// keeps the first one that fails, named as nova-snark's
/// `TestConstraintSystem` names it (its namespaces and annotation joined by
/// '/'): the answer of that system's `which_is_unsatisfied`, without storing
/// every constraint and every name, which was most of a whole fold's check
/// in the circuits' tests.
#[derive(Default)]
pub struct Checker {
    /// The assignment so far (its constraint list stays empty).
    values: Rec,
    namespace: Vec<String>,
    constraints: usize,
    unsatisfied: Option<String>,
}

impl Checker {
    /// The path of the first constraint enforced that does not hold.
    pub fn which_is_unsatisfied(&self) -> Option<&str> {
        self.unsatisfied.as_deref()
    }

    /// How many constraints were enforced.
    pub fn num_constraints(&self) -> usize {
        self.constraints
    }
}

impl ConstraintSystem<Fr> for Checker {
    type Root = Self;
    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.values.alloc(annotation, f)
    }
    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.values.alloc_input(annotation, f)
    }
    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        self.constraints += 1;
        if self.unsatisfied.is_some() {
            return;
        }
        let (x, w) = (&self.values.inputs, &self.values.aux);
        let [a, b, c] = [
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        ]
        .map(|lc| lc.eval(x, w));
        if a * b != c {
            let mut path = self.namespace.join("/");
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(&annotation().into());
            self.unsatisfied = Some(path);
        }
    }
    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, name: N) {
        self.namespace.push(name().into());
    }
    fn pop_namespace(&mut self) {
        self.namespace.pop();
    }
    fn get_root(&mut self) -> &mut Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::frontend::num::AllocatedNum;
    use nova_snark::frontend::test_cs::TestConstraintSystem;

    /// x·y = z in nested namespaces, with z as given.
    fn product<CS: ConstraintSystem<Fr>>(cs: &mut CS, name: &str, x: u64, y: u64, z: u64) {
        let mut cs = cs.namespace(|| name.to_string());
        let mut inner = cs.namespace(|| "inner");
        let [a, b, c] = [("x", x), ("y", y), ("z", z)]
            .map(|(n, v)| AllocatedNum::alloc(inner.namespace(|| n), || Ok(Fr::from(v))).unwrap());
        inner.enforce(
            || "x times y",
            |lc| lc + a.get_variable(),
            |lc| lc + b.get_variable(),
            |lc| lc + c.get_variable(),
        );
    }

    /// The checker names the same first failing constraint as nova-snark's
    /// test system, counts alike, and finds none where none fails.
    #[test]
    fn the_checker_answers_as_nova_snarks_test_system() {
        for products in [
            vec![(2, 3, 6), (4, 5, 20)],
            vec![(2, 3, 6), (4, 5, 21), (1, 1, 2)],
            vec![(2, 3, 7), (4, 5, 21)],
        ] {
            let (mut t, mut k) = (TestConstraintSystem::<Fr>::new(), Checker::default());
            let _ = AllocatedNum::alloc_input(k.namespace(|| "x"), || Ok(Fr::from(9u64)));
            let _ = AllocatedNum::alloc_input(t.namespace(|| "x"), || Ok(Fr::from(9u64)));
            for (i, &(x, y, z)) in products.iter().enumerate() {
                product(&mut t, &format!("p{i}"), x, y, z);
                product(&mut k, &format!("p{i}"), x, y, z);
            }
            assert_eq!(
                k.which_is_unsatisfied(),
                t.which_is_unsatisfied(),
                "{products:?}"
            );
            assert_eq!(k.num_constraints(), t.num_constraints());
        }
        let mut k = Checker::default();
        product(&mut k, "p", 4, 5, 21);
        assert_eq!(k.which_is_unsatisfied(), Some("p/inner/x times y"));
    }
}
