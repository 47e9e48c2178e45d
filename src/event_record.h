// One recorded call of a scope: what the per-thread buffers hold, 32 bytes each.
#ifndef PADDLE_PROF_SRC_EVENT_RECORD_H_
#define PADDLE_PROF_SRC_EVENT_RECORD_H_

#include <cstdint>

namespace paddle_prof::internal {

// Scopes nested deeper than this on one thread are not recorded (and are counted).
constexpr uint32_t kMaxScopeDepth = 256;

// Records of one thread are appended in the order scopes end (children before their
// parent) and carry their nesting depth, so the report finds each call's children
// without sorting. Depth and a "cut" flag share a word with the tag pointer: user-space
// addresses fit in 48 bits on every 64-bit target we build for.
struct EventRecord {
  static constexpr int kDepthShift = 48;
  static constexpr uint64_t kCut = 1ull << 63;  // began before the window: nesting only
  static constexpr uint64_t kPointerMask = (1ull << kDepthShift) - 1;

  const char* name;
  uint64_t tag_bits;
  uint64_t start;
  uint64_t end;

  static uint64_t PackTag(const char* tag, uint32_t depth, bool cut) {
    return reinterpret_cast<uintptr_t>(tag) | (static_cast<uint64_t>(depth) << kDepthShift) |
           (cut ? kCut : 0);
  }
  const char* tag() const { return reinterpret_cast<const char*>(tag_bits & kPointerMask); }
  uint32_t depth() const { return static_cast<uint32_t>((tag_bits & ~kCut) >> kDepthShift); }
  bool cut() const { return (tag_bits & kCut) != 0; }
};
static_assert(sizeof(EventRecord) == 32, "a record is 32 bytes");
static_assert(sizeof(void*) == 8, "the record packing assumes 64-bit pointers");

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_EVENT_RECORD_H_
