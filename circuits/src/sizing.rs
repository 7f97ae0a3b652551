//! Sizing: how big a fold's circuit is, and how many output units a tile may
//! hold under a fold budget.
//!
//! This sits above the circuit (it synthesises the shape) and above the
//! layout (it chooses the layout's `rows`), so neither of those needs the
//! other's internals: `Layout::new(spec, rows)` stays a pure function.

use crate::engine::Compression;
use crate::error::CircuitError;
use crate::layout::Layout;
use crate::state::CommitScheme;
use crate::TileCircuit;
use ff::Field;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::ConstraintSystem;
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use zkstep_fold::cs::{PhasedCs, Region, ShapeRecorder};
use zkstep_fold::{CircuitSizes, StepCircuit};
use std::sync::Arc;
use zkstep_core::{Fr, ModelSpec};

/// Default bound on the constraints of one fold's step circuit. Prover memory
/// follows the fold: with Spartan (the default) ≈ 1 GiB at 2¹⁷ (0.91 GiB
/// for width 512's 4-unit folds, 0.98 GiB for width 256's 9-unit ones,
/// measured), within the 2 GiB a prover should need; MicroSpartan pads the
/// matrix non-zeros to a power of two, 2²¹ and ≈ 4 GB there.
pub const DEFAULT_FOLD_BUDGET: usize = 1 << 17;

/// The folding layer's own circuits at a state arity (what every fold pays
/// on top of the step circuit), synthesised once per arity around a step
/// that passes its state through.
pub fn layer_overhead(arity: usize) -> Result<CircuitSizes, CircuitError> {
    static CACHE: Memo<usize, CircuitSizes> = OnceLock::new();
    remembered(&CACHE, arity, || {
        zkstep_fold::params::layer_sizes::<crate::engine::E1, crate::engine::E2>(
            arity,
            crate::engine::NUM_CHALLENGES,
            crate::engine::CHALLENGES,
        )
        .map_err(|e| CircuitError::Synthesis(e.to_string()))
    })
}

/// A process-wide cache of sizes by key.
type Memo<K, V> = OnceLock<Mutex<BTreeMap<K, V>>>;

/// `compute()`, remembered under `key` for the process: sizing asks for the
/// same shapes again (a search, then its candidates; a fit, then the fitted
/// layout's figures). Past 1,024 entries the cache starts over.
fn remembered<K: Ord, V: Copy>(
    cache: &'static Memo<K, V>,
    key: K,
    compute: impl FnOnce() -> Result<V, CircuitError>,
) -> Result<V, CircuitError> {
    let cache = cache.get_or_init(Default::default);
    if let Some(v) = cache.lock().ok().and_then(|c| c.get(&key).copied()) {
        return Ok(v);
    }
    let v = compute()?;
    if let Ok(mut c) = cache.lock() {
        if c.len() >= 1024 {
            c.clear();
        }
        c.insert(key, v);
    }
    Ok(v)
}

/// The padded MicroSpartan size a fold's circuit stays within when it can
/// (2²¹: about 4 GiB of prover memory on the development machine).
pub const MAX_PADDED: usize = 1 << 21;

/// MicroSpartan's padded instance size for a step circuit of these
/// statistics (the folding layer's circuit included): the next power of two
/// of max(non-zeros, 2·variables, constraints). Prover memory follows it.
pub fn padded_size(s: &ShapeStats) -> usize {
    let l = &s.layer;
    (s.nonzeros + l.primary_nonzeros)
        .max(2 * witness_len(s))
        .max(s.constraints + l.primary_constraints)
        .next_power_of_two()
}

/// The fold's witness length W₃ ‖ W₂ ‖ W₁ (zkstep-fold's layout): the
/// layer's own variables and what depends on γ padded to a power of two,
/// that and the step's second part padded again, then the step's first.
pub fn witness_len(s: &ShapeStats) -> usize {
    zkstep_fold::cs::WitnessLayout {
        parts: 3,
        first: s.variables - s.second_variables - s.third_variables,
        second: s.second_variables,
        third: s.layer.primary_second + s.third_variables,
    }
    .num_vars()
}

/// Size of the step circuit of a layout: what the prover's memory follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeStats {
    /// R1CS constraints.
    pub constraints: usize,
    /// Private variables (the witness).
    pub variables: usize,
    /// Of them, W₂'s (after ρ and α, before γ).
    pub second_variables: usize,
    /// Of them, W₃'s (after γ).
    pub third_variables: usize,
    /// Non-zero entries of A, B and C together.
    pub nonzeros: usize,
    /// The folding layer's own circuits at this layout's arity.
    pub layer: CircuitSizes,
}

/// Shape statistics of the step circuit of a layout (synthesis without a
/// witness), remembered by the digest of the layout's whole `Debug` form: a
/// layout that differs in any field is synthesised afresh.
pub fn shape_stats(layout: &Layout) -> Result<ShapeStats, CircuitError> {
    static CACHE: Memo<[u8; 32], ShapeStats> = OnceLock::new();
    remembered(&CACHE, debug_digest(layout), || synthesized_stats(layout))
}

/// SHA-256 of a value's `Debug` form, hashed as it is written (a wide
/// layout's schedule prints to megabytes; only 32 bytes are kept).
fn debug_digest(v: &impl std::fmt::Debug) -> [u8; 32] {
    use sha2::Digest;
    struct Feed(sha2::Sha256);
    impl std::fmt::Write for Feed {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.update(s.as_bytes());
            Ok(())
        }
    }
    let mut f = Feed(sha2::Sha256::new());
    // Feed never fails, so neither does the write
    let _ = std::fmt::write(&mut f, format_args!("{v:?}"));
    f.0.finalize().into()
}

/// [`shape_stats`], synthesised.
fn synthesized_stats(layout: &Layout) -> Result<ShapeStats, CircuitError> {
    let lay = Arc::new(layout.clone());
    // zkstep-fold's recorder: it knows which variables the first phase puts
    // in W₂ and W₃ (those allocated after the challenges)
    let mut cs = ShapeRecorder::<Fr>::new(3);
    cs.set_region(Region::Third);
    let synth = |e: nova_snark::frontend::SynthesisError| CircuitError::Synthesis(e.to_string());
    let z: Vec<AllocatedNum<Fr>> = (0..lay.arity())
        .map(|i| AllocatedNum::alloc(cs.namespace(|| format!("z{i}")), || Ok(Fr::ZERO)))
        .collect::<Result<_, _>>()
        .map_err(synth)?;
    let drawn: Vec<AllocatedNum<Fr>> = ["alpha", "rho", "gamma"]
        .iter()
        .map(|n| AllocatedNum::alloc(cs.namespace(|| *n), || Ok(Fr::ZERO)))
        .collect::<Result<_, _>>()
        .map_err(synth)?;
    let outside = cs.num_aux();
    let circuit = TileCircuit::shape(lay.clone());
    cs.set_region(Region::First);
    let p = circuit
        .first_phase(&mut cs.namespace(|| "step"), &z)
        .map_err(synth)?;
    cs.set_region(Region::Second);
    circuit
        .second(&mut cs.namespace(|| "step 2"), p, &drawn)
        .map_err(synth)?;
    let split = cs.layout();
    Ok(ShapeStats {
        constraints: cs.num_constraints(),
        variables: cs.num_aux() - outside,
        second_variables: split.second,
        third_variables: split.third - outside,
        nonzeros: cs.num_nonzeros(),
        layer: layer_overhead(layout.arity())?,
    })
}

/// Constraints of the step circuit of a layout.
pub fn count_constraints(layout: &Layout) -> Result<usize, CircuitError> {
    shape_stats(layout).map(|s| s.constraints)
}

/// Lay out a spec with as many output units per tile as fit `budget`
/// constraints and keep the padded instance within [`MAX_PADDED`] (the fold
/// grows with the rows of a tile; found by doubling, then bisection, with
/// exact counts). When one output unit is over either bound, a row is cut
/// into the fewest segments (folds) that fit — rows wider than 256 —
/// else one unit per tile however large.
pub fn fit(spec: &ModelSpec, budget: usize) -> Result<Layout, CircuitError> {
    fit_within(spec, budget, MAX_PADDED)
}

/// [`fit`] with another bound on the padded size.
pub fn fit_within(
    spec: &ModelSpec,
    budget: usize,
    max_padded: usize,
) -> Result<Layout, CircuitError> {
    fit_within_as(spec, budget, max_padded, CommitScheme::Chain)
}

/// A layout of `rows` a tile (cut into `segments`) binding θ by `scheme`.
fn layout_as(spec: &ModelSpec, rows: usize, segments: usize, scheme: CommitScheme) -> Result<Layout, CircuitError> {
    Ok(Layout::with_segments(spec, rows, segments)?.with_commit_scheme(scheme))
}

/// [`fit_within`] for layouts that bind θ by `scheme` (each counted as it is).
fn fit_within_as(
    spec: &ModelSpec,
    budget: usize,
    max_padded: usize,
    scheme: CommitScheme,
) -> Result<Layout, CircuitError> {
    let within = |l: &Layout| -> Result<bool, CircuitError> {
        let st = shape_stats(l)?;
        Ok(st.constraints <= budget && padded_size(&st) <= max_padded)
    };
    // one output unit a tile, whatever the loss
    let least = 1;
    let one = layout_as(spec, least, 1, scheme)?;
    if !within(&one)? {
        // a row over the bounds: cut it into the fewest segments that fit
        if let Some(l) = cut_to_fit(spec, &one, &within)? {
            return Ok(l);
        }
        let need = count_constraints(&one)?;
        if need > budget {
            return Err(CircuitError::OverBudget {
                need,
                budget,
                rows: least,
            });
        }
        return Ok(one);
    }
    let widest = one.widest_layer();
    let fits = |r: usize| -> Result<bool, CircuitError> { within(&layout_as(spec, r, 1, scheme)?) };
    let (mut lo, mut hi) = (least, 2 * least);
    while hi <= widest && fits(hi)? {
        lo = hi;
        hi *= 2;
    }
    let mut hi = hi.min(widest + 1);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if lo == 1 {
        Ok(one)
    } else {
        layout_as(spec, lo, 1, scheme)
    }
}

/// One output unit a tile (`one`) with its rows cut into the fewest
/// segments for which `ok` holds; None when no cut does (or the spec has no
/// row wider than 256 inputs to cut).
fn cut_to_fit(
    spec: &ModelSpec,
    one: &Layout,
    ok: &dyn Fn(&Layout) -> Result<bool, CircuitError>,
) -> Result<Option<Layout>, CircuitError> {
    let blocks = one.n_max / zkstep_core::spec::RECORD_BLOCK;
    for segments in (2..=blocks).filter(|s| blocks.is_multiple_of(*s)) {
        match layout_as(spec, 1, segments, one.commit_scheme) {
            Ok(l) if ok(&l)? => return Ok(Some(l)),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(None)
}

/// Constraints every sample of the batch adds to every fold at least (its
/// cells, inputs and claims; at least 2·`MIN_SAMPLE_COST` measured for every
/// loss and optimizer by `circuits/tests/snapshot.rs`): a batch larger than
/// the budget over this is refused without synthesising a fold that size.
pub const MIN_SAMPLE_COST: usize = 32;

/// Refuse a spec that no fold within `budget` constraints can prove, at any
/// number of rows or segments ([`fit`] fails for it): what `zkstep init`
/// asks before a checkpoint is written, so that keygen after training is
/// never the first to say so.
pub fn check_provable(spec: &ModelSpec, budget: usize) -> Result<(), CircuitError> {
    let batch = spec.batch_size;
    let unprovable = |need| CircuitError::Unprovable {
        need,
        budget,
        batch,
    };
    if batch.saturating_mul(MIN_SAMPLE_COST) > budget {
        return Err(unprovable(batch * MIN_SAMPLE_COST));
    }
    let one = Layout::new(spec, 1)?;
    let need = count_constraints(&one)?;
    let fits = |l: &Layout| -> Result<bool, CircuitError> { Ok(count_constraints(l)? <= budget) };
    if need <= budget || cut_to_fit(spec, &one, &fits)?.is_some() {
        return Ok(());
    }
    // say what the smallest fold there is needs: every row cut into blocks
    let blocks = one.n_max / zkstep_core::spec::RECORD_BLOCK;
    let least = match Layout::with_segments(spec, 1, blocks) {
        Ok(l) if blocks > 1 => count_constraints(&l)?.min(need),
        _ => need,
    };
    Err(unprovable(least))
}

// The cost model, fitted on one host (Intel Xeon at 2.1 GHz, 2 vCPUs;
// format 32, width 128 batch 8 at 12, 16 and 22 rows a fold, widths 256
// and 512: BENCHMARKS.md, "Format 32"). Only the ratios matter: it ranks
// layouts, it does not promise seconds elsewhere.
/// Seconds every fold costs whatever its size: the secondary circuit's
/// fold, the folding layer's hashes, three synthesis passes.
const FOLD_S_PER_FOLD: f64 = 0.18;
/// Seconds of folding per primary constraint (the step's and the layer's):
/// 0.54 s a fold at 82.5k constraints, 0.62 s at 99.5k, 0.76 s at 133k.
const FOLD_S_PER_CONSTRAINT: f64 = 4.36e-6;
/// Seconds of MicroSpartan compression per element of the padded instance
/// (88.7 s at 2²¹ measured: its commitments are MSMs of that size).
const MICROSPARTAN_S_PER_PADDED: f64 = 42.0e-6;
/// Seconds of Spartan compression whatever the fold (the secondary's proof
/// and its opening).
const SPARTAN_S_FIXED: f64 = 0.6;
/// Seconds of Spartan compression per element of the primary's padded
/// instance, the larger of its constraints and its witness W₃ ‖ W₂ ‖ W₁
/// as zkstep-fold pads it ([`witness_len`]): its sum-checks, masking folds
/// and the openings of W₂ and W₃ run over that many (1.6 s at 2¹⁷, 2.5–2.7
/// s at 2¹⁸ measured). A fold whose padded witness passes a power of two
/// pays for it here, not in its constraints.
const SPARTAN_S_PER_PADDED: f64 = 7.6e-6;

/// The default compression for a fold of these statistics: Spartan, the
/// fastest proof at every size measured (MicroSpartan's commitments to the
/// matrices make its compression ten times dearer: 23 s against 4 s for
/// the demo), while it fits [`SPARTAN_FIT_MAX_PADDED`]. MicroSpartan, on
/// request, buys a verifying key without the matrices (11 MB against 43 MB
/// for the demo) and a verifier that does not evaluate them.
pub fn default_compression(st: &ShapeStats) -> Compression {
    if padded_size(st) <= SPARTAN_FIT_MAX_PADDED {
        Compression::Spartan
    } else {
        Compression::MicroSpartan
    }
}

/// The default compression for `layout` ([`default_compression`]).
pub fn compression_for(layout: &Layout) -> Result<Compression, CircuitError> {
    Ok(default_compression(&shape_stats(layout)?))
}

/// Estimated seconds to prove one step under `layout` with its default
/// compression (folding and compression; the model above, fitted on the
/// development machine).
pub fn estimated_prove_s(layout: &Layout) -> Result<f64, CircuitError> {
    estimated_prove_s_with(layout, None)
}

/// [`estimated_prove_s`] with a given compression (None: the default).
pub fn estimated_prove_s_with(
    layout: &Layout,
    compression: Option<Compression>,
) -> Result<f64, CircuitError> {
    let st = shape_stats(layout)?;
    let cons = st.constraints + st.layer.primary_constraints;
    let c = cons as f64;
    let per_fold = FOLD_S_PER_FOLD + c * FOLD_S_PER_CONSTRAINT;
    let compress = match compression.unwrap_or_else(|| default_compression(&st)) {
        Compression::Spartan => {
            SPARTAN_S_FIXED + cons.max(witness_len(&st)).next_power_of_two() as f64 * SPARTAN_S_PER_PADDED
        }
        Compression::MicroSpartan => padded_size(&st) as f64 * MICROSPARTAN_S_PER_PADDED,
    };
    Ok(layout.num_folds() as f64 * per_fold + compress)
}

/// The fastest layout within `budget` by [`estimated_prove_s`]: the most
/// rows that fit `budget`, or a smaller fold (half the rows, a quarter, …,
/// one) when fewer constraints a fold pay for themselves (a fold grows
/// dearer than linearly, and a small model's proof is mostly compression,
/// whose cost follows the fold, not the step). Wide layers (one unit a
/// fold already) keep the largest fold.
pub fn fit_fastest(spec: &ModelSpec, budget: usize) -> Result<Layout, CircuitError> {
    fit_fastest_with(spec, budget, None)
}

/// The padded size a fold compressed with Spartan may reach: Spartan's
/// prover needs far less memory per padded element than MicroSpartan's
/// (BENCHMARKS.md), so 2²³ stays near the 4 GiB that 2²¹ is for MicroSpartan.
pub const SPARTAN_FIT_MAX_PADDED: usize = 1 << 23;

/// [`fit_fastest`] for a given compression (None: the default, Spartan);
/// MicroSpartan's folds stay within [`MAX_PADDED`], Spartan's may grow to
/// [`SPARTAN_FIT_MAX_PADDED`].
pub fn fit_fastest_with(
    spec: &ModelSpec,
    budget: usize,
    compression: Option<Compression>,
) -> Result<Layout, CircuitError> {
    fit_fastest_as(spec, budget, compression, CommitScheme::Chain)
}

/// [`fit_fastest_with`] for layouts that bind θ by `scheme`.
pub fn fit_fastest_as(
    spec: &ModelSpec,
    budget: usize,
    compression: Option<Compression>,
    scheme: CommitScheme,
) -> Result<Layout, CircuitError> {
    let max_padded = match compression {
        Some(Compression::MicroSpartan) => MAX_PADDED,
        _ => SPARTAN_FIT_MAX_PADDED,
    };
    let mut best = fit_within_as(spec, budget, max_padded, scheme)?;
    if best.rows == 1 {
        return Ok(best);
    }
    // fewer rows make a smaller fold (within every bound the largest met):
    // the fewest rows that keep as many folds for the widest layer, then
    // halve down to one row, so one unit a fold is always a candidate
    let widest = best.widest_layer();
    let mut cands = vec![layout_as(spec, widest.div_ceil(widest.div_ceil(best.rows)), 1, scheme)?];
    let mut rows = best.rows / 2;
    while rows >= 1 {
        cands.push(layout_as(spec, rows, 1, scheme)?);
        rows /= 2;
    }
    let mut best_s = estimated_prove_s_with(&best, compression)?;
    for l in cands {
        let t = estimated_prove_s_with(&l, compression)?;
        if t < best_s {
            (best, best_s) = (l, t);
        }
    }
    Ok(best)
}

/// A layout with `rows` per tile if given, else the fastest within `budget`.
pub fn layout_for(
    spec: &ModelSpec,
    rows: Option<usize>,
    budget: usize,
) -> Result<Layout, CircuitError> {
    layout_for_with(spec, rows, budget, None)
}

/// [`layout_for`] for a given compression (None: the default).
pub fn layout_for_with(
    spec: &ModelSpec,
    rows: Option<usize>,
    budget: usize,
    compression: Option<Compression>,
) -> Result<Layout, CircuitError> {
    layout_for_as(spec, rows, budget, compression, CommitScheme::Chain)
}

/// [`layout_for_with`] for layouts that bind θ by `scheme` (sized as they
/// count: under KZG points a fold is about half the chains', so it takes
/// more rows).
pub fn layout_for_as(
    spec: &ModelSpec,
    rows: Option<usize>,
    budget: usize,
    compression: Option<Compression>,
    scheme: CommitScheme,
) -> Result<Layout, CircuitError> {
    match rows {
        Some(r) => layout_as(spec, r, 1, scheme),
        None => fit_fastest_as(spec, budget, compression, scheme),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The remembered figures are each layout's own: a layout that differs
    /// in one field (its commitment scheme, its rows) is not answered from
    /// another's entry, and asking again answers the same.
    #[test]
    fn remembered_stats_are_each_layouts_own() {
        let spec = ModelSpec::from_toml_str(
            "batch_size = 2\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 4\noutputs = 2\nactivation = \"relu\"\n[[layers]]\ninputs = 2\noutputs = 1\n",
        )
        .unwrap();
        let chain = Layout::new(&spec, 1).unwrap();
        let eval = chain.clone().with_commit_scheme(CommitScheme::Evaluation);
        let two = Layout::new(&spec, 2).unwrap();
        for l in [&chain, &eval, &two, &chain] {
            assert_eq!(shape_stats(l).unwrap(), synthesized_stats(l).unwrap());
        }
        assert_ne!(shape_stats(&chain).unwrap(), shape_stats(&eval).unwrap());
        assert_ne!(shape_stats(&chain).unwrap(), shape_stats(&two).unwrap());
        assert_ne!(debug_digest(&chain), debug_digest(&eval));
    }
}
