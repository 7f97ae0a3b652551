//! zkstep-cli: the `zkstep` command-line tool (the binary is `src/main.rs`).
//!
//! - [`args`]: the command line as clap parses it;
//! - [`cmd`]: one module per subcommand and [`cmd::dispatch`];
//! - [`util`], [`proving`], [`run`], [`runcheck`], [`bench`]: what the subcommands share
//!   (helpers and progress bars; keys and proving; training runs,
//!   `run.json` and the run-directory lock; the checks of a whole run; measuring and rendering
//!   benchmarks);
//! - [`out`]: standard output kept clean of halo2curves' debug prints;
//! - [`error`]: [`CliError`], the one error type.
//!
//! Every failure prints `error: …` naming the file and the problem and exits
//! with status 1 when a claim was checked and is false, 2 for anything else
//! (bad input, usage, what the machine refuses; clap's usage errors exit
//! with 2 too; [`CliError::exit_code`]); nothing here panics on
//! user input, and nothing of the user's is overwritten without `--force`.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod args;
pub mod bench;
pub mod cmd;
pub mod error;
pub mod out;
pub mod proving;
pub mod run;
pub mod runcheck;
pub mod util;

pub use error::{CliError, Result};
