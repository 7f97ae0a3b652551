// zkstep-msm GPU backend: sppark's CUDA Pippenger instantiated for BN254 G1.
//
// Inputs are halo2curves' in-memory values (Montgomery form, 4×u64 limbs,
// little-endian; an affine point is x then y, the identity is (0, 0)), which
// is also sppark's layout, so nothing is converted on the host. The result
// is returned as canonical (non-Montgomery) affine limbs plus an
// is-identity flag, and the Rust side checks it is on the curve.
#include <cuda.h>
#include <cstring>

#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>
#include <ff/alt_bn128.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;
typedef fr_t scalar_t;

#include <msm/pippenger.cuh>

#ifndef __CUDA_ARCH__
extern "C" size_t zkstep_msm_ngpus()
{
    return ngpus();
}

// out_xy: 8 limbs, x then y, canonical; *out_inf = 1 for the identity.
extern "C" RustError zkstep_msm_bn254(uint64_t out_xy[8], int* out_inf,
                                      const affine_t points[], size_t npoints,
                                      const scalar_t scalars[])
{
    point_t out;
    RustError err = mult_pippenger<bucket_t>(&out, points, npoints, scalars,
                                             true, sizeof(affine_t));
    if (err.code != cudaSuccess)
        return err;
    if (out.is_inf()) {
        *out_inf = 1;
        std::memset(out_xy, 0, 64);
        return err;
    }
    *out_inf = 0;
    affine_t a = out;                   // one inversion on the host
    // Affine_t is {X, Y} with private members: read them as the two fp_t
    const fp_t* xy = reinterpret_cast<const fp_t*>(&a);
    fp_t x = xy[0], y = xy[1];
    x.from();                           // out of Montgomery form
    y.from();
    std::memcpy(out_xy, reinterpret_cast<const void*>(&x), 32);
    std::memcpy(out_xy + 4, reinterpret_cast<const void*>(&y), 32);
    return err;
}
#endif
