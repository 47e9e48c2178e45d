// paddle_prof.torch's memory kinds told from C++: the storage of each tensor of a kept
// list (and of its gradient) marked in the core's live-block table (MarkBlock) when it
// changed, with no Python call per tensor, so that the scan of a large model stays
// short (TensorMarks); and the CPU tensors made before `import paddle_prof.torch`
// adopted into the tracker (AdoptCpuBlock), so that their kinds can be told too.
#ifndef PADDLE_PROF_PYTHON_TORCH_MEMORY_MARKS_H_
#define PADDLE_PROF_PYTHON_TORCH_MEMORY_MARKS_H_

#include <ATen/core/Tensor.h>
#include <pybind11/pybind11.h>

#include <cstdint>

namespace paddle_prof::torch_bridge {

// Tells the block of `tensor`'s storage as `kind` (block_kind.h), adopting it first if
// c10's own allocator made it; false if it has no block to track.
bool MarkTensorBlock(const at::Tensor& tensor, uint8_t kind);

// Adds set_tensor_type, categorize_memory, mark_tensors, TensorMarks and adopt_tensors
// to `module`.
void AddMemoryMarkFunctions(pybind11::module_& module);

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_MEMORY_MARKS_H_
