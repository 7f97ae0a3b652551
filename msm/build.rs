//! Build script: with the `cuda` feature, compiles the sppark-based GPU
//! Pippenger wrapper (`cuda/msm.cu`) with nvcc for sm_90 (H100/H200) and
//! links it with the static CUDA runtime. Without the feature it does nothing.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cuda/msm.cu");
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=CUDA_PATH");
    // sppark's build script exports the root of its headers
    let sppark = std::env::var("DEP_SPPARK_ROOT")
        .expect("sppark did not export its header root (DEP_SPPARK_ROOT)");
    let mut nvcc = cc::Build::new();
    nvcc.cuda(true)
        .flag("-gencode")
        .flag("arch=compute_90,code=[sm_90,compute_90]")
        .flag("-t0")
        .define("FEATURE_BN254", None)
        .define("TAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE", None)
        .include(&sppark)
        .file("cuda/msm.cu");
    if let Ok(blst) = std::env::var("DEP_BLST_C_SRC") {
        nvcc.include(blst);
    }
    nvcc.compile("zkstep_msm_cuda");
    println!("cargo:rustc-link-lib=static=cudart_static");
    if let Ok(p) = std::env::var("CUDA_PATH") {
        println!("cargo:rustc-link-search=native={p}/lib64");
        println!("cargo:rustc-link-search=native={p}/lib");
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
}
