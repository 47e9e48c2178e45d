// CUDAAllocator: device memory straight from cudaMalloc/cudaFree, on the device it was
// made for (the calling thread's current device is left as it was).
#include <cuda_runtime_api.h>

#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "paddle_prof/allocator.h"

namespace paddle_prof {

namespace {

// Makes `device` current for one call and restores the caller's device after it.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    cudaGetDevice(&previous_);
    if (previous_ != device) cudaSetDevice(device);
  }
  ~DeviceScope() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int device) : device_(device) {}

  void* Allocate(size_t bytes) override {
    DeviceScope on(device_);
    void* ptr = nullptr;
    const cudaError_t error = cudaMalloc(&ptr, bytes);
    if (error == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it: the next call should not see it
      throw std::bad_alloc();
    }
    if (error != cudaSuccess) {
      throw std::runtime_error(std::string("paddle_prof: cudaMalloc failed: ") +
                               cudaGetErrorString(error));
    }
    return ptr;
  }

  void Free(void* ptr) override {
    if (ptr == nullptr) return;
    DeviceScope on(device_);
    cudaFree(ptr);
  }

 private:
  const int device_;
};

}  // namespace

std::shared_ptr<Allocator> CUDAAllocator(int device) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || device < 0 || device >= count) {
    throw std::runtime_error("paddle_prof: CUDAAllocator(" + std::to_string(device) +
                             "): no such CUDA device (" +
                             (error != cudaSuccess ? std::string(cudaGetErrorString(error))
                                                   : std::to_string(count) + " found") +
                             ")");
  }
  return std::make_shared<CudaAllocator>(device);
}

}  // namespace paddle_prof
