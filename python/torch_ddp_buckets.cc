#include "torch_ddp_buckets.h"

#if __has_include(<torch/csrc/distributed/c10d/reducer.hpp>)
#include <torch/csrc/distributed/c10d/reducer.hpp>
#define PADDLE_PROF_DDP_BUCKETS 1
#else
#define PADDLE_PROF_DDP_BUCKETS 0
#endif

#include <cstdint>
#include <memory>

#include "torch_memory_marks.h"

namespace paddle_prof::torch_bridge {
namespace {

#if PADDLE_PROF_DDP_BUCKETS

// The Reducer keeps its buckets protected: a class derived from it may name them, and
// reads them through a member pointer from any Reducer, never calling into it.
struct BucketsOf : c10d::Reducer {
  static const std::vector<Bucket>& Of(const c10d::Reducer& reducer) {
    return reducer.*(&BucketsOf::buckets_);
  }
};

int64_t MarkBuckets(pybind11::handle reducer_object, int kind) {
  std::shared_ptr<c10d::Reducer> reducer;
  try {
    reducer = reducer_object.cast<std::shared_ptr<c10d::Reducer>>();
  } catch (const pybind11::cast_error&) {
    return -1;  // not a Reducer of the torch the bridge was built for
  }
  int64_t marked = 0;
  for (const auto& bucket : BucketsOf::Of(*reducer)) {
    marked += MarkTensorBlock(bucket.gradients, static_cast<uint8_t>(kind));
  }
  return marked;
}
#else
int64_t MarkBuckets(pybind11::handle, int) { return -1; }  // a torch without c10d
#endif

}  // namespace

void AddDdpBucketFunctions(pybind11::module_& module) {
  module.def(
      "mark_ddp_buckets", &MarkBuckets, pybind11::arg("reducer"), pybind11::arg("kind"),
      "Marks the storage of each bucket's flat gradient tensor of a DistributedDataParallel's "
      "Reducer as `kind`; returns how many had a tracked block, -1 if `reducer` is not one "
      "this torch build can read.");
}

}  // namespace paddle_prof::torch_bridge
