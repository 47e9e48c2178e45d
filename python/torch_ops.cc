#include "torch_ops.h"

#include <ATen/SequenceNumber.h>

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
  std::optional<RecordEvent>& EventAt(int depth) { return entries_[depth].event; }
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

  // What record_shapes writes of an op's inputs, reused: no op allocates for them.
  std::string tag;     // its tensors' shapes and its lists of ints
  std::string inputs;  // Input Dims and Input type, for the trace (op_details.h)
  std::string types;

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

// Kineto's name of an input's type: a tensor's dtype (`float`), `Scalar`, a list's kind;
// "" for None or anything else. `dims` gets the input's entry of `Input Dims`: a
// tensor's sizes, a list of ints' values, a list of tensors' sizes; [] for the rest.
// Returns whether the tag shows the input: a tensor's shape or a list's values (what
// sizes an op's memory), not a scalar, whose value would split rows by a learning rate
// or an index.
bool DescribeInput(const c10::IValue& input, std::string_view* type, std::string* dims) {
  *dims += '[';
  bool shown = true;
  if (input.isTensor() && input.toTensor().defined() && !input.toTensor().is_nested()) {
    const at::Tensor& tensor = input.toTensor();
    const auto name = tensor.dtype().name();
    *type = std::string_view(name.data(), name.size());
    AppendInts(tensor.sizes(), dims);
  } else if (input.isIntList()) {
    *type = "ScalarList";
    AppendInts(input.toIntList(), dims);
  } else if (input.isTensorList()) {
    *type = "TensorList";
    const c10::List<at::Tensor> tensors = input.toTensorList();
    for (size_t i = 0; i < tensors.size(); ++i) {
      const at::Tensor tensor = tensors.get(i);
      if (i > 0) *dims += ", ";
      *dims += '[';
      if (tensor.defined() && !tensor.is_nested()) AppendInts(tensor.sizes(), dims);
      *dims += ']';
    }
  } else {
    *type = input.isScalar() ? "Scalar"
            : input.isDoubleList() || input.isBoolList() ? "ScalarList"
            : input.isList() ? "GenericList"
                             : "";
    shown = false;
  }
  *dims += ']';
  return shown;
}

// The tag, "[[32, 3, 224, 224], [64, 3, 3, 3], [1, 1]]": the inputs it shows, in order;
// and the op's inputs for the trace, "[<Input Dims>, <Input type>]", one entry per input.
void DescribeInputs(const at::RecordFunction& fn, OpStack* ops) {
  ops->tag.assign(1, '[');
  ops->inputs.assign("[[");
  ops->types.assign(1, '[');
  bool first = true;
  for (const c10::IValue& input : fn.inputs()) {
    if (!first) {
      ops->inputs += ", ";
      ops->types += ", ";
    }
    first = false;
    const size_t dims_at = ops->inputs.size();
    std::string_view type;
    bool shown;
    try {
      shown = DescribeInput(input, &type, &ops->inputs);
    } catch (const std::exception&) {  // sizes a tensor cannot give (symbolic ones)
      ops->inputs.resize(dims_at);
      ops->inputs += "[]";
      type = "";
      shown = false;
    }
    if (shown) {
      if (ops->tag.size() > 1) ops->tag += ", ";
      ops->tag.append(ops->inputs, dims_at, std::string::npos);
    }
    ops->types += '"';
    ops->types += type;
    ops->types += '"';
  }
  ops->tag += ']';
  ops->inputs += "], ";
  ops->inputs += ops->types;
  ops->inputs += "]]";
}

// Begins `fn`'s event in `event`. Names are interned, from torch's own buffer: torch
// frees those of autograd nodes and user scopes after the call.
void BeginEvent(const at::RecordFunction& fn, OpStack* ops, std::optional<RecordEvent>* event) {
  const std::string_view name = fn.name();
  if (fn.needsInputs()) {
    {
      internal::NativeGuard profiler_memory;  // the buffers grow untracked, as they are freed
      DescribeInputs(fn, ops);
    }
    event->emplace(name, ops->tag);
    internal::NoteOpInputs(&*event, ops->inputs);
  } else {
    event->emplace(name);
  }
}

// As an op ends, the sequence number of one autograd records, which ties a forward op to
// its backward node in the trace: a backward node's, or a forward op's that made one
// (the number moved on inside it). The ops that made no node share the number of the
// next one that does, and go without it: an op in a loop that needs no gradient costs
// no more than a read of the number.
void NoteSequence(const at::RecordFunction& fn, const std::optional<RecordEvent>& event) {
  const int64_t number = fn.seqNr();
  if (number < 0 || !event) return;
  const uint64_t forward_thread = fn.forwardThreadId();
  if (forward_thread == 0 && at::sequence_number::peek() == static_cast<uint64_t>(number)) {
    return;
  }
  internal::NoteOpSequence(&*event, number, forward_thread, at::RecordFunction::currentThreadId());
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
  std::optional<RecordEvent>& event =
      context != nullptr ? static_cast<EventContext*>(context)->event : ops->EventAt(depth);
  NoteSequence(fn, event);
  if (context != nullptr) {
    event.reset();
  } else {
    ops->PopTo(depth);
  }
}

}  // namespace paddle_prof::torch_bridge
