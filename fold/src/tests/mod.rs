//! The fold crate's whole-IVC tests, through its public API only (they were
//! an integration-test binary): as unit tests they share the lib test's
//! instantiations of the IVC, compression and nova-snark's SNARKs, which
//! cost CI's two cores ≈ 150 s of compiling a second time. Run one file's
//! tests with `cargo test -p zkstep-fold --lib tests::FILE::`.

pub(crate) mod common;
mod challenges;
mod differential;
