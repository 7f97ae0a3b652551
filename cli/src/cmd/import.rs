//! `zkstep import`: a float checkpoint (e.g. a PyTorch state_dict) quantised
//! into a zkstep checkpoint, with the rounding error reported.

use crate::args::{ImportArgs, OutFile};
use crate::error::Result;
use crate::util::{print_json, refuse_existing};
use serde_json::json;
use zkstep_core::commit::commit_params;
use zkstep_core::format;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::ModelSpec;

/// Run `zkstep import`.
pub fn run(a: ImportArgs) -> Result<()> {
    let OutFile { out, force, json } = a.out;
    let s = ModelSpec::from_file(&a.spec)?;
    refuse_existing(&out, force)?;
    let (mut ck, mut rep) = format::import_checkpoint(&a.input, &s)?;
    if let Some(st) = &a.optimizer_state {
        zkstep_core::torch_state::import_optimizer_state(st, &s, &mut ck, &mut rep)?;
    }
    // without --force, a file another process wrote meanwhile is never replaced
    format::write_checkpoint_as(&out, &s, &ck, force)?;
    let c = fr_to_hex(&commit_params(&s, &ck));
    if json {
        print_json(&json!({"file": crate::util::path_json(&out), "quantisation": rep, "commitment": c, "step": ck.step}));
    } else {
        crate::outln!(
            "quantised {} values at scale 10^9{}: max |error| {:.3e}, mean |error| {:.3e}\nwrote {} (step {})\ncommitment {c}",
            rep.count,
            if a.optimizer_state.is_some() && s.optimizer.adam().is_some() {
                " (Adam's second moments v at 10^18)"
            } else {
                ""
            },
            rep.max_abs_err,
            rep.mean_abs_err,
            out.display(),
            ck.step
        );
    }
    Ok(())
}
