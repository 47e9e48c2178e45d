// Modules as events (paddle_prof.torch, modules=True). Python's Module.__call__ wrapper
// opens and closes each call's event "nn.Module: <path>" here, on a stack per thread; the
// op callback notes, for each forward op that autograd records, the module it ran in,
// by the sequence number its backward node will carry. When autograd runs a node on the
// thread that made it, the events "nn.Module: <path>.backward" of its module and that
// module's parents are open around it (those of other modules closed first); the
// backward pass's end closes them.
#ifndef PADDLE_PROF_PYTHON_TORCH_MODULES_H_
#define PADDLE_PROF_PYTHON_TORCH_MODULES_H_

#include <ATen/record_function.h>

#include <cstdint>
#include <string>

namespace paddle_prof::torch_bridge {

// Registers a module path under its parent's index (-1 for a root), noting its type and
// parameters for the report (NoteModule); returns its index, the same for every call
// with that path, or -1 past the table's bound (its calls then record no event).
// Called under the GIL.
int RegisterModule(const std::string& path, int parent, const std::string& type,
                   int64_t params, int64_t param_bytes);
// Opens the forward event of module `index` on this thread; returns the depth to close
// it at (ExitModule), which closes what a raising forward left open above it too.
int EnterModule(int index);
void ExitModule(int depth);
// Ends this thread's open module backward events (the backward pass returned).
void EndModuleBackward();

// From the op callback, before the op's own event begins: a forward op's module, or a
// backward node's modules.
void NoteOpModule(const at::RecordFunction& fn);
// Whether a module ran on this thread (its backward nodes may open module events).
bool ModulesOnThread();
// Whether `fn` is autograd's scope around a node ("autograd::engine::evaluate_function:
// AddmmBackward0"). It carries no sequence number, the node inside it does: the op
// callback begins its event once the node has opened its modules' events, so that they
// are around it.
bool IsEvaluateFunction(const at::RecordFunction& fn);

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_MODULES_H_
