#include "torch_ops.h"

#include <optional>
#include <string>

#include "paddle_prof/paddle_prof.h"
#include "torch_cuda_memory.h"

namespace paddle_prof::torch_bridge {
namespace {

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

}  // namespace

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

}  // namespace paddle_prof::torch_bridge
