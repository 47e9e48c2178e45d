// What the per-thread buffers hold: 32-byte records of eight kinds, in the order they
// happened on the thread.
//   kCall         a call that ended: name, tag, start and end ticks, nesting depth.
//                 Calls come in the order they end (children before their parent), so
//                 the report finds each call's children without sorting.
//   kScopeMemory  two records right after a call, one pair per place the call touched:
//                 its peak, allocated and freed bytes and counts there.
//   kAlloc/kFree  a tracked block allocated or freed: place, bytes, tick, and the event
//                 that owns the block; replayed in time order for the memory timeline.
//                 A free keeps the block's kind (block_kind.h) where a call keeps its
//                 depth.
//   kGpuScope     while the GPU is traced, after a call (and its memory records): the
//                 id its scope pushed, which ties the GPU work it launched to it.
//   kFreeOrigin   right after a kFree of a block allocated in the window: the thread
//                 and tick of its allocation, where its call path is found.
//   kStack        after a top-level call, while the window records stacks: the id of
//                 the call stack it began in (call_stacks.h).
//   kOpDetail     last after an op a framework told more of: its inputs' dims and types
//                 (interned, where record_shapes kept them) and, for an op autograd
//                 records, its sequence number + 1 (0: none) and the ids torch gave its
//                 thread and, for a backward node, its forward op's thread; what the
//                 trace's `Input Dims` and its forward-to-backward arrows are made of.
// Depth, place, kind and the cut flag share a word with the tag pointer: user-space
// addresses fit in 48 bits on every 64-bit target we build for.
#ifndef PADDLE_PROF_SRC_EVENT_RECORD_H_
#define PADDLE_PROF_SRC_EVENT_RECORD_H_

#include <cstdint>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// Scopes nested deeper than this on one thread are not recorded (and are counted).
constexpr uint32_t kMaxScopeDepth = 256;

// Owners of blocks that no recorded event allocated.
inline constexpr char kNoEventName[] = "[no event]";
inline constexpr char kBeforeWindowName[] = "[before profiling]";

enum class RecordKind : uint32_t {
  kCall = 0,
  kAlloc = 1,
  kFree = 2,
  kScopeMemory = 3,
  kGpuScope = 4,
  kFreeOrigin = 5,
  kStack = 6,
  kOpDetail = 7  // the last a record's three bits of kind can name
};

struct EventRecord {
  static constexpr uint64_t kPointerMask = (1ull << 48) - 1;
  static constexpr int kDepthShift = 48;        // 8 bits
  static constexpr int kPlaceShift = 56;        // 4 bits
  static constexpr int kKindShift = 60;         // 3 bits
  static constexpr uint64_t kCut = 1ull << 63;  // a call begun before the window

  const char* name;
  uint64_t tag_bits;
  uint64_t start;  // kAlloc/kFree: the tick
  uint64_t end;    // kAlloc/kFree: the bytes

  static EventRecord Call(const char* name, const char* tag, uint32_t depth, bool cut,
                          uint64_t start, uint64_t end) {
    return {name,
            Pack(reinterpret_cast<uintptr_t>(tag), depth, 0, RecordKind::kCall) | (cut ? kCut : 0),
            start, end};
  }
  static EventRecord Memory(RecordKind kind, int place, const char* owner_name,
                            const char* owner_tag, uint64_t tick, int64_t bytes,
                            uint8_t block_kind = 0) {
    return {owner_name, Pack(reinterpret_cast<uintptr_t>(owner_tag), block_kind, place, kind),
            tick, static_cast<uint64_t>(bytes)};
  }

  static EventRecord FreeOrigin(int thread, uint64_t alloc_tick) {
    return {nullptr, Pack(0, 0, 0, RecordKind::kFreeOrigin), alloc_tick,
            static_cast<uint64_t>(thread)};
  }

  static EventRecord Stack(uint32_t stack_id) {
    return {nullptr, Pack(0, 0, 0, RecordKind::kStack), stack_id, 0};
  }

  static EventRecord OpDetail(const char* inputs, uint64_t sequence, uint64_t forward_thread,
                              uint64_t thread) {
    return {inputs, Pack(thread, 0, 0, RecordKind::kOpDetail), sequence, forward_thread};
  }

  static EventRecord GpuScope(uint64_t scope_id) {
    return {nullptr, Pack(0, 0, 0, RecordKind::kGpuScope), scope_id, 0};
  }

  RecordKind kind() const { return static_cast<RecordKind>((tag_bits >> kKindShift) & 7); }
  const char* tag() const { return reinterpret_cast<const char*>(tag_bits & kPointerMask); }
  uint32_t depth() const { return static_cast<uint32_t>((tag_bits >> kDepthShift) & 0xff); }
  uint8_t block_kind() const { return static_cast<uint8_t>(depth()); }  // kFree's
  int place() const { return static_cast<int>((tag_bits >> kPlaceShift) & 0xf); }
  bool cut() const { return (tag_bits & kCut) != 0; }
  int64_t bytes() const { return static_cast<int64_t>(end); }

 private:
  friend struct ScopeMemoryRecord;
  static uint64_t Pack(uint64_t low48, uint32_t depth, int place, RecordKind kind) {
    return (low48 & kPointerMask) | static_cast<uint64_t>(depth & 0xff) << kDepthShift |
           static_cast<uint64_t>(place & 0xf) << kPlaceShift |
           static_cast<uint64_t>(kind) << kKindShift;
  }
};
static_assert(sizeof(EventRecord) == 32, "a record is 32 bytes");
static_assert(sizeof(void*) == 8, "the record packing assumes 64-bit pointers");

// One call's figures on one place (live_bytes unused), stored as two kScopeMemory
// records (counts in the 48 low bits of the tag word).
struct ScopeMemoryRecord {
  int place = 0;
  MemoryStats stats;
  int64_t held_bytes = 0;  // what the call allocated and still held as it ended

  void Encode(EventRecord out[2]) const {
    const auto pack = [this](int64_t count) {
      return EventRecord::Pack(static_cast<uint64_t>(count), 0, place, RecordKind::kScopeMemory);
    };
    out[0] = {nullptr, pack(stats.alloc_count), static_cast<uint64_t>(stats.peak_bytes),
              static_cast<uint64_t>(stats.alloc_bytes)};
    out[1] = {nullptr, pack(stats.free_count), static_cast<uint64_t>(stats.free_bytes),
              static_cast<uint64_t>(held_bytes)};
  }
  // Into the caller's record: a copy out of a fresh temporary stalls on store forwarding
  // (its fields are written in 8-byte stores and copied in 16-byte loads).
  static void Decode(const EventRecord& first, const EventRecord& second, ScopeMemoryRecord* r) {
    r->place = first.place();
    r->stats.peak_bytes = static_cast<int64_t>(first.start);
    r->stats.alloc_bytes = static_cast<int64_t>(first.end);
    r->stats.alloc_count = static_cast<int64_t>(first.tag_bits & EventRecord::kPointerMask);
    r->stats.free_bytes = static_cast<int64_t>(second.start);
    r->stats.free_count = static_cast<int64_t>(second.tag_bits & EventRecord::kPointerMask);
    r->stats.live_bytes = 0;
    r->held_bytes = static_cast<int64_t>(second.end);
  }
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_EVENT_RECORD_H_
