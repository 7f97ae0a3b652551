//! The subcommands, one module each; [`dispatch`] runs the parsed one.
//! Subcommand modules share helpers (`util`, `proving`, `run`, `bench`)
//! but never use each other.

use crate::args::Command;
use crate::error::Result;

pub mod bench;
pub mod bench_point;
pub mod commit;
pub mod demo;
pub mod example_spec;
pub mod import;
pub mod init;
pub mod inspect;
pub mod keygen;
pub mod merge;
pub mod prove;
pub mod prove_merge;
pub mod prove_run;
pub mod train;
pub mod verify_round;
pub mod verify_run;

/// Run one parsed subcommand.
pub fn dispatch(command: Command) -> Result<()> {
    match command {
        Command::Init(a) => init::run(a),
        Command::Import(a) => import::run(a),
        Command::Train(a) => train::run(a),
        Command::Commit(a) => commit::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Keygen(a) => keygen::run(a),
        Command::Prove(a) => prove::run(a),
        Command::ProveRun(a) => prove_run::run(a),
        Command::ProveSegment(a) => prove_run::run_segment(a),
        Command::VerifyRun(a) => verify_run::run(a),
        Command::Merge(a) => merge::run(a),
        Command::ProveMerge(a) => prove_merge::run(a),
        Command::VerifyRound(a) => verify_round::run(a),
        Command::ExampleSpec => example_spec::run(),
        Command::Bench(a) => bench::run(a),
        Command::BenchPoint(a) => bench_point::run(a),
        Command::Demo(a) => demo::run(a),
    }
}
