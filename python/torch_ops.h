// Ops as events: the two halves of a global RecordFunction callback, which turn every
// ATen op, autograd node and user scope into a RecordEvent on the thread that runs it
// (intra-op worker threads included). torch_bridge.cc adds and removes the callback.
#ifndef PADDLE_PROF_PYTHON_TORCH_OPS_H_
#define PADDLE_PROF_PYTHON_TORCH_OPS_H_

#include <ATen/record_function.h>

#include <memory>

namespace paddle_prof::torch_bridge {

// Begins the op's event, tagged with its inputs' shapes when the callback needs inputs.
// Returns a context only for an event kept there (torch_ops.cc says which): most live on
// the thread's own stack of open ops.
std::unique_ptr<at::ObserverContext> OnOpStart(const at::RecordFunction& fn);
// Ends the event OnOpStart began, if it began one.
void OnOpEnd(const at::RecordFunction& fn, at::ObserverContext* context);

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_OPS_H_
