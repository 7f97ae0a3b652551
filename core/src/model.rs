//! Parameters (θ: weights, biases, optimizer state), batches, and random
//! initialisation, with shape and range validation against a spec.

use crate::error::{CoreError, Result};
use crate::fixed::{to_fixed, SCALE};
use crate::poseidon::{fr_from_digest_bytes, Fr};
use crate::spec::{Activation, ModelSpec};
use crate::tensor::Matrix;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// One optimizer state tensor of a layer: a value per weight and per bias
/// (momentum's velocity, Adam's first or second moment).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateTensor {
    /// Per weight, `[outputs, inputs]`.
    pub w: Matrix,
    /// Per bias, `[outputs]`.
    pub b: Vec<i64>,
}

impl StateTensor {
    /// All zeros (the state before the first update).
    pub fn zeros(outputs: usize, inputs: usize) -> Self {
        StateTensor {
            w: Matrix::zeros(outputs, inputs),
            b: vec![0; outputs],
        }
    }
}

/// Parameters of one dense layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerParams {
    /// Weights, `[outputs, inputs]`.
    pub w: Matrix,
    /// Biases, `[outputs]`.
    pub b: Vec<i64>,
    /// The optimizer's state tensors, in [`crate::spec::Optimizer::state_names`]
    /// order (empty for SGD).
    pub state: Vec<StateTensor>,
}

impl LayerParams {
    /// Zero optimizer state for `spec`'s optimizer on a layer of this shape.
    pub fn zero_state(spec: &ModelSpec, outputs: usize, inputs: usize) -> Vec<StateTensor> {
        spec.optimizer
            .state_names()
            .iter()
            .map(|_| StateTensor::zeros(outputs, inputs))
            .collect()
    }
}

/// θ_t: every layer's parameters and optimizer state, plus the step index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Number of steps taken to reach this checkpoint.
    pub step: u64,
    /// Layers, input to output.
    pub layers: Vec<LayerParams>,
}

/// One batch: inputs X `[B, d_in]`, targets Y `[B, d_out]`, and the commitment salt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Inputs at scale S.
    pub x: Matrix,
    /// Targets at scale S.
    pub y: Matrix,
    /// Random salt hiding low-entropy labels inside `c_batch`.
    pub salt: Fr,
}

fn shape_err(what: String, expected: String, got: String) -> CoreError {
    CoreError::Shape {
        what,
        expected,
        got,
    }
}

fn check_matrix(what: String, m: &Matrix, rows: usize, cols: usize) -> Result<()> {
    if m.rows != rows || m.cols != cols || m.data.len() != rows * cols {
        return Err(shape_err(what, format!("[{rows}, {cols}]"), m.shape_str()));
    }
    Ok(())
}

fn check_range(
    spec: &ModelSpec,
    layer: usize,
    tensor: &'static str,
    data: &[i64],
    cols: usize,
) -> Result<()> {
    let r = spec.value_range;
    if r.bits >= 64 {
        return Ok(());
    }
    for (n, &v) in data.iter().enumerate() {
        if !r.contains(v as i128) {
            return Err(CoreError::range(
                layer,
                tensor,
                format!("({},{})", n / cols.max(1), n % cols.max(1)),
                format!("{v} is outside the declared {}-bit range", r.bits),
            ));
        }
    }
    Ok(())
}

impl Checkpoint {
    /// Check shapes (and the declared value range) against a spec.
    pub fn validate(&self, spec: &ModelSpec) -> Result<()> {
        if self.layers.len() != spec.layers.len() {
            return Err(shape_err(
                "number of layers".into(),
                spec.layers.len().to_string(),
                self.layers.len().to_string(),
            ));
        }
        for (i, (lp, ls)) in self.layers.iter().zip(&spec.layers).enumerate() {
            let l = i + 1;
            check_matrix(format!("layer {l} W"), &lp.w, ls.outputs, ls.inputs)?;
            if lp.b.len() != ls.outputs {
                return Err(shape_err(
                    format!("layer {l} b"),
                    format!("[{}]", ls.outputs),
                    format!("[{}]", lp.b.len()),
                ));
            }
            check_range(spec, l, "W", &lp.w.data, ls.inputs)?;
            check_range(spec, l, "b", &lp.b, 1)?;
            let names = spec.optimizer.state_names();
            if lp.state.len() != names.len() {
                return Err(shape_err(
                    format!("layer {l} optimizer state"),
                    format!(
                        "{} tensor pair(s) for the `{}` optimizer",
                        names.len(),
                        spec.optimizer.kind()
                    ),
                    format!("{}", lp.state.len()),
                ));
            }
            for (st, name) in lp.state.iter().zip(names) {
                check_matrix(format!("layer {l} {name}W"), &st.w, ls.outputs, ls.inputs)?;
                if st.b.len() != ls.outputs {
                    return Err(shape_err(
                        format!("layer {l} {name}b"),
                        format!("[{}]", ls.outputs),
                        format!("[{}]", st.b.len()),
                    ));
                }
                check_range(spec, l, "state W", &st.w.data, ls.inputs)?;
                check_range(spec, l, "state b", &st.b, 1)?;
            }
        }
        Ok(())
    }

    /// [`Checkpoint::init`], refusing a spec whose declared `value_bits` cannot
    /// hold the initial weights (they would be set to 0, a model that cannot
    /// learn); the error says how many do not fit.
    pub fn init_checked(spec: &ModelSpec, seed: u64) -> Result<Self> {
        let (ck, lost) = Self::init_counting(spec, seed);
        if lost > 0 {
            return Err(CoreError::Invalid(format!(
                "{lost} of {} initial weights do not fit value_bits = {} (they would be 0); declare a wider value_bits or import weights that fit",
                spec.layers.iter().map(|l| l.inputs * l.outputs).sum::<usize>(),
                spec.value_range.bits
            )));
        }
        Ok(ck)
    }

    /// A random initial checkpoint: He-uniform weights for ReLU layers,
    /// Xavier-uniform for identity layers, zero biases and zero velocities.
    /// A weight that does not fit the declared range is 0 (see
    /// [`Checkpoint::init_checked`]).
    pub fn init(spec: &ModelSpec, seed: u64) -> Self {
        Self::init_counting(spec, seed).0
    }

    /// The initial checkpoint and how many weights did not fit.
    fn init_counting(spec: &ModelSpec, seed: u64) -> (Self, usize) {
        let mut lost = 0usize;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let range = spec.value_range;
        let layers = spec
            .layers
            .iter()
            .map(|ls| {
                let gain = match ls.activation {
                    Activation::Relu => 6.0 / ls.inputs as f64,
                    Activation::Identity => 6.0 / (ls.inputs + ls.outputs) as f64,
                };
                let bound = gain.sqrt();
                let data = (0..ls.outputs * ls.inputs)
                    .map(|_| {
                        to_fixed(rng.gen_range(-bound..bound), range).unwrap_or_else(|| {
                            lost += 1;
                            0
                        })
                    })
                    .collect();
                let w = Matrix {
                    rows: ls.outputs,
                    cols: ls.inputs,
                    data,
                };
                LayerParams {
                    w,
                    b: vec![0; ls.outputs],
                    state: LayerParams::zero_state(spec, ls.outputs, ls.inputs),
                }
            })
            .collect();
        (Checkpoint { step: 0, layers }, lost)
    }
}

impl Batch {
    /// Check shapes and ranges against a spec.
    pub fn validate(&self, spec: &ModelSpec) -> Result<()> {
        check_matrix(
            "batch X".into(),
            &self.x,
            spec.batch_size,
            spec.input_width(),
        )?;
        check_matrix(
            "batch Y".into(),
            &self.y,
            spec.batch_size,
            spec.output_width(),
        )?;
        check_range(spec, 0, "X", &self.x.data, self.x.cols)?;
        check_range(spec, 0, "Y", &self.y.data, self.y.cols)?;
        Ok(())
    }
}

/// A fresh random salt for a batch commitment.
pub fn random_salt<R: RngCore>(rng: &mut R) -> Fr {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    fr_from_digest_bytes(&b)
}

/// A deterministic salt (for reproducible demos and tests).
pub fn seeded_salt(seed: u64, step: u64) -> Fr {
    let mut rng =
        ChaCha20Rng::seed_from_u64(seed ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ SCALE as u64);
    random_salt(&mut rng)
}
