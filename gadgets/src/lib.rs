//! zkstep-gadgets: in-circuit primitives on nova-snark's R1CS frontend.
//!
//! What belongs here: signed fixed-point allocation, n-bit range checks, the
//! rescale gadget (two-sided remainder check plus quotient range check), the
//! sign-pinned ReLU selector, dot products, and Poseidon absorption of packed
//! values. Each gadget sits beside a test against its native twin in
//! `zkstep-core` (see `zkstep_core::fixed` and `zkstep_core::commit`).
//!
//! The gadgets arrive with the proving-core issue; this crate is the place
//! reserved for them so the dependency direction core → gadgets → circuits is
//! fixed from the start.
