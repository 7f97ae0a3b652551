//! Reading a user's file: only a regular file (a FIFO or a device would
//! block or never end), only up to its kind's size limit, checked before a
//! byte is read and again while reading. A leaf module (it uses nothing of
//! the crate but its error type) so every parser can use it.

use crate::error::{CoreError, Result};
use std::path::Path;

fn ferr(path: &Path, msg: impl Into<String>) -> CoreError {
    CoreError::File {
        path: path.to_path_buf(),
        msg: msg.into(),
    }
}

/// The kinds of file zkstep reads from a user, each with a size limit
/// checked before a byte is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// A model spec (TOML).
    Spec,
    /// A safetensors file: checkpoint, batch, dataset or float import.
    Safetensors,
    /// A proof file.
    Proof,
    /// A verifying key.
    VerifyingKey,
    /// A proving key.
    ProvingKey,
    /// The G1 powers checkpoints are committed under (`points.key`).
    Points,
    /// A JSON file of ours (run manifest, bench report).
    Json,
    /// A Markdown file `zkstep bench --markdown` writes its table into.
    Markdown,
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

impl Input {
    /// The largest file of this kind zkstep reads. Safetensors and proving
    /// keys are bounded by what fits this class of machine (24 GiB); proofs
    /// are ≈15 KB; verifying keys ≈6 MB with MicroSpartan, and with Spartan
    /// they carry the fold's matrices (95 MB for a 512-wide unit; at most
    /// ≈ 370 MB within Spartan's fold bound of a padded 2²³).
    pub fn limit(self) -> u64 {
        match self {
            Input::Spec => MIB,
            Input::Safetensors => 16 * GIB,
            Input::Proof => 16 * MIB,
            Input::VerifyingKey => 512 * MIB,
            Input::ProvingKey => 16 * GIB,
            Input::Points => 16 * GIB,
            Input::Json => 256 * MIB,
            Input::Markdown => 16 * MIB,
        }
    }

    /// How to name it in an error.
    pub fn name(self) -> &'static str {
        match self {
            Input::Spec => "spec",
            Input::Safetensors => "safetensors file",
            Input::Proof => "proof",
            Input::VerifyingKey => "verifying key",
            Input::ProvingKey => "proving key",
            Input::Points => "points file",
            Input::Json => "JSON file",
            Input::Markdown => "Markdown file",
        }
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> CoreError + '_ {
    move |source| CoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Open `path` for reading if it is a regular file (checked before opening:
/// opening a FIFO blocks until someone writes to it), returning it with its
/// size.
fn open_regular(path: &Path, kind: Input) -> Result<(std::fs::File, u64)> {
    let meta = std::fs::metadata(path).map_err(io_err(path))?;
    let not_regular = |meta: &std::fs::Metadata| {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        ferr(
            path,
            format!(
                "is {what}; zkstep reads a {} only from a regular file",
                kind.name()
            ),
        )
    };
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let file = std::fs::File::open(path).map_err(io_err(path))?;
    // the path may have been replaced between the two looks
    let meta = file.metadata().map_err(io_err(path))?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok((file, meta.len()))
}

/// Read a user's file of kind `kind`: a regular file only (a FIFO or a
/// device would block or never end), no larger than the kind's limit
/// (checked before reading, and again while reading in case it grows).
pub fn read_input(path: &Path, kind: Input) -> Result<Vec<u8>> {
    use std::io::Read;
    let (file, len) = open_regular(path, kind)?;
    let limit = kind.limit();
    let too_big = |size: u64| {
        ferr(
            path,
            format!(
                "{size} bytes, more than the {limit}-byte limit for a {}",
                kind.name()
            ),
        )
    };
    if len > limit {
        return Err(too_big(len));
    }
    let mut buf = Vec::with_capacity(len as usize);
    file.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(io_err(path))?;
    if buf.len() as u64 > limit {
        return Err(too_big(buf.len() as u64));
    }
    Ok(buf)
}

/// The memory this process may still use (bytes) and which limit sets it:
/// the least of the machine's available memory (`MemAvailable`), the
/// process's address-space limit (`ulimit -v`, less what it maps already)
/// and its cgroup's `memory.max` (less what the cgroup uses); None where
/// none of them can be read.
pub fn memory_available() -> Option<(u64, String)> {
    let mut best: Option<(u64, String)> = None;
    let mut offer = |bytes: Option<u64>, what: &str| {
        if let Some(b) = bytes {
            if best.as_ref().is_none_or(|(x, _)| b < *x) {
                best = Some((b, what.to_string()));
            }
        }
    };
    let kib = |file: &str, key: &str| -> Option<u64> {
        let s = std::fs::read_to_string(file).ok()?;
        let l = s.lines().find(|l| l.starts_with(key))?;
        l.split_whitespace().nth(1)?.parse::<u64>().ok().map(|k| k * 1024)
    };
    offer(kib("/proc/meminfo", "MemAvailable:"), "the machine's available memory");
    let address_space = std::fs::read_to_string("/proc/self/limits").ok().and_then(|s| {
        let l = s.lines().find(|l| l.starts_with("Max address space"))?;
        let soft = l.split_whitespace().nth(3)?.parse::<u64>().ok()?;
        Some(soft.saturating_sub(kib("/proc/self/status", "VmSize:").unwrap_or(0)))
    });
    offer(address_space, "the address-space limit (ulimit -v)");
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok().and_then(|s| {
        let rel = s.lines().find_map(|l| l.strip_prefix("0::"))?.trim().to_string();
        let dir = std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
        let max = std::fs::read_to_string(dir.join("memory.max")).ok()?.trim().parse::<u64>().ok()?;
        let cur = std::fs::read_to_string(dir.join("memory.current")).ok()?.trim().parse::<u64>().unwrap_or(0);
        Some(max.saturating_sub(cur))
    });
    offer(cgroup, "the cgroup's memory.max");
    best
}

/// The largest safetensors header zkstep reads (its own files' headers are
/// a few KB; the format allows 100 MB).
pub const MAX_SAFETENSORS_HEADER: u64 = 16 * MIB;

/// Read a safetensors file whose tensors may take at most `max_data` bytes
/// (what a `what` of the caller's spec can hold): its 8-byte header length
/// and its header first (bounded), then the tensor data only if the
/// header's tensors end exactly where the file does and fit `max_data`. A
/// hostile file (a huge header, bytes past the tensors, tensors larger than
/// the spec's) is refused having read at most its header, so reading costs
/// memory for what the header declares and the caller bounds, nothing more.
pub fn read_safetensors(path: &Path, max_data: u64, what: &str) -> Result<Vec<u8>> {
    read_safetensors_for(path, max_data, what, 1)
}

/// [`read_safetensors`] for a caller that holds about `copies` times the
/// file's bytes once it is read (its values decoded beside the bytes): the
/// memory that takes is checked against what this process may still use
/// ([`memory_available`]) before anything past the header is read, so a
/// file that declares more than fits is refused with the figures instead of
/// aborting the process when an allocation fails.
pub fn read_safetensors_for(path: &Path, max_data: u64, what: &str, copies: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let (mut file, len) = open_regular(path, Input::Safetensors)?;
    let invalid = |why: String| ferr(path, format!("not a valid safetensors file ({why})"));
    if len < 8 {
        return Err(invalid(format!("{len} bytes, shorter than its header's length")));
    }
    let mut n8 = [0u8; 8];
    file.read_exact(&mut n8).map_err(io_err(path))?;
    let n = u64::from_le_bytes(n8);
    if n > MAX_SAFETENSORS_HEADER || n > len - 8 {
        return Err(invalid(format!(
            "a header of {n} bytes in a file of {len}; zkstep reads headers of at most {MAX_SAFETENSORS_HEADER}"
        )));
    }
    let mut header = vec![0u8; n as usize];
    file.read_exact(&mut header).map_err(io_err(path))?;
    let data = declared_data(&header)
        .ok_or_else(|| invalid("its header is not a JSON map of tensors with data offsets".into()))?;
    let after = len - 8 - n;
    if data != after {
        return Err(invalid(format!(
            "its header declares {data} bytes of tensor data, the file has {after} after the header"
        )));
    }
    if data > max_data {
        return Err(ferr(
            path,
            format!("its tensors take {data} bytes, more than the {max_data} a {what} of this spec holds"),
        ));
    }
    let need = len.saturating_mul(copies.max(1));
    if let Some((have, limit)) = memory_available() {
        if need > have {
            const GIB: f64 = (1u64 << 30) as f64;
            return Err(ferr(
                path,
                format!(
                    "reading it needs about {:.1} GiB of memory (its {data} bytes of tensors and their values), {:.1} GiB is available here ({limit})",
                    need as f64 / GIB,
                    have as f64 / GIB
                ),
            ));
        }
    }
    let mut buf = Vec::new();
    buf.try_reserve_exact(len as usize).map_err(|_| {
        ferr(path, format!("cannot allocate the {len} bytes it takes to read it"))
    })?;
    buf.extend_from_slice(&n8);
    buf.extend_from_slice(&header);
    file.take(data + 1)
        .read_to_end(&mut buf)
        .map_err(io_err(path))?;
    if buf.len() as u64 != len {
        return Err(ferr(path, "changed while it was read"));
    }
    Ok(buf)
}

/// The bytes of tensor data a safetensors header declares (the largest end
/// offset); None if it is not a JSON map whose entries other than
/// `__metadata__` carry two data offsets.
fn declared_data(header: &[u8]) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_slice(header).ok()?;
    let mut end = 0u64;
    for (k, t) in v.as_object()? {
        if k == "__metadata__" {
            continue;
        }
        let off = t.get("data_offsets")?.as_array()?;
        let [a, b] = off.as_slice() else { return None };
        let (a, b) = (a.as_u64()?, b.as_u64()?);
        if a > b {
            return None;
        }
        end = end.max(b);
    }
    Some(end)
}

/// The first `n` bytes of a user's file of kind `kind` (fewer if it is
/// shorter), a regular file only: enough to refuse a file of the wrong kind
/// by its header before reading all of it. No size limit applies (nothing
/// past `n` is read); [`read_input`] checks it when the whole file is read.
pub fn peek(path: &Path, n: usize, kind: Input) -> Result<Vec<u8>> {
    use std::io::Read;
    let (file, _) = open_regular(path, kind)?;
    let mut buf = Vec::with_capacity(n);
    file.take(n as u64)
        .read_to_end(&mut buf)
        .map_err(io_err(path))?;
    Ok(buf)
}
