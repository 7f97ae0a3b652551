//! Files: checkpoints and batches as safetensors (i64 tensors at scale S,
//! with format, version, scale and spec digest in the metadata), dataset
//! loading, and import of f32/f16/bf16/f64 safetensors by quantisation.
//!
//! Every file is untrusted: each failure is a [`CoreError`] naming the file and
//! the problem; nothing here panics on input. Writes are atomic (a temporary
//! file in the target directory, then a rename), so a failed write never leaves
//! a partial file or clobbers an existing one halfway.

use crate::error::{CoreError, Result};
use crate::fixed::{to_fixed_at, ValueRange, SCALE, SCALE_SQ};
use crate::model::{Batch, Checkpoint, LayerParams, StateTensor};
use crate::poseidon::{fr_from_hex, fr_to_hex, Fr};
use crate::spec::ModelSpec;
use crate::tensor::Matrix;
use safetensors::tensor::TensorView;
use safetensors::SafeTensors;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// Version of the checkpoint and batch file formats.
pub const FILE_FORMAT_VERSION: &str = "1";
/// `format` metadata of a checkpoint.
pub const CHECKPOINT_FORMAT: &str = "zkstep-checkpoint";
/// `format` metadata of a batch.
pub const BATCH_FORMAT: &str = "zkstep-batch";

fn ferr(path: &Path, msg: impl Into<String>) -> CoreError {
    CoreError::File {
        path: path.to_path_buf(),
        msg: msg.into(),
    }
}

/// Write `bytes` to `path` atomically: temporary file in the same directory, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_via_temp(path, bytes, true)
}

/// [`write_atomic`] that never replaces: the file is put in place with a
/// link that fails if `path` exists by then (another process wrote it since
/// the caller checked), and the error names it; nothing is replaced and the
/// temporary file is removed.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    write_via_temp(path, bytes, false)
}

/// [`write_atomic`] when `replace` (a `--force`), [`write_new`] otherwise: a
/// command's output is never put over a file that appeared after its
/// existence check unless the user asked for that.
pub fn write_as(path: &Path, bytes: &[u8], replace: bool) -> Result<()> {
    write_via_temp(path, bytes, replace)
}

/// How every temporary file zkstep writes begins; the writer's process id
/// follows (`.zkstep-tmp-PID-…`).
pub const TMP_PREFIX: &str = ".zkstep-tmp-";

/// Remove the temporary files that a zkstep process killed while writing
/// (kill -9, a power cut) left in `dir`: those whose writer's process no
/// longer exists (Linux: no `/proc/PID`), and those without a process id
/// (written before it was in the name) untouched for a day. Regular files
/// only, never followed links; a failure to remove one is ignored (the next
/// write tries again). A live writer's file is never touched.
pub fn sweep_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let day = std::time::Duration::from_secs(24 * 3600);
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(TMP_PREFIX)) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let stale = match pid {
            Some(pid) => writer_is_gone(pid),
            None => meta.modified().ok().and_then(|m| m.elapsed().ok()).is_some_and(|age| age > day),
        };
        if stale {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether no process `pid` exists (only where /proc says so; elsewhere a
/// writer is assumed alive).
fn writer_is_gone(pid: u32) -> bool {
    pid != std::process::id()
        && Path::new("/proc/self").exists()
        && !Path::new(&format!("/proc/{pid}")).exists()
}

fn write_via_temp(path: &Path, bytes: &[u8], replace: bool) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let io = |source| CoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    sweep_leftovers(dir);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!("{TMP_PREFIX}{}-", std::process::id()))
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    #[cfg(unix)]
    {
        // tempfile creates 0600; a checkpoint or proof is an ordinary file (0644 before umask)
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    if replace {
        tmp.persist(path).map_err(|e| io(e.error))?;
    } else {
        tmp.persist_noclobber(path).map_err(|e| match e.error.kind() {
            std::io::ErrorKind::AlreadyExists => ferr(
                path,
                "exists: another process wrote it while this one worked; nothing was replaced (pass --force to replace it)",
            ),
            _ => io(e.error),
        })?;
    }
    Ok(())
}

pub use crate::input::{read_input, Input};

/// Read a safetensors file (dataset, import, inspect) with a clear error:
/// its header first, then as much tensor data as it declares (up to the
/// safetensors size limit).
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    // the bytes, then float values decoded to f64 and quantised to i64 (an
    // f32 file: 2 + 2 more bytes a byte), or I64 values copied out
    crate::input::read_safetensors_for(path, Input::Safetensors.limit(), "safetensors file", 5)
}

/// The most tensor data a checkpoint of `spec` holds: every parameter and
/// up to two optimizer-state values beside it (Adam's m and v), 8 bytes each.
fn checkpoint_data_bound(spec: &ModelSpec) -> u64 {
    (spec.num_params() as u64).saturating_mul(3 * 8)
}

/// The tensor data of a batch of `spec`: X and Y, 8 bytes a value.
fn batch_data_bound(spec: &ModelSpec) -> u64 {
    let values = spec.batch_size as u64 * (spec.input_width() + spec.output_width()) as u64;
    values.saturating_mul(8)
}

/// Read a checkpoint or a batch of `spec` (either: the caller tells them
/// apart by the metadata), header first, its tensors bounded by the larger
/// of what each holds.
pub fn read_checkpoint_or_batch(path: &Path, spec: &ModelSpec) -> Result<Vec<u8>> {
    let bound = checkpoint_data_bound(spec).max(batch_data_bound(spec));
    crate::input::read_safetensors(path, bound, "checkpoint or batch")
}

/// The range of a tensor's values ([`StFile::value_range`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueSpan {
    /// An I64 tensor's smallest and largest value, as stored.
    Int(i64, i64),
    /// A float tensor's.
    Float(f64, f64),
}

/// A parsed safetensors file with its metadata.
pub struct StFile<'a> {
    path: &'a Path,
    st: SafeTensors<'a>,
    meta: HashMap<String, String>,
}

impl<'a> StFile<'a> {
    /// Parse bytes read from `path`.
    pub fn parse(path: &'a Path, bytes: &'a [u8]) -> Result<Self> {
        let (_, md) = SafeTensors::read_metadata(bytes)
            .map_err(|e| ferr(path, format!("not a valid safetensors file ({e})")))?;
        let meta = md.metadata().clone().unwrap_or_default();
        let st = SafeTensors::deserialize(bytes)
            .map_err(|e| ferr(path, format!("not a valid safetensors file ({e})")))?;
        Ok(StFile { path, st, meta })
    }

    /// Metadata value.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta.get(key).map(String::as_str)
    }

    /// All metadata.
    pub fn metadata(&self) -> &HashMap<String, String> {
        &self.meta
    }

    /// Tensor names, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut n: Vec<String> = self.st.names().into_iter().map(String::from).collect();
        n.sort();
        n
    }

    /// A tensor's dtype and shape.
    pub fn info(&self, name: &str) -> Result<(Dtype, Vec<usize>)> {
        let t = self.view(name)?;
        Ok((t.dtype(), t.shape().to_vec()))
    }

    fn view(&self, name: &str) -> Result<TensorView<'a>> {
        self.st.tensor(name).map_err(|_| {
            ferr(
                self.path,
                format!(
                    "missing tensor `{name}` (present: {})",
                    self.names().join(", ")
                ),
            )
        })
    }

    /// Whether a tensor exists.
    pub fn has(&self, name: &str) -> bool {
        self.st.tensor(name).is_ok()
    }

    /// An i64 tensor, with its shape checked.
    pub fn i64_tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<i64>> {
        let t = self.view(name)?;
        if t.dtype() != Dtype::I64 {
            return Err(ferr(self.path, format!("tensor `{name}` has dtype {:?}, expected I64 fixed-point (import float files with `zkstep import`)", t.dtype())));
        }
        if t.shape() != shape {
            return Err(ferr(
                self.path,
                format!(
                    "tensor `{name}` has shape {:?}, expected {:?}",
                    t.shape(),
                    shape
                ),
            ));
        }
        Ok(t.data()
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }

    /// A float tensor (f16, bf16, f32 or f64) as f64 values, NaN/Inf rejected.
    pub fn float_tensor(&self, name: &str) -> Result<(Vec<usize>, Vec<f64>)> {
        let t = self.view(name)?;
        let vals: Vec<f64> = self.floats(name, &t)?.collect();
        if let Some((i, v)) = vals.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ferr(
                self.path,
                format!(
                    "tensor `{name}` holds {v} at flat index {i}: NaN and Inf cannot be quantised"
                ),
            ));
        }
        Ok((t.shape().to_vec(), vals))
    }

    /// A float tensor's values decoded one at a time (nothing allocated).
    fn floats<'b>(&self, name: &str, t: &'b TensorView<'a>) -> Result<Box<dyn Iterator<Item = f64> + 'b>> {
        let d = t.data();
        Ok(match t.dtype() {
            Dtype::F32 => Box::new(
                d.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64),
            ),
            Dtype::F64 => Box::new(
                d.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))),
            ),
            Dtype::F16 => Box::new(
                d.chunks_exact(2)
                    .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64()),
            ),
            Dtype::BF16 => Box::new(
                d.chunks_exact(2)
                    .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64()),
            ),
            other => {
                return Err(ferr(
                    self.path,
                    format!(
                    "tensor `{name}` has dtype {other:?}; expected a float (F16, BF16, F32, F64)"
                ),
                ))
            }
        })
    }

    /// The smallest and largest value of an I64 or float tensor, read in
    /// place (`inspect` of a huge tensor needs no second copy of it); None
    /// for an empty tensor. Float NaNs are skipped.
    pub fn value_range(&self, name: &str) -> Result<Option<ValueSpan>> {
        let t = self.view(name)?;
        if t.dtype() == Dtype::I64 {
            let mut it = t
                .data()
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
            let Some(first) = it.next() else {
                return Ok(None);
            };
            let (lo, hi) = it.fold((first, first), |(lo, hi), v| (lo.min(v), hi.max(v)));
            return Ok(Some(ValueSpan::Int(lo, hi)));
        }
        let (lo, hi) = self
            .floats(name, &t)?
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
        Ok((lo <= hi).then_some(ValueSpan::Float(lo, hi)))
    }

    /// Check the zkstep metadata: format, version, scale and (if given) spec digest.
    pub fn expect_zkstep(&self, format: &str, spec: Option<&ModelSpec>) -> Result<()> {
        match self.meta("format") {
            Some(f) if f == format => {}
            Some(other) => return Err(ferr(self.path, format!("is a `{other}` file, expected a `{format}` file"))),
            None => return Err(ferr(self.path, format!("has no zkstep metadata: not a `{format}` file (float safetensors can be brought in with `zkstep import`)"))),
        }
        if self.meta("version") != Some(FILE_FORMAT_VERSION) {
            return Err(ferr(self.path, format!("unsupported {format} version {:?} (this zkstep reads version {FILE_FORMAT_VERSION})", self.meta("version"))));
        }
        if self.meta("scale") != Some(&SCALE.to_string()) {
            return Err(ferr(
                self.path,
                format!(
                    "scale {:?} differs from the supported scale {SCALE}",
                    self.meta("scale")
                ),
            ));
        }
        if let Some(spec) = spec {
            let want = fr_to_hex(&spec.digest());
            match self.meta("spec_digest") {
                Some(d) if d == want => {}
                Some(d) => {
                    return Err(ferr(
                        self.path,
                        format!(
                            "was made for another spec (spec digest {d}, this spec's is {want})"
                        ),
                    ))
                }
                None => return Err(ferr(self.path, "has no spec_digest in its metadata")),
            }
        }
        Ok(())
    }

    /// Error if the file holds tensors outside `expected`.
    pub fn no_extra(&self, expected: &[String]) -> Result<()> {
        if let Some(extra) = self.names().into_iter().find(|n| !expected.contains(n)) {
            return Err(ferr(
                self.path,
                format!("unexpected tensor `{extra}` for this spec"),
            ));
        }
        Ok(())
    }
}

fn base_meta(format: &str, spec: &ModelSpec, step: u64) -> HashMap<String, String> {
    HashMap::from([
        ("format".to_string(), format.to_string()),
        ("version".to_string(), FILE_FORMAT_VERSION.to_string()),
        ("scale".to_string(), SCALE.to_string()),
        ("spec_digest".to_string(), fr_to_hex(&spec.digest())),
        ("step".to_string(), step.to_string()),
    ])
}

fn to_bytes(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn serialize(
    path: &Path,
    tensors: Vec<(String, Vec<usize>, Vec<u8>)>,
    meta: HashMap<String, String>,
) -> Result<Vec<u8>> {
    let views = tensors
        .iter()
        .map(|(n, s, d)| TensorView::new(Dtype::I64, s.clone(), d).map(|v| (n.clone(), v)))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| ferr(path, format!("cannot encode tensors: {e}")))?;
    let bytes = safetensors::serialize(views, Some(meta))
        .map_err(|e| ferr(path, format!("cannot encode safetensors: {e}")))?;
    Ok(canonical_header(bytes))
}

/// The same file with its header's keys in sorted order: safetensors writes
/// the metadata map in hash order, so the same checkpoint written twice
/// differed byte for byte. Sorting keeps the header's length (compact JSON
/// either way), so the data offsets hold.
fn canonical_header(mut bytes: Vec<u8>) -> Vec<u8> {
    fn sorted(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                let mut kv: Vec<_> = m.into_iter().collect();
                kv.sort_by(|a, b| a.0.cmp(&b.0));
                serde_json::Value::Object(kv.into_iter().map(|(k, v)| (k, sorted(v))).collect())
            }
            other => other,
        }
    }
    let Some(n) = bytes
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(|b: [u8; 8]| u64::from_le_bytes(b) as usize)
    else {
        return bytes;
    };
    let Some(header) = bytes.get(8..8usize.saturating_add(n)) else {
        return bytes;
    };
    let json = header.trim_ascii_end();
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(json) else {
        return bytes;
    };
    let Ok(text) = serde_json::to_string(&sorted(v)) else {
        return bytes;
    };
    if text.len() == json.len() {
        bytes[8..8 + text.len()].copy_from_slice(text.as_bytes());
    }
    bytes
}

/// Tensor names of a checkpoint for `spec`.
pub fn checkpoint_tensor_names(spec: &ModelSpec) -> Vec<String> {
    let mut v = Vec::new();
    for l in 1..=spec.layers.len() {
        v.push(format!("l{l}.w"));
        v.push(format!("l{l}.b"));
        for name in spec.optimizer.state_names() {
            v.push(format!("l{l}.{name}w"));
            v.push(format!("l{l}.{name}b"));
        }
    }
    v
}

/// Encode a checkpoint as safetensors bytes.
pub fn checkpoint_bytes(path: &Path, spec: &ModelSpec, ckpt: &Checkpoint) -> Result<Vec<u8>> {
    ckpt.validate(spec)?;
    let mut t = Vec::new();
    for (i, lp) in ckpt.layers.iter().enumerate() {
        let l = i + 1;
        t.push((
            format!("l{l}.w"),
            vec![lp.w.rows, lp.w.cols],
            to_bytes(&lp.w.data),
        ));
        t.push((format!("l{l}.b"), vec![lp.b.len()], to_bytes(&lp.b)));
        for (st, name) in lp.state.iter().zip(spec.optimizer.state_names()) {
            t.push((
                format!("l{l}.{name}w"),
                vec![st.w.rows, st.w.cols],
                to_bytes(&st.w.data),
            ));
            t.push((format!("l{l}.{name}b"), vec![st.b.len()], to_bytes(&st.b)));
        }
    }
    let mut meta = base_meta(CHECKPOINT_FORMAT, spec, ckpt.step);
    if spec.optimizer.adam().is_some() {
        meta.insert(MOMENT_SCALE_KEY.into(), SCALE_SQ.to_string());
    }
    serialize(path, t, meta)
}

/// The metadata key naming the scale of an Adam checkpoint's moments
/// (10¹⁸; docs/SEMANTICS.md §3). A checkpoint without it was written when
/// the first moment was at 10⁹, and reading it as 10¹⁸ would shrink every
/// m a billion times without a word: it is refused instead.
pub const MOMENT_SCALE_KEY: &str = "moment_scale";

/// Write a checkpoint atomically.
pub fn write_checkpoint(path: &Path, spec: &ModelSpec, ckpt: &Checkpoint) -> Result<()> {
    write_atomic(path, &checkpoint_bytes(path, spec, ckpt)?)
}

/// [`write_checkpoint`] that replaces a file at `path` only if `replace`
/// ([`write_new`] otherwise: a file that appeared there meanwhile is kept).
pub fn write_checkpoint_as(path: &Path, spec: &ModelSpec, ckpt: &Checkpoint, replace: bool) -> Result<()> {
    write_as(path, &checkpoint_bytes(path, spec, ckpt)?, replace)
}

/// Parse a checkpoint (bytes read from `path`) for `spec`.
pub fn parse_checkpoint(path: &Path, bytes: &[u8], spec: &ModelSpec) -> Result<Checkpoint> {
    let f = StFile::parse(path, bytes)?;
    f.expect_zkstep(CHECKPOINT_FORMAT, Some(spec))?;
    if spec.optimizer.adam().is_some() && f.meta(MOMENT_SCALE_KEY) != Some(&SCALE_SQ.to_string()) {
        return Err(ferr(
            path,
            format!(
                "Adam's first moment is at scale {} here, this zkstep keeps both moments at {SCALE_SQ} (a checkpoint written before the first moment moved to 10¹⁸): import it again (`zkstep import --optimizer-state`) or start from `zkstep init`",
                f.meta(MOMENT_SCALE_KEY).unwrap_or("10⁹ (no moment_scale in its metadata)")
            ),
        ));
    }
    f.no_extra(&checkpoint_tensor_names(spec))?;
    let step = f
        .meta("step")
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| ferr(path, "missing or malformed `step` in the metadata"))?;
    let mut layers = Vec::new();
    for (i, ls) in spec.layers.iter().enumerate() {
        let l = i + 1;
        let (o, n) = (ls.outputs, ls.inputs);
        let w = Matrix {
            rows: o,
            cols: n,
            data: f.i64_tensor(&format!("l{l}.w"), &[o, n])?,
        };
        let b = f.i64_tensor(&format!("l{l}.b"), &[o])?;
        let state = spec
            .optimizer
            .state_names()
            .iter()
            .map(|name| {
                Ok(StateTensor {
                    w: Matrix {
                        rows: o,
                        cols: n,
                        data: f.i64_tensor(&format!("l{l}.{name}w"), &[o, n])?,
                    },
                    b: f.i64_tensor(&format!("l{l}.{name}b"), &[o])?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        layers.push(LayerParams { w, b, state });
    }
    let ckpt = Checkpoint { step, layers };
    ckpt.validate(spec).map_err(|e| e.in_file(path))?;
    Ok(ckpt)
}

/// Read a checkpoint for `spec`.
pub fn read_checkpoint(path: &Path, spec: &ModelSpec) -> Result<Checkpoint> {
    let bytes = crate::input::read_safetensors(path, checkpoint_data_bound(spec), "checkpoint")?;
    parse_checkpoint(path, &bytes, spec)
}

/// Write a batch atomically (with its salt and step in the metadata).
pub fn write_batch(path: &Path, spec: &ModelSpec, batch: &Batch, step: u64) -> Result<()> {
    write_atomic(path, &batch_bytes(path, spec, batch, step)?)
}

/// Encode a batch of step `step` as safetensors bytes (its salt and step
/// in the metadata).
pub fn batch_bytes(path: &Path, spec: &ModelSpec, batch: &Batch, step: u64) -> Result<Vec<u8>> {
    batch.validate(spec)?;
    let mut meta = base_meta(BATCH_FORMAT, spec, step);
    meta.insert("salt".into(), fr_to_hex(&batch.salt));
    let t = vec![
        (
            "x".to_string(),
            vec![batch.x.rows, batch.x.cols],
            to_bytes(&batch.x.data),
        ),
        (
            "y".to_string(),
            vec![batch.y.rows, batch.y.cols],
            to_bytes(&batch.y.data),
        ),
    ];
    serialize(path, t, meta)
}

/// Parse a batch for `spec`; returns it with its step.
pub fn parse_batch(path: &Path, bytes: &[u8], spec: &ModelSpec) -> Result<(Batch, u64)> {
    let f = StFile::parse(path, bytes)?;
    f.expect_zkstep(BATCH_FORMAT, Some(spec))?;
    f.no_extra(&["x".to_string(), "y".to_string()])?;
    let b = spec.batch_size;
    let x = Matrix {
        rows: b,
        cols: spec.input_width(),
        data: f.i64_tensor("x", &[b, spec.input_width()])?,
    };
    let y = Matrix {
        rows: b,
        cols: spec.output_width(),
        data: f.i64_tensor("y", &[b, spec.output_width()])?,
    };
    let salt = f
        .meta("salt")
        .and_then(fr_from_hex)
        .ok_or_else(|| ferr(path, "missing or malformed `salt` in the metadata"))?;
    let step = f
        .meta("step")
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| ferr(path, "missing or malformed `step` in the metadata"))?;
    let batch = Batch { x, y, salt };
    batch.validate(spec).map_err(|e| e.in_file(path))?;
    Ok((batch, step))
}

/// Read a batch for `spec`.
pub fn read_batch(path: &Path, spec: &ModelSpec) -> Result<(Batch, u64)> {
    let bytes = crate::input::read_safetensors(path, batch_data_bound(spec), "batch")?;
    parse_batch(path, &bytes, spec)
}

/// How much quantisation moved the values.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct QuantReport {
    /// Values quantised.
    pub count: usize,
    /// Largest |x − X/S|.
    pub max_abs_err: f64,
    /// Mean |x − X/S|.
    pub mean_abs_err: f64,
}

impl QuantReport {
    /// Fold another tensor's report into this one.
    pub fn merge(&mut self, other: QuantReport) {
        let total = self.count + other.count;
        if total > 0 {
            self.mean_abs_err = (self.mean_abs_err * self.count as f64
                + other.mean_abs_err * other.count as f64)
                / total as f64;
        }
        self.count = total;
        self.max_abs_err = self.max_abs_err.max(other.max_abs_err);
    }
}

/// Quantise reals to fixed point, reporting the rounding error.
pub fn quantise(
    path: &Path,
    name: &str,
    vals: &[f64],
    range: ValueRange,
) -> Result<(Vec<i64>, QuantReport)> {
    quantise_at(path, name, vals, SCALE as i128, range)
}

/// [`quantise`] at another scale (Adam's second moment: S²).
pub fn quantise_at(
    path: &Path,
    name: &str,
    vals: &[f64],
    scale: i128,
    range: ValueRange,
) -> Result<(Vec<i64>, QuantReport)> {
    let mut out = Vec::with_capacity(vals.len());
    let mut rep = QuantReport {
        count: vals.len(),
        ..Default::default()
    };
    let mut sum = 0.0;
    for (i, &x) in vals.iter().enumerate() {
        let q = to_fixed_at(x, scale, range).ok_or_else(|| ferr(path, format!("tensor `{name}` value {x} at flat index {i} does not fit the {}-bit fixed-point range", range.bits)))?;
        let err = (x - q as f64 / scale as f64).abs();
        rep.max_abs_err = rep.max_abs_err.max(err);
        sum += err;
        out.push(q);
    }
    rep.mean_abs_err = if vals.is_empty() {
        0.0
    } else {
        sum / vals.len() as f64
    };
    Ok((out, rep))
}

/// A tensor as fixed point: i64 taken as is (zkstep files), floats quantised.
fn fixed_tensor(
    f: &StFile,
    path: &Path,
    name: &str,
    range: ValueRange,
    rep: &mut QuantReport,
) -> Result<(Vec<usize>, Vec<i64>)> {
    let (dtype, shape) = f.info(name)?;
    if dtype == Dtype::I64 {
        if f.meta("scale") != Some(&SCALE.to_string()) {
            return Err(ferr(path, format!("tensor `{name}` is I64 but the file declares no scale {SCALE} in its metadata; store reals as F32/F64 instead")));
        }
        return Ok((shape.clone(), f.i64_tensor(name, &shape)?));
    }
    let (shape, vals) = f.float_tensor(name)?;
    let (q, r) = quantise(path, name, &vals, range)?;
    rep.merge(r);
    Ok((shape, q))
}

/// A dataset: inputs and targets, all rows.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// `[N, d_in]` at scale S.
    pub x: Matrix,
    /// `[N, d_out]` at scale S.
    pub y: Matrix,
    /// Quantisation report (zero for i64 files).
    pub report: QuantReport,
}

/// Read a dataset file: tensors `X` and `Y` (or `x`, `y`), 2-D, float or fixed-point i64.
pub fn read_dataset(path: &Path, range: ValueRange) -> Result<Dataset> {
    read_dataset_labels(path, range, None)
}

/// [`read_dataset`] for a spec: with cross-entropy, Y may also be class
/// indices (`[N]` or `[N, 1]`, integers or whole floats in `0..classes`),
/// read as one-hot rows at scale S.
pub fn read_dataset_for(path: &Path, spec: &ModelSpec) -> Result<Dataset> {
    let classes = (spec.loss == crate::spec::Loss::CrossEntropy).then(|| spec.output_width());
    read_dataset_labels(path, spec.value_range, classes)
}

/// Class indices `labels` as one-hot rows at scale S.
fn one_hot(path: &Path, name: &str, labels: &[f64], classes: usize) -> Result<Vec<i64>> {
    let mut y = vec![0i64; labels.len() * classes];
    for (i, &c) in labels.iter().enumerate() {
        if c.fract() != 0.0 || c < 0.0 || c >= classes as f64 {
            return Err(ferr(
                path,
                format!("tensor `{name}` holds {c} at index {i}: a class index is a whole number in 0..{classes}"),
            ));
        }
        y[i * classes + c as usize] = SCALE;
    }
    Ok(y)
}

/// How far from 1 a row of cross-entropy targets may sum (10⁻⁶, in units of
/// 10⁻⁹): f32 holds a third as 0.33333334, so three of them sum to 1 + 3·10⁻⁸.
const TARGET_SUM_SLACK: i128 = 1000;

/// Cross-entropy's targets: every row of `y` (`[N, k]` at scale S) a
/// distribution, no entry negative and each row summing to 1 within
/// 10⁻⁶ plus the rounding of its k entries.
fn check_distributions(path: &Path, name: &str, y: &[i64], k: usize) -> Result<()> {
    for (i, row) in y.chunks_exact(k).enumerate() {
        if let Some(j) = row.iter().position(|&p| p < 0) {
            return Err(ferr(
                path,
                format!(
                    "tensor `{name}` holds {} at ({i},{j}): cross-entropy's targets are probabilities, never negative",
                    row[j] as f64 / SCALE as f64
                ),
            ));
        }
        let sum: i128 = row.iter().map(|&p| p as i128).sum();
        if (sum - SCALE as i128).abs() > TARGET_SUM_SLACK + k as i128 {
            return Err(ferr(
                path,
                format!(
                    "tensor `{name}` row {i} sums to {}: cross-entropy's targets are distributions (each row sums to 1; give class indices `[N]` for one-hot labels)",
                    sum as f64 / SCALE as f64
                ),
            ));
        }
    }
    Ok(())
}

fn read_dataset_labels(path: &Path, range: ValueRange, classes: Option<usize>) -> Result<Dataset> {
    let bytes = read_file(path)?;
    let f = StFile::parse(path, &bytes)?;
    let pick = |a: &str, b: &str| {
        if f.has(a) {
            Ok(a.to_string())
        } else if f.has(b) {
            Ok(b.to_string())
        } else {
            Err(ferr(
                path,
                format!("missing tensor `{a}` (present: {})", f.names().join(", ")),
            ))
        }
    };
    let (xn, yn) = (pick("X", "x")?, pick("Y", "y")?);
    let mut report = QuantReport::default();
    let (xs, xd) = fixed_tensor(&f, path, &xn, range, &mut report)?;
    let (ys, yd) = match (classes, f.info(&yn)?) {
        // [N] or [N, 1]: one column cannot be a distribution over k ≥ 2 classes
        (Some(k), (dtype, shape)) if shape.len() == 1 || (shape.len() == 2 && shape[1] == 1) => {
            let labels: Vec<f64> = if dtype == Dtype::I64 {
                f.i64_tensor(&yn, &shape)?
                    .iter()
                    .map(|&c| c as f64)
                    .collect()
            } else {
                f.float_tensor(&yn)?.1
            };
            (vec![shape[0], k], one_hot(path, &yn, &labels, k)?)
        }
        _ => {
            let (ys, yd) = fixed_tensor(&f, path, &yn, range, &mut report)?;
            if let (Some(k), [_, cols]) = (classes, ys.as_slice()) {
                if *cols == k {
                    check_distributions(path, &yn, &yd, k)?;
                }
            }
            (ys, yd)
        }
    };
    if xs.len() != 2 || ys.len() != 2 {
        return Err(ferr(
            path,
            format!("`{xn}` and `{yn}` must be 2-D [samples, features]; got {xs:?} and {ys:?}"),
        ));
    }
    if xs[0] != ys[0] {
        return Err(ferr(
            path,
            format!("`{xn}` has {} samples but `{yn}` has {}", xs[0], ys[0]),
        ));
    }
    if xs[0] == 0 {
        return Err(ferr(path, "the dataset has no samples"));
    }
    Ok(Dataset {
        x: Matrix {
            rows: xs[0],
            cols: xs[1],
            data: xd,
        },
        y: Matrix {
            rows: ys[0],
            cols: ys[1],
            data: yd,
        },
        report,
    })
}

/// Write a float dataset file (f32 X and Y), as a PyTorch user would hand one over.
pub fn write_float_dataset(
    path: &Path,
    x: &[f32],
    x_shape: [usize; 2],
    y: &[f32],
    y_shape: [usize; 2],
) -> Result<()> {
    let xb: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let yb: Vec<u8> = y.iter().flat_map(|v| v.to_le_bytes()).collect();
    let views = vec![
        (
            "X".to_string(),
            TensorView::new(Dtype::F32, x_shape.to_vec(), &xb),
        ),
        (
            "Y".to_string(),
            TensorView::new(Dtype::F32, y_shape.to_vec(), &yb),
        ),
    ];
    let views = views
        .into_iter()
        .map(|(n, v)| v.map(|v| (n, v)))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| ferr(path, format!("cannot encode: {e}")))?;
    let bytes = safetensors::serialize(views, None)
        .map_err(|e| ferr(path, format!("cannot encode: {e}")))?;
    write_atomic(path, &bytes)
}

/// Import a float checkpoint (zkstep names `l{n}.w`/`l{n}.b`, or PyTorch `<prefix>.weight`/`<prefix>.bias`
/// in numeric prefix order) by quantisation. Momentum velocities start at zero.
pub fn import_checkpoint(path: &Path, spec: &ModelSpec) -> Result<(Checkpoint, QuantReport)> {
    import_checkpoint_bytes(path, &read_file(path)?, spec)
}

/// [`import_checkpoint`] of safetensors bytes already read (`path` names
/// them in errors: a file, or what a caller such as the Python package
/// serialised).
pub fn import_checkpoint_bytes(
    path: &Path,
    bytes: &[u8],
    spec: &ModelSpec,
) -> Result<(Checkpoint, QuantReport)> {
    let f = StFile::parse(path, bytes)?;
    let names = f.names();
    let pairs: Vec<(String, String)> = if f.has("l1.w") {
        (1..=spec.layers.len())
            .map(|l| (format!("l{l}.w"), format!("l{l}.b")))
            .collect()
    } else {
        let mut prefixes: Vec<&str> = names
            .iter()
            .filter_map(|n| n.strip_suffix(".weight"))
            .collect();
        // numeric-aware order: "2" < "10", "fc1" < "fc2"
        prefixes.sort_by_key(|p| {
            (
                p.chars()
                    .filter(|c| c.is_ascii_digit())
                    .collect::<String>()
                    .parse::<u64>()
                    .unwrap_or(u64::MAX),
                p.to_string(),
            )
        });
        prefixes
            .iter()
            .map(|p| (format!("{p}.weight"), format!("{p}.bias")))
            .collect()
    };
    if pairs.len() != spec.layers.len() {
        return Err(ferr(
            path,
            format!(
                "found {} weight tensors ({}), the spec has {} layers",
                pairs.len(),
                names.join(", "),
                spec.layers.len()
            ),
        ));
    }
    let mut report = QuantReport::default();
    let mut layers = Vec::new();
    for ((wn, bn), ls) in pairs.iter().zip(&spec.layers) {
        let (ws, w) = fixed_tensor(&f, path, wn, spec.value_range, &mut report)?;
        if ws != [ls.outputs, ls.inputs] {
            return Err(ferr(path, format!("tensor `{wn}` has shape {ws:?}, the spec expects [{}, {}] ([outputs, inputs], PyTorch's layout)", ls.outputs, ls.inputs)));
        }
        let b = if f.has(bn) {
            let (bs, b) = fixed_tensor(&f, path, bn, spec.value_range, &mut report)?;
            if bs != [ls.outputs] {
                return Err(ferr(
                    path,
                    format!(
                        "tensor `{bn}` has shape {bs:?}, the spec expects [{}]",
                        ls.outputs
                    ),
                ));
            }
            b
        } else {
            vec![0; ls.outputs]
        };
        layers.push(LayerParams {
            w: Matrix {
                rows: ls.outputs,
                cols: ls.inputs,
                data: w,
            },
            b,
            state: LayerParams::zero_state(spec, ls.outputs, ls.inputs),
        });
    }
    Ok((Checkpoint { step: 0, layers }, report))
}

/// The spec digest a zkstep file was made for, if it says.
pub fn file_spec_digest(f: &StFile) -> Option<Fr> {
    f.meta("spec_digest").and_then(fr_from_hex)
}

pub use safetensors::tensor::Dtype;

/// SHA3-256 of bytes, hex (for `inspect`).
pub fn sha3_hex(bytes: &[u8]) -> String {
    use sha3::Digest;
    hex::encode(sha3::Sha3_256::digest(bytes))
}
