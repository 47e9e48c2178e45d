// What differs between the torch versions the bridge builds against: torch 1.13 (Debian)
// and 2.x (pip wheels), with or without CUDA. The differences are gated here on
// TORCH_VERSION_MAJOR/MINOR, which <torch/version.h> defines in both (recent torch
// forwards it to <torch/headeronly/version.h>), and on PADDLE_PROF_TORCH_CUDA.
#ifndef PADDLE_PROF_PYTHON_TORCH_VERSION_GATES_H_
#define PADDLE_PROF_PYTHON_TORCH_VERSION_GATES_H_

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#else
#include <torch/headeronly/version.h>
#endif

#define PADDLE_PROF_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||              \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10::Allocator::allocate() lost its const in torch 2.3 (pytorch#120969).
#if PADDLE_PROF_TORCH_AT_LEAST(2, 3)
#define PADDLE_PROF_ALLOCATE_CONST
#else
#define PADDLE_PROF_ALLOCATE_CONST const
#endif

// A storage's own DataPtr, to change its deleter: torch 2.x's copy-on-write storages made
// StorageImpl::mutable_data_ptr() copy a shared block first, and added an accessor that
// does not; 1.13's data_ptr() is that accessor.
#if PADDLE_PROF_TORCH_AT_LEAST(2, 2)
#define PADDLE_PROF_STORAGE_DATA_PTR(storage) (storage)._mutable_data_ptr_no_checks()
#else
#define PADDLE_PROF_STORAGE_DATA_PTR(storage) (storage).data_ptr()
#endif

// PADDLE_PROF_TORCH_CUDA comes from CMake when torch was built with CUDA. Every such
// torch keeps statistics in its CUDA allocator (PADDLE_PROF_CUDA_COUNTERS); the caching
// allocator's trace trackers (attachAllocatorTraceTracker, TraceEntry::device_), which
// give each block, are there from torch 2.2; 2.3 is the oldest release whose header was
// checked (PADDLE_PROF_CUDA_TRACKING). Only torch_cuda_memory.cc includes the c10/cuda
// headers, under the first.
#if defined(PADDLE_PROF_TORCH_CUDA) && PADDLE_PROF_TORCH_CUDA
#define PADDLE_PROF_CUDA_COUNTERS 1
#else
#define PADDLE_PROF_CUDA_COUNTERS 0
#endif
#if PADDLE_PROF_CUDA_COUNTERS && PADDLE_PROF_TORCH_AT_LEAST(2, 3)
#define PADDLE_PROF_CUDA_TRACKING 1
#else
#define PADDLE_PROF_CUDA_TRACKING 0
#endif

#endif  // PADDLE_PROF_PYTHON_TORCH_VERSION_GATES_H_
