//! The federated merge: a round's global model from N checkpoints of one
//! spec and their public reputations (docs/SEMANTICS.md §7, the statement
//! π_merge will prove). The one definition: `zkstep merge` runs it, and the
//! merge circuit is to check exactly it.
//!
//! - **Outlier rule.** Node i's squared distance to the centre c (the
//!   previous round's global model), `D_i = Σ_k (w_i[k] − c[k])²` over the
//!   parameters W and b at scale S² (an exact integer), is compared with the
//!   public bound `τ²` (τ at scale S, squared): `D_i > τ²` gives node i
//!   weight 0 this round, otherwise its weight is its reputation R_i.
//! - **Average.** Every value of the checkpoint, parameters and optimizer
//!   state alike, is `div_round(Σ_i ρ_i·x_i, Σ_i ρ_i)` with the spec's
//!   rounding (ρ_i the weights): the remainder is two-sided, so the merged
//!   value is the weighted mean rounded once, within ½ unit (half-up) or 1
//!   unit (floor) of it. The state is merged too so that the global model is
//!   a whole checkpoint of the spec, the one every node's next round starts
//!   from (its commitment covers the state).
//! - **Bounds.** At most [`MAX_NODES`] nodes, each reputation at most
//!   [`MAX_REPUTATION`]: `Σ ρ_i·|x_i| < 2¹⁶·2³²·2⁶³ = 2¹¹¹`, exact in i128 and
//!   far below the field's modulus (2²⁵³), so the circuit's identity
//!   `2·Σρx + off = q·2Σρ + r` over the field is the integer one.

use crate::error::{CoreError, Result};
use crate::fixed::div_round;
use crate::model::Checkpoint;
use crate::spec::ModelSpec;

/// Most nodes in one merge.
pub const MAX_NODES: usize = 1 << 16;
/// Largest reputation.
pub const MAX_REPUTATION: u64 = 1 << 32;

/// One node's model and its public reputation.
#[derive(Clone, Copy, Debug)]
pub struct MergeNode<'a> {
    /// Its checkpoint (of the merge's spec).
    pub ckpt: &'a Checkpoint,
    /// Its reputation R_i (0 ≤ R_i ≤ [`MAX_REPUTATION`]).
    pub reputation: u64,
}

/// What a merge gives: the global model and why each node weighs what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    /// The global checkpoint (the nodes' step).
    pub global: Checkpoint,
    /// Each node's squared distance to the centre at S² (saturating at
    /// `u128::MAX`, which exceeds every τ²).
    pub distance_sq: Vec<u128>,
    /// Each node's weight: its reputation, or 0 where `D_i > τ²`.
    pub weight: Vec<u64>,
    /// τ² at S².
    pub tau_sq: u128,
}

impl Merged {
    /// Whether the outlier rule zeroed node i.
    pub fn zeroed(&self, i: usize) -> bool {
        self.distance_sq[i] > self.tau_sq
    }
}

fn invalid(msg: String) -> CoreError {
    CoreError::Invalid(format!("merge: {msg}"))
}

/// Every value of a checkpoint in one fixed order (layer by layer: W, b,
/// then each state tensor's W and b), with `params` of them parameters.
fn values(c: &Checkpoint) -> (Vec<&[i64]>, usize) {
    let mut v: Vec<&[i64]> = vec![];
    let mut params = 0;
    for lp in &c.layers {
        v.push(&lp.w.data);
        v.push(&lp.b);
        params += 2;
    }
    for lp in &c.layers {
        for st in &lp.state {
            v.push(&st.w.data);
            v.push(&st.b);
        }
    }
    (v, params)
}

/// `Σ_k (a[k] − c[k])²` over the parameters, saturating.
fn distance_sq(a: &Checkpoint, c: &Checkpoint) -> u128 {
    let ((va, n), (vc, _)) = (values(a), values(c));
    let mut d: u128 = 0;
    for (ta, tc) in va.iter().zip(&vc).take(n) {
        for (&x, &y) in ta.iter().zip(tc.iter()) {
            let diff = (x as i128 - y as i128).unsigned_abs();
            d = d.saturating_add(diff.saturating_mul(diff));
        }
    }
    d
}

/// Merge `nodes` around `centre` (the previous global model) under the
/// outlier bound `tau_fx` (τ at scale S). Every checkpoint must already be
/// of `spec` (`Checkpoint::validate`); the nodes must share one step, no
/// earlier than the centre's, and no two may be the same model.
pub fn merge(spec: &ModelSpec, centre: &Checkpoint, nodes: &[MergeNode], tau_fx: i64) -> Result<Merged> {
    if nodes.is_empty() {
        return Err(invalid("no nodes to merge".into()));
    }
    if nodes.len() > MAX_NODES {
        return Err(invalid(format!("{} nodes, more than the limit of {MAX_NODES}", nodes.len())));
    }
    if tau_fx < 0 {
        return Err(invalid(format!("tau must be ≥ 0, got {tau_fx} at scale 10^9")));
    }
    centre.validate(spec)?;
    let step = nodes[0].ckpt.step;
    for (i, n) in nodes.iter().enumerate() {
        if n.reputation > MAX_REPUTATION {
            return Err(invalid(format!(
                "node {i}: reputation {} exceeds the limit of {MAX_REPUTATION} (2^32)",
                n.reputation
            )));
        }
        n.ckpt.validate(spec).map_err(|e| invalid(format!("node {i}: {e}")))?;
        if n.ckpt.step != step {
            return Err(invalid(format!(
                "node {i} is at step {}, node 0 at step {step}: one round's models share a step",
                n.ckpt.step
            )));
        }
        if let Some(j) = nodes[..i].iter().position(|m| m.ckpt.layers == n.ckpt.layers) {
            return Err(invalid(format!("node {i} is the same model as node {j}")));
        }
    }
    if centre.step > step {
        return Err(invalid(format!(
            "the previous global model is at step {}, after the nodes' step {step}",
            centre.step
        )));
    }
    let tau_sq = (tau_fx as u128) * (tau_fx as u128);
    let distance_sq: Vec<u128> = nodes.iter().map(|n| distance_sq(n.ckpt, centre)).collect();
    let weight: Vec<u64> = nodes
        .iter()
        .zip(&distance_sq)
        .map(|(n, &d)| if d > tau_sq { 0 } else { n.reputation })
        .collect();
    let total: u128 = weight.iter().map(|&w| w as u128).sum();
    if total == 0 {
        let far: Vec<u128> = distance_sq.iter().copied().filter(|&d| d > tau_sq).collect();
        let units = |d: u128| (d as f64).sqrt() / crate::fixed::SCALE_I128 as f64;
        let nearest = match far.iter().min() {
            Some(&d) => format!(" (the nearest at distance {:.6}, tau {:.6})", units(d), units(tau_sq)),
            None => String::new(),
        };
        return Err(invalid(format!(
            "every node's weight is zero: {} farther than tau from the previous global model{nearest}, {} of reputation 0; nothing to merge",
            far.len(),
            nodes.len() - far.len()
        )));
    }
    let mut global = nodes[0].ckpt.clone();
    let sources: Vec<Vec<&[i64]>> = nodes.iter().map(|n| values(n.ckpt).0).collect();
    let mut targets: Vec<&mut [i64]> = vec![];
    let mut states: Vec<&mut [i64]> = vec![];
    for lp in global.layers.iter_mut() {
        targets.push(&mut lp.w.data);
        targets.push(&mut lp.b);
        for st in lp.state.iter_mut() {
            states.push(&mut st.w.data);
            states.push(&mut st.b);
        }
    }
    targets.extend(states);
    for (t, out) in targets.into_iter().enumerate() {
        for (k, v) in out.iter_mut().enumerate() {
            let sum: i128 = sources
                .iter()
                .zip(&weight)
                .map(|(s, &w)| w as i128 * s[t][k] as i128)
                .sum();
            // |sum| < 2^111 and total ≤ 2^48: div_round's doubling cannot overflow
            let (q, _) = div_round(sum, total as i128, spec.rounding)
                .ok_or_else(|| invalid("an intermediate overflowed".into()))?;
            // a weighted mean of in-range values is in range
            *v = i64::try_from(q).map_err(|_| invalid(format!("merged value {q} out of range")))?;
        }
    }
    Ok(Merged {
        global,
        distance_sq,
        weight,
        tau_sq,
    })
}

/// A round file (TOML): the outlier bound, the previous global model and
/// each node's checkpoint and reputation, in the statement's order. Paths
/// are relative to the round file's folder.
///
/// ```toml
/// tau = 2.5                             # or tau_fx = 2500000000 (exact, at 10^9)
/// previous = "global_0.safetensors"
/// [[nodes]]
/// checkpoint = "node0/ckpt_3.safetensors"
/// reputation = 3
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// τ at scale S.
    pub tau_fx: i64,
    /// The previous global model (the centre).
    pub previous: std::path::PathBuf,
    /// Each node's checkpoint and reputation.
    pub nodes: Vec<(std::path::PathBuf, u64)>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRound {
    tau: Option<f64>,
    tau_fx: Option<i64>,
    previous: String,
    nodes: Vec<RawNode>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    checkpoint: String,
    reputation: i64,
}

impl Round {
    /// Read and check a round file (errors name the file and the key).
    pub fn from_file(path: &std::path::Path) -> Result<Round> {
        let bad = |msg: String| CoreError::File {
            path: path.to_path_buf(),
            msg,
        };
        let bytes = crate::input::read_input(path, crate::input::Input::Spec)?;
        let text = String::from_utf8(bytes).map_err(|_| bad("is not UTF-8 text (a round file is TOML)".into()))?;
        let raw: RawRound = toml::from_str(&text).map_err(|e| bad(format!("not a round file: {}", e.message())))?;
        let tau_fx = match (raw.tau, raw.tau_fx) {
            (Some(_), Some(_)) => return Err(bad("give either `tau` or `tau_fx`, not both".into())),
            (None, None) => return Err(bad("`tau` (the outlier bound on a model's distance to `previous`) is missing".into())),
            (None, Some(v)) if v < 0 => return Err(bad(format!("`tau_fx` must be ≥ 0, got {v}"))),
            (None, Some(v)) => v,
            (Some(x), None) if !x.is_finite() || x < 0.0 => return Err(bad(format!("`tau` must be a finite number ≥ 0, got {x}"))),
            (Some(x), None) => crate::fixed::to_fixed(x, crate::fixed::ValueRange::default())
                .ok_or_else(|| bad(format!("`tau` = {x} does not fit 64 bits at scale 10^9")))?,
        };
        if raw.nodes.is_empty() {
            return Err(bad("no `[[nodes]]`: a round merges at least one model".into()));
        }
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let mut nodes = Vec::with_capacity(raw.nodes.len());
        for (i, n) in raw.nodes.into_iter().enumerate() {
            if n.reputation < 0 || n.reputation as u64 > MAX_REPUTATION {
                return Err(bad(format!(
                    "nodes[{i}].reputation must be in 0..={MAX_REPUTATION}, got {}",
                    n.reputation
                )));
            }
            let p = dir.join(&n.checkpoint);
            if let Some(j) = nodes.iter().position(|(q, _): &(std::path::PathBuf, u64)| *q == p) {
                return Err(bad(format!("nodes[{i}] names the same checkpoint as nodes[{j}]: {}", n.checkpoint)));
            }
            nodes.push((p, n.reputation as u64));
        }
        Ok(Round {
            tau_fx,
            previous: dir.join(raw.previous),
            nodes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::Rounding;

    const SPEC: &str = "batch_size = 2\n[optimizer]\nkind = \"adam\"\n[[layers]]\ninputs = 3\noutputs = 4\nactivation = \"relu\"\n[[layers]]\ninputs = 4\noutputs = 2\n";

    fn spec(rounding: &str) -> ModelSpec {
        ModelSpec::from_toml_str(&format!("rounding = \"{rounding}\"\n{SPEC}")).unwrap()
    }

    /// A checkpoint at `step` with every value (state too) drawn from `seed`.
    fn model(s: &ModelSpec, seed: u64, step: u64) -> Checkpoint {
        let mut c = Checkpoint::init(s, seed);
        c.step = step;
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2_000_000_001) as i64 - 1_000_000_000
        };
        for lp in c.layers.iter_mut() {
            for st in lp.state.iter_mut() {
                st.w.data.iter_mut().for_each(|v| *v = next());
                st.b.iter_mut().for_each(|v| *v = next());
            }
            lp.b.iter_mut().for_each(|v| *v = next());
        }
        c
    }

    fn all(c: &Checkpoint) -> Vec<i64> {
        values(c).0.concat()
    }

    /// Every merged value, state included, is within ½ unit (half-up) or
    /// below 1 unit (floor, and never above) of the float64 weighted mean.
    #[test]
    fn the_merge_is_the_weighted_mean_rounded_once() {
        for rounding in ["half-up", "floor"] {
            let s = spec(rounding);
            let centre = model(&s, 1, 0);
            let ms: Vec<Checkpoint> = (0..5).map(|i| model(&s, 10 + i, 3)).collect();
            let reps = [3u64, 1, 0, 7, MAX_REPUTATION];
            let nodes: Vec<MergeNode> = ms.iter().zip(reps).map(|(ckpt, reputation)| MergeNode { ckpt, reputation }).collect();
            let m = merge(&s, &centre, &nodes, i64::MAX).unwrap();
            assert_eq!(m.weight, reps);
            assert_eq!(m.global.step, 3);
            m.global.validate(&s).unwrap();
            let total: f64 = reps.iter().map(|&r| r as f64).sum();
            let xs: Vec<Vec<i64>> = ms.iter().map(all).collect();
            for (k, &g) in all(&m.global).iter().enumerate() {
                // exact in i128, then the one division in f64
                let sum: i128 = xs.iter().zip(reps).map(|(x, r)| x[k] as i128 * r as i128).sum();
                let mean = sum as f64 / total;
                let err = g as f64 - mean;
                match s.rounding {
                    Rounding::HalfUp => assert!(err.abs() <= 0.5 + 1e-6, "{rounding} {k}: {g} vs {mean}"),
                    Rounding::Floor => assert!(err <= 1e-6 && err > -1.0 - 1e-6, "{rounding} {k}: {g} vs {mean}"),
                }
            }
        }
    }

    /// A node further than τ from the centre gets weight 0, and the merge is
    /// then the merge of the others; one at exactly τ keeps its weight.
    #[test]
    fn a_model_too_far_from_the_centre_weighs_nothing() {
        let s = spec("half-up");
        let centre = model(&s, 1, 0);
        let near: Vec<Checkpoint> = (0..3)
            .map(|i| {
                let mut c = centre.clone();
                c.step = 2;
                c.layers[0].w.data[i] += 1_000 * (i as i64 + 1);
                c
            })
            .collect();
        let mut far = centre.clone();
        far.step = 2;
        far.layers[1].b[0] += 5_000;
        let tau = 3_000;
        let mut at_tau = centre.clone();
        at_tau.step = 2;
        at_tau.layers[1].b[1] += tau;
        let with = |extra: &[&Checkpoint]| {
            let nodes: Vec<MergeNode> = near.iter().chain(extra.iter().copied()).map(|ckpt| MergeNode { ckpt, reputation: 2 }).collect();
            merge(&s, &centre, &nodes, tau).unwrap()
        };
        let m = with(&[&far]);
        assert_eq!(m.weight, [2, 2, 2, 0]);
        assert!(m.zeroed(3) && !m.zeroed(2));
        assert_eq!(m.distance_sq[3], 5_000 * 5_000);
        assert_eq!(m.global, with(&[]).global);
        let m = with(&[&at_tau]);
        assert_eq!(m.weight, [2, 2, 2, 2]);
        // one unit past τ
        let mut past = at_tau.clone();
        past.layers[1].b[1] += 1;
        let m = with(&[&past]);
        assert_eq!((m.weight[3], m.distance_sq[3]), (0, 3_001 * 3_001));
    }

    #[test]
    fn bad_rounds_are_refused_with_their_reason() {
        let s = spec("half-up");
        let centre = model(&s, 1, 0);
        let (a, b) = (model(&s, 2, 1), model(&s, 3, 1));
        let node = |ckpt, reputation| MergeNode { ckpt, reputation };
        let err = |nodes: &[MergeNode], tau: i64| merge(&s, &centre, nodes, tau).unwrap_err().to_string();
        assert!(err(&[], 0).contains("no nodes"));
        assert!(err(&[node(&a, 0), node(&b, 0)], i64::MAX).contains("every node's weight is zero"));
        assert!(err(&[node(&a, 1), node(&b, 1)], 0).contains("2 farther than tau"));
        assert!(err(&[node(&a, MAX_REPUTATION + 1)], i64::MAX).contains("node 0: reputation"));
        assert!(err(&[node(&a, 1), node(&b, 1), node(&a, 1)], i64::MAX).contains("node 2 is the same model as node 0"));
        assert!(err(&[node(&a, 1)], -1).contains("tau must be ≥ 0"));
        let c = model(&s, 4, 2);
        assert!(err(&[node(&a, 1), node(&c, 1)], i64::MAX).contains("node 1 is at step 2"));
        let late = model(&s, 5, 9);
        let e = merge(&s, &late, &[node(&a, 1)], i64::MAX).unwrap_err().to_string();
        assert!(e.contains("previous global model is at step 9"), "{e}");
        // a checkpoint of another spec
        let other = Checkpoint::init(&ModelSpec::from_toml_str(&SPEC.replace("outputs = 2", "outputs = 3")).unwrap(), 1);
        assert!(err(&[node(&other, 1)], i64::MAX).contains("node 0: shape mismatch"));
    }

    /// One node of positive weight: the global model is that node.
    #[test]
    fn one_node_is_its_own_merge() {
        let s = spec("floor");
        let (centre, a) = (model(&s, 1, 0), model(&s, 7, 4));
        let m = merge(&s, &centre, &[MergeNode { ckpt: &a, reputation: 5 }], i64::MAX).unwrap();
        assert_eq!(m.global, a);
    }
}
