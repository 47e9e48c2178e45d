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

void AppendInts(c10::IntArrayRef values, std::string* out) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ", ";
    *out += std::to_string(values[i]);
  }
}

// "[[32, 3, 224, 224], [64, 3, 3, 3], []]": one entry per input, a tensor's sizes, or the
// values of a list of ints (the sizes aten::empty takes), [] for anything else.
std::string InputShapes(const at::RecordFunction& fn) {
  std::string shapes = "[";
  for (const c10::IValue& input : fn.inputs()) {
    if (shapes.size() > 1) shapes += ", ";
    shapes += '[';
    if (input.isTensor()) {
      AppendInts(input.toTensor().sizes(), &shapes);
    } else if (input.isIntList()) {
      AppendInts(input.toIntVector(), &shapes);
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
