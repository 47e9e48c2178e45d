#include "torch_ops.h"

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include "bindings_api.h"
#include "paddle_prof/paddle_prof.h"
#include "torch_cuda_memory.h"
#include "torch_modules.h"

namespace paddle_prof::torch_bridge {
namespace {

struct EventContext : at::ObserverContext {
  std::optional<RecordEvent> event;  // held in place: RecordEvent does not move
};

// Ops and autograd nodes: torch runs their start and end callbacks on one thread, in
// nested order (their RecordFunction lives on that thread's stack), and calls the end
// even when the start returned no context. Their events live on a stack per thread, not
// in a context allocated per op. User scopes (torch's record_function) may end on
// another thread: they, and ops nested deeper than the stack, get a context.
bool EndsWhereItBegins(at::RecordScope scope) {
  return scope == at::RecordScope::FUNCTION || scope == at::RecordScope::BACKWARD_FUNCTION;
}

class OpStack {
 public:
  // The event to begin for `fn`, or null when the stack is full.
  std::optional<RecordEvent>* Push(const at::RecordFunction* fn) {
    if (depth_ == kDepth) return nullptr;
    Entry& e = entries_[depth_++];
    e.fn = fn;
    return &e.event;
  }
  // Where `fn`'s event is, or -1 when this stack has none (`fn` began while the
  // profiler was off, or with a context). Its RecordFunction is alive, so no other
  // entry has its address.
  int Find(const at::RecordFunction* fn) const {
    for (int d = depth_ - 1; d >= 0; --d) {
      if (entries_[d].fn == fn) return d;
    }
    return -1;
  }
  // Ends the events from the top down to `depth`'s, innermost first: one whose end
  // never came ends with the op around it, as the recorder would end it.
  void PopTo(int depth) {
    while (depth_ > depth) entries_[--depth_].event.reset();
    if (deferred_ >= depth_) deferred_ = -1;
  }
  // The top entry's event begins with the next op on this thread (BeginDeferred).
  void DeferTop() { deferred_ = depth_ - 1; }
  // The deferred entry's op, or null.
  const at::RecordFunction* Deferred(std::optional<RecordEvent>** event) {
    if (deferred_ < 0) return nullptr;
    Entry& e = entries_[deferred_];
    deferred_ = -1;
    *event = &e.event;
    return e.fn;
  }

  std::string shapes;  // the tag being written, reused: no op allocates for its tag

 private:
  struct Entry {
    const at::RecordFunction* fn;
    std::optional<RecordEvent> event;
  };
  static constexpr int kDepth = 64;
  Entry entries_[kDepth];
  int depth_ = 0;
  int deferred_ = -1;  // the entry whose event waits for the next op, or -1
};

// `values`: sizes (c10::IntArrayRef) or a c10::List<int64_t>, neither copied.
template <class Ints>
void AppendInts(const Ints& values, std::string* out) {
  char digits[24];
  bool first = true;
  for (const int64_t value : values) {
    if (!first) *out += ", ";
    first = false;
    out->append(digits, std::to_chars(digits, digits + sizeof(digits), value).ptr);
  }
}

// "[[32, 3, 224, 224], [64, 3, 3, 3], []]": one entry per input, a tensor's sizes, or the
// values of a list of ints (the sizes aten::empty takes), [] for anything else.
void WriteInputShapes(const at::RecordFunction& fn, std::string* shapes) {
  shapes->assign(1, '[');
  for (const c10::IValue& input : fn.inputs()) {
    if (shapes->size() > 1) *shapes += ", ";
    *shapes += '[';
    if (input.isTensor()) {
      AppendInts(input.toTensor().sizes(), shapes);
    } else if (input.isIntList()) {
      AppendInts(input.toIntList(), shapes);
    }
    *shapes += ']';
  }
  *shapes += ']';
}

// Begins `fn`'s event in `event`. Names are interned, from torch's own buffer: torch
// frees those of autograd nodes and user scopes after the call.
void BeginEvent(const at::RecordFunction& fn, OpStack* ops, std::optional<RecordEvent>* event) {
  const std::string_view name = fn.name();
  if (fn.needsInputs()) {
    {
      internal::NativeGuard profiler_memory;  // the buffer grows untracked, as it is freed
      WriteInputShapes(fn, &ops->shapes);
    }
    event->emplace(name, ops->shapes);
  } else {
    event->emplace(name);
  }
}

}  // namespace

std::unique_ptr<at::ObserverContext> OnOpStart(const at::RecordFunction& fn) {
  if (!IsProfilerEnabled()) return nullptr;
  // What the GPU counters moved by before this op belongs to the scope around it.
  if (g_cuda_counting.load(std::memory_order_acquire)) ReadCudaCounters();
  OpStack* stack = internal::ThreadOwned<OpStack>();
  if (stack == nullptr) return nullptr;  // the thread is exiting
  OpStack& ops = *stack;
  NoteOpModule(fn);  // a backward node's modules open before the events around it
  std::optional<RecordEvent>* deferred_event = nullptr;
  if (const at::RecordFunction* deferred = ops.Deferred(&deferred_event)) {
    BeginEvent(*deferred, &ops, deferred_event);
  }
  if (EndsWhereItBegins(fn.scope())) {
    if (std::optional<RecordEvent>* event = ops.Push(&fn)) {
      if (ModulesOnThread() && IsEvaluateFunction(fn)) {
        ops.DeferTop();
      } else {
        BeginEvent(fn, &ops, event);
      }
      return nullptr;
    }
  }
  auto context = std::make_unique<EventContext>();
  BeginEvent(fn, &ops, &context->event);
  return context;
}

void OnOpEnd(const at::RecordFunction& fn, at::ObserverContext* context) {
  OpStack* ops = internal::ThreadOwned<OpStack>(/*make=*/false);
  const int depth = context != nullptr || ops == nullptr ? -1 : ops->Find(&fn);
  if (context == nullptr && depth < 0) return;  // begun while the profiler was off
  if (g_cuda_counting.load(std::memory_order_acquire)) ReadCudaCounters();  // the op's own
  if (context != nullptr) {
    static_cast<EventContext*>(context)->event.reset();
  } else {
    ops->PopTo(depth);
  }
}

}  // namespace paddle_prof::torch_bridge
