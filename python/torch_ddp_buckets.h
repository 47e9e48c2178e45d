// DistributedDataParallel's gradient buckets told as gradients: the Reducer keeps each
// bucket's gradients in one flat tensor of its own (copied into the parameters' .grad
// after the all-reduce, unless gradient_as_bucket_view), which no Python object shows.
// The bridge reads them from the Reducer (ddp.reducer), compiled against the same torch
// headers, and tells their storages as gradients.
#ifndef PADDLE_PROF_PYTHON_TORCH_DDP_BUCKETS_H_
#define PADDLE_PROF_PYTHON_TORCH_DDP_BUCKETS_H_

#include <pybind11/pybind11.h>

namespace paddle_prof::torch_bridge {

// Adds mark_ddp_buckets to `module`.
void AddDdpBucketFunctions(pybind11::module_& module);

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_DDP_BUCKETS_H_
