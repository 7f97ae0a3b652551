//! The integration tests of zkstep-prover as one test binary (each file under
//! tests/ a module): one link of the proving stack instead of one a
//! file, which `cargo test --workspace` paid for every file on CI's two
//! cores. Run one file's tests with `cargo test -p zkstep-prover --test suite FILE::`.

mod ceremony;
mod key_files;
mod merge;
