//! zkstep-core: the one definition of a training step.
//!
//! This crate holds everything that is *not* a proof system: the fixed-point
//! number type and its rounding rule ([`fixed`]), the model spec and its digest
//! ([`spec`]), parameters, batches and the reference executor that performs a
//! training step in exact integer arithmetic and records the full trace the
//! circuits need ([`model`], [`exec`]), the safetensors formats ([`format`]),
//! datasets ([`data`]) and the native commitments ([`commit`], whose Poseidon
//! comes from nova-snark and is isolated in [`poseidon`]).
//!
//! The circuits in `zkstep-circuits` must agree with [`exec`] bit for bit.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod checked;
pub mod bound;
pub mod commit;
pub mod data;
pub mod error;
pub mod exec;
pub mod fixed;
pub mod format;
pub mod input;
pub mod lookup;
pub mod merge;
pub mod model;
pub mod optim;
pub mod poseidon;
pub mod softmax;
pub mod spec;
pub mod tensor;
pub mod torch_state;

pub use error::{CoreError, Result};
pub use exec::{step, StepTrace};
pub use fixed::{SCALE, SCALE_I128};
pub use model::{Batch, Checkpoint, LayerParams, StateTensor};
pub use poseidon::Fr;
pub use spec::ModelSpec;
pub use tensor::Matrix;
