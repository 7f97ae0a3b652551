//! zkstep-msm: multi-scalar multiplication Σ sᵢ·Pᵢ over BN254 G1, the
//! operation that dominates the prover.
//!
//! Two backends behind one entry point, [`msm`]:
//! - **CPU**: `zkstep_pippenger::msm`, a Pippenger whose bucket additions are all
//!   affine with one inversion a round, scalars grouped by width (a fold's
//!   witness is mostly bits and small signed values), after `dedup` has
//!   summed the bases of repeated full-width scalars (LogUp's inverses).
//!   The fastest measured on this project's machine, against nova-snark's
//!   and halo2curves' Pippengers: docs/DEPENDENCIES.md. It is a crate of
//!   its own (no GPU code), generic over halo2curves' curves, so the
//!   verifier's Grumpkin IPA uses it too.
//! - **GPU** (cargo feature `cuda`): sppark's CUDA Pippenger over BN254,
//!   compiled by nvcc from `cuda/msm.cu`. Without a device it reports so once
//!   and every MSM runs on the CPU.
//!
//! The backend is a process-wide choice ([`set_backend`]): `zkstep prove
//! --msm auto|cpu|gpu` sets it, and nova-snark reaches [`msm`] through the
//! `blitzar` shim crate (msm/blitzar-shim), so folding and compression both
//! use it.

use halo2curves::bn256::{Fr, G1Affine, G1};
use std::sync::atomic::{AtomicU8, Ordering};

mod dedup;
#[cfg(feature = "cuda")]
mod gpu;
mod layout;

pub use layout::matches_gpu_layout;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum MsmError {
    /// `--msm gpu` was asked for but no GPU can be used.
    #[error("no GPU MSM: {0}")]
    NoGpu(String),
    /// The GPU returned an error.
    #[error("GPU MSM failed: {0}")]
    Gpu(String),
    /// Scalars and bases differ in length.
    #[error("MSM with {scalars} scalars but {bases} bases")]
    Length {
        /// Number of scalars.
        scalars: usize,
        /// Number of bases.
        bases: usize,
    },
    /// An unknown backend name.
    #[error("unknown MSM backend {0:?} (expected auto, cpu or gpu)")]
    Unknown(String),
}

/// Which backend [`msm`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// GPU when one is present and the MSM is at least [`GPU_MIN_POINTS`]; else CPU.
    Auto,
    /// Always CPU.
    Cpu,
    /// GPU for every MSM (an error at [`set_backend`] if there is none).
    Gpu,
}

impl std::str::FromStr for Backend {
    type Err = MsmError;
    fn from_str(s: &str) -> Result<Self, MsmError> {
        match s {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            _ => Err(MsmError::Unknown(s.to_string())),
        }
    }
}

impl Backend {
    /// The name as given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
        }
    }
}

/// Below this many points `auto` stays on the CPU: the host↔device copy of
/// the bases and scalars costs more than the CPU takes.
pub const GPU_MIN_POINTS: usize = 1 << 14;

static BACKEND: AtomicU8 = AtomicU8::new(0);

/// Choose the backend for every later [`msm`] in this process. `Gpu` fails
/// when the build has no `cuda` feature or no device is found.
pub fn set_backend(b: Backend) -> Result<(), MsmError> {
    if b == Backend::Gpu {
        gpu_status()?;
    }
    let code = match b {
        Backend::Auto => 0,
        Backend::Cpu => 1,
        Backend::Gpu => 2,
    };
    BACKEND.store(code, Ordering::Relaxed);
    Ok(())
}

/// The backend chosen by [`set_backend`] (default `Auto`).
pub fn backend() -> Backend {
    match BACKEND.load(Ordering::Relaxed) {
        1 => Backend::Cpu,
        2 => Backend::Gpu,
        _ => Backend::Auto,
    }
}

/// Whether a GPU backend is usable here: `Ok(description)` or why not.
pub fn gpu_status() -> Result<String, MsmError> {
    #[cfg(feature = "cuda")]
    {
        gpu::status()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(MsmError::NoGpu(
            "this build has no GPU support (rebuild with the cargo feature `cuda`)".into(),
        ))
    }
}

/// The backend an MSM of `n` points runs on: `"cpu"` or `"gpu"`.
pub fn route(n: usize) -> Backend {
    match backend() {
        Backend::Cpu => Backend::Cpu,
        Backend::Gpu => Backend::Gpu,
        Backend::Auto if n >= GPU_MIN_POINTS && gpu_present() => Backend::Gpu,
        Backend::Auto => Backend::Cpu,
    }
}

/// Whether a device was found (probed once; the `cuda` build says once on
/// stderr when none is found and `auto` then stays on the CPU).
pub fn gpu_present() -> bool {
    #[cfg(feature = "cuda")]
    {
        gpu::present()
    }
    #[cfg(not(feature = "cuda"))]
    {
        false
    }
}

/// Σ scalars[i]·bases[i] on the chosen backend. Uses the first
/// `min(len)` pairs when the lengths differ (as nova-snark's own MSM does
/// with a longer commitment key); a GPU failure falls back to the CPU with
/// a message, never a wrong result.
pub fn msm(scalars: &[Fr], bases: &[G1Affine]) -> G1 {
    let n = scalars.len().min(bases.len());
    let (scalars, bases) = (&scalars[..n], &bases[..n]);
    #[cfg(feature = "cuda")]
    if route(n) == Backend::Gpu {
        match gpu::msm(scalars, bases) {
            Ok(p) => return p,
            Err(e) => gpu::warn_once(&e),
        }
    }
    cpu_msm(scalars, bases)
}

/// Name of the CPU backend in use.
pub fn cpu_name() -> &'static str {
    "zkstep-msm affine Pippenger"
}

/// Σ scalars[i]·bases[i] on the CPU (Pippenger, all cores), the bases of
/// repeated full-width scalars summed first (`dedup`).
pub fn cpu_msm(scalars: &[Fr], bases: &[G1Affine]) -> G1 {
    let n = scalars.len().min(bases.len());
    if n == 0 {
        return G1::default();
    }
    if let Some((s, b)) = dedup::gathered(&scalars[..n], &bases[..n]) {
        return zkstep_pippenger::msm(&s, &b);
    }
    zkstep_pippenger::msm(&scalars[..n], &bases[..n])
}

/// Σ scalars[i]·bases[i] on the GPU; an error without one (no CPU fallback,
/// so tests can compare the two).
pub fn gpu_msm(scalars: &[Fr], bases: &[G1Affine]) -> Result<G1, MsmError> {
    if scalars.len() != bases.len() {
        return Err(MsmError::Length {
            scalars: scalars.len(),
            bases: bases.len(),
        });
    }
    #[cfg(feature = "cuda")]
    {
        gpu::msm(scalars, bases)
    }
    #[cfg(not(feature = "cuda"))]
    {
        gpu_status().map(|_| G1::default())
    }
}

/// Naive Σ sᵢ·Pᵢ, one scalar multiplication per point: the reference the
/// fast backends are tested against.
pub fn reference_msm(scalars: &[Fr], bases: &[G1Affine]) -> G1 {
    scalars
        .iter()
        .zip(bases)
        .fold(G1::default(), |acc, (s, p)| acc + *p * *s)
}

/// `n` distinct bases G, 2G, 3G, … (one addition each, then one batch
/// normalisation): cheap inputs for benchmarks and tests, as good as random
/// points for Pippenger, whose bucket additions do not depend on the points.
pub fn sequential_bases(n: usize) -> Vec<G1Affine> {
    use group::Curve;
    let g = G1Affine::generator();
    let mut proj = Vec::with_capacity(n);
    let mut acc = G1::default();
    for _ in 0..n {
        acc += g;
        proj.push(acc);
    }
    let mut out = vec![G1Affine::default(); n];
    G1::batch_normalize(&proj, &mut out);
    out
}

/// Measured MSM cost on this machine: nanoseconds per point of one MSM of
/// `n` random scalars on the chosen backend (median of `reps`).
pub fn measure_ns_per_point(n: usize, reps: usize, seed: u64) -> f64 {
    use ff::Field;
    use rand_chacha::rand_core::SeedableRng;
    let bases = sequential_bases(n);
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let s = std::time::Instant::now();
            std::hint::black_box(msm(&scalars, &bases));
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2] * 1e9 / n.max(1) as f64
}
