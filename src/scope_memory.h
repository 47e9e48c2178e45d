// The memory an open scope has seen, per place: what it allocated and freed (nested
// calls included) and its peak, folded from child to parent when a child ends:
//
//   parent.peak     = max(parent.peak, parent.running + child.peak)
//   parent.running += child.running
//
// `running` is the bytes the scope's own level allocated (closed children folded in)
// and still holds, so a scope's total at any moment is its running plus that of its
// open descendants. O(1) per allocation, exact, no pass afterwards.
#ifndef PADDLE_PROF_SRC_SCOPE_MEMORY_H_
#define PADDLE_PROF_SRC_SCOPE_MEMORY_H_

#include <algorithm>
#include <cstdint>

namespace paddle_prof::internal {

struct PlaceUsage {
  int place;
  int64_t running;
  int64_t peak;
  int64_t alloc_bytes;
  int64_t alloc_count;
  int64_t free_bytes;
  int64_t free_count;

  void Alloc(int64_t bytes) {
    running += bytes;
    peak = std::max(peak, running);
    alloc_bytes += bytes;
    ++alloc_count;
  }
  void CountFree(int64_t bytes) {
    free_bytes += bytes;
    ++free_count;
  }
};

class ScopeMemory {
 public:
  // Places one scope can touch (CPU, native, two GPUs); more are counted, not kept.
  static constexpr int kSlots = 4;

  void Clear() { used_ = 0; }
  bool empty() const { return used_ == 0; }
  int size() const { return used_; }
  const PlaceUsage& operator[](int i) const { return slots_[i]; }

  // The usage for `place`; nullptr when kSlots other places are already used.
  PlaceUsage* Find(int place) {
    for (int i = 0; i < used_; ++i) {
      if (slots_[i].place == place) return &slots_[i];
    }
    return nullptr;
  }
  PlaceUsage* FindOrAdd(int place) {
    if (PlaceUsage* u = Find(place)) return u;
    if (used_ == kSlots) return nullptr;
    slots_[used_] = PlaceUsage{place, 0, 0, 0, 0, 0, 0};
    return &slots_[used_++];
  }

  // A child that ended hands its figures to this scope. False when a place was lost.
  bool Absorb(const ScopeMemory& child) {
    bool kept = true;
    for (int i = 0; i < child.used_; ++i) {
      const PlaceUsage& c = child.slots_[i];
      PlaceUsage* p = FindOrAdd(c.place);
      if (p == nullptr) {
        kept = false;
        continue;
      }
      p->peak = std::max(p->peak, p->running + c.peak);
      p->running += c.running;
      p->alloc_bytes += c.alloc_bytes;
      p->alloc_count += c.alloc_count;
      p->free_bytes += c.free_bytes;
      p->free_count += c.free_count;
    }
    return kept;
  }

 private:
  int used_ = 0;  // first: read and cleared by every scope, next to its other hot fields
  PlaceUsage slots_[kSlots];
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_SCOPE_MEMORY_H_
