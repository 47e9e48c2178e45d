#include "torch_cuda_memory.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>

#include "bindings_api.h"
#include "paddle_prof/paddle_prof.h"
#include "torch_bridge.h"
#include "torch_version_gates.h"

#if PADDLE_PROF_CUDA_COUNTERS
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace paddle_prof::torch_bridge {
namespace {

#if PADDLE_PROF_CUDA_COUNTERS
namespace cuda_alloc = c10::cuda::CUDACachingAllocator;
#endif

#if PADDLE_PROF_CUDA_TRACKING
// ALLOC is a block handed to a tensor (or raw_alloc), FREE_REQUESTED the tensor letting it
// go: what the tensor holds, as torch.cuda.memory_allocated() counts it. FREE_COMPLETED
// (the block back in the cache once other streams are done with it) and the SEGMENT_*
// cudaMalloc/cudaFree events are the cache's business. Called with the device allocator's
// lock held, on the allocating or freeing thread: no torch calls, no GIL here, and
// RecordAlloc/RecordFree take no lock and guard their own bookkeeping, so no NativeGuard.
// Fields changed types across 2.x (addr_/size_ int64_t, then size_t), hence the casts.
void OnCudaTrace(const cuda_alloc::TraceEntry& entry) {
  const void* ptr = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(entry.addr_));
  switch (entry.action_) {
    case cuda_alloc::TraceEntry::ALLOC:
      RecordAlloc(CUDAPlace(static_cast<int>(entry.device_)), ptr,
                  static_cast<size_t>(entry.size_));
      break;
    case cuda_alloc::TraceEntry::FREE_REQUESTED:
      RecordFree(CUDAPlace(static_cast<int>(entry.device_)), ptr);
      break;
    default:
      break;
  }
}

// The blocks tensors held before the tracker attached (a model moved to the GPU before
// the window), from the allocator's snapshot: known from now on, as live before the
// window, at the size the tracker's ALLOC gives (the size asked for). A block the tracker
// saw allocated meanwhile is adopted once (AdoptBlock). Blocks lie in their segment in
// address order.
void AdoptLiveCudaBlocks() {
  for (const auto& segment : cuda_alloc::snapshot().segments) {
    const int place = internal::PlaceIndex(CUDAPlace(static_cast<int>(segment.device)));
    size_t address = static_cast<size_t>(segment.address);
    for (const auto& block : segment.blocks) {
      if (block.allocated) {
        internal::AdoptBlock(place, reinterpret_cast<const void*>(address),
                             static_cast<size_t>(block.requested_size));
      }
      address += static_cast<size_t>(block.size);
    }
  }
}

// The caching allocator's out-of-memory observer: called on the failing thread before
// torch raises its OutOfMemoryError, with the size the allocator rounded the request to.
// The dump takes the profiler's locks and no torch one.
void OnCudaOutOfMemory(int64_t device, size_t requested, size_t /*device_total*/,
                       size_t /*device_free*/) {
  internal::OnOutOfMemory(CUDAPlace(static_cast<int>(device)), requested);
}
#endif

}  // namespace

std::atomic<bool> g_cuda_counting{false};

bool InstallCuda() {
#if PADDLE_PROF_CUDA_TRACKING
  Bridge& b = GetBridge();
  std::lock_guard<std::mutex> lock(b.mu);
  if (b.cuda_tracking) return true;
  const char* uncached = std::getenv("PYTORCH_NO_CUDA_MEMORY_CACHING");
  if (uncached != nullptr && std::strcmp(uncached, "0") != 0) return false;
  cuda_alloc::CUDAAllocator* allocator = cuda_alloc::get();
  try {
    if (allocator == nullptr || !allocator->initialized() || allocator->name() != "native") {
      return false;
    }
    allocator->attachAllocatorTraceTracker(&OnCudaTrace);
    allocator->attachOutOfMemoryObserver(&OnCudaOutOfMemory);
  } catch (const std::exception&) {  // c10::Error from a backend that has no trackers
    return false;
  }
  b.cuda_tracking = true;
  try {
    AdoptLiveCudaBlocks();
  } catch (const std::exception&) {  // no snapshot: the earlier blocks' frees go uncounted
  }
  return true;
#else
  return false;
#endif
}

void ReadCudaCounters() {
#if PADDLE_PROF_CUDA_COUNTERS
  const auto& counters = GetBridge().cuda_counters;  // complete before counting starts
  for (size_t device = 0; device < counters.size(); ++device) {
    const auto stats = cuda_alloc::getDeviceStats(static_cast<c10::DeviceIndex>(device));
    // [0] is StatType::AGGREGATE, all pools together (the enum's namespace moved in 2.x).
    const auto& bytes = stats.allocated_bytes[0];
    counters[device]->Observe(bytes.current, bytes.peak);
  }
#endif
}

bool CountCuda() {
#if PADDLE_PROF_CUDA_COUNTERS
  Bridge& b = GetBridge();
  std::lock_guard<std::mutex> lock(b.mu);
  if (b.cuda_tracking) return false;  // blocks are reported already
  const char* uncached = std::getenv("PYTORCH_NO_CUDA_MEMORY_CACHING");
  if (uncached != nullptr && std::strcmp(uncached, "0") != 0) return false;  // no statistics
  if (g_cuda_counting.load(std::memory_order_relaxed)) {
    ReadCudaCounters();
    return true;
  }
  try {
    const int devices = c10::cuda::device_count();
    for (int device = 0; device < devices; ++device) {
      b.cuda_counters.push_back(std::make_unique<internal::CounterMemory>(CUDAPlace(device)));
    }
    ReadCudaCounters();
  } catch (const std::exception&) {  // c10::Error from a backend that keeps no statistics
    b.cuda_counters.clear();
    return false;
  }
  if (b.cuda_counters.empty()) return false;
  g_cuda_counting.store(true, std::memory_order_release);
  return true;
#else
  return false;
#endif
}

bool CudaTracking() {
  Bridge& b = GetBridge();
  std::lock_guard<std::mutex> lock(b.mu);
  return b.cuda_tracking;
}

}  // namespace paddle_prof::torch_bridge
