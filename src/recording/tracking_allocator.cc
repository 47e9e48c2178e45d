#include <algorithm>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

#include "memory_tracker.h"
#include "native_guard.h"
#include "out_of_memory.h"
#include "paddle_prof/allocator.h"
#include "place_registry.h"

namespace paddle_prof {

namespace {

// The id of a base allocator, the same for every TrackingAllocator over it: its blocks'
// source (memory_tracker.h). Bases past the 254th share kManySources.
uint8_t SourceOf(const Allocator* base) {
  static std::mutex mu;
  static std::vector<const Allocator*> bases;  // id - 1
  std::lock_guard<std::mutex> lock(mu);
  const auto known = std::find(bases.begin(), bases.end(), base);
  if (known != bases.end()) return static_cast<uint8_t>(known - bases.begin() + 1);
  if (bases.size() + 1 == internal::kManySources) return internal::kManySources;
  internal::NativeGuard profiler_memory;
  bases.push_back(base);
  return static_cast<uint8_t>(bases.size());
}

}  // namespace

TrackingAllocator::TrackingAllocator(std::shared_ptr<Allocator> base, Place place)
    : base_(std::move(base)), place_(place), place_index_(internal::PlaceIndex(place)) {
  if (!base_) throw std::invalid_argument("TrackingAllocator needs a base allocator");
  source_ = SourceOf(base_.get());
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
  if (ptr != nullptr && place_index_ >= 0 &&
      !internal::TrackAlloc(place_index_, ptr, bytes, source_)) {
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
  // A block the tracker does not know (a double free, a foreign pointer) or that another
  // allocator made (RecordAlloc, another base) is counted and kept from the base
  // allocator, which would abort or corrupt its heap.
  if (!internal::TrackFree(place_index_, ptr, source_) && place_index_ >= 0) return;
  internal::NativeGuard counted_here_not_as_native;
  base_->Free(ptr);
}

}  // namespace paddle_prof
