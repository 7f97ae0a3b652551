//! zkstep-examples: end-to-end examples (`cargo run -p zkstep-examples --example digits`)
//! and the float64 twin of a training step they compare against.

pub mod float64;
