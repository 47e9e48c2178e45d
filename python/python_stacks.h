// record_stacks for Python: the capture function the core calls as a top-level call
// begins (src/call_stacks.h), reading the calling thread's Python frames, and its
// bindings in paddle_prof._core.
#ifndef PADDLE_PROF_PYTHON_PYTHON_STACKS_H_
#define PADDLE_PROF_PYTHON_PYTHON_STACKS_H_

#include <pybind11/pybind11.h>

namespace paddle_prof::python_stacks {

// Registers the capture with the core and defines _core.set_source_exclusions(dirs),
// _core.set_record_stacks(on) and _core.record_stacks_on().
void Define(pybind11::module_& m);

}  // namespace paddle_prof::python_stacks

#endif  // PADDLE_PROF_PYTHON_PYTHON_STACKS_H_
