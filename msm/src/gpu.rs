//! The GPU backend (feature `cuda`): FFI to `cuda/msm.cu`, sppark's CUDA
//! Pippenger for BN254 G1. With `layout.rs` this is the only unsafe code of
//! the workspace: two extern calls, which pass halo2curves' slices as raw
//! limbs (the layout `layout::matches_gpu_layout` checks before the first
//! use; on a device the GPU = CPU tests check the results).
#![allow(unsafe_code)]

// the host side of sppark's field code calls blst's assembly-free
// Montgomery routines: link them
use blst as _;

use crate::MsmError;
use halo2curves::bn256::{Fq, Fr, G1Affine, G1};
use halo2curves::CurveAffine;
use std::sync::OnceLock;

extern "C" {
    fn zkstep_msm_ngpus() -> usize;
    fn zkstep_msm_bn254(
        out_xy: *mut u64,
        out_inf: *mut i32,
        points: *const u64,
        npoints: usize,
        scalars: *const u64,
    ) -> sppark::Error;
}

static PRESENT: OnceLock<Result<String, String>> = OnceLock::new();
static WARNED: std::sync::Once = std::sync::Once::new();

fn probe() -> &'static Result<String, String> {
    PRESENT.get_or_init(|| {
        if !crate::layout::matches_gpu_layout() {
            return Err("halo2curves' in-memory layout is not the one the GPU code reads".into());
        }
        // SAFETY: no arguments; sppark enumerates devices once.
        let n = unsafe { zkstep_msm_ngpus() };
        if n == 0 {
            eprintln!("zkstep-msm: no CUDA device found; MSMs run on the CPU");
            Err("no CUDA device found".into())
        } else {
            Ok(format!("{n} CUDA device(s)"))
        }
    })
}

/// `Ok(description)` when a device is usable.
pub fn status() -> Result<String, MsmError> {
    probe().clone().map_err(MsmError::NoGpu)
}

/// Whether a device was found.
pub fn present() -> bool {
    probe().is_ok()
}

/// Say once that a GPU MSM failed and the CPU took over.
pub fn warn_once(e: &MsmError) {
    WARNED.call_once(|| eprintln!("zkstep-msm: {e}; running MSMs on the CPU instead"));
}

/// Σ sᵢ·Pᵢ on the GPU.
pub fn msm(scalars: &[Fr], bases: &[G1Affine]) -> Result<G1, MsmError> {
    status()?;
    let n = scalars.len().min(bases.len());
    if n == 0 {
        return Ok(G1::default());
    }
    let mut xy = [0u64; 8];
    let mut inf: i32 = 0;
    // SAFETY: the pointers cover n elements each, valid for the call; the
    // output buffers are ours and of the sizes the .cu side writes.
    let err = unsafe {
        zkstep_msm_bn254(
            xy.as_mut_ptr(),
            &mut inf,
            bases.as_ptr() as *const u64,
            n,
            scalars.as_ptr() as *const u64,
        )
    };
    if err.code != 0 {
        return Err(MsmError::Gpu(String::from(err)));
    }
    if inf != 0 {
        return Ok(G1::default());
    }
    let limbs = |i: usize| [xy[i], xy[i + 1], xy[i + 2], xy[i + 3]];
    let p = G1Affine::from_xy(Fq::from_raw(limbs(0)), Fq::from_raw(limbs(4)));
    Option::<G1Affine>::from(p)
        .map(G1::from)
        .ok_or_else(|| MsmError::Gpu("the GPU returned a point that is not on the curve".into()))
}
