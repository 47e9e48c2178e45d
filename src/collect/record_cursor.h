// The one reader of a collected thread's records (event_record.h gives their grammar):
// it yields each call with the memory figures and the GPU scope id recorded after it,
// or each allocation or free, in the order the thread recorded them. The report, the
// GPU correlation, the memory timeline and the trace all read through it, and all ask
// Kept() which calls and memory events the window holds, so that they agree.
#ifndef PADDLE_PROF_SRC_RECORD_CURSOR_H_
#define PADDLE_PROF_SRC_RECORD_CURSOR_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collection.h"
#include "event_record.h"
#include "scope_memory.h"

namespace paddle_prof::internal {

struct RecordedCall {
  size_t index = 0;  // of its record in the thread's buffer: how GPU launches name it
  const char* name = nullptr;
  const char* tag = nullptr;
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t depth = 0;
  bool cut = false;  // begun before the window's last reset
  // Its figures on each place it touched (live_bytes unused).
  ScopeMemoryRecord memory[ScopeMemory::kSlots];
  int places = 0;
  bool has_gpu_scope = false;  // the GPU was traced and the call was recorded whole
  uint64_t gpu_scope = 0;      // the id its scope pushed to the GPU tracer
  uint32_t stack = 0;          // a top-level call's stack id (call_stacks.h), 0 for none
  // What a framework told of an op (op_details.h): its inputs' dims and types as JSON
  // (null for none); for an op autograd recorded, torch's sequence number (-1 for
  // none) and the ids torch gave its forward op's thread (0 for a forward op) and its
  // own thread.
  const char* inputs = nullptr;
  int64_t sequence = -1;
  uint64_t forward_thread = 0;
  uint64_t torch_thread = 0;

  uint64_t duration() const { return end > start ? end - start : 0; }
};

class RecordCursor {
 public:
  explicit RecordCursor(const ThreadSnapshot& thread) : thread_(thread), next_(thread.first) {}

  // Advances to the next call, skipping allocations and frees without reading them:
  // what the table, the trace, the call paths and the GPU correlation read.
  bool NextCall() {
    while (next_ < thread_.size) {
      const size_t i = next_++;
      const EventRecord& r = At(i);
      if (r.kind() == RecordKind::kCall) {  // its memory figures, GPU scope, stack after it
        ReadCall(i, r);
        return true;
      }
    }
    return false;
  }
  // Advances to the next allocation or free, skipping calls without reading them, and
  // writes it into `*out` field by field: what the memory timeline gathers, straight
  // into its vector (a copy out of a temporary stalls on store forwarding, its fields
  // written in 4- and 8-byte stores and read back in 16-byte loads).
  bool NextMemoryEvent(MemoryEvent* out) {
    while (next_ < thread_.size) {
      const size_t i = next_++;
      const RecordKind kind = At(i).kind();
      if (kind == RecordKind::kAlloc || kind == RecordKind::kFree) {
        ReadMemoryEvent(At(i), out);
        return true;
      }
    }
    return false;
  }
  // NextCall(), reading each allocation and free on the way into the end of `gathered`
  // (as NextMemoryEvent does), unless made after `until`: the memory timeline's
  // gathering and the calls' pass in one read of the records, which a second pass
  // waits on again once they have left the cache.
  bool NextCallGathering(std::vector<MemoryEvent>* gathered, uint64_t until) {
    while (next_ < thread_.size) {
      const size_t i = next_++;
      const EventRecord& r = At(i);
      const RecordKind kind = r.kind();
      if (kind == RecordKind::kCall) {
        ReadCall(i, r);
        return true;
      }
      if (kind == RecordKind::kAlloc || kind == RecordKind::kFree) {
        MemoryEvent& e = gathered->emplace_back();
        ReadMemoryEvent(r, &e);
        if (e.tick > until) gathered->pop_back();
      }
    }
    return false;
  }
  const RecordedCall& call() const { return call_; }

 private:
  const EventRecord& At(size_t i) const { return (*thread_.buffer)[i]; }
  bool NextIs(RecordKind kind, size_t count = 1) const {
    for (size_t i = next_; i < next_ + count; ++i) {
      if (i >= thread_.size || At(i).kind() != kind) return false;
    }
    return true;
  }
  void ReadMemoryEvent(const EventRecord& r, MemoryEvent* e) {
    e->tick = r.start;
    e->place = static_cast<int16_t>(r.place());
    e->name = r.name;
    e->tag = r.tag();
    if (r.kind() == RecordKind::kAlloc) {
      e->alloc_thread = thread_.index;
      e->delta = r.bytes();
      e->alloc_tick = r.start;
      e->kind = 0;
      return;
    }
    e->delta = -r.bytes();
    e->kind = r.block_kind();
    e->alloc_thread = -1;
    e->alloc_tick = 0;
    if (NextIs(RecordKind::kFreeOrigin)) {
      const EventRecord& origin = At(next_++);
      e->alloc_thread = static_cast<int>(origin.end);
      e->alloc_tick = origin.start;
    }
  }
  void ReadCall(size_t index, const EventRecord& r) {
    call_.index = index;
    call_.name = r.name;
    call_.tag = r.tag();
    call_.start = r.start;
    call_.end = r.end;
    call_.depth = r.depth();
    call_.cut = r.cut();
    call_.places = 0;
    while (NextIs(RecordKind::kScopeMemory, 2)) {
      if (call_.places < ScopeMemory::kSlots) {
        ScopeMemoryRecord::Decode(At(next_), At(next_ + 1), &call_.memory[call_.places++]);
      }
      next_ += 2;
    }
    // A first half whose second the buffer bound dropped is no figure; the GPU scope id
    // may still follow it, if a later append found room.
    if (NextIs(RecordKind::kScopeMemory)) ++next_;
    call_.has_gpu_scope = NextIs(RecordKind::kGpuScope);
    call_.gpu_scope = call_.has_gpu_scope ? At(next_++).start : 0;
    call_.stack = NextIs(RecordKind::kStack) ? static_cast<uint32_t>(At(next_++).start) : 0;
    call_.inputs = nullptr;
    call_.sequence = -1;
    if (NextIs(RecordKind::kOpDetail)) {
      const EventRecord& s = At(next_++);
      call_.inputs = s.name;
      call_.sequence = static_cast<int64_t>(s.start) - 1;
      call_.forward_thread = s.end;
      call_.torch_thread = s.tag_bits & EventRecord::kPointerMask;
    }
  }

  const ThreadSnapshot& thread_;
  size_t next_;
  RecordedCall call_;
};

// Whether the window holds `call`: not cut by a reset, begun in the steps it covers
// (a flight recorder's) and ended before it closed. A call it does not hold still gives
// its time to its parent's children (self time).
inline bool Kept(const Collection& c, const RecordedCall& call) {
  return !call.cut && call.start >= c.start_tick && call.end <= c.end_tick;
}
// Whether the window holds an allocation or free: made before it closed (as
// NextCallGathering's `until`).
inline bool Kept(const Collection& c, const MemoryEvent& event) { return event.tick <= c.end_tick; }

// The kept calls of every thread whose name `wanted(name)` accepts, as (start, end)
// ticks, thread after thread. `wanted` is asked once per name pointer (interned or
// literal), and a run of records with one name is looked up once.
template <typename Wanted>
std::vector<std::pair<uint64_t, uint64_t>> KeptCallsNamed(const Collection& c, Wanted wanted) {
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  std::unordered_map<const char*, bool> accepted;
  for (const ThreadSnapshot& thread : c.threads) {
    const char* last = nullptr;
    bool last_accepted = false;
    for (RecordCursor records(thread); records.NextCall();) {
      const RecordedCall& call = records.call();
      if (!Kept(c, call)) continue;
      if (call.name != last) {
        last = call.name;
        const auto [it, inserted] = accepted.try_emplace(call.name, false);
        if (inserted) it->second = wanted(call.name);
        last_accepted = it->second;
      }
      if (last_accepted) calls.emplace_back(call.start, call.end);
    }
  }
  return calls;
}

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_RECORD_CURSOR_H_
