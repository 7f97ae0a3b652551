#!/usr/bin/env bash
# Installs what building the `cuda` feature needs on a machine without the
# CUDA toolkit (a GPU is not needed to build): nvcc 13.0, the CUDA runtime
# (static cudart) and headers, from PyPI, with pinned versions, into
# ${ZKSTEP_CUDA_DIR:-$HOME/.cache/zkstep-cuda}. Prints the environment to use:
#
#   eval "$(scripts/install-cuda-build.sh)"
#   cargo build --release -p zkstep-cli --features cuda    # the `zkstep` binary
#
# (zkstep-cli's `cuda` feature turns on zkstep-prover's, which turns on
# zkstep-msm's; a library user enables `zkstep-prover/cuda` directly.)
#
# Safe to run again: an existing install is reused.
set -euo pipefail
dir=${ZKSTEP_CUDA_DIR:-$HOME/.cache/zkstep-cuda}
cuda=$dir/nvidia/cu13
if [ ! -x "$cuda/bin/nvcc" ]; then
  echo "installing nvcc 13.0 from PyPI into $dir …" >&2
  python3 -m pip install --quiet --disable-pip-version-check --no-input \
    --target "$dir" \
    nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 \
    nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-nvvm==13.0.88 >&2
fi
if [ ! -x "$cuda/bin/nvcc" ]; then
  echo "error: $cuda/bin/nvcc is missing after the install" >&2
  exit 1
fi
# nvcc looks for lib64; the wheels ship lib
[ -e "$cuda/lib64" ] || ln -s lib "$cuda/lib64"
"$cuda/bin/nvcc" --version | tail -n 2 >&2
echo "export CUDA_PATH=$cuda"
echo "export NVCC=$cuda/bin/nvcc"
echo "export PATH=$cuda/bin:\$PATH"
