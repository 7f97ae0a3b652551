//! `zkstep example-spec`: the built-in demo spec, as a starting point.

use crate::error::Result;
use zkstep_core::spec::DEMO_SPEC_TOML;

/// Run `zkstep example-spec`.
pub fn run() -> Result<()> {
    crate::out::line(DEMO_SPEC_TOML.trim_end());
    Ok(())
}
