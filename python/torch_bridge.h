// What the torch bridge's files share: the Bridge, the process-wide record of what has
// been installed (the CPU allocator wrapper, the op callback, the CUDA tracker or
// counters), changed under its one lock. torch_bridge.cc defines it.
#ifndef PADDLE_PROF_PYTHON_TORCH_BRIDGE_H_
#define PADDLE_PROF_PYTHON_TORCH_BRIDGE_H_

#include <ATen/record_function.h>

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "bindings_api.h"
#include "torch_cpu_allocator.h"

namespace paddle_prof::torch_bridge {

struct Bridge {
  std::mutex mu;
  std::optional<TrackingCPUAllocator> allocator;
  bool allocator_installed = false;
  std::optional<at::CallbackHandle> callback;
  bool callback_needs_inputs = false;
  bool cuda_tracking = false;  // a tracker cannot be detached: once per process
  // One per device, for the life of the process once counting starts (ops on any thread
  // read them, so they are never freed).
  std::vector<std::unique_ptr<internal::CounterMemory>> cuda_counters;
};

Bridge& GetBridge();

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_BRIDGE_H_
