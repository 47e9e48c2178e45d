#include <new>
#include <stdexcept>

#include "memory_tracker.h"
#include "native_guard.h"
#include "out_of_memory.h"
#include "paddle_prof/allocator.h"
#include "place_registry.h"

namespace paddle_prof {

TrackingAllocator::TrackingAllocator(std::shared_ptr<Allocator> base, Place place)
    : base_(std::move(base)), place_(place), place_index_(internal::PlaceIndex(place)) {
  if (!base_) throw std::invalid_argument("TrackingAllocator needs a base allocator");
}

void* TrackingAllocator::Allocate(size_t bytes) {
  void* ptr;
  try {
    internal::NativeGuard counted_here_not_as_native;
    ptr = base_->Allocate(bytes);
  } catch (...) {
    internal::OnOutOfMemory(place_, bytes);
    throw;
  }
  if (ptr == nullptr && bytes > 0) internal::OnOutOfMemory(place_, bytes);
  if (ptr != nullptr && place_index_ >= 0 && !internal::TrackAlloc(place_index_, ptr, bytes)) {
    // An untracked block would reach Free() unknown and never go back to the base.
    internal::NativeGuard counted_here_not_as_native;
    base_->Free(ptr);
    throw std::bad_alloc();
  }
  return ptr;
}

void TrackingAllocator::Free(void* ptr) {
  if (ptr == nullptr) return;
  // Forget the block before the base allocator may hand its address to another thread.
  // A block the tracker does not know (a double free, a foreign pointer) is counted and
  // kept from the base allocator, which would abort or corrupt its heap.
  if (!internal::TrackFree(place_index_, ptr) && place_index_ >= 0) return;
  internal::NativeGuard counted_here_not_as_native;
  base_->Free(ptr);
}

}  // namespace paddle_prof
