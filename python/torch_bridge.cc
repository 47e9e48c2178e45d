// paddle_prof._torch_bridge: PyTorch seen through paddle_prof. A global RecordFunction
// callback turns every ATen op, autograd node and user scope into a RecordEvent on the
// thread that runs it (intra-op worker threads included), a wrapper around c10's CPU
// allocator reports every CPU tensor allocation to the tracker, and, on CUDA builds of
// torch, a trace tracker on the CUDA caching allocator reports every GPU tensor's block
// (or, where none attaches, the allocator's statistics are read at every op).
//
// This file defines the module and installs the pieces, each in a file of its own:
// torch_ops.cc (ops as events), torch_modules.cc (modules as events),
// torch_cpu_allocator.cc (CPU tensors' memory) and torch_cuda_memory.cc (CUDA tensors'
// memory). torch_version_gates.h says what differs between the torch versions the
// bridge builds against.
#include "torch_bridge.h"

#include <ATen/record_function.h>
#include <c10/core/CPUAllocator.h>
#include <pybind11/pybind11.h>

#include <mutex>

#include "torch_cpu_allocator.h"
#include "torch_cuda_memory.h"
#include "torch_ddp_buckets.h"
#include "torch_memory_marks.h"
#include "torch_module_calls.h"
#include "torch_modules.h"
#include "torch_ops.h"
#include "torch_version_gates.h"

namespace py = pybind11;

namespace paddle_prof::torch_bridge {

Bridge& GetBridge() {
  static auto* bridge = new Bridge;  // leaked: tensors are freed during exit too
  return *bridge;
}

namespace {

// Installs the allocator wrapper once per process, under the bridge's lock.
void InstallAllocator(Bridge& b) {
  if (b.allocator) return;
  c10::Allocator* original = c10::GetCPUAllocator();
  g_original_deleter = original->raw_deleter();
  if (g_original_deleter != nullptr) {
    b.allocator.emplace(original);
    c10::SetCPUAllocator(&*b.allocator, /*priority=*/100);
    b.allocator_installed = c10::GetCPUAllocator() == &*b.allocator;
  }
}

// From `import paddle_prof.torch` on, every CPU tensor's block is known (cheap while no
// window is open): a later window knows what its program made before it. Returns
// whether c10 now allocates through the wrapper.
bool TrackTensors() {
  Bridge& b = GetBridge();
  std::lock_guard<std::mutex> lock(b.mu);
  InstallAllocator(b);
  return b.allocator_installed;
}

// Installs the allocator wrapper once per process and the op callback (again when
// record_shapes changes). Returns whether c10 now allocates through the wrapper.
bool Install(bool record_shapes) {
  Bridge& b = GetBridge();
  std::lock_guard<std::mutex> lock(b.mu);
  InstallAllocator(b);
  if (b.callback && b.callback_needs_inputs != record_shapes) {
    at::removeCallback(*b.callback);
    b.callback.reset();
  }
  if (!b.callback) {
    b.callback = at::addGlobalCallback(
        at::RecordFunctionCallback(&OnOpStart, &OnOpEnd).needsInputs(record_shapes));
    b.callback_needs_inputs = record_shapes;
  }
  return b.allocator_installed;
}

// Ops cost nothing extra once the profiler is closed.
void RemoveCallback() {
  Bridge& b = GetBridge();
  std::lock_guard<std::mutex> lock(b.mu);
  if (b.callback) at::removeCallback(*b.callback);
  b.callback.reset();
}

// Benchmark only (benchmarks/torch_op_overhead.py), not part of paddle_prof.torch: adds
// (or removes) a global callback whose start and end do nothing, so that a benchmark can
// show the floor any callback pays per op, torch's own work to call it (and, with
// `needs_inputs`, to hand it the op's inputs, as record_shapes asks).
void BenchEmptyCallback(bool on, bool needs_inputs) {
  static std::optional<at::CallbackHandle> handle;  // changed under the GIL only
  if (on && !handle) {
    handle = at::addGlobalCallback(
        at::RecordFunctionCallback(
            [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> {
              return nullptr;
            },
            [](const at::RecordFunction&, at::ObserverContext*) {})
            .needsInputs(needs_inputs));
  } else if (!on && handle) {
    at::removeCallback(*handle);
    handle.reset();
  }
}

}  // namespace
}  // namespace paddle_prof::torch_bridge

PYBIND11_MODULE(_torch_bridge, m) {
  using namespace paddle_prof::torch_bridge;
  m.doc() = "paddle_prof's PyTorch bridge; use paddle_prof.torch instead.";
  m.def("track_tensors", &TrackTensors);
  m.def("install", &Install, py::arg("record_shapes"));
  m.def("remove_callback", &RemoveCallback);
  // Without the GIL: attaching takes each device allocator's lock, and a thread holding
  // one may be waiting for the GIL (a Python out-of-memory observer runs under it).
  m.def("install_cuda", &InstallCuda, py::call_guard<py::gil_scoped_release>());
  m.def("cuda_tracking", &CudaTracking);
  m.def("count_cuda", &CountCuda, py::call_guard<py::gil_scoped_release>());
  m.def("register_module", &RegisterModule, py::arg("path"), py::arg("parent"), py::arg("type"),
        py::arg("params"), py::arg("param_bytes"));
  AddModuleCallFunctions(m);
  m.def("end_module_backward", &EndModuleBackward);
  AddMemoryMarkFunctions(m);
  AddDdpBucketFunctions(m);
  m.attr("PARAMETER") = py::int_(static_cast<int>(paddle_prof::internal::kParameterBlock));
  m.attr("GRADIENT") = py::int_(static_cast<int>(paddle_prof::internal::kGradientBlock));
  m.attr("OPTIMIZER_STATE") = py::int_(static_cast<int>(paddle_prof::internal::kOptimizerStateBlock));
  m.attr("HANDED_TO_MODULE") = py::int_(static_cast<int>(paddle_prof::internal::kHandedToModule));
  m.def("_bench_empty_callback", &BenchEmptyCallback, py::arg("on"),
        py::arg("needs_inputs") = false);
  // Whether this bridge can follow each GPU block (built against a CUDA torch >= 2.3).
  m.attr("WITH_CUDA") = py::bool_(PADDLE_PROF_CUDA_TRACKING != 0);
  // Whether it can read the CUDA allocator's counters (built against any CUDA torch).
  m.attr("WITH_CUDA_COUNTERS") = py::bool_(PADDLE_PROF_CUDA_COUNTERS != 0);
}
