//! zkstep-circuits: the step circuit of one Nova fold and the IVC state
//! layout that links folds and binds `spec_digest`, `c_before`, `c_after` and
//! `c_batch` (see docs/SOUNDNESS.md for the argument, family by family).
//!
//! - [`layout`]: how a spec is cut into folds (tiles of output units, padded to
//!   one shape), the schedule, the state vector's indices, z₀ and what the
//!   verifier expects of z_n;
//! - [`witness`]: every fold's witness, read from the reference executor's
//!   trace, and the challenge ρ;
//! - [`circuit`]: the R1CS of one fold ([`circuit::TileCircuit`]);
//! - [`engine`]: the Nova engines and SNARK types, named once for prover and
//!   verifier.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod engine;
pub mod error;
pub mod files;
pub mod fold;
pub mod layout;
pub mod merge;
pub mod params;
pub mod sizing;
pub mod slots;
pub mod state;
pub mod theta;
pub mod transcript;
pub mod update;
pub mod verify;
pub mod witness;

pub use error::CircuitError;
pub use fold::TileCircuit;
pub use layout::{Layout, TileDesc};
pub use sizing::DEFAULT_FOLD_BUDGET;
