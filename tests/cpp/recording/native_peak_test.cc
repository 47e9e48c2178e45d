// The native place's one word: its peak is the highest net bytes any move of the window
// left, across threads, and each move says whether it raised it.
#include "native_peak.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace paddle_prof::internal {
namespace {

TEST(NativePeakTest, AMoveRaisesThePeakOnlyAboveIt) {
  RestartNativeWindow();
  EXPECT_EQ(NativeWindowPeak(), 0);
  const NativeMove up = MoveNativeBytes(1000);
  EXPECT_EQ(up.peak_before, 0);
  EXPECT_EQ(up.peak_after, 1000);
  const NativeMove down = MoveNativeBytes(-600);
  EXPECT_EQ(down.peak_before, 1000);
  EXPECT_EQ(down.peak_after, 1000);  // below the peak: it stays
  EXPECT_EQ(NativeWindowLive(), 400);
  // Frees of blocks older than the window take the net bytes below 0.
  MoveNativeBytes(-5000);
  EXPECT_EQ(NativeWindowLive(), -4600);
  EXPECT_EQ(NativeWindowPeak(), 1000);
  RestartNativeWindow();
  EXPECT_EQ(NativeWindowLive(), 0);
  EXPECT_EQ(NativeWindowPeak(), 0);
}

TEST(NativePeakTest, AStepsPeakIsTheHighestSinceTheLastStep) {
  RestartNativeWindow();
  MoveNativeBytes(300);
  MoveNativeBytes(-300);
  EXPECT_EQ(TakeNativeStepPeak(), 300);
  MoveNativeBytes(100);
  EXPECT_EQ(NativeStepPeakNow(), 100);
  EXPECT_EQ(TakeNativeStepPeak(), 100);
  EXPECT_EQ(TakeNativeStepPeak(), 100);  // nothing moved: the net bytes
  EXPECT_EQ(NativeWindowPeak(), 300);
}

// Threads allocate and free at once: the peak is the highest any move reached, at least
// what any move reported, and the net bytes come back to 0.
TEST(NativePeakTest, ThePeakAcrossThreadsIsTheHighestAnyMoveReached) {
  RestartNativeWindow();
  constexpr int kThreads = 4;
  constexpr int kMoves = 20000;
  std::vector<int64_t> highest(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &highest] {
      int64_t seen = 0;
      for (int i = 0; i < kMoves; ++i) {
        const int64_t bytes = 1 + (i % 7) * (t + 1);
        const NativeMove up = MoveNativeBytes(bytes);
        EXPECT_GE(up.peak_after, up.peak_before);
        EXPECT_GE(up.peak_before, seen);  // a thread never sees the peak go down
        seen = up.peak_after;
        MoveNativeBytes(-bytes);
      }
      highest[t] = seen;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(NativeWindowLive(), 0);
  const int64_t peak = NativeWindowPeak();
  EXPECT_EQ(peak, *std::max_element(highest.begin(), highest.end()));
  EXPECT_GE(peak, 1 + 6 * kThreads);  // the largest move of the last thread alone
  EXPECT_LE(peak, kThreads * (1 + 6 * kThreads));
}

}  // namespace
}  // namespace paddle_prof::internal
