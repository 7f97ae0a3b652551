//! The integration tests of zkstep-circuits as one test binary (each file under
//! tests/ a module): one link of the proving stack instead of one a
//! file, which `cargo test --workspace` paid for every file on CI's two
//! cores. Run one file's tests with `cargo test -p zkstep-circuits --test suite FILE::`.

mod common;
mod differential;
mod merge;
mod snapshot;
mod soundness;
mod unconstrained;
