#include "torch_cpu_allocator.h"

#include <cstring>

#include "bindings_api.h"
#include "paddle_prof/paddle_prof.h"

namespace paddle_prof::torch_bridge {

c10::DeleterFnPtr g_original_deleter = nullptr;
// True from the start: c10 handed out blocks before the wrapper was installed.
std::atomic<bool> g_untracked_handed_out{true};

namespace {

int CpuIndex() {
  static const int index = internal::PlaceIndex(CPUPlace());
  return index;
}

// Tracked on "CPU": under --native the same block must not count again as native.
void TrackedDelete(void* ptr) {
  internal::TrackFree(CpuIndex(), ptr);  // before the block can be handed out again
  internal::NativeGuard counted_as_cpu;
  g_original_deleter(ptr);
}

}  // namespace

void NoteUntrackedHandedOut() { g_untracked_handed_out.store(true, std::memory_order_relaxed); }

bool TakeUntrackedHandedOut() {
  return g_untracked_handed_out.exchange(false, std::memory_order_relaxed);
}

bool AdoptCpuBlock(c10::DataPtr& block, size_t bytes) {
  void* data = block.get();
  if (g_original_deleter == nullptr || data == nullptr || block.get_context() != data ||
      !block.compare_exchange_deleter(g_original_deleter, &TrackedDelete)) {
    return false;
  }
  internal::AdoptBlock(CpuIndex(), data, bytes);
  return true;
}

c10::DataPtr TrackingCPUAllocator::allocate(size_t bytes) PADDLE_PROF_ALLOCATE_CONST {
  // No window: c10's block as it is, freed by c10 alone; the next window adopts it
  // (AdoptCpuBlock) if the program still holds it as it opens.
  if (!IsProfilerEnabled()) {
    c10::DataPtr block;
    {
      internal::NativeGuard counted_as_cpu;
      block = original_->allocate(bytes);
    }
    // Once the block exists: a walk that cleared the flag before may have missed it. A
    // load, and a store only for the first block since the last walk.
    if (!g_untracked_handed_out.load(std::memory_order_relaxed)) NoteUntrackedHandedOut();
    return block;
  }
  c10::DataPtr block;
  try {
    internal::NativeGuard counted_as_cpu;
    block = original_->allocate(bytes);
  } catch (...) {  // c10's "not enough memory": the dump first, then torch's own error
    internal::OnOutOfMemory(CPUPlace(), bytes);
    throw;
  }
  void* data = block.get();
  if (data == nullptr || block.get_context() != data) return block;  // not ours to wrap
  block.release_context();
  internal::TrackAlloc(CpuIndex(), data, bytes);  // fresh from c10: never a live address
  return {data, data, &TrackedDelete, block.device()};
}

c10::DeleterFnPtr TrackingCPUAllocator::raw_deleter() const { return &TrackedDelete; }

void TrackingCPUAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  std::memcpy(dest, src, count);
}

}  // namespace paddle_prof::torch_bridge
