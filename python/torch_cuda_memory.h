// CUDA tensors' memory, on CUDA builds of torch: a trace tracker on the CUDA caching
// allocator reports every GPU tensor's block (PADDLE_PROF_CUDA_TRACKING) or, where none
// attaches, the allocator's statistics are read at every op and charged as blocks through
// CounterMemory (PADDLE_PROF_CUDA_COUNTERS). Without either, each entry point says no.
// torch_bridge.cc exposes these to Python; torch_ops.cc reads the counters.
#ifndef PADDLE_PROF_PYTHON_TORCH_CUDA_MEMORY_H_
#define PADDLE_PROF_PYTHON_TORCH_CUDA_MEMORY_H_

#include <atomic>

namespace paddle_prof::torch_bridge {

// Attaches the tracker to the CUDA caching allocator once per process. Returns whether GPU
// blocks are now reported: not before torch.cuda.init() (trackers go to the per-device
// allocators that exist; newer torch asserts they do), nor with another backend
// (cudaMallocAsync, a pluggable allocator) or PYTORCH_NO_CUDA_MEMORY_CACHING set, whose
// cudaMalloc/cudaFree never pass through the traced cache.
bool InstallCuda();

// Whether InstallCuda attached the tracker.
bool CudaTracking();

// Where no tracker can be attached (torch before 2.3, the cudaMallocAsync backend), the
// CUDA allocator's statistics: bytes in use and their high-water mark on each device,
// read as each op begins and ends (counter_memory.h says what that can and cannot tell).
// Reads take the device allocator's lock; they are made only on this path.
void ReadCudaCounters();

// Starts, or before a new profile brings up to date, the counters of every device: this
// read is charged to nobody. Returns whether GPU memory is now counted.
bool CountCuda();

// Set once CountCuda has started the counters: ops then read them as they begin and end.
extern std::atomic<bool> g_cuda_counting;

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_CUDA_MEMORY_H_
