//! zkstep-verifier: proof and verifying-key formats and `verify`, with an
//! error type that separates malformed input from a rejected proof.
//!
//! It depends on `zkstep-core` and `zkstep-circuits` only, never on the prover
//! or on GPU code. Verification arrives with the proving-core issue.
