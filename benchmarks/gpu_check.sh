#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU, the CUDA toolkit (nvcc, CUPTI) and a
# CUDA build of PyTorch 2.x; no network needed. Builds paddle_prof with CUDA, then runs
# the CUDA GoogleTest suite (64 MiB cudaMalloc read exactly, a kernel charged to its
# scope within the scope's wall time, CUPTI records, the fake-tracer suite) and the
# PyTorch CUDA tests: a small training step (GPU memory and time per ATen op), GPU memory
# from the allocator's statistics under backend:cudaMallocAsync, GPU time after a
# torch.profiler session. A few minutes at most.
#
#   PADDLE_PROF_DEPS=<prefix>  glog, gflags, GoogleTest, nlohmann-json unpacked there
#                              (scripts/gpu_deps.sh) where the machine lacks them
#   PYTHON=<python3>           the interpreter that has torch (default: python3)
set -uo pipefail
cd "$(dirname "$0")/.."
python="$(command -v "${PYTHON:-python3}")"
build="${PADDLE_PROF_GPU_BUILD:-build-gpu}"
prefix_path=""
if [ -n "${PADDLE_PROF_DEPS:-}" ]; then
  deps="$(realpath "$PADDLE_PROF_DEPS")"
  prefix_path="$deps/usr"
  export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
export CMAKE_POLICY_VERSION_MINIMUM=3.5  # CMake 4 reading older packages' config files

echo "=== machine"
nvidia-smi -L || echo "nvidia-smi: not available"
nvcc --version | tail -2 || echo "nvcc: not found"
"$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda,
    'available', torch.cuda.is_available())" || echo "torch: not importable"
pybind11_dir="$("$python" -m pybind11 --cmakedir 2>/dev/null || true)"

echo "=== configure"
configure() {
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE="$python" \
      -DCMAKE_PREFIX_PATH="$prefix_path" ${pybind11_dir:+-Dpybind11_DIR="$pybind11_dir"} \
      -DPADDLE_PROF_BUILD_BENCHMARKS=OFF -DPADDLE_PROF_BUILD_EXAMPLES=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-90}" "$@"
}
status=0
# Configuring the Python side can fail on a machine's setup (no Python headers, PyTorch's
# CMake package and the local CUDA): the C++ checks still run.
if ! configure; then
  echo "FAIL: configuring the Python extension or the torch bridge failed; again without"
  status=1
  rm -rf "$build"
  configure -DPADDLE_PROF_BUILD_PYTHON=OFF || exit 1
fi
if ! grep -q "PADDLE_PROF_WITH_CUDA:BOOL=ON" "$build/CMakeCache.txt"; then
  echo "FAIL: the CUDA toolkit with CUPTI was not found; CUPTI libraries on this machine:"
  find / -xdev -name 'libcupti.so*' 2>/dev/null | head
  exit 1
fi

echo "=== C++ GPU suite"
cmake --build "$build" -j"$(nproc)" --target cuda_test gpu_tracer_test profiler_test || exit 1
for t in cuda_test gpu_tracer_test profiler_test; do
  "$build/tests/$t" --gtest_brief=1 || status=1
done
# The kernel test prints its report: GPU columns next to the CPU ones.
"$build/tests/cuda_test" --gtest_filter='*Kernel*' | sed -n '/Profiling Report/,/^\[/p'

echo "=== PyTorch CUDA step"
if cmake --build "$build" -j"$(nproc)" --target paddle_prof_python _core _torch_bridge; then
  (cd /tmp && PYTHONPATH="$OLDPWD/$build/python" "$python" -m pytest -q -s -p no:cacheprovider \
      "$OLDPWD/tests/python/test_torch_cuda.py" "$OLDPWD/tests/python/test_profiler.py") ||
    status=1
else
  echo "FAIL: the Python extension or the torch bridge did not build"
  status=1
fi
echo "=== gpu_check: $([ $status = 0 ] && echo PASSED || echo FAILED)"
exit $status
