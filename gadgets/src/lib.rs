//! zkstep-gadgets: in-circuit primitives on nova-snark's R1CS frontend.
//!
//! Every gadget sits beside its native twin in `zkstep-core` and is tested
//! against it (satisfied on honest witnesses, equal outputs) and against
//! mutations of its witness (unsatisfied, naming the failing namespace):
//!
//! | gadget | native twin | module |
//! | --- | --- | --- |
//! | n-bit range check, signed range | `ValueRange::contains` | [`range`] |
//! | the same by lookup (LogUp: limbs, inverses, table slices) | `lookup::{queries, query_sum, table_sum}` | [`lookup`] |
//! | rescale (two-sided remainder + quotient check) | `fixed::rescale` | [`fixed`] |
//! | sign-pinned ReLU selector | the executor's `s = [Z ≥ 1]` | [`fixed`] |
//! | floor square root, division by a witness divisor, maximum, exp(x ≤ 0) | `fixed::{isqrt, div_rem}`, `Iterator::max`, `softmax::exp_neg` | [`arith`] |
//! | Poseidon h24, packing, hash chains | `poseidon::h24`, `commit::{pack_values, chain_absorb}` | [`hash`] |
//! | linear expressions, products, selects | field arithmetic | [`expr`] |
//!
//! Errors: gadgets return the frontend's `SynthesisError` (what Nova's
//! `StepCircuit::synthesize` must return); a witness that violates a
//! constraint is not an error at synthesis time but an unsatisfied system.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod arith;
pub mod expr;
pub mod fixed;
pub mod hash;
pub mod lookup;
pub mod range;
pub mod testing;

pub use expr::{Expr, Fr};
pub use nova_snark::frontend::{num::AllocatedNum, ConstraintSystem, SynthesisError};

/// Result of a gadget.
pub type Result<T> = std::result::Result<T, SynthesisError>;
