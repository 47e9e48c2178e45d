// Builds without the CUDA toolkit: no GPU tracer, and CUDAAllocator says why it fails.
#include <memory>
#include <stdexcept>

#include "gpu_tracer.h"
#include "paddle_prof/allocator.h"

namespace paddle_prof {

std::shared_ptr<Allocator> CUDAAllocator(int /*device*/) {
  throw std::runtime_error(
      "paddle_prof: CUDAAllocator: this build of paddle_prof has no CUDA support (build it "
      "where CMake finds the CUDA toolkit)");
}

namespace internal {
GpuTracer* BuildGpuTracer() { return nullptr; }
void LockGpuTracerForFork() {}
void UnlockGpuTracerAfterFork() {}
}  // namespace internal

}  // namespace paddle_prof
