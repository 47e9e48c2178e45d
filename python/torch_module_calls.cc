#include "torch_module_calls.h"

#include <Python.h>

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>

#include "paddle_prof/paddle_prof.h"
#include "torch_modules.h"

namespace paddle_prof::torch_bridge {
namespace {

// Every function here runs under the GIL, which guards all of this state.

// The module of each open call on this thread, outermost first: the first is the root
// that names the others. Borrowed: each call's caller holds its module until exit_call.
struct OpenCall {
  PyObject* module;
  int index;        // the module's, or -1: no event
  int event_depth;  // where its event closes (ExitModule), or -1
};
constexpr int kDepth = 64;
thread_local OpenCall t_calls[kDepth];
thread_local int t_depth = 0;

// (the calling module's index, module) -> the module's index as that caller names it:
// the call's path is its caller's and the name the caller holds it by, so one module
// held as `l1` by the root and as `0` by `seq` has a path for each. A root call's caller
// is kRoot; a call under a caller without an index, kUnnamedCaller. A weak reference
// tells a live entry from one whose address a new object took.
constexpr int kRoot = -1;
constexpr int kUnnamedCaller = -2;
struct Named {
  PyObject* module;  // a weak reference, owned
  int index;
};
struct PairHash {
  size_t operator()(const std::pair<int, PyObject*>& p) const {
    return std::hash<PyObject*>()(p.second) * 31 + std::hash<int>()(p.first);
  }
};
using NameCache = std::unordered_map<std::pair<int, PyObject*>, Named, PairHash>;
NameCache& Names() {
  static NameCache* names = new NameCache;  // leaked: calls may end during exit
  return *names;
}
// Owned; namer(module, root, parent_index, parent_module) -> index.
PyObject* g_namer = nullptr;

void Forget(Named& named) { Py_XDECREF(named.module); }

bool Alive(PyObject* reference, PyObject* object) {
  return reference != nullptr && PyWeakref_GetObject(reference) == object;
}

// The module's index, from the cache or else from the namer; -1 when it has none. A
// namer that raises is reported as unraisable, once for the pair in the window: the
// program's call goes on unrecorded.
// `caller`: the open call the module is called in, or null for a root.
int IndexOf(PyObject* module, PyObject* root, const OpenCall* caller) {
  const int parent = caller != nullptr ? caller->index : -1;
  const std::pair<int, PyObject*> key(
      caller == nullptr ? kRoot : (parent >= 0 ? parent : kUnnamedCaller), module);
  NameCache& names = Names();
  if (const auto it = names.find(key); it != names.end()) {
    if (Alive(it->second.module, module)) return it->second.index;
    Forget(it->second);
    names.erase(it);
  }
  if (g_namer == nullptr) return -1;
  PyObject* result = PyObject_CallFunction(g_namer, "OOiO", module, root, parent,
                                           caller != nullptr ? caller->module : Py_None);
  int index = -1;
  if (result != nullptr) index = static_cast<int>(PyLong_AsLong(result));
  Py_XDECREF(result);
  if (PyErr_Occurred()) {
    PyErr_WriteUnraisable(g_namer);
    index = -1;
  }
  Named named{PyWeakref_NewRef(module, nullptr), index};
  if (named.module == nullptr) {  // not weakly referable: no cache
    PyErr_Clear();
    Forget(named);
    return index;
  }
  // The namer ran Python code, where another thread may have named this pair too.
  if (auto [it, fresh] = names.emplace(key, named); !fresh) {
    Forget(it->second);
    it->second = named;
  }
  return index;
}

PyObject* EnterCall(PyObject* /*self*/, PyObject* module) {
  if (!IsProfilerEnabled() || t_depth == kDepth) return PyLong_FromLong(-1);
  PyObject* root = t_depth > 0 ? t_calls[0].module : module;
  const int index = IndexOf(module, root, t_depth > 0 ? &t_calls[t_depth - 1] : nullptr);
  t_calls[t_depth] = {module, index, index >= 0 ? EnterModule(index) : -1};
  return PyLong_FromLong(t_depth++);
}

PyObject* ExitCall(PyObject* /*self*/, PyObject* depth_object) {
  const long depth = PyLong_AsLong(depth_object);
  if (depth == -1 && PyErr_Occurred()) return nullptr;
  if (depth < 0 || depth >= t_depth) Py_RETURN_NONE;  // closed already
  for (int i = static_cast<int>(depth); i < t_depth; ++i) {
    if (t_calls[i].event_depth >= 0) {  // the first event closes those above it too
      ExitModule(t_calls[i].event_depth);
      break;
    }
  }
  t_depth = static_cast<int>(depth);
  Py_RETURN_NONE;
}

PyObject* SetModuleNamer(PyObject* /*self*/, PyObject* namer) {
  Py_XDECREF(g_namer);
  g_namer = namer == Py_None ? nullptr : namer;
  Py_XINCREF(g_namer);
  Py_RETURN_NONE;
}

PyObject* ForgetModuleNames(PyObject* /*self*/, PyObject* /*unused*/) {
  NameCache& names = Names();
  for (auto& [key, named] : names) Forget(named);
  names.clear();
  Py_RETURN_NONE;
}

PyMethodDef kFunctions[] = {
    {"enter_call", EnterCall, METH_O,
     "enter_call(module) -> depth: opens the module call's event on this thread (-1: none)"},
    {"exit_call", ExitCall, METH_O,
     "exit_call(depth): closes the call entered at depth and every call above it"},
    {"set_module_namer", SetModuleNamer, METH_O,
     "set_module_namer(namer): namer(module, root, parent_index, parent_module) -> index "
     "names a call the cache does not know; None: no new names"},
    {"forget_module_names", ForgetModuleNames, METH_NOARGS,
     "forget_module_names(): empties the cache of names (each window registers its own)"},
};

}  // namespace

void AddModuleCallFunctions(pybind11::module_& module) {
  for (PyMethodDef& def : kFunctions) {
    PyObject* function = PyCFunction_NewEx(&def, nullptr, module.attr("__name__").ptr());
    if (function == nullptr) throw pybind11::error_already_set();
    module.add_object(def.ml_name, pybind11::reinterpret_steal<pybind11::object>(function));
  }
}

}  // namespace paddle_prof::torch_bridge
