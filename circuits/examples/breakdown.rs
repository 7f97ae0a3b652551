//! Where a fold's constraints go: synthesise the step circuit of a one-layer
//! spec with named constraints and group them by namespace (indices folded,
//! first `depth` levels), with non-zeros, per fold and per weight.
//!
//!     cargo run --release -p zkstep-circuits --features tools --example breakdown -- WIDTH BATCH [DEPTH] [ROWS] [OPTIMIZER]
//!     cargo run --release -p zkstep-circuits --features tools --example breakdown -- --spec FILE [DEPTH] [ROWS]
//!
//! OPTIMIZER: sgd (default), momentum, adam or adamw, as `zkstep bench` sets them.
//! `--evaluated` anywhere: θ bound by its evaluations at ζ
//! (`CommitScheme::Evaluation`, the default keys' scheme) instead of the chains.
//! With `--spec`, any spec (a classifier's cross-entropy fold, say), ROWS
//! defaulting to keygen's choice; "per weight" is then per weight of the
//! widest layer's rows in a fold.

use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::test_shape_cs::TestShapeCS;
use nova_snark::frontend::ConstraintSystem;
use std::collections::BTreeMap;
use std::sync::Arc;
use zkstep_circuits::{Layout, TileCircuit};
use zkstep_core::{Fr, ModelSpec};

fn main() {
    let mut words: Vec<String> = std::env::args().skip(1).collect();
    let scheme = if words.iter().any(|w| w == "--evaluated") {
        words.retain(|w| w != "--evaluated");
        zkstep_circuits::layout::CommitScheme::Evaluation
    } else {
        zkstep_circuits::layout::CommitScheme::Chain
    };
    if words.first().map(String::as_str) == Some("--spec") {
        let path = words.get(1).expect("--spec FILE");
        let text = std::fs::read_to_string(path).expect("a readable spec");
        let spec = ModelSpec::from_toml_str(&text).expect("a valid spec");
        let num = |k: usize| words.get(k).map(|w| w.parse::<usize>().expect("numbers: DEPTH ROWS"));
        let layout = match num(3) {
            Some(r) => Layout::new(&spec, r).expect("a layout"),
            None => zkstep_circuits::sizing::fit_fastest(&spec, zkstep_circuits::DEFAULT_FOLD_BUDGET)
                .expect("a layout within the default budget"),
        };
        let width = spec.layers.iter().map(|l| l.inputs).max().unwrap_or(1);
        report(path, layout.with_commit_scheme(scheme), width, num(2).unwrap_or(3));
        return;
    }
    let optimizer = match words.get(4).map(String::as_str) {
        None | Some("sgd") => "lr = 0.01",
        Some("momentum") => "kind = \"momentum\"\nlr = 0.01\nmu = 0.9",
        Some("adam") => "kind = \"adam\"",
        Some("adamw") => "kind = \"adamw\"",
        Some(o) => panic!("OPTIMIZER: sgd, momentum, adam or adamw, not {o}"),
    };
    words.truncate(4);
    let args: Vec<usize> = words
        .iter()
        .map(|a| a.parse().expect("numbers: WIDTH BATCH [DEPTH] [ROWS]"))
        .collect();
    let (width, batch) = (
        args.first().copied().unwrap_or(64),
        args.get(1).copied().unwrap_or(8),
    );
    let depth = args.get(2).copied().unwrap_or(3);
    let toml = format!("batch_size = {batch}\n[optimizer]\n{optimizer}\n[[layers]]\ninputs = {width}\noutputs = {width}\n");
    let spec = ModelSpec::from_toml_str(&toml).expect("a valid spec");
    let layout = match args.get(3) {
        Some(&r) => Layout::new(&spec, r).expect("a layout"),
        None => zkstep_circuits::sizing::fit(&spec, zkstep_circuits::DEFAULT_FOLD_BUDGET)
            .unwrap_or_else(|_| Layout::new(&spec, 1).expect("a layout")),
    };
    report(&format!("width {width} batch {batch}"), layout.with_commit_scheme(scheme), width, depth);
}

/// Synthesise the step circuit of `layout` and print its constraints and
/// non-zeros by namespace (the first `depth` levels).
fn report(title: &str, layout: Layout, width: usize, depth: usize) {
    let lay = Arc::new(layout);
    let mut cs = TestShapeCS::<zkstep_circuits::engine::E1>::new();
    let z: Vec<AllocatedNum<Fr>> = (0..lay.arity())
        .map(|i| {
            AllocatedNum::alloc(cs.namespace(|| format!("z{i}")), || Ok(Fr::from(0u64)))
                .expect("alloc")
        })
        .collect();
    let drawn: Vec<AllocatedNum<Fr>> = ["alpha", "rho", "gamma"]
        .iter()
        .map(|n| AllocatedNum::alloc(cs.namespace(|| *n), || Ok(Fr::from(0u64))).expect("alloc"))
        .collect();
    TileCircuit::shape(lay.clone())
        .synthesize(&mut cs.namespace(|| "step"), &z, &drawn)
        .expect("synthesis");
    let mut groups: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (a, b, c, name) in &cs.constraints {
        let key: Vec<String> = name
            .split('/')
            .skip(1)
            .take(depth)
            .map(|p| {
                p.trim_end_matches(|ch: char| ch.is_ascii_digit() || ch == '_')
                    .to_string()
            })
            .map(|p| if p.is_empty() { "#".into() } else { p })
            .collect();
        let nz = a.iter().count() + b.iter().count() + c.iter().count();
        let e = groups.entry(key.join("/")).or_default();
        e.0 += 1;
        e.1 += nz;
    }
    let weights = (lay.rows * width) as f64;
    let total: usize = groups.values().map(|g| g.0).sum();
    println!(
        "{title}: rows/fold {} xcols {} folds {}; {total} constraints a fold, {:.1} per weight of the fold",
        lay.rows,
        lay.xcols,
        lay.num_folds(),
        total as f64 / weights
    );
    let mut v: Vec<_> = groups.into_iter().collect();
    v.sort_by_key(|b| std::cmp::Reverse(b.1 .0));
    println!(
        "{:>10} {:>8} {:>10}  namespace",
        "constraints", "/weight", "non-zeros"
    );
    for (k, (n, nz)) in v {
        println!("{n:>10} {:>8.2} {nz:>10}  {k}", n as f64 / weights);
    }
}
