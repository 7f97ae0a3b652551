//! zkstep-examples: end-to-end examples (`cargo run -p zkstep-examples --example digits`).
