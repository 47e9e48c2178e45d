// The profiler's public life cycle: enable, reset, disable, steps, threads, errors.
#include "paddle_prof/profiler.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "event_buffer.h"
#include "flags.h"
#include "paddle_prof/record_event.h"
#include "profiler_control.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::ExpectTimeInvariants;
using testing::HasWarning;
using testing::Row;
using testing::Spin;

TEST(ProfilerTest, CountsNestedScopesOnTwoThreadsExactly) {
  EnableProfiler(ProfilerState::kCPU);
  auto work = [](int outer_calls, int inner_per_outer) {
    for (int i = 0; i < outer_calls; ++i) {
      RecordEvent outer("outer");
      for (int j = 0; j < inner_per_outer; ++j) RecordEvent inner("inner");
    }
  };
  std::thread worker(work, 7, 3);
  work(5, 2);
  worker.join();
  const Report report = StopProfiler();
  ASSERT_EQ(report.events.size(), 2u);
  EXPECT_EQ(Row(report, "outer").calls, 12);
  EXPECT_EQ(Row(report, "inner").calls, 5 * 2 + 7 * 3);
  EXPECT_FALSE(Row(report, "outer").thread.has_value());
  ExpectTimeInvariants(report);
  EXPECT_TRUE(report.warnings.empty());
}

TEST(ProfilerTest, SelfTimeIsTotalMinusNestedEvents) {
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 3; ++i) {
    RecordEvent parent("parent");
    Spin(300);
    {
      RecordEvent child("child");
      Spin(500);
      RecordEvent grandchild("grandchild");
      Spin(200);
    }
  }
  const Report report = StopProfiler();
  const EventRow& parent = Row(report, "parent");
  const EventRow& child = Row(report, "child");
  const EventRow& grandchild = Row(report, "grandchild");
  EXPECT_NEAR(parent.self_ms, parent.total_ms - child.total_ms, 1e-9);
  EXPECT_NEAR(child.self_ms, child.total_ms - grandchild.total_ms, 1e-9);
  EXPECT_DOUBLE_EQ(grandchild.self_ms, grandchild.total_ms);
  EXPECT_GE(parent.self_ms, 3 * 0.3);
  EXPECT_GE(child.self_ms, 3 * 0.5);
  ExpectTimeInvariants(report);
}

TEST(ProfilerTest, InvariantsHoldForVaryingDurations) {
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 20; ++i) {
    RecordEvent e("varying");
    Spin(10 * (i % 5));
    RecordEvent same("empty");
  }
  const Report report = StopProfiler();
  EXPECT_LT(Row(report, "varying").min_ms, Row(report, "varying").max_ms);
  ExpectTimeInvariants(report);
}

TEST(ProfilerTest, WallTimeIsTheWindowNotASumOfEvents) {
  const auto before = std::chrono::steady_clock::now();
  EnableProfiler(ProfilerState::kCPU);
  const auto opened = std::chrono::steady_clock::now();
  std::atomic<int> inside{0};
  auto sleeper = [&inside] {
    RecordEvent e("sleep");
    ++inside;
    while (inside.load() < 2) std::this_thread::yield();  // both scopes open at once
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  };
  std::thread a(sleeper), b(sleeper);
  a.join();
  b.join();
  const auto closing = std::chrono::steady_clock::now();
  const Report report = StopProfiler();
  const auto after = std::chrono::steady_clock::now();
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  // The two calls overlap by at least their 200 ms of sleep, so their sum exceeds the
  // window by that much, less the window's moments outside both (thread start and join,
  // well under 100 ms even under a sanitizer).
  EXPECT_GE(Row(report, "sleep").total_ms, 400);
  EXPECT_GE(report.wall_ms, ms(closing - opened) - 0.01);
  EXPECT_LE(report.wall_ms, ms(after - before) + 0.01);
  EXPECT_LE(report.wall_ms, Row(report, "sleep").total_ms - 100);
}

TEST(ProfilerTest, ThreadThatExitsKeepsItsEvents) {
  EnableProfiler(ProfilerState::kCPU);
  std::thread([] {
    for (int i = 0; i < 100; ++i) RecordEvent e("short_lived");
  }).join();
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "short_lived").calls, 100);
}

TEST(ProfilerTest, ExitedThreadRecorderIsReusedInALaterWindow) {
  EnableProfiler(ProfilerState::kCPU);
  std::thread([] { RecordEvent e("first"); }).join();
  EXPECT_EQ(Row(StopProfiler(), "first").calls, 1);
  EnableProfiler(ProfilerState::kCPU);
  std::thread([] { RecordEvent e("second"); }).join();
  const Report report = StopProfiler();
  ASSERT_EQ(report.events.size(), 1u);
  EXPECT_EQ(Row(report, "second").calls, 1);
}

TEST(ProfilerTest, ResetAtIterationTwoOfTenLeavesEight) {
  EnableProfiler(ProfilerState::kCPU);
  for (int it = 0; it < 10; ++it) {
    if (it == 2) ResetProfiler();
    {
      RecordEvent step("train_step");
      RecordEvent op("conv2d");
    }
    MarkStep();
  }
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "train_step").calls, 8);
  EXPECT_EQ(Row(report, "conv2d").calls, 8);
  ASSERT_EQ(report.steps.size(), 8u);
  double steps_ms = 0;
  for (size_t i = 0; i < report.steps.size(); ++i) {
    EXPECT_EQ(report.steps[i].step, static_cast<int>(i));
    EXPECT_GT(report.steps[i].wall_ms, 0);
    steps_ms += report.steps[i].wall_ms;
  }
  EXPECT_LE(steps_ms, report.wall_ms);
}

TEST(ProfilerTest, ACallCutByResetIsLeftOutWithAWarning) {
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent outer("outer");
    ResetProfiler();
    RecordEvent inner("inner");
  }
  const Report report = StopProfiler();
  ASSERT_EQ(report.events.size(), 1u);
  EXPECT_EQ(Row(report, "inner").calls, 1);
  EXPECT_TRUE(HasWarning(report, "1 call began before ResetProfiler()")) << report.Table();
}

TEST(ProfilerTest, ACallOpenAtDisableIsLeftOutWithAWarning) {
  EnableProfiler(ProfilerState::kCPU);
  auto open = std::make_unique<RecordEvent>("still_open");
  { RecordEvent done("done"); }
  const Report report = StopProfiler();
  open.reset();  // ends after the window: nothing to record
  ASSERT_EQ(report.events.size(), 1u);
  EXPECT_EQ(Row(report, "done").calls, 1);
  EXPECT_TRUE(HasWarning(report, "1 call still open")) << report.Table();
}

// The number in "N calls still open" from the report's warnings; 0 when there is none.
int64_t LeftOpen(const Report& report) {
  for (const std::string& w : report.warnings) {
    if (w.find(" still open when the profiler stopped") != std::string::npos) {
      return std::stoll(w);
    }
  }
  return 0;
}

// Opens `depth` nested "op" scopes, each counted as surely begun in the window (enabled
// before and after its constructor) or maybe (enabled before, disabled after).
void NestedOps(int depth, int64_t* sure, int64_t* maybe) {
  const bool before = IsProfilerEnabled();
  RecordEvent op("op");
  const bool after = IsProfilerEnabled();
  *sure += before && after;
  *maybe += before && !after;
  if (depth > 1) {
    NestedOps(depth - 1, sure, maybe);
  } else {
    Spin(2);
  }
}

// Threads that keep recording nested scopes while the window closes: every call begun in
// the window is in the report or counted as left out, once. Only the one scope a thread
// was constructing as the window closed may or may not have been begun in it.
TEST(ProfilerTest, CallsLeftOutWhileThreadsRecordThroughTheStopAreCountedOnce) {
  constexpr int kThreads = 16;
  constexpr int kDepth = 8;
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(round);
    EnableProfiler(ProfilerState::kCPU);
    std::atomic<bool> stopped{false};
    std::atomic<int> running{0};
    std::vector<int64_t> sure(kThreads, 0), maybe(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        running.fetch_add(1);
        while (!stopped.load(std::memory_order_acquire)) NestedOps(kDepth, &sure[t], &maybe[t]);
      });
    }
    while (running.load() < kThreads) std::this_thread::yield();
    Spin(2000);
    const Report report = StopProfiler();
    stopped.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    int64_t began = 0, unsure = 0;
    for (int t = 0; t < kThreads; ++t) {
      began += sure[t];
      unsure += maybe[t];
    }
    // On a loaded machine no "op" may have ended by the stop: no row, no calls.
    int64_t reported = 0;
    for (const EventRow& row : report.events) reported += row.name == "op" ? row.calls : 0;
    const int64_t accounted = reported + LeftOpen(report) + report.dropped_events;
    EXPECT_GE(accounted, began) << report.Table();
    EXPECT_LE(accounted, began + unsure) << report.Table();
  }
}

// A call begun before a reset and still open at the stop is left out and counted once,
// also when its thread does nothing after the reset.
TEST(ProfilerTest, ACallBegunBeforeAResetAndOpenAtTheStopIsCountedOnce) {
  EnableProfiler(ProfilerState::kCPU);
  auto open_here = std::make_unique<RecordEvent>("open_here");
  std::atomic<int> stage{0};
  std::thread idle([&stage] {
    RecordEvent open_there("open_there");
    stage.store(1);
    while (stage.load() != 2) std::this_thread::yield();
  });
  while (stage.load() != 1) std::this_thread::yield();
  ResetProfiler();
  { RecordEvent done("done"); }
  const Report report = StopProfiler();
  stage.store(2);
  idle.join();
  EXPECT_EQ(Row(report, "done").calls, 1);
  EXPECT_EQ(LeftOpen(report), 2) << report.Table();
  EXPECT_FALSE(HasWarning(report, "began before ResetProfiler()")) << report.Table();
  // The next EnableProfiler() does not count "open_here" again: it was not begun under it.
  EnableProfiler(ProfilerState::kCPU);
  auto still = std::make_unique<RecordEvent>("still");
  ResetProfiler();
  const Report next = StopProfiler();
  still.reset();
  open_here.reset();
  EXPECT_EQ(LeftOpen(next), 1) << next.Table();
}

TEST(ProfilerTest, SecondEnableThrowsAndKeepsTheFirstWindow) {
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent e("kept"); }
  EXPECT_THROW(EnableProfiler(ProfilerState::kCPU), std::logic_error);
  EXPECT_TRUE(IsProfilerEnabled());
  EXPECT_EQ(Row(StopProfiler(), "kept").calls, 1);
  EXPECT_FALSE(IsProfilerEnabled());
}

TEST(ProfilerTest, WrongStatesAndStopsThrowClearErrors) {
  EXPECT_THROW(StopProfiler(), std::logic_error);
  EXPECT_THROW(EnableProfiler(ProfilerState::kDisabled), std::invalid_argument);
  // Where the GPU cannot be profiled (no CUDA build, driver or device), the GPU states
  // fail with the reason and leave the profiler off; cuda_test checks the reasons.
  for (ProfilerState state : {ProfilerState::kCUDA, ProfilerState::kAll}) {
    try {
      EnableProfiler(state);
      StopProfiler();  // a machine with a usable GPU
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot profile the GPU: "), std::string::npos);
    }
    EXPECT_FALSE(IsProfilerEnabled());
  }
}

TEST(ProfilerTest, DisabledScopesRecordNothing) {
  { RecordEvent before("before"); }
  EnableProfiler(ProfilerState::kCPU);
  const Report report = StopProfiler();
  EXPECT_TRUE(report.events.empty());
  { RecordEvent after("after"); }
  MarkStep();  // no-op while off
  EnableProfiler(ProfilerState::kCPU);
  EXPECT_TRUE(StopProfiler().steps.empty());
}

TEST(ProfilerTest, UnwritablePathStillPrintsAndReturnsTheReport) {
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent e("op"); }
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const Report report = DisableProfiler(EventSortingKey::kTotal, "/nonexistent-dir/profile.json");
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(Row(report, "op").calls, 1);
  EXPECT_NE(out.find("Profiling Report"), std::string::npos);
  EXPECT_NE(out.find("op "), std::string::npos);
  EXPECT_NE(err.find("cannot write the trace to '/nonexistent-dir/profile.json'"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("cannot write the summary"), std::string::npos) << err;
  // The failures are the report's too, in its warnings and its table.
  EXPECT_TRUE(HasWarning(report,
                         "cannot write the trace to '/nonexistent-dir/profile.json': No "
                         "such file or directory; the file was not written."));
  EXPECT_TRUE(HasWarning(report,
                         "cannot write the summary to "
                         "'/nonexistent-dir/profile.json.summary.json'"));
  EXPECT_NE(out.find("Warning: cannot write the trace"), std::string::npos) << out;
}

// The system would read the path only up to the NUL: the three files would each be written
// to that prefix, over one another.
TEST(ProfilerTest, APathHoldingANulWritesNoFileAndWarns) {
  const std::string prefix = testing::TempPath("nul_path");
  const std::string path = prefix + std::string("\0evil.json", 10);
  std::remove(prefix.c_str());
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent e("op"); }
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const Report report = DisableProfiler(EventSortingKey::kTotal, path);
  const std::string out = ::testing::internal::GetCapturedStdout();
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(Row(report, "op").calls, 1);
  EXPECT_NE(out.find("Profiling Report"), std::string::npos);
  EXPECT_TRUE(HasWarning(report, "cannot write the trace to '" + path +
                                     "': the path holds a NUL byte; the file was not written."))
      << report.Table();
  EXPECT_TRUE(HasWarning(report, "cannot write the summary to '" + path + ".summary.json'"));
  EXPECT_TRUE(HasWarning(report, "cannot write the HTML report to '" + path + ".html'"));
  EXPECT_NE(access(prefix.c_str(), F_OK), 0);
}

// A disk that fills up mid-write (a file size limit stands in for it) leaves the files of
// an earlier run whole, and the report says which file could not be written.
TEST(ProfilerTest, AFullDiskLeavesEarlierFilesWholeAndWarns) {
  const std::string path = testing::TempPath("full_disk");
  for (const std::string& p : {path, path + ".summary.json"}) {
    std::ofstream(p) << "earlier";
  }
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 1000; ++i) RecordEvent e("op");  // a trace far above the limit
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 16384;  // the summary fits, the trace does not
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  ::testing::internal::CaptureStderr();
  const Report report = StopProfiler(EventSortingKey::kTotal, path);
  ::testing::internal::GetCapturedStderr();
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(Row(report, "op").calls, 1000);
  EXPECT_TRUE(HasWarning(report, "cannot write the trace to '" + path +
                                     "': File too large; the file was not written."))
      << report.Table();
  std::ifstream trace(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(trace), {}), "earlier");
  EXPECT_NE(access((path + ".tmp" + std::to_string(getpid())).c_str(), F_OK), 0);
  // The summary was written whole, with the trace's failure among its warnings.
  const nlohmann::json summary = testing::ReadJson(path + ".summary.json");
  EXPECT_EQ(summary["events"][0]["calls"], 1000);
  EXPECT_NE(summary["warnings"].dump().find("cannot write the trace"), std::string::npos);
  for (const std::string& p : {path, path + ".summary.json"}) std::remove(p.c_str());
}

TEST(ProfilerTest, ResetFromAnotherThreadLosesNothingRecordedAfterIt) {
  EnableProfiler(ProfilerState::kCPU);
  std::atomic<bool> reset_done{false};
  constexpr int kAfter = 5000;
  auto recorder = [&reset_done] {
    // Record until the reset is seen, then exactly kAfter more calls.
    while (!reset_done.load()) {
      RecordEvent outer("before");
      RecordEvent inner("before_inner");
    }
    for (int i = 0; i < kAfter; ++i) {
      RecordEvent outer("after");
      RecordEvent inner("after_inner");
    }
  };
  std::thread a(recorder), b(recorder);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::thread([] { ResetProfiler(); }).join();
  reset_done.store(true);
  a.join();
  b.join();
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "after").calls, 2 * kAfter);
  EXPECT_EQ(Row(report, "after_inner").calls, 2 * kAfter);
  ExpectTimeInvariants(report);
}

TEST(ProfilerTest, StopAndRestartWhileThreadsRecord) {
  std::atomic<bool> done{false};
  auto recorder = [&done] {
    while (!done.load()) {
      RecordEvent outer("outer");
      RecordEvent inner("inner");
    }
  };
  auto calls = [](const Report& report, const std::string& name) {
    for (const EventRow& row : report.events) {
      if (row.name == name) return row.calls;
    }
    return int64_t{0};
  };
  EnableProfiler(ProfilerState::kCPU);
  std::thread a(recorder), b(recorder);
  int64_t inner_calls = 0;
  for (int window = 0; window < 20; ++window) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const Report report = StopProfiler();
    // Each counted outer call holds a counted inner call; inner calls may also be
    // counted whose outer call was cut by the window's edges.
    EXPECT_LE(calls(report, "outer"), calls(report, "inner"));
    inner_calls += calls(report, "inner");
    ExpectTimeInvariants(report);
    EnableProfiler(ProfilerState::kCPU);
  }
  done.store(true);
  a.join();
  b.join();
  StopProfiler();
  EXPECT_GT(inner_calls, 0);
}

TEST(ProfilerTest, DynamicNamesAreInternedAndMergeWithLiterals) {
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 4; ++i) {
    std::string name = std::string("con") + "v2d";
    RecordEvent e(name);
    name.assign("overwritten");  // the profiler kept its own copy
  }
  { RecordEvent literal("conv2d"); }
  const Report report = StopProfiler();
  ASSERT_EQ(report.events.size(), 1u);
  EXPECT_EQ(Row(report, "conv2d").calls, 5);
}

TEST(ProfilerTest, TagsSplitRows) {
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 2; ++i) RecordEvent e("matmul", "[2, 3]");
  for (int i = 0; i < 3; ++i) RecordEvent e("matmul", std::string("[4, 5]"));
  {
    std::string name = "matmul";  // a name built at run time, gone before the report
    RecordEvent e(name, std::string("[2, 3]"));
    name.assign("overwritten");
  }
  { RecordEvent untagged("matmul"); }
  const Report report = StopProfiler();
  ASSERT_EQ(report.events.size(), 3u);
  EXPECT_EQ(Row(report, "matmul", "[2, 3]").calls, 3);
  EXPECT_EQ(Row(report, "matmul", "[4, 5]").calls, 3);
  EXPECT_EQ(Row(report, "matmul").calls, 1);
  EXPECT_NE(report.Table().find("matmul [4, 5]"), std::string::npos);
}

TEST(ProfilerTest, PerThreadRowsOnRequest) {
  gflags::FlagSaver restore_flags;
  FLAGS_paddle_prof_per_thread = true;
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent e("op"); }
  std::thread([] {
    for (int i = 0; i < 2; ++i) RecordEvent e("op");
  }).join();
  const Report report = StopProfiler();
  ASSERT_EQ(report.events.size(), 2u);
  int calls = 0;
  for (const EventRow& row : report.events) {
    ASSERT_TRUE(row.thread.has_value());
    calls += static_cast<int>(row.calls);
  }
  EXPECT_EQ(calls, 3);
  EXPECT_NE(report.events[0].thread, report.events[1].thread);
  EXPECT_NE(report.Table().find("thread" + std::to_string(*report.events[0].thread) + "::op"),
            std::string::npos);
}

TEST(ProfilerTest, BufferBoundDropsAndCountsInsteadOfGrowing) {
  gflags::FlagSaver restore_flags;
  FLAGS_paddle_prof_max_buffer_mb = 2;  // one chunk: 65,536 records
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 100000; ++i) RecordEvent e("op");
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "op").calls, 65536);
  EXPECT_EQ(report.dropped_events, 100000 - 65536);
  EXPECT_TRUE(HasWarning(report, "34464 calls not recorded"));
}

// A bound smaller than a chunk per thread still lets every thread record, and says how it
// was applied.
TEST(ProfilerTest, ABoundBelowAChunkPerThreadStillLetsEveryThreadRecord) {
  for (const int mb : {1, 2}) {
    SCOPED_TRACE(mb);
    gflags::FlagSaver restore_flags;
    FLAGS_paddle_prof_max_buffer_mb = mb;
    EnableProfiler(ProfilerState::kCPU);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([] {
        for (int i = 0; i < 10; ++i) RecordEvent e("op");
      });
    }
    for (auto& t : threads) t.join();
    const Report report = StopProfiler();
    EXPECT_EQ(Row(report, "op").calls, 30);
    EXPECT_EQ(report.dropped_events, 0);
    EXPECT_TRUE(HasWarning(report, "above FLAGS_paddle_prof_max_buffer_mb=" + std::to_string(mb) +
                                       ": they grow in 2 MiB chunks, and every recording thread "
                                       "gets its first chunk whatever the bound."))
        << report.Table();
  }
}

double TimeKey(const EventRow& row, EventSortingKey key) {
  switch (key) {
    case EventSortingKey::kCalls:
      return static_cast<double>(row.calls);
    case EventSortingKey::kSelf:
      return row.self_ms;
    case EventSortingKey::kMin:
      return row.min_ms;
    case EventSortingKey::kMax:
      return row.max_ms;
    case EventSortingKey::kAve:
      return row.ave_ms;
    default:
      return row.total_ms;
  }
}

TEST(ProfilerTest, EverySortKeyOrdersTheRows) {
  for (const EventSortingKey key :
       {EventSortingKey::kDefault, EventSortingKey::kCalls, EventSortingKey::kTotal,
        EventSortingKey::kSelf, EventSortingKey::kMin, EventSortingKey::kMax,
        EventSortingKey::kAve}) {
    SCOPED_TRACE(SortingKeyName(key));
    EnableProfiler(ProfilerState::kCPU);
    for (int i = 0; i < 6; ++i) RecordEvent e("many_short");
    for (int i = 0; i < 2; ++i) {
      RecordEvent e("few_long");
      Spin(100 * (i + 1));
      RecordEvent c("nested");
      Spin(150);
    }
    for (int i = 0; i < 3; ++i) {
      RecordEvent e("middle");
      Spin(30);
    }
    const Report report = StopProfiler(key);
    ASSERT_EQ(report.events.size(), 4u);
    EXPECT_EQ(report.sorted_by, key == EventSortingKey::kDefault ? EventSortingKey::kTotal : key);
    for (size_t i = 1; i < report.events.size(); ++i) {
      EXPECT_GE(TimeKey(report.events[i - 1], key), TimeKey(report.events[i], key));
    }
  }
}

// Records `calls` calls of "a" and `calls` of "b" nested in "c", then marks a step.
void RecordSome(int calls) {
  for (int i = 0; i < calls; ++i) {
    RecordEvent a("a");
    Spin(1);
  }
  for (int i = 0; i < calls; ++i) {
    RecordEvent c("c");
    RecordEvent b("b");
  }
  MarkStep();
}

// A snapshot holds what a stop at that moment would: the same rows, the same calls,
// the same steps; and the window goes on.
TEST(SnapshotTest, ASnapshotInTheMiddleOfAWindowEqualsAStopThere) {
  EnableProfiler(ProfilerState::kCPU);
  RecordSome(10);
  const Report stopped = StopProfiler();

  EnableProfiler(ProfilerState::kCPU);
  RecordSome(10);
  const Report snapshot = SnapshotProfiler();
  ASSERT_TRUE(IsProfilerEnabled());
  RecordSome(5);
  const Report end = StopProfiler();

  ASSERT_EQ(snapshot.events.size(), stopped.events.size());
  for (const EventRow& row : stopped.events) {
    EXPECT_EQ(Row(snapshot, row.name).calls, row.calls) << row.name;
  }
  EXPECT_EQ(Row(snapshot, "a").calls, 10);
  EXPECT_EQ(Row(snapshot, "b").calls, 10);
  EXPECT_EQ(snapshot.steps.size(), 1u);
  EXPECT_EQ(snapshot.warnings, stopped.warnings);
  ExpectTimeInvariants(snapshot);
  EXPECT_LE(snapshot.wall_ms, end.wall_ms);
  // Recording went on: the stop has every call, those before the snapshot included.
  EXPECT_EQ(Row(end, "a").calls, 15);
  EXPECT_EQ(Row(end, "c").calls, 15);
  EXPECT_EQ(end.steps.size(), 2u);
}

TEST(SnapshotTest, CallsOpenAtTheSnapshotAreLeftOutAndCountedAndEndLater) {
  EnableProfiler(ProfilerState::kCPU);
  Report snapshot;
  {
    RecordEvent outer("outer");
    { RecordEvent inner("inner"); }
    snapshot = SnapshotProfiler();
  }
  const Report end = StopProfiler();
  EXPECT_EQ(Row(snapshot, "inner").calls, 1);
  EXPECT_TRUE(std::none_of(snapshot.events.begin(), snapshot.events.end(),
                           [](const EventRow& r) { return r.name == "outer"; }));
  EXPECT_TRUE(HasWarning(snapshot, "1 call still open at the snapshot; they are left out."));
  EXPECT_EQ(Row(end, "outer").calls, 1);
  EXPECT_EQ(Row(end, "inner").calls, 1);
  EXPECT_FALSE(HasWarning(end, "still open"));
}

TEST(SnapshotTest, ASnapshotWritesItsFilesAndNeedsAWindow) {
  EXPECT_THROW(SnapshotProfiler(), std::logic_error);
  const std::string path = testing::TempPath("snapshot");
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent e("op"); }
  const Report snapshot = SnapshotProfiler(EventSortingKey::kCalls, path);
  StopProfiler();
  EXPECT_EQ(snapshot.sorted_by, EventSortingKey::kCalls);
  const nlohmann::json summary = testing::ReadJson(path + ".summary.json");
  EXPECT_EQ(summary.at("events").at(0).at("name"), "op");
  EXPECT_EQ(summary.at("events").at(0).at("calls"), 1);
  const nlohmann::json trace = testing::ReadJson(path);
  int ops = 0;
  for (const auto& e : trace.at("traceEvents")) ops += e.value("name", "") == "op";
  EXPECT_EQ(ops, 1);
  testing::RemoveProfileFiles(path);
}

// Snapshots taken while another thread records: each holds at least what the one before
// held and no call that had not ended, and the stop holds every call. (A call that ended
// just before a snapshot may still be left out of it: two cores' clocks need not agree
// to the nanosecond, and the snapshot keeps the calls that ended by its own clock.)
TEST(SnapshotTest, SnapshotsWhileAnotherThreadRecords) {
  EnableProfiler(ProfilerState::kCPU);
  std::atomic<bool> done{false};
  std::atomic<int64_t> ended{0};
  std::thread worker([&] {
    // Bounded, so that slow snapshots (sanitizer builds) never fill the buffers.
    for (int i = 0; i < 200000 && !done.load(); ++i) {
      { RecordEvent e("work"); }
      ended.fetch_add(1);
    }
  });
  // A loaded machine may not run the worker before the snapshots are done.
  while (ended.load() == 0) std::this_thread::yield();
  int64_t last = 0;
  for (int i = 0; i < 20; ++i) {
    const Report snapshot = SnapshotProfiler();
    const int64_t calls = snapshot.events.empty() ? 0 : Row(snapshot, "work").calls;
    EXPECT_LE(calls, ended.load() + 1);  // + the one between its record and its count
    EXPECT_GE(calls, last);
    last = calls;
    Spin(200);
  }
  done.store(true);
  worker.join();
  const Report end = StopProfiler();
  EXPECT_EQ(Row(end, "work").calls, ended.load());
  EXPECT_GE(Row(end, "work").calls, last);
}

// Waits up to 30 s for `path` (written whole, by rename) and reads it.
nlohmann::json AwaitJson(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::ifstream(path).good()) return testing::ReadJson(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ADD_FAILURE() << "no " << path;
  return nlohmann::json::object();
}

TEST(SnapshotTest, EachSnapshotSignalWritesTheNextSnapshotAndTheProgramGoesOn) {
  const std::string path = testing::TempPath("signalled");
  FLAGS_paddle_prof_snapshot_signal = "SIGUSR1";
  FLAGS_paddle_prof_path = path;
  EnableProfiler(ProfilerState::kCPU);  // catches it
  for (int snapshot = 0; snapshot < 2; ++snapshot) {
    for (int i = 0; i < 3; ++i) RecordEvent e("op");
    ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
    const std::string file = path + ".snapshot" + std::to_string(snapshot);
    const nlohmann::json summary = AwaitJson(file + ".summary.json");
    EXPECT_EQ(summary.at("events").at(0).at("calls"), 3 * (snapshot + 1)) << file;
    EXPECT_TRUE(std::ifstream(file).good());
    testing::RemoveProfileFiles(file);
  }
  EXPECT_EQ(Row(StopProfiler(), "op").calls, 6);
  FLAGS_paddle_prof_snapshot_signal = "";
  FLAGS_paddle_prof_path = "";
}

TEST(ProfilerTest, DisableProfilerPrintsTheRowsOfTheRowLimitFlag) {
  FLAGS_paddle_prof_row_limit = 2;
  EnableProfiler(ProfilerState::kCPU);
  for (const char* name : {"x", "y", "z"}) RecordEvent e(name);
  ::testing::internal::CaptureStdout();
  const Report report = DisableProfiler(EventSortingKey::kCalls);
  const std::string out = ::testing::internal::GetCapturedStdout();
  FLAGS_paddle_prof_row_limit = Report::kDefaultRowLimit;
  EXPECT_EQ(report.events.size(), 3u);
  EXPECT_NE(out.find("\nx "), std::string::npos) << out;
  EXPECT_NE(out.find("\ny "), std::string::npos) << out;
  EXPECT_EQ(out.find("\nz "), std::string::npos) << out;
  EXPECT_NE(out.find("(1 more row, in the Report: a row limit of 0 prints every row)"),
            std::string::npos)
      << out;
}

class FlightRecorderTest : public ::testing::Test {
 protected:
  void TearDown() override { FLAGS_paddle_prof_keep_last_steps = 0; }
};

TEST_F(FlightRecorderTest, KeepingFiveStepsOfAThousandReportsSteps995To999) {
  FLAGS_paddle_prof_keep_last_steps = 5;
  EnableProfiler(ProfilerState::kCPU);
  for (int step = 0; step < 1000; ++step) {
    for (int i = 0; i < 3; ++i) RecordEvent op("op");
    { RecordEvent tagged("step", std::to_string(step)); }
    MarkStep();
  }
  const Report report = StopProfiler();
  ASSERT_EQ(report.steps.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(report.steps[i].step, 995 + i);
  EXPECT_EQ(Row(report, "op").calls, 15);
  ASSERT_EQ(report.events.size(), 6u);
  for (int step = 995; step < 1000; ++step) {
    EXPECT_EQ(Row(report, "step", std::to_string(step)).calls, 1);
  }
  EXPECT_TRUE(HasWarning(report,
                         "flight recorder (keep_last_steps=5): the report covers steps 995-999 "
                         "and what ran after them; the 995 step(s) before were dropped."));
  EXPECT_FALSE(HasWarning(report, "still open"));
  double steps_ms = 0;
  for (const StepSummary& s : report.steps) steps_ms += s.wall_ms;
  EXPECT_LE(steps_ms, report.wall_ms);
  ExpectTimeInvariants(report);
}

// The records of dropped steps give their chunks back: however long the window runs,
// the buffers stop growing.
TEST_F(FlightRecorderTest, TheRecordersMemoryStopsGrowing) {
  FLAGS_paddle_prof_keep_last_steps = 5;
  const size_t before = internal::EventBuffer::ChunksInUse();  // other threads' and tests'
  EnableProfiler(ProfilerState::kCPU);
  const auto steps = [](int count) {
    for (int step = 0; step < count; ++step) {
      for (int i = 0; i < 20000; ++i) RecordEvent op("op");  // a third of a chunk
      MarkStep();
    }
  };
  steps(100);
  const size_t chunks = internal::EventBuffer::ChunksInUse();
  steps(500);
  EXPECT_EQ(internal::EventBuffer::ChunksInUse(), chunks);
  EXPECT_LE(chunks - before, 4u);  // five steps are 1.5 chunks
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "op").calls, 5 * 20000);
  EXPECT_EQ(report.steps.front().step, 595);
}

TEST_F(FlightRecorderTest, LiveBytesStayExactAndPlacesCoverTheKeptSteps) {
  TrackingAllocator cpu(CPUAllocator(), CPUPlace());
  FLAGS_paddle_prof_keep_last_steps = 3;
  EnableProfiler(ProfilerState::kCPU);
  const int64_t start = testing::PlaceOf(SnapshotProfiler(), "CPU").start_bytes;
  std::vector<void*> kept_alive;
  for (int step = 0; step < 10; ++step) {
    RecordEvent op("step_op");
    kept_alive.push_back(cpu.Allocate(64));
    cpu.Free(cpu.Allocate(step == 2 ? 100000 : 1000));  // the window's peak is in step 2
    MarkStep();
  }
  const Report report = StopProfiler();
  for (void* p : kept_alive) cpu.Free(p);
  // Every block still live is counted, those of dropped steps included.
  EXPECT_EQ(testing::Cpu(Row(report, "step_op")).live_bytes, 10 * 64);
  const PlaceSummary& place = testing::PlaceOf(report, "CPU");
  EXPECT_EQ(place.start_bytes, start + 7 * 64);  // as step 6 ended
  EXPECT_EQ(place.end_bytes, start + 10 * 64);
  EXPECT_EQ(place.peak_bytes, start + 10 * 64 + 1000);  // step 9's, not step 2's
  EXPECT_EQ(Row(report, "step_op").calls, 3);
}

TEST_F(FlightRecorderTest, TheBoundIsSetBeforeTheFirstStepAndTheTraceNamesTheKeptSteps) {
  EnableProfiler(ProfilerState::kCPU);
  internal::SetKeepLastSteps(2);
  for (int step = 0; step < 5; ++step) {
    { RecordEvent op("op"); }
    MarkStep();
  }
  EXPECT_THROW(internal::SetKeepLastSteps(3), std::logic_error);
  const std::string path = testing::TempPath("flight_trace");
  const Report report = StopProfiler(EventSortingKey::kTotal, path);
  EXPECT_EQ(report.steps.front().step, 3);
  std::vector<std::string> steps;
  const nlohmann::json trace = testing::ReadJson(path);
  for (const auto& e : trace.at("traceEvents")) {
    if (e.value("cat", "") == "step") steps.push_back(e.at("name"));
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"ProfilerStep#3", "ProfilerStep#4"}));
  testing::RemoveProfileFiles(path);
}

// Threads that come and go in a flight-recorder window hand their recorders on once
// their records were released: memory stays flat.
TEST_F(FlightRecorderTest, ThreadsThatComeAndGoReuseTheRecordersOfThoseGone) {
  FLAGS_paddle_prof_keep_last_steps = 3;
  const size_t before = internal::EventBuffer::ChunksInUse();
  EnableProfiler(ProfilerState::kCPU);
  for (int step = 0; step < 40; ++step) {
    std::thread([] {
      for (int i = 0; i < 1000; ++i) RecordEvent op("worker_op");
    }).join();
    MarkStep();
  }
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "worker_op").calls, 3 * 1000);
  EXPECT_LE(internal::EventBuffer::ChunksInUse() - before, 6u);  // not one per thread: 40
}

}  // namespace
}  // namespace paddle_prof
