#include "torch_memory_marks.h"

#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>

#include "bindings_api.h"

namespace paddle_prof::torch_bridge {
namespace {

// Its storage's block: a view's too, which starts inside it.
bool MarkStorage(const at::Tensor& tensor, uint8_t kind) {
  if (!tensor.defined() || !tensor.has_storage()) return false;
  return internal::MarkBlock(tensor.storage().data(), kind);
}

}  // namespace

void AddMemoryMarkFunctions(pybind11::module_& module) {
  // torch.Tensor's C base: every tensor, a Parameter or a subclass too, is one.
  static PyTypeObject* tensor_type = nullptr;
  module.def(
      "set_tensor_type", [](pybind11::type type) {
        tensor_type = reinterpret_cast<PyTypeObject*>(type.release().ptr());  // kept for good
      },
      pybind11::arg("type"));
  module.def(
      "mark_tensors",
      [](pybind11::list tensors, int kind, int grad_kind) {
        int64_t missing = 0;
        for (pybind11::handle item : tensors) {
          if (tensor_type == nullptr || !PyObject_TypeCheck(item.ptr(), tensor_type)) continue;
          const at::Tensor& tensor = THPVariable_Unpack(item.ptr());
          missing += !MarkStorage(tensor, static_cast<uint8_t>(kind));
          if (grad_kind != 0 && tensor.defined()) {
            const at::Tensor& grad = tensor.grad();
            if (grad.defined()) missing += !MarkStorage(grad, static_cast<uint8_t>(grad_kind));
          }
        }
        return missing;
      },
      pybind11::arg("tensors"), pybind11::arg("kind"), pybind11::arg("grad_kind") = 0,
      "Marks the storage of each tensor of the list as `kind` (block_kind.h) and, with "
      "`grad_kind`, its gradient's as that; returns how many had no tracked block.");
}

}  // namespace paddle_prof::torch_bridge
