// native=True from C++: the malloc family's table entries pointed at the hooks while
// tracking, every call charged to the open event on the place "native", the entries put
// back and the window's blocks forgotten at the stop.
#include "in_process_native.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::Row;

// Each block escapes here, so that the compiler keeps every call as written (it may drop
// a malloc whose block is only written, then freed).
void* volatile g_escaped = nullptr;

TEST(InProcessNativeTest, ChargesEveryMallocOfTheWindowToItsEventOnNative) {
  EnableProfiler(ProfilerState::kCPU);
  ASSERT_EQ(internal::StartInProcessNative(), "");
  EXPECT_TRUE(internal::InProcessNativeOn());
  void* kept = nullptr;
  {
    RecordEvent op("native_op");
    void* freed = std::malloc(3 << 20);
    g_escaped = freed;
    kept = std::malloc(1 << 20);
    g_escaped = kept;
    std::free(freed);
    kept = std::realloc(kept, 2 << 20);  // a free plus an allocation
    g_escaped = kept;
  }
  const Report report = DisableProfiler();
  internal::StopInProcessNative();
  EXPECT_FALSE(internal::InProcessNativeOn());
  const EventRow& op = Row(report, "native_op");
  const MemoryStats& native = op.memory.at("native");
  EXPECT_EQ(native.alloc_count, 3);
  EXPECT_EQ(native.alloc_bytes, (3 << 20) + (1 << 20) + (2 << 20));
  EXPECT_EQ(native.free_bytes, (3 << 20) + (1 << 20));
  EXPECT_EQ(native.peak_bytes, (3 << 20) + (1 << 20));
  EXPECT_EQ(native.live_bytes, 2 << 20);
  std::free(kept);  // after the stop: the allocator's own free, nothing tracked

  // A window without it: the entries are back, nothing moves on native.
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent op("plain_op");
    void* block = std::malloc(1 << 20);
    g_escaped = block;
    std::free(block);
  }
  const Report plain = DisableProfiler();
  EXPECT_EQ(Row(plain, "plain_op").memory.count("native"), 0u);
}

}  // namespace
}  // namespace paddle_prof
