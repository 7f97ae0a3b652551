//! The folding layer's own circuits beside nova-snark's augmented circuit,
//! on a step circuit that passes its state through (so only the layer is
//! counted): constraints, variables and matrix non-zeros a fold, for some
//! state arities, and where the secondary's constraints go by namespace.
//! `cargo run --release -p zkstep-fold --features tools --example layer_size [ARITY…]`
//!
//! nova-snark keeps its shapes private; its parameters are read back
//! through their serde encoding into a struct of the same fields to count
//! the non-zeros of its primary shape.
#![allow(clippy::unwrap_used)]

use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::test_shape_cs::TestShapeCS;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use nova_snark::r1cs::R1CSShape;
use nova_snark::traits::snark::RelaxedR1CSSNARKTrait;
use nova_snark::traits::{Engine, ROConstants, ROConstantsCircuit};
use zkstep_fold::{params::shapes, ChallengeMode, OnePhase};

type E1 = nova_snark::provider::Bn256EngineKZG;
type E2 = nova_snark::provider::GrumpkinEngine;
type F = <E1 as Engine>::Scalar;
type S1 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E1, nova_snark::provider::mercury::EvaluationEngine<E1>>;
type S2 = nova_snark::spartan::snark::RelaxedR1CSSNARK<E2, zkstep_fold::ipa::FastIpa<E2>>;

#[derive(Clone, Debug)]
struct Pass(usize);

impl nova_snark::traits::circuit::StepCircuit<F> for Pass {
    fn arity(&self) -> usize {
        self.0
    }
    fn synthesize<CS: ConstraintSystem<F>>(
        &self,
        _: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
        Ok(z.to_vec())
    }
}

/// nova-snark's `PublicParams`, field for field, to read its shapes.
#[derive(serde::Deserialize)]
#[serde(bound = "")]
#[allow(dead_code)]
struct NovaParams {
    arity: usize,
    ro1: ROConstants<E1>,
    roc1: ROConstantsCircuit<E2>,
    ro2: ROConstants<E2>,
    roc2: ROConstantsCircuit<E1>,
    ck1: <<E1 as Engine>::CE as nova_snark::traits::commitment::CommitmentEngineTrait<E1>>::CommitmentKey,
    shape1: R1CSShape<E1>,
    ck2: <<E2 as Engine>::CE as nova_snark::traits::commitment::CommitmentEngineTrait<E2>>::CommitmentKey,
    shape2: R1CSShape<E2>,
}

fn nnz<E: Engine>(s: &R1CSShape<E>) -> usize {
    s.A().len() + s.B().len() + s.C().len()
}

fn main() {
    let arities: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let arities = if arities.is_empty() { vec![1, 47] } else { arities };
    println!("| arity | circuit | constraints | variables | non-zeros |");
    println!("| ---: | --- | ---: | ---: | ---: |");
    for k in arities {
        let c = OnePhase(Pass(k));
        let cfg = zkstep_fold::params::config(&c, ChallengeMode::None).unwrap();
        let (s1, _, s2) = shapes::<E1, E2, _>(&cfg, &c).unwrap();
        let pp = nova_snark::nova::PublicParams::<E1, E2, Pass>::setup(
            &Pass(k),
            &*S1::ck_floor(),
            &*S2::ck_floor(),
        )
        .unwrap();
        let bytes = postcard::to_allocvec(&pp).unwrap();
        let np: NovaParams = postcard::from_bytes(&bytes).unwrap();
        for (name, cons, vars, nz) in [
            ("zkstep-fold primary", s1.num_cons(), s1.num_vars(), nnz(&s1)),
            ("nova-snark primary", np.shape1.num_cons(), np.shape1.num_vars(), nnz(&np.shape1)),
            ("zkstep-fold secondary", s2.num_cons(), s2.num_vars(), nnz(&s2)),
            ("nova-snark secondary", np.shape2.num_cons(), np.shape2.num_vars(), nnz(&np.shape2)),
        ] {
            println!("| {k} | {name} | {cons} | {vars} | {nz} |");
        }
    }
    // the cost of drawing challenges: the same 3+3-value permutation circuit
    // under each mode (the step circuit's own part is the same in all three)
    println!();
    println!("| mode | primary constraints | primary non-zeros | W₂ (padded) | secondary constraints | secondary non-zeros |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (mode, per_fold) in [(ChallengeMode::PerFold, true), (ChallengeMode::PerRun, false)] {
        let c = zkstep_fold::testing::Permutation::<F>::new(vec![0; 3], vec![0; 3], per_fold);
        let cfg = zkstep_fold::params::config(&c, mode).unwrap();
        let (s1, l, s2) = shapes::<E1, E2, _>(&cfg, &c).unwrap();
        println!(
            "| {mode:?} | {} | {} | {} ({}) | {} | {} |",
            s1.num_cons(),
            nnz(&s1),
            l.second,
            l.second_padded(),
            s2.num_cons(),
            nnz(&s2)
        );
    }
    // where the secondary's constraints go (PerRun, the mode zkstep uses):
    // by the first two levels of their namespaces, indices folded
    println!();
    println!("| secondary (PerRun) namespace | constraints |");
    println!("| --- | ---: |");
    let c = zkstep_fold::testing::Permutation::<F>::new(vec![0; 3], vec![0; 3], false);
    let cfg = zkstep_fold::params::config(&c, ChallengeMode::PerRun).unwrap();
    let mut cs = TestShapeCS::<E2>::new();
    let ro = ROConstantsCircuit::<E1>::default();
    zkstep_fold::augmented::synthesize_secondary::<E1, _>(&mut cs, &cfg, &ro, None).unwrap();
    let mut groups: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, _, _, name) in &cs.constraints {
        let key: Vec<&str> = name
            .split('/')
            .take(2)
            .map(|p| p.trim_end_matches(|ch: char| ch.is_ascii_digit()))
            .collect();
        *groups.entry(key.join("/")).or_default() += 1;
    }
    for (k, n) in &groups {
        println!("| {k} | {n} |");
    }
    println!("| total | {} |", cs.constraints.len());
    // zkstep's training steps draw two rounds (PerRunTwice): three parts,
    // two chains; the secondary alone (its shape does not depend on the step)
    let cfg = zkstep_fold::augmented::Config { arity: 1, challenges: 2, late: 1, mode: ChallengeMode::PerRunTwice };
    let mut cs = TestShapeCS::<E2>::new();
    zkstep_fold::augmented::synthesize_secondary::<E1, _>(&mut cs, &cfg, &ro, None).unwrap();
    println!();
    println!("secondary (PerRunTwice): {} constraints, {} variables", cs.num_constraints(), cs.num_aux());
    let mut groups: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, _, _, name) in &cs.constraints {
        let key: Vec<&str> = name
            .split('/')
            .take(3)
            .map(|p| p.trim_end_matches(|ch: char| ch.is_ascii_digit()))
            .collect();
        *groups.entry(key.join("/")).or_default() += 1;
    }
    for (k, n) in &groups {
        println!("| {k} | {n} |");
    }

    // design step 2's CycleFold shape (zkstep_fold::cfivc), not yet the
    // product's: the primary's own part and the CycleFold circuit
    println!();
    println!("| CycleFold shape, arity 47 | primary constraints | primary variables | secondary constraints | secondary non-zeros |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (mode, k) in [(ChallengeMode::None, 0), (ChallengeMode::PerRun, 2), (ChallengeMode::PerRunTwice, 2)] {
        let old = zkstep_fold::params::layer_sizes::<E1, E2>(47, k, mode).unwrap();
        let cf = zkstep_fold::cfivc::layer_sizes::<E1, E2>(47, k, mode).unwrap();
        println!(
            "| {mode:?} (now: {} / {}) | {} | {} | {} | {} |",
            old.primary_constraints,
            old.secondary_constraints,
            cf.primary_constraints,
            cf.primary_variables,
            cf.secondary_constraints,
            cf.secondary_nonzeros
        );
    }
    println!();
    println!("| CycleFold primary (PerRunTwice, arity 47) namespace | constraints |");
    println!("| --- | ---: |");
    let step = zkstep_fold::params::Pass(47, 2, 1);
    let cfg = zkstep_fold::params::config::<F, _>(&step, ChallengeMode::PerRunTwice).unwrap();
    let mut cs = zkstep_fold::cs::ShapeRecorder::<F>::counting(3);
    let roc = ROConstantsCircuit::<E2>::default();
    zkstep_fold::cfprimary::synthesize::<E1, E2, _, _>(&mut cs, &cfg, &roc, &step, None).unwrap();
    for (k, n) in cs.by_namespace() {
        println!("| {k} | {n} |");
    }
    println!("| total | {} |", cs.num_constraints());

}
