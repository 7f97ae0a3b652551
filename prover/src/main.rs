//! The `zkstep` command-line tool: a thin shell over [`zkstep_prover::cli`].

fn main() {
    std::process::exit(zkstep_prover::cli::main());
}
