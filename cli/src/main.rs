//! The `zkstep` binary: parse the command line, keep stdout clean, run the
//! subcommand, report an error as `error: …` with exit status 1 (a claim
//! checked and false) or 2 (anything else; `CliError::exit_code`).

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = zkstep_cli::args::Cli::parse();
    zkstep_cli::out::init();
    // silence fd 1 for the run (see `out`); our own output goes around it
    let _quiet = gag::Gag::stdout().ok();
    match zkstep_cli::cmd::dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
