//! `zkstep bench`: what proving one training step costs per layer width.
//!
//! - [`report`]: what a bench run records (points, machine, configuration);
//! - [`measure`]: running every width in a child process and measuring one
//!   width in this process (`zkstep bench-point`);
//! - [`render`]: the terminal table, CSV, SVG plot and Markdown section.

pub mod measure;
pub mod render;
pub mod report;

pub use report::{BenchConfig, BenchPoint, BenchReport, Machine};
