//! What Nova adds to every fold: its augmented (verifier) circuit on the
//! primary curve and the secondary curve's circuit. Both depend only on the
//! IVC state's arity, so they are measured once on a step circuit that does
//! nothing, without synthesising ours — `zkstep bench --dry-run` adds them to
//! the step circuit's count to report constraints per fold and per weight as
//! the prover pays them.

use crate::error::{ProverError, Result};
use nova_snark::frontend::{num::AllocatedNum, ConstraintSystem, SynthesisError};
use nova_snark::traits::circuit::StepCircuit;
use zkstep_circuits::engine::{Compression, E1, E2};
use zkstep_core::Fr;

/// A step circuit of a given arity that returns its input.
#[derive(Clone, Debug)]
struct Passthrough {
    arity: usize,
}

impl StepCircuit<Fr> for Passthrough {
    fn arity(&self) -> usize {
        self.arity
    }

    fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        _cs: &mut CS,
        z: &[AllocatedNum<Fr>],
    ) -> std::result::Result<Vec<AllocatedNum<Fr>>, SynthesisError> {
        Ok(z.to_vec())
    }
}

/// Constraints Nova adds to a fold whose state has `arity` slots:
/// (primary augmented circuit, secondary circuit).
pub fn nova_overhead(arity: usize) -> Result<(usize, usize)> {
    let c = Passthrough { arity };
    let pp = nova_snark::nova::PublicParams::<E1, E2, Passthrough>::setup(
        &c,
        &*Compression::Spartan.ck_floor(),
        &*Compression::ck_floor_secondary(),
    )
    .map_err(|e| ProverError::Nova(format!("Nova's circuits for arity {arity}: {e}")))?;
    Ok(pp.num_constraints())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_grows_with_the_arity() {
        let (a, s) = nova_overhead(4).unwrap();
        let (b, t) = nova_overhead(40).unwrap();
        assert!(a > 1000 && b > a, "{a} {b}");
        assert!(s > 1000 && t == s, "{s} {t}");
    }
}
