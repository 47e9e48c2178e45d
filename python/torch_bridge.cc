// paddle_prof._torch_bridge: PyTorch seen through paddle_prof. A global RecordFunction
// callback turns every ATen op, autograd node and user scope into a RecordEvent on the
// thread that runs it (intra-op worker threads included), a wrapper around c10's CPU
// allocator reports every CPU tensor allocation to the tracker, and, on CUDA builds of
// torch, a trace tracker on the CUDA caching allocator reports every GPU tensor's block
// (or, where none attaches, the allocator's statistics are read at every op).
//
// Builds against torch 1.13 (Debian) and 2.x (pip wheels); the differences it meets are
// gated on TORCH_VERSION_MAJOR/MINOR, which <torch/version.h> defines in both (recent
// torch forwards it to <torch/headeronly/version.h>).
#include <ATen/record_function.h>
#include <c10/core/CPUAllocator.h>
#include <pybind11/pybind11.h>
#if __has_include(<torch/version.h>)
#include <torch/version.h>
#else
#include <torch/headeronly/version.h>
#endif

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#define PADDLE_PROF_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||              \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10::Allocator::allocate() lost its const in torch 2.3 (pytorch#120969).
#if PADDLE_PROF_TORCH_AT_LEAST(2, 3)
#define PADDLE_PROF_ALLOCATE_CONST
#else
#define PADDLE_PROF_ALLOCATE_CONST const
#endif

// PADDLE_PROF_TORCH_CUDA comes from CMake when torch was built with CUDA. Every such
// torch keeps statistics in its CUDA allocator (PADDLE_PROF_CUDA_COUNTERS); the caching
// allocator's trace trackers (attachAllocatorTraceTracker, TraceEntry::device_), which
// give each block, are there from torch 2.2; 2.3 is the oldest release whose header was
// checked (PADDLE_PROF_CUDA_TRACKING).
#if defined(PADDLE_PROF_TORCH_CUDA) && PADDLE_PROF_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#define PADDLE_PROF_CUDA_COUNTERS 1
#else
#define PADDLE_PROF_CUDA_COUNTERS 0
#endif
#if PADDLE_PROF_CUDA_COUNTERS && PADDLE_PROF_TORCH_AT_LEAST(2, 3)
#define PADDLE_PROF_CUDA_TRACKING 1
#else
#define PADDLE_PROF_CUDA_TRACKING 0
#endif

#include "bindings_api.h"
#include "paddle_prof/paddle_prof.h"

namespace py = pybind11;

namespace paddle_prof {
namespace {

// ---- Ops as events ----

struct EventContext : at::ObserverContext {
  std::optional<RecordEvent> event;  // held in place: RecordEvent does not move
};

// "[[32, 3, 224, 224], [64, 3, 3, 3], []]": one entry per input, [] for a non-tensor.
std::string InputShapes(const at::RecordFunction& fn) {
  std::string shapes = "[";
  for (const c10::IValue& input : fn.inputs()) {
    if (shapes.size() > 1) shapes += ", ";
    shapes += '[';
    if (input.isTensor()) {
      const auto sizes = input.toTensor().sizes();
      for (size_t i = 0; i < sizes.size(); ++i) {
        if (i > 0) shapes += ", ";
        shapes += std::to_string(sizes[i]);
      }
    }
    shapes += ']';
  }
  return shapes + "]";
}

void ReadCudaCounters();
std::atomic<bool> g_cuda_counting{false};

std::unique_ptr<at::ObserverContext> OnOpStart(const at::RecordFunction& fn) {
  if (!IsProfilerEnabled()) return nullptr;
  // What the GPU counters moved by before this op belongs to the scope around it.
  if (g_cuda_counting.load(std::memory_order_acquire)) ReadCudaCounters();
  auto context = std::make_unique<EventContext>();
  // Names are interned: torch frees those of autograd nodes and user scopes after the
  // call (the per-thread intern cache makes this a lookup, not a copy).
  const std::string name = fn.name();
  if (fn.needsInputs()) {
    context->event.emplace(name, InputShapes(fn));
  } else {
    context->event.emplace(name);
  }
  return context;
}

void OnOpEnd(const at::RecordFunction& /*fn*/, at::ObserverContext* context) {
  if (context == nullptr) return;
  if (g_cuda_counting.load(std::memory_order_acquire)) ReadCudaCounters();  // the op's own
  static_cast<EventContext*>(context)->event.reset();
}

// ---- CPU tensors' memory ----

c10::DeleterFnPtr g_original_deleter = nullptr;

// Tracked on "CPU": under --native the same block must not count again as native.
void TrackedDelete(void* ptr) {
  RecordFree(CPUPlace(), ptr);  // before the block can be handed out again
  internal::NativeGuard counted_as_cpu;
  g_original_deleter(ptr);
}

// Wraps c10's CPU allocator. Blocks keep data == context, so raw_allocate and
// raw_deleter (which oneDNN uses) go on working; blocks allocated before the wrapper
// keep the original deleter and never pass through here.
class TrackingCPUAllocator final : public c10::Allocator {
 public:
  explicit TrackingCPUAllocator(c10::Allocator* original) : original_(original) {}

  c10::DataPtr allocate(size_t bytes) PADDLE_PROF_ALLOCATE_CONST override {
    c10::DataPtr block;
    {
      internal::NativeGuard counted_as_cpu;
      block = original_->allocate(bytes);
    }
    void* data = block.get();
    if (data == nullptr || block.get_context() != data) return block;  // not ours to wrap
    block.release_context();
    RecordAlloc(CPUPlace(), data, bytes);
    return {data, data, &TrackedDelete, block.device()};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &TrackedDelete; }
  // Pure virtual in torch 2.x's c10::Allocator (added with copy-on-write storages, which
  // clone through it); a plain member on 1.13. No `override`, so one declaration serves
  // both. CPU blocks copy with memcpy, as c10's own CPU allocators do.
  void copy_data(void* dest, const void* src, std::size_t count) const {
    std::memcpy(dest, src, count);
  }

 private:
  c10::Allocator* original_;
};

// ---- CUDA tensors' memory ----

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
#endif

struct Bridge {
  std::mutex mu;
  std::optional<TrackingCPUAllocator> allocator;
  bool allocator_installed = false;
  std::optional<at::CallbackHandle> callback;
  bool callback_needs_inputs = false;
  bool cuda_tracking = false;  // a tracker cannot be detached: once per process
  // One per device, for the life of the process once counting starts (ops on any thread
  // read them, so they are never freed).
  std::vector<std::unique_ptr<internal::CounterMemory>> cuda_counters;
};

Bridge& GetBridge() {
  static auto* bridge = new Bridge;  // leaked: tensors are freed during exit too
  return *bridge;
}

// Installs the allocator wrapper once per process and the op callback (again when
// record_shapes changes). Returns whether c10 now allocates through the wrapper.
bool Install(bool record_shapes) {
  Bridge& b = GetBridge();
  std::lock_guard<std::mutex> lock(b.mu);
  if (!b.allocator) {
    c10::Allocator* original = c10::GetCPUAllocator();
    g_original_deleter = original->raw_deleter();
    if (g_original_deleter != nullptr) {
      b.allocator.emplace(original);
      c10::SetCPUAllocator(&*b.allocator, /*priority=*/100);
      b.allocator_installed = c10::GetCPUAllocator() == &*b.allocator;
    }
  }
  if (b.callback && b.callback_needs_inputs != record_shapes) {
    at::removeCallback(*b.callback);
    b.callback.reset();
  }
  if (!b.callback) {
    b.callback = at::addGlobalCallback(
        at::RecordFunctionCallback(&OnOpStart, &OnOpEnd).needsInputs(record_shapes));
    b.callback_needs_inputs = record_shapes;
  }
  return b.allocator_installed;
}

// Attaches the tracker to the CUDA caching allocator once per process. Returns whether GPU
// blocks are now reported: not before torch.cuda.init() (trackers go to the per-device
// allocators that exist; newer torch asserts they do), nor with another backend
// (cudaMallocAsync, a pluggable allocator) or PYTORCH_NO_CUDA_MEMORY_CACHING set, whose
// cudaMalloc/cudaFree never pass through the traced cache.
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
  } catch (const std::exception&) {  // c10::Error from a backend that has no trackers
    return false;
  }
  b.cuda_tracking = true;
  return true;
#else
  return false;
#endif
}

// Where no tracker can be attached (torch before 2.3, the cudaMallocAsync backend), the
// CUDA allocator's statistics: bytes in use and their high-water mark on each device,
// read as each op begins and ends (counter_memory.h says what that can and cannot tell).
// Reads take the device allocator's lock; they are made only on this path.
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

// Starts, or before a new profile brings up to date, the counters of every device: this
// read is charged to nobody. Returns whether GPU memory is now counted.
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

// Ops cost nothing extra once the profiler is closed.
void RemoveCallback() {
  Bridge& b = GetBridge();
  std::lock_guard<std::mutex> lock(b.mu);
  if (b.callback) at::removeCallback(*b.callback);
  b.callback.reset();
}

}  // namespace
}  // namespace paddle_prof

PYBIND11_MODULE(_torch_bridge, m) {
  m.doc() = "paddle_prof's PyTorch bridge; use paddle_prof.torch instead.";
  m.def("install", &paddle_prof::Install, py::arg("record_shapes"));
  m.def("remove_callback", &paddle_prof::RemoveCallback);
  // Without the GIL: attaching takes each device allocator's lock, and a thread holding
  // one may be waiting for the GIL (a Python out-of-memory observer runs under it).
  m.def("install_cuda", &paddle_prof::InstallCuda, py::call_guard<py::gil_scoped_release>());
  m.def("cuda_tracking", &paddle_prof::CudaTracking);
  m.def("count_cuda", &paddle_prof::CountCuda, py::call_guard<py::gil_scoped_release>());
  // Whether this bridge can follow each GPU block (built against a CUDA torch >= 2.3).
  m.attr("WITH_CUDA") = py::bool_(PADDLE_PROF_CUDA_TRACKING != 0);
  // Whether it can read the CUDA allocator's counters (built against any CUDA torch).
  m.attr("WITH_CUDA_COUNTERS") = py::bool_(PADDLE_PROF_CUDA_COUNTERS != 0);
}
