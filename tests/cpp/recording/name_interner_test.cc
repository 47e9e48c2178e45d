// The interner's memory: names no window refers to any more are freed, names that open
// scopes hold are kept, threads intern while windows open and close, and a child forked
// while another thread interns can intern too.
#include "name_interner.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::InternedBytes;
using internal::InternedNames;
using internal::NameCache;
using testing::Row;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // the sanitizer's allocator: mallinfo2 says nothing
#else
constexpr bool kSanitized = false;
#endif

// "w03_000042": the same length for every window and index.
std::string Name(int window, int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "w%02d_%06d", window, i);
  return buf;
}
constexpr int64_t kNameBytes = 11;  // 10 characters and the NUL

int64_t HeapInUse() { return static_cast<int64_t>(mallinfo2().uordblks); }

TEST(NameCacheTest, InternsOnceAndFreesAllButTheKeptNames) {
  const int64_t names = InternedNames(), bytes = InternedBytes();
  NameCache cache;
  const char* plain = cache.Intern("conv2d");
  const std::string with_nul("a\0b", 3);
  const char* nul = cache.Intern(with_nul);
  EXPECT_EQ(cache.Intern(std::string("conv") + "2d"), plain);
  EXPECT_EQ(cache.Intern(with_nul), nul);
  EXPECT_STREQ(plain, "conv2d");
  EXPECT_STREQ(nul,
               "a\xC0\x80"
               "b");
  EXPECT_EQ(InternedNames() - names, 2);
  EXPECT_EQ(InternedBytes() - bytes, 7 + (5 + 3));  // "a\0b": C0 80 form and the original

  const char* const keep[] = {nul};
  cache.ReleaseAllBut(keep, 1);
  EXPECT_EQ(InternedNames() - names, 1);
  EXPECT_EQ(InternedBytes() - bytes, 8);
  EXPECT_EQ(cache.Intern(with_nul), nul);  // kept: the same string
  cache.Intern("conv2d");                  // freed: interned anew
  EXPECT_EQ(InternedBytes() - bytes, 15);
  cache.ReleaseAllBut(nullptr, 0);
  EXPECT_EQ(InternedNames() - names, 0);
  EXPECT_EQ(InternedBytes() - bytes, 0);
}

// 100,000 names in window 1, then 8 windows of 20,000 new names each: the interner
// holds only the open window's names (plus what open scopes hold), whatever the number
// of windows. Without freeing, each later window added about 3 MB of heap here.
TEST(InternerTest, MemoryStaysBoundedAcrossWindows) {
  constexpr int kFirstWindow = 100000, kLaterWindows = 20000, kWindows = 9;
  const int64_t names = InternedNames(), bytes = InternedBytes();
  EnableProfiler(ProfilerState::kCPU);
  // Open across every window: its name must stay, for the block allocated under it last.
  auto spanning = std::make_unique<RecordEvent>(std::string("spanning"));
  {
    for (int i = 0; i < kFirstWindow; ++i) RecordEvent e(Name(1, i));
    const Report report = StopProfiler();
    EXPECT_EQ(report.events.size(), static_cast<size_t>(kFirstWindow));
    EXPECT_EQ(Row(report, Name(1, kFirstWindow - 1)).calls, 1);
  }
  EXPECT_EQ(InternedNames() - names, kFirstWindow + 1);
  int64_t heap_after_window_2 = 0;
  const void* block = reinterpret_cast<const void*>(0x100000000000);  // never dereferenced
  for (int window = 2; window <= kWindows; ++window) {
    EnableProfiler(ProfilerState::kCPU);
    for (int i = 0; i < kLaterWindows; ++i) RecordEvent e(Name(window, i), Name(window, i));
    if (window == kWindows) RecordAlloc(CPUPlace(), block, 4096);  // under "spanning"
    {
      const Report report = StopProfiler();
      EXPECT_EQ(report.events.size(), static_cast<size_t>(kLaterWindows + (window == kWindows)));
      EXPECT_EQ(Row(report, Name(window, 0), Name(window, 0)).calls, 1);
      EXPECT_EQ(Row(report, Name(window, kLaterWindows - 1), Name(window, kLaterWindows - 1)).calls,
                1);
      if (window == kWindows) {
        EXPECT_EQ(testing::MemoryOn(Row(report, "spanning"), "CPU").live_bytes, 4096);
      }
    }
    // The window's names and the spanning scope's: those of earlier windows are gone.
    EXPECT_EQ(InternedNames() - names, kLaterWindows + 1) << window;
    EXPECT_EQ(InternedBytes() - bytes, kLaterWindows * kNameBytes + 9) << window;
    if (window == 2) heap_after_window_2 = HeapInUse();
  }
  if (!kSanitized) {
    const int64_t growth = HeapInUse() - heap_after_window_2;
    std::printf("heap growth over windows 3..%d: %lld bytes\n", kWindows,
                static_cast<long long>(growth));
    EXPECT_LT(growth, 1 << 20);
  }
  RecordFree(CPUPlace(), block);
  spanning.reset();
}

// Threads keep interning new names (and tags, and allocating under them) while the main
// thread opens, resets and closes windows: no name a report reads is freed (ASan, TSan),
// every row is named as its thread named it, and the names of exited threads are freed.
TEST(InternerTest, ThreadsInternWhileWindowsOpenAndClose) {
  constexpr int kThreads = 3, kNamesPerThread = 3000;
  const int64_t names = InternedNames(), bytes = InternedBytes();
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &done] {
      const void* block = reinterpret_cast<const void*>(0x200000000000 + t * 4096);
      for (int i = 0; !done.load(std::memory_order_relaxed); ++i) {
        RecordEvent outer(Name(t, i % kNamesPerThread));
        RecordEvent inner("inner", Name(t, (i + 1) % kNamesPerThread));
        RecordAlloc(CPUPlace(), block, 64);
        RecordFree(CPUPlace(), block);
      }
    });
  }
  int reports_with_rows = 0;
  for (int window = 0; window < 40; ++window) {
    EnableProfiler(ProfilerState::kCPU);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    if (window % 3 == 0) ResetProfiler();
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    const Report report = StopProfiler();
    for (const EventRow& row : report.events) {
      const std::string& name = row.name == "inner" ? *row.tag : row.name;
      if (row.name == "[no event]") continue;
      ASSERT_EQ(name.size(), 10u) << name;
      ASSERT_EQ(name.compare(0, 2, "w0"), 0) << name;
    }
    reports_with_rows += !report.events.empty();
  }
  done.store(true);
  for (std::thread& t : threads) t.join();
  EXPECT_GT(reports_with_rows, 0);
  // The threads exited: their names go as the next window opens.
  EnableProfiler(ProfilerState::kCPU);
  EXPECT_EQ(InternedNames() - names, 0);
  EXPECT_EQ(InternedBytes() - bytes, 0);
  StopProfiler();
}

// A child forked while another thread holds the interner (the old shared table's lock)
// must still be able to intern. Each child gets 10 s before it counts as hung.
TEST(InternerTest, AForkedChildInternsWhileAnotherThreadInterns) {
  PADDLE_PROF_SKIP_IF_ALLOCATOR_NOT_FORK_SAFE();
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent registers("registers this thread"); }  // the child needs no registry lock
  std::atomic<bool> done{false};
  std::thread interning([&done] {
    for (int i = 0; !done.load(std::memory_order_relaxed); ++i) {
      RecordEvent e(Name(99, i % 1000000));     // a new name each time: the interner's slow path
      if (i % 50000 == 49999) ResetProfiler();  // frees them: memory stays small
    }
  });
  int hung = 0;
  for (int fork_index = 0; fork_index < 200 && hung == 0; ++fork_index) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      { RecordEvent e(Name(98, fork_index)); }
      _exit(0);
    }
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (waitpid(child, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        ++hung;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (hung == 0) EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  done.store(true);
  interning.join();
  StopProfiler();
  EXPECT_EQ(hung, 0);
}

}  // namespace
}  // namespace paddle_prof
