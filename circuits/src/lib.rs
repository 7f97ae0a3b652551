//! zkstep-circuits: the step circuit of one Nova fold (forward tile or
//! backward/update tile of one layer) and the IVC state layout that links
//! folds and binds `spec_digest`, `c_before`, `c_after` and `c_batch`.
//!
//! The circuits arrive with the proving-core issue; the crate exists now so
//! that the verifier can name the circuit type without depending on the prover.
