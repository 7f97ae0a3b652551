//! zkstep-prover: the proving side as a library (the `zkstep` CLI is the
//! `zkstep-cli` crate).
//!
//! - [`ivc`]: keygen, proving (witnesses from the reference trace, folding
//!   with zkstep-fold, compression) and the key/proof files;
//! - [`merge`]: π_merge's keys, prover and verifier (the merge circuit folded);
//! - [`devkey`]: development commitment keys (a fresh τ's powers by a fixed-base table);
//! - `masks`: the compression's masks drawn while folding, on idle CPU;
//! - [`error`]: the error type, [`ProverError`].
//!
//! Every BN254 MSM of folding and compression goes through zkstep-msm (via the `blitzar`
//! shim); the caller chooses its backend (`zkstep_msm::set_backend`).
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod devkey;
pub mod error;
pub mod ivc;
mod masks;
pub mod merge;

pub use error::{ProverError, Result};
