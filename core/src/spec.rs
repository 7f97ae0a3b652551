//! The model spec: what a training step *is* (layers, loss, optimizer, batch
//! size, scale, rounding, value range), parsed from human-written TOML,
//! validated with errors that name the key, and canonicalised for hashing into
//! `spec_digest`, the first element of every public statement.

use crate::error::{CoreError, Result};
use crate::fixed::{Rounding, ValueRange, SCALE};
use crate::poseidon::{fr_from_digest_bytes, Fr};
use serde::{Deserialize, Serialize};
use sha3::{Digest, Sha3_256};

/// Version of the spec format and of its canonical encoding.
pub const SPEC_FORMAT_VERSION: u32 = 1;

/// Activation of a dense layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// y = max(x, 0), proven with a sign-pinned selector.
    Relu,
    /// y = x.
    Identity,
}

/// Loss function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// Mean squared error over the batch and the outputs.
    Mse,
    /// Softmax cross-entropy over the outputs (the logits), averaged over
    /// the batch; Y a distribution at scale S (one-hot for classes).
    CrossEntropy,
}

impl Loss {
    /// The name in a spec.
    pub fn name(self) -> &'static str {
        match self {
            Loss::Mse => "mse",
            Loss::CrossEntropy => "cross_entropy",
        }
    }
}

/// Optimizer with fixed-point hyper-parameters (integers at scale S).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Optimizer {
    /// W' = W − rescale_{S²}(lr·Σ dZ·A).
    Sgd {
        /// Learning rate at scale S.
        lr_fx: i64,
    },
    /// v' = rescale(μ·v) + rescale(dW); W' = W − rescale(lr·v').
    Momentum {
        /// Learning rate at scale S.
        lr_fx: i64,
        /// Momentum coefficient μ at scale S.
        mu_fx: i64,
    },
    /// Adam (L2 term in the gradient) or AdamW (decoupled decay), in
    /// PyTorch's order (docs/SEMANTICS.md §3; `crate::optim::adam`).
    Adam(AdamHyper),
}

impl Optimizer {
    /// Learning rate at scale S.
    pub fn lr_fx(&self) -> i64 {
        match *self {
            Optimizer::Sgd { lr_fx }
            | Optimizer::Momentum { lr_fx, .. }
            | Optimizer::Adam(AdamHyper { lr_fx, .. }) => lr_fx,
        }
    }
    /// The state tensors the optimizer keeps per parameter, in record and
    /// file order: `[]` (SGD), `["v"]` (momentum's velocity), `["m", "v"]`
    /// (Adam's moments). A checkpoint stores tensor `n` of layer l as
    /// `l{l}.{n}w` (weights) and `l{l}.{n}b` (biases).
    pub fn state_names(&self) -> &'static [&'static str] {
        match self {
            Optimizer::Sgd { .. } => &[],
            Optimizer::Momentum { .. } => &["v"],
            Optimizer::Adam(_) => &["m", "v"],
        }
    }
    /// Whether the optimizer keeps state per parameter.
    pub fn has_state(&self) -> bool {
        !self.state_names().is_empty()
    }
    /// Adam's hyper-parameters (None for the other optimizers).
    pub fn adam(&self) -> Option<AdamHyper> {
        match *self {
            Optimizer::Adam(h) => Some(h),
            _ => None,
        }
    }
    /// The name of the optimizer's kind in a spec.
    pub fn kind(&self) -> &'static str {
        match self {
            Optimizer::Sgd { .. } => "sgd",
            Optimizer::Momentum { .. } => "momentum",
            Optimizer::Adam(h) if h.decoupled => "adamw",
            Optimizer::Adam(_) => "adam",
        }
    }
}

/// Adam's hyper-parameters at scale S.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdamHyper {
    /// Learning rate.
    pub lr_fx: i64,
    /// β₁ ∈ (0, 1).
    pub beta1_fx: i64,
    /// β₂ ∈ (0, 1).
    pub beta2_fx: i64,
    /// ε ≥ 10⁻⁹ (at least 1 at scale S, so the denominator is never 0).
    pub eps_fx: i64,
    /// Weight decay λ ≥ 0.
    pub weight_decay_fx: i64,
    /// AdamW's decoupled decay (true) or Adam's L2 term in the gradient.
    pub decoupled: bool,
}

impl AdamHyper {
    /// The integer hyper-parameters with their spec keys, in canonical order.
    pub fn fields(&self) -> [(&'static str, i64); 5] {
        [
            ("lr_fx", self.lr_fx),
            ("beta1_fx", self.beta1_fx),
            ("beta2_fx", self.beta2_fx),
            ("eps_fx", self.eps_fx),
            ("weight_decay_fx", self.weight_decay_fx),
        ]
    }

    /// PyTorch's defaults: lr 10⁻³, β = (0.9, 0.999), ε = 10⁻⁸, λ = 0
    /// (Adam) or 10⁻² (AdamW).
    pub fn pytorch_default(decoupled: bool) -> Self {
        AdamHyper {
            lr_fx: 1_000_000,
            beta1_fx: 900_000_000,
            beta2_fx: 999_000_000,
            eps_fx: 10,
            weight_decay_fx: if decoupled { 10_000_000 } else { 0 },
            decoupled,
        }
    }
}

/// One dense layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerSpec {
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// Activation after the affine map.
    pub activation: Activation,
}

/// A validated model spec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Dense layers, input to output.
    pub layers: Vec<LayerSpec>,
    /// Samples per step.
    pub batch_size: usize,
    /// Loss.
    pub loss: Loss,
    /// Optimizer.
    pub optimizer: Optimizer,
    /// Rounding rule of every rescale.
    pub rounding: Rounding,
    /// Declared range of stored values.
    pub value_range: ValueRange,
}

// ---------------------------------------------------------------- TOML input

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    format_version: Option<u32>,
    batch_size: Option<i64>,
    scale: Option<i64>,
    rounding: Option<String>,
    value_bits: Option<i64>,
    loss: Option<String>,
    optimizer: Option<RawOptimizer>,
    layers: Option<Vec<RawLayer>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOptimizer {
    kind: Option<String>,
    lr: Option<f64>,
    lr_fx: Option<i64>,
    mu: Option<f64>,
    mu_fx: Option<i64>,
    beta1: Option<f64>,
    beta1_fx: Option<i64>,
    beta2: Option<f64>,
    beta2_fx: Option<i64>,
    eps: Option<f64>,
    eps_fx: Option<i64>,
    weight_decay: Option<f64>,
    weight_decay_fx: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayer {
    inputs: Option<i64>,
    outputs: Option<i64>,
    activation: Option<String>,
}

fn spec_err(key: impl Into<String>, msg: impl Into<String>) -> CoreError {
    CoreError::Spec {
        key: key.into(),
        msg: msg.into(),
    }
}

/// Largest layer width accepted (keeps every sum far inside the field headroom, see docs/SEMANTICS.md).
pub const MAX_WIDTH: usize = 1 << 16;
/// Largest batch accepted.
pub const MAX_BATCH: usize = 1 << 16;

/// Largest fixed-point hyper-parameter (10⁹ at scale S): keeps `lr·dW_acc` below 2²⁰³ (docs/SEMANTICS.md §4).
pub const MAX_PARAM_FX: i64 = 1_000_000_000_000_000_000;

/// A hyper-parameter given either as a real (`lr = 0.05`) or exactly (`lr_fx = 50000000`).
fn fixed_param(key: &str, real: Option<f64>, exact: Option<i64>) -> Result<Option<i64>> {
    match (real, exact) {
        (Some(_), Some(_)) => Err(spec_err(
            format!("optimizer.{key}"),
            format!("give either `{key}` or `{key}_fx`, not both"),
        )),
        (Some(x), None) => {
            if !x.is_finite() || x <= 0.0 {
                return Err(spec_err(
                    format!("optimizer.{key}"),
                    format!("must be a positive finite number, got {x}"),
                ));
            }
            if x > 1e9 {
                return Err(spec_err(
                    format!("optimizer.{key}"),
                    format!("must be at most 1e9 (the cap on every hyper-parameter, {MAX_PARAM_FX} at scale 10^9), got {x}"),
                ));
            }
            // the quantisation rule of every real value (docs/SEMANTICS.md §1)
            let v = crate::fixed::to_fixed(x, crate::fixed::ValueRange::default()).unwrap_or(0);
            if v < 1 {
                return Err(spec_err(
                    format!("optimizer.{key}"),
                    format!("{x} rounds to 0 at scale 10^9"),
                ));
            }
            Ok(Some(v))
        }
        (None, Some(v)) if v <= 0 || v > MAX_PARAM_FX => Err(spec_err(
            format!("optimizer.{key}_fx"),
            format!("must be in 1..={MAX_PARAM_FX}, got {v}"),
        )),
        (None, v) => Ok(v),
    }
}

/// A hyper-parameter that must lie below 1 (μ, β): the error names the key the user wrote.
fn below_one(key: &str, real: Option<f64>, exact: Option<i64>, v: i64) -> Result<i64> {
    if v < SCALE {
        return Ok(v);
    }
    let (key, got) = match exact {
        Some(x) => (
            format!("optimizer.{key}_fx"),
            format!("{x} (= {} at scale 10^9)", x as f64 / SCALE as f64),
        ),
        None => (
            format!("optimizer.{key}"),
            format!("{}", real.unwrap_or(0.0)),
        ),
    };
    Err(spec_err(
        key,
        format!("must be below 1 (in (0, 1)), got {got}"),
    ))
}

/// The keys only some optimizers take: (key, given, the kinds that take it).
fn refuse_foreign_keys(ro: &RawOptimizer, kind: &str) -> Result<()> {
    let adam = ["adam", "adamw"];
    let keys: [(&str, bool, &[&str]); 5] = [
        ("mu", ro.mu.is_some() || ro.mu_fx.is_some(), &["momentum"]),
        ("beta1", ro.beta1.is_some() || ro.beta1_fx.is_some(), &adam),
        ("beta2", ro.beta2.is_some() || ro.beta2_fx.is_some(), &adam),
        ("eps", ro.eps.is_some() || ro.eps_fx.is_some(), &adam),
        (
            "weight_decay",
            ro.weight_decay.is_some() || ro.weight_decay_fx.is_some(),
            &adam,
        ),
    ];
    for (key, given, kinds) in keys {
        if given && !kinds.contains(&kind) {
            return Err(spec_err(
                format!("optimizer.{key}"),
                format!(
                    "the `{kind}` optimizer takes no `{key}` (only {})",
                    kinds
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The `[optimizer]` table.
fn parse_optimizer(ro: Option<RawOptimizer>) -> Result<Optimizer> {
    let ro = ro.ok_or_else(|| spec_err("optimizer", "missing table [optimizer]"))?;
    let kind = ro.kind.clone().unwrap_or_else(|| "sgd".into());
    if !["sgd", "momentum", "adam", "adamw"].contains(&kind.as_str()) {
        return Err(spec_err(
            "optimizer.kind",
            format!("unknown optimizer `{kind}` (supported: `sgd`, `momentum`, `adam`, `adamw`)"),
        ));
    }
    refuse_foreign_keys(&ro, &kind)?;
    let lr = fixed_param("lr", ro.lr, ro.lr_fx)?;
    let optimizer = match kind.as_str() {
        "sgd" => Optimizer::Sgd {
            lr_fx: lr.ok_or_else(|| spec_err("optimizer.lr", "missing"))?,
        },
        "momentum" => {
            let mu = fixed_param("mu", ro.mu, ro.mu_fx)?
                .ok_or_else(|| spec_err("optimizer.mu", "missing (momentum needs mu)"))?;
            // μ ∈ (0, 1): 0 is plain SGD, and μ ≥ 1 lets the velocity grow without bound
            Optimizer::Momentum {
                lr_fx: lr.ok_or_else(|| spec_err("optimizer.lr", "missing"))?,
                mu_fx: below_one("mu", ro.mu, ro.mu_fx, mu)?,
            }
        }
        _ => {
            // PyTorch's defaults for whatever is not given
            let decoupled = kind == "adamw";
            let d = AdamHyper::pytorch_default(decoupled);
            let beta = |key: &str, real, exact, default| -> Result<i64> {
                let v = fixed_param(key, real, exact)?.unwrap_or(default);
                below_one(key, real, exact, v)
            };
            let beta1_fx = beta("beta1", ro.beta1, ro.beta1_fx, d.beta1_fx)?;
            let beta2_fx = beta("beta2", ro.beta2, ro.beta2_fx, d.beta2_fx)?;
            let eps_fx = fixed_param("eps", ro.eps, ro.eps_fx)?.unwrap_or(d.eps_fx);
            // λ = 0 is allowed (no decay); at most 1
            let weight_decay_fx = match (ro.weight_decay, ro.weight_decay_fx) {
                (Some(0.0), None) => 0,
                (None, Some(0)) => 0,
                (Some(x), None) if x < 0.0 => {
                    return Err(spec_err(
                        "optimizer.weight_decay",
                        format!("must be ≥ 0 (0: no decay), got {x}"),
                    ))
                }
                (None, Some(x)) if x < 0 => {
                    return Err(spec_err(
                        "optimizer.weight_decay_fx",
                        format!("must be ≥ 0 (0: no decay), got {x}"),
                    ))
                }
                (real, exact) => match fixed_param("weight_decay", real, exact)? {
                    Some(v) if v > SCALE => {
                        return Err(spec_err(
                            "optimizer.weight_decay",
                            format!("must be at most 1, got {}", v as f64 / SCALE as f64),
                        ))
                    }
                    Some(v) => v,
                    None => d.weight_decay_fx,
                },
            };
            Optimizer::Adam(AdamHyper {
                lr_fx: lr.unwrap_or(d.lr_fx),
                beta1_fx,
                beta2_fx,
                eps_fx,
                weight_decay_fx,
                decoupled,
            })
        }
    };
    Ok(optimizer)
}

/// Most layers a spec may have (a deeper network could not be proven here).
pub const MAX_LAYERS: usize = 1024;
/// Most parameters (weights and biases) a spec may have: 2²⁸ values are
/// 2 GiB per copy of θ (more with optimizer state and the trace), the most
/// that a 24 GiB machine can train and prove.
pub const MAX_PARAMS: u64 = 1 << 28;

/// The `[[layers]]` tables.
fn parse_layers(raw_layers: Option<Vec<RawLayer>>) -> Result<Vec<LayerSpec>> {
    let raw_layers = raw_layers
        .ok_or_else(|| spec_err("layers", "missing: add at least one [[layers]] table"))?;
    if raw_layers.is_empty() {
        return Err(spec_err("layers", "at least one layer is required"));
    }
    if raw_layers.len() > MAX_LAYERS {
        return Err(spec_err(
            "layers",
            format!(
                "{} layers, more than the limit of {MAX_LAYERS}",
                raw_layers.len()
            ),
        ));
    }
    let mut layers = Vec::with_capacity(raw_layers.len());
    for (i, rl) in raw_layers.iter().enumerate() {
        let width = |name: &str, v: Option<i64>| -> Result<usize> {
            let v = v.ok_or_else(|| spec_err(format!("layers[{i}].{name}"), "missing"))?;
            if v < 1 || v as u64 > MAX_WIDTH as u64 {
                return Err(spec_err(
                    format!("layers[{i}].{name}"),
                    format!("must be in 1..={MAX_WIDTH}, got {v}"),
                ));
            }
            Ok(v as usize)
        };
        let inputs = width("inputs", rl.inputs)?;
        let outputs = width("outputs", rl.outputs)?;
        let activation = match rl.activation.as_deref() {
            Some("relu") => Activation::Relu,
            None | Some("identity") => Activation::Identity,
            Some(other) => {
                return Err(spec_err(
                    format!("layers[{i}].activation"),
                    format!("unknown activation `{other}` (supported: `relu`, `identity`)"),
                ))
            }
        };
        if let Some(prev) = layers.last().map(|l: &LayerSpec| l.outputs) {
            if prev != inputs {
                return Err(spec_err(
                    format!("layers[{i}].inputs"),
                    format!(
                        "must equal layers[{}].outputs = {prev}, got {inputs}",
                        i - 1
                    ),
                ));
            }
        }
        layers.push(LayerSpec {
            inputs,
            outputs,
            activation,
        });
    }
    let params: u64 = layers
        .iter()
        .map(|l| (l.inputs as u64 + 1) * l.outputs as u64)
        .sum();
    if params > MAX_PARAMS {
        return Err(spec_err(
            "layers",
            format!(
                "{params} parameters ({:.1} GiB per copy of the weights) exceed the limit of {MAX_PARAMS} (2 GiB)",
                params as f64 * 8.0 / (1u64 << 30) as f64
            ),
        ));
    }
    Ok(layers)
}

/// The dotted key (`optimizer.beta1_fx`, `layers[1].inputs`) written at
/// byte `at` of a spec, for a TOML parse error whose span points there:
/// the key of that line (or the table its header opens) under the last
/// header above it. None where the line holds no key (a value continued
/// from an earlier line, inline tables).
fn toml_key_at(text: &str, at: usize) -> Option<String> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = text[line_start..line_end].trim();
    let header = |l: &str| -> Option<(String, bool)> {
        let l = l.split('#').next().unwrap_or("").trim();
        if let Some(name) = l.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")) {
            return Some((name.trim().to_string(), true));
        }
        let name = l.strip_prefix('[').and_then(|r| r.strip_suffix(']'))?;
        Some((name.trim().to_string(), false))
    };
    let bare = |k: &str| -> Option<String> {
        let k = k.trim().trim_matches('"').trim_matches('\'');
        let ok = !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
        ok.then(|| k.to_string())
    };
    // the table the line sits in, with its index when it is an array of tables
    let before = &text[..line_start];
    let table = before.lines().rev().find_map(header).map(|(name, array)| {
        if array {
            let n = before
                .lines()
                .filter(|l| header(l).is_some_and(|(h, a)| a && h == name))
                .count();
            format!("{name}[{}]", n.saturating_sub(1))
        } else {
            name
        }
    });
    let key = match header(line) {
        Some((name, _)) => return bare(&name),
        None => bare(line.split_once('=')?.0)?,
    };
    Some(match table {
        Some(t) => format!("{t}.{key}"),
        None => key,
    })
}

impl ModelSpec {
    /// Parse and validate a TOML spec.
    pub fn from_toml_str(text: &str) -> Result<Self> {
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let msg = e.message().trim_end().to_string();
            match e.span() {
                Some(span) => {
                    let at = span.start.min(text.len());
                    let line = text[..at].matches('\n').count() + 1;
                    match toml_key_at(text, at) {
                        Some(key) => spec_err(key, format!("{msg} (line {line})")),
                        None => spec_err(format!("<line {line}>"), msg),
                    }
                }
                None => spec_err("<document>", msg),
            }
        })?;
        if let Some(v) = raw.format_version {
            if v != SPEC_FORMAT_VERSION {
                return Err(spec_err(
                    "format_version",
                    format!(
                        "unsupported version {v}; this zkstep reads version {SPEC_FORMAT_VERSION}"
                    ),
                ));
            }
        }
        if let Some(s) = raw.scale {
            if s != SCALE {
                return Err(spec_err(
                    "scale",
                    format!("only scale {SCALE} (10^9) is supported, got {s}"),
                ));
            }
        }
        let batch = raw
            .batch_size
            .ok_or_else(|| spec_err("batch_size", "missing"))?;
        if batch < 1 || batch as u64 > MAX_BATCH as u64 {
            return Err(spec_err(
                "batch_size",
                format!("must be in 1..={MAX_BATCH}, got {batch}"),
            ));
        }
        let rounding = match raw.rounding.as_deref() {
            None | Some("half-up") => Rounding::HalfUp,
            Some("floor") => Rounding::Floor,
            Some(other) => {
                return Err(spec_err(
                    "rounding",
                    format!("unknown rule `{other}` (expected `half-up` or `floor`)"),
                ))
            }
        };
        let bits = raw.value_bits.unwrap_or(64);
        if !(16..=64).contains(&bits) {
            return Err(spec_err(
                "value_bits",
                format!("must be in 16..=64, got {bits}"),
            ));
        }
        let loss = match raw.loss.as_deref() {
            None | Some("mse") => Loss::Mse,
            Some("cross_entropy") => Loss::CrossEntropy,
            Some(other) => {
                return Err(spec_err(
                    "loss",
                    format!("unknown loss `{other}` (supported: `mse`, `cross_entropy`)"),
                ))
            }
        };
        let optimizer = parse_optimizer(raw.optimizer)?;
        let layers = parse_layers(raw.layers)?;
        let classes = layers.last().map_or(0, |l| l.outputs);
        if loss == Loss::CrossEntropy && classes < 2 {
            return Err(spec_err(
                "loss",
                format!("cross_entropy needs at least 2 outputs (classes), the last layer has {classes}"),
            ));
        }
        let spec = ModelSpec {
            layers,
            batch_size: batch as usize,
            loss,
            optimizer,
            rounding,
            value_range: ValueRange { bits: bits as u32 },
        };
        Ok(spec)
    }

    /// Read and validate a spec file.
    pub fn from_file(path: &std::path::Path) -> Result<Self> {
        let bytes = crate::input::read_input(path, crate::input::Input::Spec)?;
        let text = String::from_utf8(bytes).map_err(|_| CoreError::File {
            path: path.to_path_buf(),
            msg: "is not UTF-8 text (a spec is a TOML file)".into(),
        })?;
        Self::from_toml_str(&text).map_err(|e| e.in_file(path))
    }

    /// Render as TOML that parses back to the same spec (exact `_fx` parameters).
    pub fn to_toml(&self) -> String {
        let mut s = format!(
            "format_version = {SPEC_FORMAT_VERSION}\nbatch_size = {}\nscale = {SCALE}\nrounding = \"{}\"\nvalue_bits = {}\nloss = \"{}\"\n\n[optimizer]\n",
            self.batch_size,
            self.rounding.name(),
            self.value_range.bits,
            self.loss.name()
        );
        match self.optimizer {
            Optimizer::Sgd { lr_fx } => s += &format!("kind = \"sgd\"\nlr_fx = {lr_fx}\n"),
            Optimizer::Momentum { lr_fx, mu_fx } => {
                s += &format!("kind = \"momentum\"\nlr_fx = {lr_fx}\nmu_fx = {mu_fx}\n")
            }
            Optimizer::Adam(h) => {
                s += &format!("kind = \"{}\"\n", self.optimizer.kind());
                for (key, v) in h.fields() {
                    s += &format!("{key} = {v}\n");
                }
            }
        }
        for l in &self.layers {
            let act = match l.activation {
                Activation::Relu => "relu",
                Activation::Identity => "identity",
            };
            s += &format!(
                "\n[[layers]]\ninputs = {}\noutputs = {}\nactivation = \"{act}\"\n",
                l.inputs, l.outputs
            );
        }
        s
    }

    /// Input width of the network.
    pub fn input_width(&self) -> usize {
        self.layers[0].inputs
    }
    /// Output width of the network.
    pub fn output_width(&self) -> usize {
        self.layers[self.layers.len() - 1].outputs
    }
    /// Widest layer input (the padded row width of commitments).
    pub fn max_inputs(&self) -> usize {
        self.layers.iter().map(|l| l.inputs).max().unwrap_or(0)
    }
    /// Width of a unit's weight row in a parameter record: the widest input,
    /// rounded up to whole hash blocks (`RECORD_BLOCK` values, one Poseidon
    /// permutation of packed values) when it is wider than
    /// `SEGMENT_MIN_WIDTH`, so that a row can be hashed a segment of blocks
    /// at a time (a fold may then hold part of a row). A function of the spec
    /// alone, so Commit(θ) does not depend on how a proof is cut into folds.
    pub fn record_width(&self) -> usize {
        let n = self.max_inputs();
        if n > SEGMENT_MIN_WIDTH {
            n.div_ceil(RECORD_BLOCK) * RECORD_BLOCK
        } else {
            n
        }
    }
    /// Total number of trainable parameters.
    pub fn num_params(&self) -> usize {
        self.layers.iter().map(|l| l.outputs * (l.inputs + 1)).sum()
    }

    /// The MSE gradient constant c = round(2S / (B·d_out)) at scale S.
    pub fn mse_grad_c(&self) -> i64 {
        let den = (self.batch_size * self.output_width()) as i128;
        ((2 * SCALE as i128 + den / 2) / den) as i64
    }

    /// The loss gradient's constant: MSE's [`ModelSpec::mse_grad_c`], or
    /// cross-entropy's round(S/B).
    pub fn loss_grad_c(&self) -> i64 {
        match self.loss {
            Loss::Mse => self.mse_grad_c(),
            Loss::CrossEntropy => crate::softmax::ce_grad_c(self.batch_size) as i64,
        }
    }

    /// Canonical byte encoding: JSON with a fixed key order and only integers.
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let layers: Vec<serde_json::Value> = self
            .layers
            .iter()
            .map(|l| {
                serde_json::json!([
                    l.inputs,
                    l.outputs,
                    match l.activation {
                        Activation::Relu => "relu",
                        Activation::Identity => "identity",
                    }
                ])
            })
            .collect();
        let opt = match self.optimizer {
            Optimizer::Sgd { lr_fx } => serde_json::json!(["sgd", lr_fx]),
            Optimizer::Momentum { lr_fx, mu_fx } => serde_json::json!(["momentum", lr_fx, mu_fx]),
            Optimizer::Adam(h) => {
                let mut v = vec![serde_json::json!(self.optimizer.kind())];
                v.extend(h.fields().iter().map(|(_, x)| serde_json::json!(x)));
                serde_json::Value::Array(v)
            }
        };
        // An array, not an object: the order is the encoding and cannot drift.
        let v = serde_json::json!([
            "zkstep-spec",
            SPEC_FORMAT_VERSION,
            SCALE,
            self.rounding.name(),
            self.value_range.bits,
            self.batch_size,
            self.loss.name(),
            self.loss_grad_c(),
            opt,
            layers
        ]);
        v.to_string().into_bytes()
    }

    /// `spec_digest`: SHA3-256 of the canonical encoding, truncated to 248 bits so it is a field element.
    pub fn digest(&self) -> Fr {
        let h = Sha3_256::digest(self.canonical_bytes());
        let mut b = [0u8; 32];
        b.copy_from_slice(&h);
        fr_from_digest_bytes(&b)
    }
}

/// Values in one hash block of a parameter record (3 packed a field element,
/// 23 elements a permutation).
pub const RECORD_BLOCK: usize = 69;
/// Rows wider than this are padded to whole blocks in records (see
/// [`ModelSpec::record_width`]); narrower rows always fit one fold whole.
pub const SEGMENT_MIN_WIDTH: usize = 256;

/// The built-in demo spec: 2-16-16-1 with ReLU, MSE, SGD, batch 8.
pub fn demo_spec() -> ModelSpec {
    // Learning rate chosen so the two-moons demo converges within a few hundred steps.
    ModelSpec::from_toml_str(DEMO_SPEC_TOML)
        .unwrap_or_else(|e| unreachable!("built-in demo spec is valid: {e}"))
}

/// TOML of the built-in demo spec.
pub const DEMO_SPEC_TOML: &str = r#"# zkstep demo: a 2-16-16-1 MLP on two moons
batch_size = 8
rounding = "half-up"
loss = "mse"

[optimizer]
kind = "sgd"
lr = 0.1

[[layers]]
inputs = 2
outputs = 16
activation = "relu"

[[layers]]
inputs = 16
outputs = 16
activation = "relu"

[[layers]]
inputs = 16
outputs = 1
activation = "identity"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_spec_parses_and_round_trips() {
        let s = demo_spec();
        assert_eq!(s.layers.len(), 3);
        assert_eq!(s.optimizer, Optimizer::Sgd { lr_fx: 100_000_000 });
        let again = ModelSpec::from_toml_str(&s.to_toml()).unwrap();
        assert_eq!(again, s);
        assert_eq!(again.digest(), s.digest());
    }

    #[test]
    fn digest_changes_with_every_field() {
        let s = demo_spec();
        let mut t = s.clone();
        t.optimizer = Optimizer::Sgd { lr_fx: 100_000_001 };
        assert_ne!(s.digest(), t.digest());
        let mut t = s.clone();
        t.batch_size = 9;
        assert_ne!(s.digest(), t.digest());
        let mut t = s.clone();
        t.layers[2].activation = Activation::Relu;
        assert_ne!(s.digest(), t.digest());
        let mut t = s.clone();
        t.rounding = Rounding::Floor;
        assert_ne!(s.digest(), t.digest());
        let mut t = s.clone();
        t.value_range.bits = 48;
        assert_ne!(s.digest(), t.digest());
    }

    fn err_of(text: &str) -> String {
        ModelSpec::from_toml_str(text).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_key() {
        let base = "batch_size = 4\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 3\n";
        assert!(ModelSpec::from_toml_str(base).is_ok());
        assert!(
            err_of("batch_size = 0\n[optimizer]\nlr=0.1\n[[layers]]\ninputs=1\noutputs=1\n")
                .contains("batch_size")
        );
        assert!(err_of(&base.replace("lr = 0.1", "lr = -1")).contains("optimizer.lr"));
        assert!(
            err_of(&format!("{base}[[layers]]\ninputs = 4\noutputs = 1\n"))
                .contains("layers[1].inputs")
        );
        assert!(
            err_of(&base.replace("inputs = 2", "inputs = 2\nactivation = \"tanh\""))
                .contains("layers[0].activation")
        );
        assert!(err_of(&format!("{base}bogus = 1\n")).contains("bogus"));
        assert!(err_of("batch_size = \n").contains("line"));
        assert!(
            err_of(&base.replace("lr = 0.1", "kind = \"momentum\"\nlr = 0.1"))
                .contains("optimizer.mu")
        ); // μ must lie in (0, 1); the error names the key the user wrote
        let mom =
            |mu: &str| base.replace("lr = 0.1", &format!("kind = \"momentum\"\nlr = 0.1\n{mu}"));
        let e = err_of(&mom("mu_fx = 1000000000"));
        assert!(
            e.contains("optimizer.mu_fx") && e.contains("below 1"),
            "{e}"
        );
        let e = err_of(&mom("mu = 1.0"));
        assert!(e.contains("`optimizer.mu`"), "{e}");
        assert!(err_of(&mom("mu_fx = 0")).contains("optimizer.mu_fx"));
        assert!(ModelSpec::from_toml_str(&mom("mu_fx = 999999999")).is_ok());
        // parse errors name the key the user wrote (and its line), not only the line
        for (text, key) in [
            (base.replace("batch_size", "batch_sise"), "`batch_sise`"),
            (base.replace("lr = 0.1", "lr = 0.1\nbeta1_fx = \"abc\""), "`optimizer.beta1_fx`"),
            (base.replace("lr = 0.1", "lr = 0.1\nlearning_rate = 1"), "`optimizer.learning_rate`"),
            (format!("{base}[[layers]]\ninputs = \"4\"\n"), "`layers[1].inputs`"),
            (base.replace("[optimizer]", "[optimiser]"), "`optimiser`"),
        ] {
            let e = err_of(&text);
            assert!(e.contains(key) && e.contains("(line "), "{text}: {e}");
        }
        assert!(err_of("batch_size = 4\n[optimizer]\nlr = 0.1\n[[layers]]\n[[layers]]\ninputs = 2\noutputs = 3\nfoo = 1\n").contains("`layers[1].foo`"));
        // the cap and the sign say what they are
        let e = err_of(&base.replace("lr = 0.1", "lr = 1e12"));
        assert!(e.contains("at most 1e9"), "{e}");
        let adamw = |wd: &str| base.replace("lr = 0.1", &format!("kind = \"adamw\"\n{wd}"));
        for (wd, key) in [("weight_decay = -0.01", "`optimizer.weight_decay`"), ("weight_decay_fx = -5", "`optimizer.weight_decay_fx`")] {
            let e = err_of(&adamw(wd));
            assert!(e.contains(key) && e.contains("must be ≥ 0"), "{e}");
        }
    }

    #[test]
    fn adam_keys_defaults_and_errors() {
        let base = "batch_size = 4\n[optimizer]\nlr = 0.1\n[[layers]]\ninputs = 2\noutputs = 3\n";
        let with = |opt: &str| base.replace("lr = 0.1", opt);
        // PyTorch's defaults for what is not given
        let adam = ModelSpec::from_toml_str(&with("kind = \"adam\"")).unwrap();
        assert_eq!(
            adam.optimizer.adam(),
            Some(AdamHyper::pytorch_default(false))
        );
        let adamw = ModelSpec::from_toml_str(&with("kind = \"adamw\"\nlr = 0.01")).unwrap();
        let h = adamw.optimizer.adam().unwrap();
        assert!(h.decoupled && h.weight_decay_fx == 10_000_000 && h.lr_fx == 10_000_000);
        assert_eq!(adamw.optimizer.state_names(), &["m", "v"]);
        let custom = ModelSpec::from_toml_str(&with(
            "kind = \"adam\"\nbeta1 = 0.8\nbeta2_fx = 990000000\neps = 1e-6\nweight_decay = 0",
        ))
        .unwrap();
        let h = custom.optimizer.adam().unwrap();
        assert_eq!(
            (h.beta1_fx, h.beta2_fx, h.eps_fx, h.weight_decay_fx),
            (800_000_000, 990_000_000, 1000, 0)
        );
        // round trip and distinct digests
        for s in [&adam, &adamw, &custom] {
            assert_eq!(&ModelSpec::from_toml_str(&s.to_toml()).unwrap(), s);
        }
        assert_ne!(adam.digest(), adamw.digest());
        assert_ne!(adam.digest(), custom.digest());
        let mut flipped = adam.clone();
        if let Optimizer::Adam(h) = &mut flipped.optimizer {
            h.decoupled = true;
        }
        assert_ne!(adam.digest(), flipped.digest());
        // errors name the key
        for (opt, key) in [
            ("kind = \"adam\"\nbeta1 = 1.0", "optimizer.beta1"),
            (
                "kind = \"adam\"\nbeta2_fx = 1000000000",
                "optimizer.beta2_fx",
            ),
            ("kind = \"adam\"\neps = 0", "optimizer.eps"),
            (
                "kind = \"adamw\"\nweight_decay = 2",
                "optimizer.weight_decay",
            ),
            ("kind = \"adam\"\nmu = 0.9", "optimizer.mu"),
            ("kind = \"sgd\"\nlr = 0.1\nbeta1 = 0.9", "optimizer.beta1"),
            (
                "kind = \"momentum\"\nlr = 0.1\nmu = 0.9\neps = 1e-8",
                "optimizer.eps",
            ),
            ("kind = \"adamax\"", "optimizer.kind"),
        ] {
            let e = err_of(&with(opt));
            assert!(e.contains(key), "{opt}: {e}");
        }
    }

    #[test]
    fn mse_constant() {
        let s = demo_spec();
        assert_eq!(s.mse_grad_c(), 250_000_000); // 2/(8·1)
    }
}
