//! The in-memory layout the GPU code relies on, checked at run time.
//!
//! `cuda/msm.cu` reads halo2curves' values as they lie in memory: an `Fr` or
//! `Fq` as four little-endian u64 limbs in Montgomery form, a `G1Affine` as
//! x then y (64 bytes). halo2curves does not promise that layout
//! (`#[repr(C)]` is absent), so before the GPU is used this module reads
//! known constants and refuses the GPU if any differs. It builds and is
//! tested everywhere, with or without `cuda`.
#![allow(unsafe_code)]

use ff::Field;
use halo2curves::bn256::{Fr, G1Affine};

/// 1 in Montgomery form mod r (2²⁵⁶ mod r), little-endian limbs.
const FR_ONE_MONT: [u64; 4] = [
    0xac96341c4ffffffb,
    0x36fc76959f60cd29,
    0x666ea36f7879462e,
    0x0e0a77c19a07df2f,
];
/// 1 in Montgomery form mod p (2²⁵⁶ mod p).
const FQ_ONE_MONT: [u64; 4] = [
    0xd35d438dc58f0d9d,
    0x0a78eb28f5c70b3d,
    0x666ea36f7879462c,
    0x0e0a77c19a07df2f,
];

fn limbs<T>(v: &T, offset: usize) -> [u64; 4] {
    assert!(std::mem::size_of::<T>() >= (offset + 4) * 8);
    let p = v as *const T as *const u64;
    // SAFETY: `v` is a live, initialised value at least (offset + 4)·8 bytes
    // long (asserted); reading its bytes as u64 words is what this checks.
    unsafe { std::ptr::read_unaligned(p.add(offset) as *const [u64; 4]) }
}

/// Whether halo2curves' values lie in memory as `cuda/msm.cu` reads them.
pub fn matches_gpu_layout() -> bool {
    let g = G1Affine::generator(); // (1, 2)
    let two = {
        let mut t = halo2curves::bn256::Fq::ONE;
        t = t.double();
        t
    };
    std::mem::size_of::<Fr>() == 32
        && std::mem::size_of::<G1Affine>() == 64
        && limbs(&Fr::ONE, 0) == FR_ONE_MONT
        && limbs(&g, 0) == FQ_ONE_MONT
        && limbs(&g, 4) == limbs(&two, 0)
        && limbs(&two, 0) != FQ_ONE_MONT
}

#[cfg(test)]
mod tests {
    #[test]
    fn halo2curves_layout_is_the_one_the_gpu_code_reads() {
        assert!(super::matches_gpu_layout());
    }
}
