// Ops as events: the two halves of a global RecordFunction callback, which turn every
// ATen op, autograd node and user scope into a RecordEvent on the thread that runs it
// (intra-op worker threads included). torch_bridge.cc adds and removes the callback.
#ifndef PADDLE_PROF_PYTHON_TORCH_OPS_H_
#define PADDLE_PROF_PYTHON_TORCH_OPS_H_

#include <ATen/record_function.h>

#include <memory>

namespace paddle_prof::torch_bridge {

// Begins the op's event, tagged with its inputs' shapes when the callback needs inputs;
// null while the profiler is off.
std::unique_ptr<at::ObserverContext> OnOpStart(const at::RecordFunction& fn);
// Ends the event OnOpStart began.
void OnOpEnd(const at::RecordFunction& fn, at::ObserverContext* context);

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_OPS_H_
