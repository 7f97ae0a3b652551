//! The integration tests of zkstep-cli as one test binary (each file under
//! tests/ a module): one link of the proving stack instead of one a
//! file, which `cargo test --workspace` paid for every file on CI's two
//! cores. Run one file's tests with `cargo test -p zkstep-cli --test suite FILE::`.

mod common;
mod bench_cli;
mod cli;
mod cluster;
mod prove_cli;
mod sweep;
