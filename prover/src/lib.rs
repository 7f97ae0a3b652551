//! zkstep-prover: everything on the proving side and the `zkstep` CLI.
//!
//! Today: the CLI's data commands ([`cli`]: init, import, train, commit,
//! inspect, demo) and the run manifest ([`run`]). Keygen, witness generation,
//! the Nova IVC driver, compression and the MSM backends join with the
//! proving-core issue.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod cli;
pub mod commands;
pub mod error;
pub mod ivc;
pub mod out;
pub mod run;

pub use error::{ProverError, Result};
