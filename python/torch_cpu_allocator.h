// CPU tensors' memory: a wrapper around c10's CPU allocator that reports every CPU tensor
// allocation made in a window to the tracker, on the place "CPU"; outside windows it
// hands out c10's blocks untouched, and each window adopts, as it opens, those the
// program holds (paddle_prof/torch/__init__.py). torch_bridge.cc installs it.
#ifndef PADDLE_PROF_PYTHON_TORCH_CPU_ALLOCATOR_H_
#define PADDLE_PROF_PYTHON_TORCH_CPU_ALLOCATOR_H_

#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstddef>

#include "torch_version_gates.h"

namespace paddle_prof::torch_bridge {

// c10's own CPU allocator's deleter, which frees the wrapper's blocks: set once, before
// the wrapper is made.
extern c10::DeleterFnPtr g_original_deleter;

// A block c10's own allocator handed out before the wrapper (`block`, a storage's, of
// `bytes`): its free passes through the wrapper from now on, and the tracker knows it.
// False, and nothing changed, for a block another allocator made.
bool AdoptCpuBlock(c10::DataPtr& block, size_t bytes);

// Whether the wrapper handed out a block outside a window since the last call (or ever,
// on the first): a window's walk of the program's tensors (adopt_tensors) finds nothing
// to adopt otherwise. Cleared by the call, before the walk. Storages that c10's default
// allocator makes without the wrapper (torch.UntypedStorage, a tensor's deepcopy) do
// not set it: the scans of parameters and optimizer state adopt those.
bool TakeUntrackedHandedOut();
// Sets what TakeUntrackedHandedOut() reads: a walk that failed is owed again.
void NoteUntrackedHandedOut();

// Wraps c10's CPU allocator. Blocks keep data == context, so raw_allocate and
// raw_deleter (which oneDNN uses) go on working; blocks allocated outside windows keep
// the original deleter until adopted (AdoptCpuBlock).
class TrackingCPUAllocator final : public c10::Allocator {
 public:
  explicit TrackingCPUAllocator(c10::Allocator* original) : original_(original) {}

  c10::DataPtr allocate(size_t bytes) PADDLE_PROF_ALLOCATE_CONST override;
  c10::DeleterFnPtr raw_deleter() const override;
  // Pure virtual in torch 2.x's c10::Allocator (added with copy-on-write storages, which
  // clone through it); a plain member on 1.13. No `override`, so one declaration serves
  // both. CPU blocks copy with memcpy, as c10's own CPU allocators do.
  void copy_data(void* dest, const void* src, std::size_t count) const;

 private:
  c10::Allocator* original_;
};

}  // namespace paddle_prof::torch_bridge

#endif  // PADDLE_PROF_PYTHON_TORCH_CPU_ALLOCATOR_H_
