//! `zkstep merge`: a federated round's global model from its nodes'
//! checkpoints and public reputations, models too far from the previous
//! global model given weight zero (`zkstep_core::merge`, docs/SEMANTICS.md §7).

use crate::args::{MergeArgs, OutFile};
use crate::error::Result;
use crate::util::{merge_round, path_json, print_json, read_round, refuse_existing, require_memory};
use serde_json::json;
use zkstep_core::commit::commit_params;
use zkstep_core::format;
use zkstep_core::merge::Round;
use zkstep_core::poseidon::fr_to_hex;
use zkstep_core::ModelSpec;

/// A squared distance at S² as a distance in model units.
fn distance(d_sq: u128) -> f64 {
    (d_sq as f64).sqrt() / zkstep_core::fixed::SCALE_I128 as f64
}

/// Run `zkstep merge`.
pub fn run(a: MergeArgs) -> Result<()> {
    let OutFile { out, force, json } = a.out;
    let s = ModelSpec::from_file(&a.spec)?;
    let round = Round::from_file(&a.round)?;
    refuse_existing(&out, force)?;
    // every node's checkpoint, the centre and the result, said up front
    let tensors = 1 + s.optimizer.state_names().len() as u64;
    let models = round.nodes.len() as u64 + 2;
    let need = (s.num_params() as u64)
        .saturating_mul(8 * tensors)
        .saturating_mul(models);
    require_memory(
        format!("a merge of {} checkpoints of {} parameters", round.nodes.len(), s.num_params()),
        need,
    )?;
    let (centre, ckpts) = read_round(&s, &round)?;
    let m = merge_round(&s, &a.round, &round, &centre, &ckpts)?;
    // without --force, a file another process wrote meanwhile is never replaced
    format::write_checkpoint_as(&out, &s, &m.global, force)?;
    let c = fr_to_hex(&commit_params(&s, &m.global));
    let tau = round.tau_fx as f64 / zkstep_core::fixed::SCALE_I128 as f64;
    let zeroed = (0..ckpts.len()).filter(|&i| m.zeroed(i)).count();
    if json {
        let rows: Vec<_> = round
            .nodes
            .iter()
            .enumerate()
            .map(|(i, (p, r))| {
                json!({"checkpoint": path_json(p), "reputation": r, "distance": distance(m.distance_sq[i]),
                       "weight": m.weight[i], "zeroed": m.zeroed(i)})
            })
            .collect();
        print_json(&json!({"file": path_json(&out), "step": m.global.step, "commitment": c, "tau": tau,
                           "previous": path_json(&round.previous), "nodes": rows}));
        return Ok(());
    }
    crate::outln!("node  reputation  distance  weight  checkpoint");
    for (i, (p, r)) in round.nodes.iter().enumerate() {
        let d = distance(m.distance_sq[i]);
        let why = if m.zeroed(i) {
            format!("  zeroed: {d:.6} from the previous global model, more than tau {tau}")
        } else {
            String::new()
        };
        crate::outln!(
            "{i:>4}  {r:>10}  {d:>8.4}  {:>6}  {}{why}",
            m.weight[i],
            p.display()
        );
    }
    crate::outln!(
        "wrote {} (step {}, {} nodes, {zeroed} zeroed)\ncommitment {c}",
        out.display(),
        m.global.step,
        ckpts.len()
    );
    Ok(())
}
