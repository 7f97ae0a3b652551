//! `zkstep._native`: the Python package's extension module (PyO3, abi3).
//!
//! Thin wrappers over the crates the CLI uses — specs and checkpoint files
//! (zkstep-core), keys and proving (zkstep-prover), verification
//! (zkstep-verifier), run directories (zkstep-cli) — so a Python caller
//! gets the same files, the same checks and the same error messages. The
//! Python side (`python/zkstep/`) adds numpy and PyTorch adapters only.
//!
//! Long work (keygen, prove, verify) releases the GIL; prove calls back
//! into Python between folds for progress and to notice Ctrl-C, and stops
//! there with `KeyboardInterrupt`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zkstep_core::commit::{commit_batch, commit_params};
use zkstep_core::format::{self, quantise};
use zkstep_core::input::{read_input, Input};
use zkstep_core::poseidon::{fr_from_hex, fr_to_hex};
use zkstep_core::tensor::Matrix;
use zkstep_prover::ivc::{self, ProveEvent, Setup};

create_exception!(
    _native,
    ZkstepError,
    PyException,
    "A zkstep error: a bad file or value (the message names which), or a failed operation."
);
create_exception!(
    _native,
    VerifyError,
    ZkstepError,
    "A proof that does not verify against the key, the statement or the files given."
);

/// Run `f` with file descriptor 1 silenced: halo2curves 0.9 (under
/// nova-snark) prints a debug line to stdout for every G2 point it checks
/// (reading or deriving a verifying key), and a library must not print.
/// Python's own output written meanwhile from another thread is lost too.
fn quiet<T>(f: impl FnOnce() -> T) -> T {
    let _gag = gag::Gag::stdout().ok();
    f()
}

/// Any displayable error as a `ZkstepError` with its message.
fn err(e: impl std::fmt::Display) -> PyErr {
    ZkstepError::new_err(e.to_string())
}

/// A model spec: layer widths, activations, loss, optimizer, batch size.
#[pyclass(module = "zkstep._native", frozen)]
#[derive(Clone)]
struct Spec {
    inner: zkstep_core::ModelSpec,
}

#[pymethods]
impl Spec {
    /// Parse a spec from TOML text (the format of `zkstep example-spec`).
    #[staticmethod]
    fn from_toml(text: &str) -> PyResult<Self> {
        Ok(Spec {
            inner: zkstep_core::ModelSpec::from_toml_str(text).map_err(err)?,
        })
    }

    /// Read a spec file.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        Ok(Spec {
            inner: zkstep_core::ModelSpec::from_file(&path).map_err(err)?,
        })
    }

    /// The demo's spec (2-16-16-1, MSE, SGD, batch 8).
    #[staticmethod]
    fn demo() -> Self {
        Spec {
            inner: zkstep_core::spec::demo_spec(),
        }
    }

    /// The spec as TOML.
    fn to_toml(&self) -> String {
        self.inner.to_toml()
    }

    /// Write the spec as TOML (refusing to replace a file unless `force`).
    #[pyo3(signature = (path, force = false))]
    fn save(&self, path: PathBuf, force: bool) -> PyResult<()> {
        format::write_as(&path, self.inner.to_toml().as_bytes(), force).map_err(err)
    }

    /// The spec's digest (hex), which keys, proofs and files carry.
    #[getter]
    fn digest(&self) -> String {
        fr_to_hex(&self.inner.digest())
    }

    /// Widths from input to output: `[inputs, outputs of layer 1, …]`.
    #[getter]
    fn widths(&self) -> Vec<usize> {
        std::iter::once(self.inner.input_width())
            .chain(self.inner.layers.iter().map(|l| l.outputs))
            .collect()
    }

    /// Samples a batch holds.
    #[getter]
    fn batch_size(&self) -> usize {
        self.inner.batch_size
    }

    /// The optimizer's kind: `sgd`, `momentum`, `adam` or `adamw`.
    #[getter]
    fn optimizer(&self) -> &'static str {
        self.inner.optimizer.kind()
    }

    /// The loss: `mse` or `cross_entropy`.
    #[getter]
    fn loss(&self) -> &'static str {
        match self.inner.loss {
            zkstep_core::spec::Loss::Mse => "mse",
            zkstep_core::spec::Loss::CrossEntropy => "cross_entropy",
        }
    }

    /// Trainable parameters (weights and biases).
    #[getter]
    fn num_params(&self) -> usize {
        self.inner.num_params()
    }

    /// The names of a checkpoint's tensors, in file order.
    fn tensor_names(&self) -> Vec<String> {
        format::checkpoint_tensor_names(&self.inner)
    }

    fn __eq__(&self, other: &Spec) -> bool {
        self.inner.digest() == other.inner.digest()
    }

    fn __repr__(&self) -> String {
        format!(
            "Spec(widths={:?}, loss={:?}, optimizer={:?}, batch_size={})",
            self.widths(),
            self.loss(),
            self.optimizer(),
            self.inner.batch_size
        )
    }
}

/// One tensor handed over from Python: (dtype name, shape, little-endian bytes).
type RawTensor = (String, Vec<usize>, Vec<u8>);

/// Safetensors bytes of tensors handed over from Python, so that they are
/// read by the same code (and checks, and messages) as a file would be.
fn safetensors_of(label: &Path, tensors: &[(String, RawTensor)]) -> PyResult<Vec<u8>> {
    use safetensors::tensor::{Dtype, TensorView};
    let mut views = Vec::with_capacity(tensors.len());
    for (name, (dtype, shape, data)) in tensors {
        let dt = match dtype.as_str() {
            "float32" => Dtype::F32,
            "float64" => Dtype::F64,
            "int64" => Dtype::I64,
            other => {
                return Err(err(format!(
                    "{}: tensor `{name}` has dtype {other}; give float32, float64 or int64",
                    label.display()
                )))
            }
        };
        let view = TensorView::new(dt, shape.clone(), data)
            .map_err(|e| err(format!("{}: tensor `{name}`: {e}", label.display())))?;
        views.push((name.clone(), view));
    }
    // integer arrays are fixed point already, at the scale this metadata declares
    let meta = std::collections::HashMap::from([("scale".to_string(), zkstep_core::SCALE.to_string())]);
    safetensors::serialize(views, Some(meta)).map_err(|e| err(format!("{}: {e}", label.display())))
}

/// A quantisation report as a dict.
fn report_dict<'py>(py: Python<'py>, r: &format::QuantReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("count", r.count)?;
    d.set_item("max_abs_err", r.max_abs_err)?;
    d.set_item("mean_abs_err", r.mean_abs_err)?;
    Ok(d)
}

/// A checkpoint θ_t of a spec: fixed-point weights, biases and optimizer state.
#[pyclass(module = "zkstep._native", frozen)]
#[derive(Clone)]
struct Checkpoint {
    inner: zkstep_core::Checkpoint,
    spec: zkstep_core::ModelSpec,
}

#[pymethods]
impl Checkpoint {
    /// Read a checkpoint file of `spec`.
    #[staticmethod]
    fn load(spec: &Spec, path: PathBuf) -> PyResult<Self> {
        Ok(Checkpoint {
            inner: format::read_checkpoint(&path, &spec.inner).map_err(err)?,
            spec: spec.inner.clone(),
        })
    }

    /// A random initial checkpoint (the one `zkstep init --seed` writes).
    #[staticmethod]
    #[pyo3(signature = (spec, seed = 0))]
    fn init(spec: &Spec, seed: u64) -> Self {
        Checkpoint {
            inner: zkstep_core::Checkpoint::init(&spec.inner, seed),
            spec: spec.inner.clone(),
        }
    }

    /// Quantise float tensors into a checkpoint: `tensors` maps zkstep's
    /// names (`l1.w`, …) or PyTorch's (`0.weight`, `0.bias`, …) to
    /// (dtype, shape, bytes); `optimizer_state` maps `state.{i}.{key}` the
    /// same way (PyTorch's optimizer state, flattened; Adam's `step`
    /// becomes the checkpoint's step). `label` names the source in errors.
    /// Returns the checkpoint and the quantisation report.
    #[staticmethod]
    #[pyo3(signature = (spec, tensors, optimizer_state = None, step = None, label = "<tensors>".to_string()))]
    fn import_tensors<'py>(
        py: Python<'py>,
        spec: &Spec,
        tensors: Vec<(String, RawTensor)>,
        optimizer_state: Option<Vec<(String, RawTensor)>>,
        step: Option<u64>,
        label: String,
    ) -> PyResult<(Self, Bound<'py, PyDict>)> {
        let path = PathBuf::from(label);
        let bytes = safetensors_of(&path, &tensors)?;
        let (mut ck, mut rep) = format::import_checkpoint_bytes(&path, &bytes, &spec.inner).map_err(err)?;
        if let Some(st) = optimizer_state {
            let sp = PathBuf::from(format!("{} (optimizer state)", path.display()));
            let bytes = safetensors_of(&sp, &st)?;
            zkstep_core::torch_state::import_optimizer_state_bytes(&sp, &bytes, &spec.inner, &mut ck, &mut rep)
                .map_err(err)?;
        }
        if let Some(t) = step {
            ck.step = t;
        }
        let d = report_dict(py, &rep)?;
        Ok((
            Checkpoint {
                inner: ck,
                spec: spec.inner.clone(),
            },
            d,
        ))
    }

    /// Write the checkpoint file (refusing to replace one unless `force`).
    #[pyo3(signature = (path, force = false))]
    fn save(&self, path: PathBuf, force: bool) -> PyResult<()> {
        format::write_checkpoint_as(&path, &self.spec, &self.inner, force).map_err(err)
    }

    /// The step t this checkpoint is θ_t of.
    #[getter]
    fn step(&self) -> u64 {
        self.inner.step
    }

    /// The Poseidon-chain Commit(θ_t) as hex: what run.json records, and
    /// what proofs under chain keys name this checkpoint by (under keys on
    /// KZG points, the default, `VerifyingKey.commitment(checkpoint)`).
    fn commitment(&self) -> String {
        fr_to_hex(&commit_params(&self.spec, &self.inner))
    }

    /// Every tensor as (name, shape, int64 bytes, scale): the scale is 10⁹,
    /// or 10¹⁸ for Adam's moments.
    fn tensors<'py>(&self, py: Python<'py>) -> Vec<(String, Vec<usize>, Bound<'py, PyBytes>, u64)> {
        let bytes = |v: &[i64]| PyBytes::new(py, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
        let s = zkstep_core::SCALE as u64;
        let state_scale = if self.spec.optimizer.adam().is_some() { s * s } else { s };
        let mut out = vec![];
        for (i, lp) in self.inner.layers.iter().enumerate() {
            let l = i + 1;
            out.push((format!("l{l}.w"), vec![lp.w.rows, lp.w.cols], bytes(&lp.w.data), s));
            out.push((format!("l{l}.b"), vec![lp.b.len()], bytes(&lp.b), s));
            for (st, name) in lp.state.iter().zip(self.spec.optimizer.state_names()) {
                out.push((format!("l{l}.{name}w"), vec![st.w.rows, st.w.cols], bytes(&st.w.data), state_scale));
                out.push((format!("l{l}.{name}b"), vec![st.b.len()], bytes(&st.b), state_scale));
            }
        }
        out
    }

    /// One training step by the fixed-point reference executor: θ_{t+1} =
    /// Step(θ_t, batch), and the loss of θ_t on the batch.
    fn train_step(&self, py: Python<'_>, batch: &Batch) -> PyResult<(Checkpoint, f64)> {
        if batch.step != self.inner.step {
            return Err(err(format!(
                "the batch is for step {}, this checkpoint is θ_{}",
                batch.step, self.inner.step
            )));
        }
        let trace = py
            .detach(|| zkstep_core::step(&self.spec, &self.inner, &batch.inner))
            .map_err(err)?;
        Ok((
            Checkpoint {
                inner: trace.after,
                spec: self.spec.clone(),
            },
            trace.loss.loss,
        ))
    }

    /// [`train_step`] with docs/SEMANTICS.md §5's element-wise bound on
    /// |fixed − real| for every weight and bias of θ_{t+1} (real units),
    /// as (name, shape, float64 bytes); `input_err` is an error on every
    /// input and target (½·10⁻⁹ when the real step ran on the floats the
    /// batch was quantised from). The bounds are None when a ReLU
    /// pre-activation is within its bound of zero (its selector could differ).
    #[pyo3(signature = (batch, input_err = 0.5e-9))]
    #[allow(clippy::type_complexity)]
    fn train_step_bounded<'py>(
        &self,
        py: Python<'py>,
        batch: &Batch,
        input_err: f64,
    ) -> PyResult<(Checkpoint, f64, Option<Vec<(String, Vec<usize>, Bound<'py, PyBytes>)>>)> {
        if batch.step != self.inner.step {
            return Err(err(format!(
                "the batch is for step {}, this checkpoint is θ_{}",
                batch.step, self.inner.step
            )));
        }
        let (trace, real) = py
            .detach(|| {
                let trace = zkstep_core::step(&self.spec, &self.inner, &batch.inner)?;
                let opts = zkstep_core::bound::BoundOptions { rho: None, input_err };
                let real = zkstep_core::bound::real_step(&self.spec, &self.inner, &batch.inner, &trace, opts);
                Ok::<_, zkstep_core::CoreError>((trace, real))
            })
            .map_err(err)?;
        let bytes = |v: &[f64]| PyBytes::new(py, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
        let bounds = real.map(|layers| {
            let mut out = vec![];
            for (i, (r, ls)) in layers.iter().zip(&self.spec.layers).enumerate() {
                out.push((format!("l{}.w", i + 1), vec![ls.outputs, ls.inputs], bytes(&r.w.e)));
                out.push((format!("l{}.b", i + 1), vec![ls.outputs], bytes(&r.b.e)));
            }
            out
        });
        Ok((
            Checkpoint {
                inner: trace.after,
                spec: self.spec.clone(),
            },
            trace.loss.loss,
            bounds,
        ))
    }

    fn __eq__(&self, other: &Checkpoint) -> bool {
        self.inner == other.inner && self.spec.digest() == other.spec.digest()
    }

    fn __repr__(&self) -> String {
        format!("Checkpoint(step={}, commitment={})", self.inner.step, self.commitment())
    }
}

/// A batch of step t: inputs X, targets Y (fixed point) and the salt that
/// hides them inside its commitment.
#[pyclass(module = "zkstep._native", frozen)]
#[derive(Clone)]
struct Batch {
    inner: zkstep_core::Batch,
    spec: zkstep_core::ModelSpec,
    step: u64,
}

/// A 2-D float tensor from Python as a fixed-point matrix (its errors name `label`).
fn matrix_of(label: &Path, name: &str, t: &RawTensor, range: zkstep_core::fixed::ValueRange) -> PyResult<Matrix> {
    let (dtype, shape, data) = t;
    let [rows, cols] = shape[..] else {
        return Err(err(format!("{}: `{name}` has shape {shape:?}; give a 2-D array", label.display())));
    };
    let vals: Vec<f64> = match dtype.as_str() {
        "float64" => data.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect(),
        "float32" => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64)
            .collect(),
        other => return Err(err(format!("{}: `{name}` has dtype {other}; give float32 or float64", label.display()))),
    };
    if vals.len() != rows * cols {
        return Err(err(format!("{}: `{name}` holds {} values for shape {shape:?}", label.display(), vals.len())));
    }
    let (data, _) = quantise(label, name, &vals, range).map_err(err)?;
    Ok(Matrix { rows, cols, data })
}

#[pymethods]
impl Batch {
    /// Read a batch file of `spec`.
    #[staticmethod]
    fn load(spec: &Spec, path: PathBuf) -> PyResult<Self> {
        let (inner, step) = format::read_batch(&path, &spec.inner).map_err(err)?;
        Ok(Batch {
            inner,
            spec: spec.inner.clone(),
            step,
        })
    }

    /// Quantise float inputs `x` [B, inputs] and targets `y` [B, outputs]
    /// (each as (dtype, shape, bytes)) into the batch of step `step`, with a
    /// fresh random salt unless `salt` (hex) is given.
    #[staticmethod]
    #[pyo3(signature = (spec, x, y, step, salt = None, label = "<batch>".to_string()))]
    fn import_tensors(
        spec: &Spec,
        x: RawTensor,
        y: RawTensor,
        step: u64,
        salt: Option<String>,
        label: String,
    ) -> PyResult<Self> {
        let path = PathBuf::from(label);
        let range = spec.inner.value_range;
        let salt = match salt {
            Some(h) => fr_from_hex(&h).ok_or_else(|| {
                err(format!("salt {h:?} is not a field element as 0x and 64 hex digits (what `salt` gives)"))
            })?,
            None => zkstep_core::model::random_salt(&mut rand::thread_rng()),
        };
        let inner = zkstep_core::Batch {
            x: matrix_of(&path, "x", &x, range)?,
            y: matrix_of(&path, "y", &y, range)?,
            salt,
        };
        inner.validate(&spec.inner).map_err(|e| err(e.in_file(&path)))?;
        Ok(Batch {
            inner,
            spec: spec.inner.clone(),
            step,
        })
    }

    /// Write the batch file (refusing to replace one unless `force`).
    #[pyo3(signature = (path, force = false))]
    fn save(&self, path: PathBuf, force: bool) -> PyResult<()> {
        let bytes = format::batch_bytes(&path, &self.spec, &self.inner, self.step).map_err(err)?;
        format::write_as(&path, &bytes, force).map_err(err)
    }

    /// The step t this batch trains θ_t with.
    #[getter]
    fn step(&self) -> u64 {
        self.step
    }

    /// The salt (hex).
    #[getter]
    fn salt(&self) -> String {
        fr_to_hex(&self.inner.salt)
    }

    /// Commit(batch, salt) as hex.
    fn commitment(&self) -> String {
        fr_to_hex(&commit_batch(&self.spec, &self.inner))
    }

    /// (x, y) as int64 bytes at scale 10⁹, with their shapes.
    fn tensors<'py>(&self, py: Python<'py>) -> Vec<(String, Vec<usize>, Bound<'py, PyBytes>)> {
        let m = |name: &str, m: &Matrix| {
            let b: Vec<u8> = m.data.iter().flat_map(|x| x.to_le_bytes()).collect();
            (name.to_string(), vec![m.rows, m.cols], PyBytes::new(py, &b))
        };
        vec![m("x", &self.inner.x), m("y", &self.inner.y)]
    }

    fn __repr__(&self) -> String {
        format!("Batch(step={}, samples={})", self.step, self.inner.x.rows)
    }
}

/// Proving keys (and, derived from them, the verifying key) for one spec.
#[pyclass(module = "zkstep._native", frozen)]
struct Keys {
    inner: Arc<ivc::Keys>,
}

#[pymethods]
impl Keys {
    /// Make keys for `spec`: development parameters (a fresh τ, sound for
    /// whoever ran keygen), or ceremony parameters from `ptau_dir`;
    /// `commit_scheme` "kzg" (the default: checkpoints as KZG points, half
    /// the constraints) or "chain" (see `zkstep keygen --commit-scheme`).
    #[staticmethod]
    #[pyo3(signature = (spec, rows = None, fold_budget = zkstep_circuits::DEFAULT_FOLD_BUDGET, ptau_dir = None, commit_scheme = "kzg"))]
    fn keygen(
        py: Python<'_>,
        spec: &Spec,
        rows: Option<usize>,
        fold_budget: usize,
        ptau_dir: Option<PathBuf>,
        commit_scheme: &str,
    ) -> PyResult<Self> {
        let setup = ptau_dir.as_deref().map_or(Setup::Dev, Setup::Ceremony);
        let scheme = zkstep_circuits::state::CommitScheme::parse(commit_scheme)
            .ok_or_else(|| err(format!("commit_scheme {commit_scheme:?}: expected \"chain\" or \"kzg\"")))?;
        let keys = py
            .detach(|| quiet(|| ivc::keygen_with(&spec.inner, rows, fold_budget, None, scheme, setup)))
            .map_err(err)?;
        Ok(Keys { inner: Arc::new(keys) })
    }

    /// Read the proving key in `dir` (as `zkstep keygen --out DIR` wrote it).
    #[staticmethod]
    fn load(py: Python<'_>, dir: PathBuf) -> PyResult<Self> {
        let path = dir.join(ivc::PROVING_KEY_FILE);
        let keys = py.detach(|| quiet(|| ivc::read_proving_key(&path))).map_err(err)?;
        Ok(Keys { inner: Arc::new(keys) })
    }

    /// Write both keys into `dir` (refusing to replace them unless `force`),
    /// and for keys on KZG points their `points.key`.
    #[pyo3(signature = (dir, force = false))]
    fn save(&self, py: Python<'_>, dir: PathBuf, force: bool) -> PyResult<()> {
        std::fs::create_dir_all(&dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
        py.detach(|| ivc::write_keys_as(&dir, &self.inner, force)).map_err(err)
    }

    /// The spec these keys are for.
    #[getter]
    fn spec(&self) -> Spec {
        Spec {
            inner: self.inner.layout.spec.clone(),
        }
    }

    /// Folds a step takes.
    #[getter]
    fn folds(&self) -> usize {
        self.inner.layout.num_folds()
    }

    /// The verifying key (what a verifier needs; derived here).
    fn verifying_key(&self, py: Python<'_>) -> PyResult<VerifyingKey> {
        py.detach(|| {
            let bytes = quiet(|| ivc::verifying_key_bytes(&self.inner)).map_err(err)?;
            // keys on KZG points: the points file these keys would write
            let points = match quiet(|| ivc::points_bytes(&self.inner)).map_err(err)? {
                Some(b) => PointsAt::Bytes(b),
                None => PointsAt::Nowhere,
            };
            VerifyingKey::parse(Path::new("<verifying key of these keys>"), bytes, points)
        })
    }

    fn __repr__(&self) -> String {
        format!("Keys(folds={}, params={})", self.folds(), self.inner.params.describe())
    }
}

/// Where a verifying key's points file is (keys on KZG points).
enum PointsAt {
    /// None (chain keys).
    Nowhere,
    /// `points.key` beside the key file it was read from.
    File(PathBuf),
    /// The points file of the keys it was made from, encoded.
    Bytes(Vec<u8>),
}

/// A verifying key.
#[pyclass(module = "zkstep._native", frozen)]
struct VerifyingKey {
    inner: zkstep_verifier::VerifyingKey,
    bytes: Vec<u8>,
    points_at: PointsAt,
    // read on first use: a wide layer's points file is megabytes
    points: std::sync::OnceLock<zkstep_verifier::Points>,
}

impl VerifyingKey {
    fn parse(label: &Path, bytes: Vec<u8>, points_at: PointsAt) -> PyResult<Self> {
        let inner = quiet(|| zkstep_verifier::read_verifying_key(&bytes))
            .map_err(|e| err(format!("{}: {e}", label.display())))?;
        let points_at = if inner.theta.is_some() { points_at } else { PointsAt::Nowhere };
        Ok(VerifyingKey { inner, bytes, points_at, points: std::sync::OnceLock::new() })
    }

    /// The points file at `path`, checked against this key.
    fn read_points(&self, path: &Path) -> PyResult<zkstep_verifier::Points> {
        let bytes = read_input(path, Input::Points).map_err(err)?;
        self.decode_points(&bytes, path)
    }

    fn decode_points(&self, bytes: &[u8], label: &Path) -> PyResult<zkstep_verifier::Points> {
        quiet(|| zkstep_verifier::read_points(bytes, &self.inner)).map_err(|e| err(format!("{}: {e}", label.display())))
    }

    /// Its own points (beside its file, or its keys'), read once.
    fn own_points(&self) -> PyResult<&zkstep_verifier::Points> {
        if let Some(p) = self.points.get() {
            return Ok(p);
        }
        let p = match &self.points_at {
            PointsAt::Nowhere => {
                return Err(err("this verifying key binds checkpoints by KZG points and was not read from a keys directory: checking checkpoints against it needs its points file: pass points=\"KEYS/points.key\""))
            }
            PointsAt::File(path) => self.read_points(path)?,
            PointsAt::Bytes(b) => self.decode_points(b, Path::new("<points of these keys>"))?,
        };
        Ok(self.points.get_or_init(|| p))
    }

    /// Commit(θ) under this key: the hash of θ's KZG point with `points`
    /// (else its own) under keys on KZG points, the chain under chain keys.
    fn commit(&self, c: &Checkpoint, points: Option<&zkstep_verifier::Points>) -> PyResult<zkstep_core::Fr> {
        if self.inner.theta.is_none() {
            return Ok(commit_params(&c.spec, &c.inner));
        }
        let p = match points {
            Some(p) => p,
            None => self.own_points()?,
        };
        p.commitment(&c.spec, &c.inner).map_err(err)
    }
}

#[pymethods]
impl VerifyingKey {
    /// Read a verifying key file (keys on KZG points: their points file is
    /// the `points.key` beside it, read when checkpoints are checked).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let bytes = read_input(&path, Input::VerifyingKey).map_err(err)?;
        let beside = PointsAt::File(path.with_file_name(ivc::POINTS_FILE));
        py.detach(|| VerifyingKey::parse(&path, bytes, beside))
    }

    /// How its proofs bind checkpoints: "kzg" or "chain".
    #[getter]
    fn commit_scheme(&self) -> &'static str {
        self.inner.layout.commit_scheme.name()
    }

    /// The commitment (hex) a proof under this key gives `checkpoint`: under
    /// keys on KZG points the hash of its point (with the key's points file,
    /// or `points`), under chain keys its Poseidon chain.
    #[pyo3(signature = (checkpoint, points = None))]
    fn commitment(&self, py: Python<'_>, checkpoint: &Checkpoint, points: Option<PathBuf>) -> PyResult<String> {
        py.detach(|| {
            let given = points.map(|p| self.read_points(&p)).transpose()?;
            self.commit(checkpoint, given.as_ref()).map(|c| fr_to_hex(&c))
        })
    }

    /// Write it (refusing to replace a file unless `force`).
    #[pyo3(signature = (path, force = false))]
    fn save(&self, path: PathBuf, force: bool) -> PyResult<()> {
        format::write_as(&path, &self.bytes, force).map_err(err)
    }

    /// The spec digest (hex) the key is for.
    #[getter]
    fn spec_digest(&self) -> String {
        fr_to_hex(&self.inner.layout.spec_digest)
    }
}

/// A proof of one training step, or of a segment of k consecutive steps
/// (the bytes of a `.zkstep` proof file of either kind).
#[pyclass(module = "zkstep._native", frozen)]
struct Proof {
    inner: zkstep_verifier::AnyProof,
    bytes: Vec<u8>,
}

impl Proof {
    fn parse(label: &Path, bytes: Vec<u8>) -> PyResult<Self> {
        let inner = zkstep_verifier::read_any_proof(&bytes).map_err(|e| err(format!("{}: {e}", label.display())))?;
        Ok(Proof { inner, bytes })
    }
}

/// A step's statement as a dict of hex commitments and the step.
fn statement_dict<'py>(py: Python<'py>, st: &zkstep_verifier::Statement) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", "step")?;
    d.set_item("spec_digest", fr_to_hex(&st.spec_digest))?;
    d.set_item("step", st.step)?;
    d.set_item("c_before", fr_to_hex(&st.c_before))?;
    d.set_item("c_after", fr_to_hex(&st.c_after))?;
    d.set_item("c_batch", fr_to_hex(&st.c_batch))?;
    Ok(d)
}

/// A segment's statement as a dict.
fn segment_dict<'py>(py: Python<'py>, st: &zkstep_verifier::SegmentStatement) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", "segment")?;
    d.set_item("spec_digest", fr_to_hex(&st.spec_digest))?;
    d.set_item("step", st.step)?;
    d.set_item("steps", st.steps)?;
    d.set_item("c_start", fr_to_hex(&st.c_start))?;
    d.set_item("c_end", fr_to_hex(&st.c_end))?;
    d.set_item("batches", fr_to_hex(&st.batches))?;
    Ok(d)
}

#[pymethods]
impl Proof {
    /// Read a proof file (one step or a segment).
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        let bytes = read_input(&path, Input::Proof).map_err(err)?;
        Proof::parse(&path, bytes)
    }

    /// A proof from a file's bytes.
    #[staticmethod]
    fn from_bytes(data: Vec<u8>) -> PyResult<Self> {
        Proof::parse(Path::new("<proof bytes>"), data)
    }

    /// Write the proof file (refusing to replace one unless `force`).
    #[pyo3(signature = (path, force = false))]
    fn save(&self, path: PathBuf, force: bool) -> PyResult<()> {
        format::write_as(&path, &self.bytes, force).map_err(err)
    }

    /// The file's bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.bytes)
    }

    /// What it claims (not yet verified). A step: kind, spec_digest, step,
    /// c_before, c_after, c_batch; a segment: kind, spec_digest, step, steps,
    /// c_start, c_end, batches (the chain of its batch commitments).
    #[getter]
    fn statement<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        match &self.inner {
            zkstep_verifier::AnyProof::Step(p) => statement_dict(py, &p.statement()),
            zkstep_verifier::AnyProof::Segment(p) => segment_dict(py, &p.payload.statement),
        }
    }

    fn __len__(&self) -> usize {
        self.bytes.len()
    }

    fn __repr__(&self) -> String {
        match &self.inner {
            zkstep_verifier::AnyProof::Step(p) => {
                format!("Proof(step={}, bytes={})", p.statement().step, self.bytes.len())
            }
            zkstep_verifier::AnyProof::Segment(p) => {
                let st = &p.payload.statement;
                format!("Proof(segment of {} steps from {}, bytes={})", st.steps, st.step, self.bytes.len())
            }
        }
    }
}

/// Marks the unwinding of a prove that Python interrupted (not a panic).
struct Interrupted;

/// The progress sink's (stage, done, total) of a prover event.
fn event_tuple(ev: ProveEvent) -> (String, usize, usize) {
    match ev {
        ProveEvent::Committing { total, round } => (format!("commit {round}"), 0, total),
        ProveEvent::Committed { index, total } => ("commit".to_string(), index + 1, total),
        ProveEvent::Folding { total } => ("fold".to_string(), 0, total),
        ProveEvent::Folded { index, total, .. } => ("fold".to_string(), index + 1, total),
        ProveEvent::Compressing => ("compress".to_string(), 0, 1),
    }
}

/// Run a prover `f` with the GIL released. At each of its events the GIL
/// is taken back to check for signals and call `progress`; Ctrl-C, or an
/// exception from `progress`, unwinds the prover (its threads are joined on
/// the way) and is returned as the error.
fn run_prover<T: Send>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    f: impl FnOnce(&mut dyn FnMut(ProveEvent)) -> zkstep_prover::Result<T> + Send,
) -> PyResult<T> {
    let mut stopped: Option<PyErr> = None;
    let result = py.detach(|| {
        let mut on_event = |ev: ProveEvent| {
            let outcome = Python::attach(|py| -> PyResult<()> {
                py.check_signals()?;
                if let Some(cb) = &progress {
                    cb.call1(py, event_tuple(ev))?;
                }
                Ok(())
            });
            if let Err(e) = outcome {
                stopped = Some(e);
                // caught below; resume_unwind skips the panic hook's message
                std::panic::resume_unwind(Box::new(Interrupted));
            }
        };
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut on_event)))
    });
    match result {
        Ok(r) => r.map_err(err),
        Err(p) if p.is::<Interrupted>() => Err(stopped.unwrap_or_else(|| err("the prover was interrupted"))),
        Err(p) => Err(err(format!("the prover failed: {}", zkstep_verifier::panic_message(&*p)))),
    }
}

/// The checkpoints' and batches' spec against the keys', each batch's step
/// against its checkpoint's, and each step by the reference executor.
fn check_claim(keys: &ivc::Keys, checkpoints: &[&Checkpoint], batches: &[&Batch]) -> PyResult<()> {
    let spec = &keys.layout.spec;
    if checkpoints.len() != batches.len() + 1 || batches.is_empty() {
        return Err(err(format!(
            "{} checkpoints and {} batches: k steps need k + 1 checkpoints and k batches (k ≥ 1)",
            checkpoints.len(),
            batches.len()
        )));
    }
    let digest = spec.digest();
    if checkpoints.iter().any(|c| c.spec.digest() != digest) || batches.iter().any(|b| b.spec.digest() != digest) {
        return Err(err("a checkpoint or batch is of another spec than the keys'"));
    }
    for (w, b) in checkpoints.windows(2).zip(batches) {
        if b.step != w[0].inner.step {
            return Err(err(format!(
                "the batch is for step {}, the checkpoint before it is θ_{}",
                b.step, w[0].inner.step
            )));
        }
        ivc::check_step(spec, &w[0].inner, &w[1].inner, &b.inner).map_err(err)?;
    }
    Ok(())
}

/// Prove θ_{t+1} = Step(θ_t, batch) with `keys`. `progress`, if given, is
/// called between folds with (stage, done, total); Ctrl-C (or an exception
/// from `progress`) stops the prover at the next fold and is raised here.
#[pyfunction]
#[pyo3(signature = (keys, before, after, batch, progress = None))]
fn prove(
    py: Python<'_>,
    keys: &Keys,
    before: &Checkpoint,
    after: &Checkpoint,
    batch: &Batch,
    progress: Option<Py<PyAny>>,
) -> PyResult<Proof> {
    check_claim(&keys.inner, &[before, after], &[batch])?;
    let k = keys.inner.clone();
    let (payload, _) = run_prover(py, progress, |p| {
        ivc::prove(&k, &before.inner, &after.inner, &batch.inner, p)
    })?;
    let bytes = ivc::proof_bytes(&k, &payload).map_err(err)?;
    Proof::parse(Path::new("<new proof>"), bytes)
}

/// Prove k consecutive steps as one segment: `checkpoints` θ_t … θ_{t+k},
/// `batches` those of steps t … t+k−1 (one constant-size proof; progress
/// and Ctrl-C as for `prove`).
#[pyfunction]
#[pyo3(signature = (keys, checkpoints, batches, progress = None))]
fn prove_segment(
    py: Python<'_>,
    keys: &Keys,
    checkpoints: Vec<PyRef<'_, Checkpoint>>,
    batches: Vec<PyRef<'_, Batch>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Proof> {
    let cks: Vec<&Checkpoint> = checkpoints.iter().map(|c| &**c).collect();
    let bts: Vec<&Batch> = batches.iter().map(|b| &**b).collect();
    check_claim(&keys.inner, &cks, &bts)?;
    let cks: Vec<zkstep_core::Checkpoint> = cks.iter().map(|c| c.inner.clone()).collect();
    let bts: Vec<zkstep_core::Batch> = bts.iter().map(|b| b.inner.clone()).collect();
    let k = keys.inner.clone();
    let (payload, _) = run_prover(py, progress, |p| ivc::prove_segment(&k, &cks, &bts, p))?;
    let bytes = ivc::segment_proof_bytes(&k, &payload).map_err(err)?;
    Proof::parse(Path::new("<new segment proof>"), bytes)
}

/// Verify `proof` (a step or a segment) against `vk`. With files — `before`
/// (θ_t), `after` (the last checkpoint), and the step's `batch` or a
/// segment's `batches` — the statement's commitments must be theirs.
/// Returns the verified statement; raises `VerifyError` when rejected.
#[pyfunction]
#[pyo3(signature = (vk, proof, before = None, after = None, batch = None, batches = None, points = None))]
#[allow(clippy::too_many_arguments)]
fn verify<'py>(
    py: Python<'py>,
    vk: &VerifyingKey,
    proof: &Proof,
    before: Option<&Checkpoint>,
    after: Option<&Checkpoint>,
    batch: Option<&Batch>,
    batches: Option<Vec<PyRef<'py, Batch>>>,
    points: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut given: Vec<&Batch> = batch.into_iter().collect();
    let listed: Vec<PyRef<'py, Batch>> = batches.unwrap_or_default();
    given.extend(listed.iter().map(|b| &**b));
    let specs = [before.map(|c| &c.spec), after.map(|c| &c.spec)];
    if let Some(s) = specs
        .into_iter()
        .flatten()
        .chain(given.iter().map(|b| &b.spec))
        .find(|s| s.digest() != vk.inner.layout.spec_digest)
    {
        return Err(VerifyError::new_err(format!(
            "the files are of a spec (digest {}) that is not the verifying key's ({})",
            fr_to_hex(&s.digest()),
            fr_to_hex(&vk.inner.layout.spec_digest)
        )));
    }
    let files = before.is_some() || after.is_some() || !given.is_empty();
    let first_step = before.map(|c| c.inner.step);
    let check_batches = |t: u64| -> PyResult<()> {
        for (i, b) in given.iter().enumerate() {
            if b.step != t + i as u64 {
                return Err(VerifyError::new_err(format!(
                    "batch {i} is for step {}, the proof's is step {}",
                    b.step,
                    t + i as u64
                )));
            }
        }
        Ok(())
    };
    let rejected = |e: zkstep_verifier::VerifyError| match e {
        zkstep_verifier::VerifyError::Rejected(m) => VerifyError::new_err(format!("REJECTED: {m}")),
        e => err(e),
    };
    // keys on KZG points commit checkpoints with a points file: `points`,
    // else the key's own (beside its file, or its keys')
    let points = match (&vk.inner.theta, before.is_some() || after.is_some(), points) {
        (None, _, Some(path)) => {
            return Err(err(format!(
                "{}: a points file is for keys on KZG points; this verifying key binds checkpoints by hash chains",
                path.display()
            )))
        }
        (Some(_), true, Some(path)) => Some(vk.read_points(&path)?),
        _ => None,
    };
    let commit = |c: &Checkpoint| vk.commit(c, points.as_ref());
    match &proof.inner {
        zkstep_verifier::AnyProof::Step(p) => {
            if given.len() > 1 {
                return Err(err("more than one batch: this is a one-step proof"));
            }
            let mut st = p.statement();
            st.step = first_step.unwrap_or(st.step);
            check_batches(st.step)?;
            if let Some(c) = before {
                st.c_before = commit(c)?;
            }
            if let Some(c) = after {
                st.c_after = commit(c)?;
            }
            if let Some(b) = given.first() {
                st.c_batch = commit_batch(&b.spec, &b.inner);
            }
            let expected = files.then_some(st);
            let out = py.detach(|| quiet(|| zkstep_verifier::verify(&vk.inner, p, expected.as_ref())));
            statement_dict(py, &out.map_err(rejected)?.0)
        }
        zkstep_verifier::AnyProof::Segment(p) => {
            let mut st = p.payload.statement;
            st.step = first_step.unwrap_or(st.step);
            check_batches(st.step)?;
            if let Some(c) = before {
                st.c_start = commit(c)?;
            }
            if let Some(c) = after {
                st.c_end = commit(c)?;
            }
            if !given.is_empty() {
                let cb: Vec<_> = given.iter().map(|b| commit_batch(&b.spec, &b.inner)).collect();
                st.batches = vk.inner.layout.batches_digest(&cb);
                st.steps = cb.len() as u64;
            }
            let expected = files.then_some(st);
            let out = py.detach(|| quiet(|| zkstep_verifier::verify_segment(&vk.inner, p, expected.as_ref())));
            segment_dict(py, &out.map_err(rejected)?.0)
        }
    }
}

/// A run directory written one step at a time, as `zkstep train` writes
/// it (spec.toml, ckpt_{t}, batch_{t}, run.json): `prove-run` and the Ray
/// fan-out prove it unchanged.
#[pyclass(module = "zkstep._native")]
struct RunWriter {
    inner: zkstep_cli::run::RunWriter,
    spec: zkstep_core::ModelSpec,
    last: zkstep_core::Checkpoint,
}

#[pymethods]
impl RunWriter {
    /// Start a run in `dir` at `start`: a new or empty directory (one holding
    /// anything is refused, so nothing of the user's is overwritten).
    #[staticmethod]
    #[pyo3(signature = (dir, start, data = "python".to_string()))]
    fn create(dir: PathBuf, start: &Checkpoint, data: String) -> PyResult<Self> {
        std::fs::create_dir_all(&dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
        let manifest_path = dir.join(zkstep_cli::run::MANIFEST);
        if manifest_path.exists() {
            return Err(err(format!("{}: a run is already recorded here", manifest_path.display())));
        }
        // a new run goes into an empty directory, so nothing there is replaced
        let mut entries = std::fs::read_dir(&dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
        if let Some(e) = entries.next() {
            let name = e.map(|e| e.file_name().to_string_lossy().into_owned()).unwrap_or_default();
            return Err(err(format!(
                "{}: not empty (it holds {name:?}): a run is recorded into an empty or new directory, so that nothing in it is overwritten",
                dir.display()
            )));
        }
        let manifest = zkstep_cli::run::RunWriter::fresh_manifest(&start.spec, &data, 0);
        let inner = zkstep_cli::run::RunWriter::create(&dir, &start.spec, &start.inner, manifest).map_err(err)?;
        Ok(RunWriter {
            inner,
            spec: start.spec.clone(),
            last: start.inner.clone(),
        })
    }

    /// Record step t: θ_{t+1} = `after` from the last checkpoint with
    /// `batch` (checked by the reference executor: a step that does not
    /// follow is refused), with the loss `loss`.
    fn push(&mut self, batch: &Batch, after: &Checkpoint, loss: f64) -> PyResult<()> {
        if batch.step != self.last.step {
            return Err(err(format!(
                "the batch is for step {}, the run's last checkpoint is θ_{}",
                batch.step, self.last.step
            )));
        }
        zkstep_prover::ivc::check_step(&self.spec, &self.last, &after.inner, &batch.inner).map_err(err)?;
        let entry = zkstep_cli::run::StepEntry::new(
            &self.spec,
            self.last.step,
            commit_params(&self.spec, &self.last),
            commit_params(&self.spec, &after.inner),
            &batch.inner,
            loss,
        );
        self.inner.push(&self.spec, &entry, &batch.inner, &after.inner).map_err(err)?;
        self.last = after.inner.clone();
        Ok(())
    }

    /// Steps recorded.
    fn __len__(&self) -> usize {
        self.inner.manifest.steps.len()
    }
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Spec>()?;
    m.add_class::<Checkpoint>()?;
    m.add_class::<Batch>()?;
    m.add_class::<Keys>()?;
    m.add_class::<VerifyingKey>()?;
    m.add_class::<Proof>()?;
    m.add_class::<RunWriter>()?;
    m.add_function(wrap_pyfunction!(prove, m)?)?;
    m.add_function(wrap_pyfunction!(prove_segment, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add("ZkstepError", m.py().get_type::<ZkstepError>())?;
    m.add("VerifyError", m.py().get_type::<VerifyError>())?;
    m.add("FILE_VERSION", zkstep_circuits::files::FILE_VERSION)?;
    Ok(())
}
