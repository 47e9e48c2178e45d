// paddle_prof._torch_bridge: PyTorch seen through paddle_prof. A global RecordFunction
// callback turns every ATen op, autograd node and user scope into a RecordEvent on the
// thread that runs it (intra-op worker threads included), and a wrapper around c10's
// CPU allocator reports every CPU tensor allocation to the tracker.
#include <ATen/record_function.h>
#include <c10/core/CPUAllocator.h>
#include <pybind11/pybind11.h>

#include <mutex>
#include <optional>
#include <string>

#include "native_guard.h"
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

std::unique_ptr<at::ObserverContext> OnOpStart(const at::RecordFunction& fn) {
  if (!IsProfilerEnabled()) return nullptr;
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
  if (context != nullptr) static_cast<EventContext*>(context)->event.reset();
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

  c10::DataPtr allocate(size_t bytes) const override {
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

 private:
  c10::Allocator* original_;
};

struct Bridge {
  std::mutex mu;
  std::optional<TrackingCPUAllocator> allocator;
  bool allocator_installed = false;
  std::optional<at::CallbackHandle> callback;
  bool callback_needs_inputs = false;
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
}
