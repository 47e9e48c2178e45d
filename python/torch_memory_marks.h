// paddle_prof.torch's memory kinds told from C++: the storage of each tensor of a list
// (and of its gradient) marked in the core's live-block table (MarkBlock) with no
// Python call per tensor, so that the scan of a large model stays short.
#ifndef PADDLE_PROF_PYTHON_TORCH_MEMORY_MARKS_H_
#define PADDLE_PROF_PYTHON_TORCH_MEMORY_MARKS_H_

#include <pybind11/pybind11.h>

namespace paddle_prof::torch_bridge {

// Adds mark_tensors(tensors, kind, grad_kind) to `module`.
void AddMemoryMarkFunctions(pybind11::module_& module);

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_MEMORY_MARKS_H_
