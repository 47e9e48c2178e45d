// The fast path of paddle_prof.torch's Module.__call__ wrapper, in CPython's own calling
// convention (no pybind11 dispatch): enter_call(module) names the call from a cache and
// opens its event; exit_call(depth) closes it and what a raising forward left open above.
// A cache miss asks the Python namer (set_module_namer), which registers the path.
#ifndef PADDLE_PROF_PYTHON_TORCH_MODULE_CALLS_H_
#define PADDLE_PROF_PYTHON_TORCH_MODULE_CALLS_H_

#include <pybind11/pybind11.h>

namespace paddle_prof::torch_bridge {

// Adds enter_call, exit_call, set_module_namer and forget_module_names to `module`.
void AddModuleCallFunctions(pybind11::module_& module);

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_MODULE_CALLS_H_
