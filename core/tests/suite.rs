//! The integration tests of zkstep-core as one test binary (each file under
//! tests/ a module): one link of the proving stack instead of one a
//! file, which `cargo test --workspace` paid for every file on CI's two
//! cores. Run one file's tests with `cargo test -p zkstep-core --test suite FILE::`.

mod commitments;
mod digits;
mod executor;
mod inputs;
mod limits;
