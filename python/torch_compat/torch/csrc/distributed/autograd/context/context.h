// Debian's libtorch-dev (torch 1.13) leaves out the distributed autograd headers, which
// c10d/reducer.hpp includes for two names only: this declares those two as torch does.
// The Reducer holds a ContextPtr (a shared_ptr, whatever it points to), so its layout
// is the same as the one torch was built with. Put on the include path only when torch's
// own header is missing (python/CMakeLists.txt).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>

namespace torch::distributed::autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};
using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
