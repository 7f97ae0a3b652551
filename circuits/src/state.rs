//! The IVC state vector z, as a registry of named slots.
//!
//! Each fold component registers the slots it owns ([`crate::layout`] calls
//! the registrations in a fixed order, which fixes the indices); a slot says
//! how it starts at a step's first fold and what a step's last fold
//! requires of it before the next step starts (a proof folds one step, or a
//! segment of k steps, one after another). `Layout::step_start`, the
//! circuit's step boundary (`fold::settle`) and `Layout::check_final` are all
//! derived from this one registry, so a new slot cannot be forgotten by one
//! of them.

use std::ops::Range;

/// How a step's circuit binds θ_t and θ_{t+1} to its statement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CommitScheme {
    /// Poseidon chains computing Commit(θ_t) and Commit(θ_{t+1}) (what
    /// proofs use today).
    #[default]
    Chain,
    /// Running evaluations of θ_t's and θ_{t+1}'s coefficient vectors
    /// (`zkstep_core::commit::param_coefficients`) at a point ζ drawn after
    /// every fold's first phase and the checkpoints' points, in the second
    /// phase: the states hold the evaluations, which a KZG opening of the
    /// checkpoints' points links to the statement's commitments
    /// (`crate::theta`; `zkstep keygen --commit-scheme kzg`,
    /// docs/design/kzg-checkpoints.md).
    Evaluation,
}

impl CommitScheme {
    /// Its name on the command line (`chain`, `kzg`).
    pub fn name(self) -> &'static str {
        match self {
            CommitScheme::Chain => "chain",
            CommitScheme::Evaluation => "kzg",
        }
    }

    /// The scheme of a name ([`CommitScheme::name`]).
    pub fn parse(s: &str) -> Option<CommitScheme> {
        match s {
            "chain" => Some(CommitScheme::Chain),
            "kzg" => Some(CommitScheme::Evaluation),
            _ => None,
        }
    }
}

/// How a slot starts at a step's first fold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// A value of the public statement or a challenge (copied by every fold).
    Statement(StatementField),
    /// The first link of a hash chain with this domain tag.
    Chain(u64),
    /// The first link of `Commit(θ_t)` (false) or `Commit(θ_{t+1})` (true):
    /// the step is inside the parameter commitments
    /// ([`CommitScheme::Chain`]).
    ParamsChain(bool),
    /// Zero.
    Zero,
    /// One (a running power x^0).
    One,
    /// The first link of a chain that runs over a whole segment (not
    /// restarted between steps) with this domain tag.
    Segment(u64),
}

/// Public values a constant slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatementField {
    /// `spec_digest`.
    Spec,
    /// `c_before`.
    CBefore,
    /// `c_after`.
    CAfter,
    /// `c_batch`.
    CBatch,
    /// The challenge ρ (every fold requires it to be the folding layer's
    /// run challenge).
    Rho,
    /// The step index.
    Step,
    /// The second challenge γ.
    Gamma,
    /// Adam's step size k₁ = lr/bc₁ of update t = step + 1 (derived from the step).
    AdamK1,
    /// Adam's c₂ = 1/√bc₂ of update t = step + 1 (derived from the step).
    AdamC2,
    /// The evaluation point ζ of the checkpoint polynomials
    /// ([`CommitScheme::Evaluation`]): one value for a whole
    /// proof, so that one step's θ_{t+1} and the next step's θ_t are
    /// compared at the same point.
    Zeta,
}

/// What a step's last fold requires of a slot (checked in the circuit,
/// before the slot takes its value for the next step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Final {
    /// Equal to its z₀ value (a constant of the statement); the name is for errors.
    Unchanged(&'static str),
    /// The schedule chain of the spec's tile descriptors.
    Schedule,
    /// Equal to the statement's `c_before` (the running Commit(θ_t), or
    /// θ_t's running evaluation at ζ).
    OpensCBefore,
    /// Equal to the statement's `c_after` (the running Commit(θ_{t+1}), or
    /// θ_{t+1}'s running evaluation at ζ).
    OpensCAfter,
    /// Nothing: the slot carried private values, which the next step
    /// restarts (z_n is public, so none survives the last step).
    Cleared,
    /// A lookup sum: the closing fold's second phase requires the step's two
    /// sums equal, then restarts both at zero (the first phase passes it
    /// through untouched: it depends on the challenge).
    Lookup,
    /// A segment chain that absorbs the step's `c_batch`.
    AbsorbsBatch,
    /// A segment chain that absorbs the step's Adam constants (k₁, c₂).
    AbsorbsAdam,
}

/// One registered slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Its name (docs and error messages).
    pub name: &'static str,
    /// How it starts.
    pub init: Init,
    /// What the verifier requires of it at the end.
    pub last: Final,
}

/// The registry: slots in index order.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    slots: Vec<Slot>,
}

impl Registry {
    /// Register one slot; returns its index.
    pub fn add(&mut self, name: &'static str, init: Init, last: Final) -> usize {
        self.slots.push(Slot { name, init, last });
        self.slots.len() - 1
    }

    /// Register `n` private slots starting at zero; returns their indices.
    pub fn add_private(&mut self, name: &'static str, n: usize) -> Range<usize> {
        let start = self.slots.len();
        for _ in 0..n {
            self.add(name, Init::Zero, Final::Cleared);
        }
        start..self.slots.len()
    }

    /// All slots, by index.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// Length of z.
    pub fn arity(&self) -> usize {
        self.slots.len()
    }

    /// Indices of the slots the last fold must clear.
    pub fn private(&self) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].last == Final::Cleared)
            .collect()
    }
}

/// A constant slot: copied by every fold, unchanged at the end.
pub fn constant(reg: &mut Registry, name: &'static str, field: StatementField) -> usize {
    reg.add(name, Init::Statement(field), Final::Unchanged(name))
}

/// A private slot that starts at zero and is cleared by the last fold.
pub fn private(reg: &mut Registry, name: &'static str) -> usize {
    reg.add(name, Init::Zero, Final::Cleared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_numbers_slots_in_order_and_lists_the_private_ones() {
        let mut r = Registry::default();
        let a = constant(&mut r, "spec", StatementField::Spec);
        let b = private(&mut r, "claim");
        let c = r.add_private("rem", 3);
        assert_eq!((a, b, c), (0, 1, 2..5));
        assert_eq!(r.arity(), 5);
        assert_eq!(r.private(), vec![1, 2, 3, 4]);
    }
}
