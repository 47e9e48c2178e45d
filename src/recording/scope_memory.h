// The memory an open scope has seen, per place (memory_figures.h): what it allocated
// and freed (nested calls included) and its peak, folded from child to parent when a
// child ends:
//
//   parent.peak     = max(parent.peak, parent.running + child.peak)
//   parent.running += child.running
//
// `running` is the bytes the scope's own level allocated (closed children folded in)
// and still holds, so a scope's total at any moment is its running plus that of its
// open descendants. O(1) per allocation, exact, no pass afterwards.
#ifndef PADDLE_PROF_SRC_SCOPE_MEMORY_H_
#define PADDLE_PROF_SRC_SCOPE_MEMORY_H_

#include "memory_figures.h"

namespace paddle_prof::internal {

// A scope's figures on one place: plain integers, written by its thread only.
struct PlaceUsage : MemoryFigures<int64_t> {
  int place = 0;
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
    slots_[used_] = PlaceUsage{};
    slots_[used_].place = place;
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
      p->Absorb(c);
    }
    return kept;
  }

 private:
  int used_ = 0;  // first: read and cleared by every scope, next to its other hot fields
  PlaceUsage slots_[kSlots];
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_SCOPE_MEMORY_H_
