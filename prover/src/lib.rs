//! zkstep-prover: everything on the proving side and the `zkstep` CLI.
//!
//! - [`cli`] and [`commands`]: the `zkstep` subcommands;
//! - [`ivc`]: keygen, proving (witnesses from the reference trace, Nova
//!   folding, compression) and the key/proof files;
//! - [`bench`]: `zkstep bench`, the per-width cost report;
//! - [`run`]: training runs and their manifest.
//!
//! Every BN254 MSM Nova does goes through zkstep-msm (via the `blitzar`
//! shim), whose backend `--msm` chooses.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod bench;
pub mod cli;
pub mod commands;
pub mod error;
pub mod ivc;
pub mod out;
pub mod run;

pub use error::{ProverError, Result};
