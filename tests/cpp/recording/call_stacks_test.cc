// record_stacks in the core, with a capture function of the test's own: the stack of
// each top-level call is recorded with it, and rows, at_peak entries and trace events
// name it; nested calls take their top-level call's.
#include "call_stacks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::CallStack;
using testing::MemoryTest;
using testing::PlaceOf;
using testing::Row;

// The stack the next capture returns; captures counted.
std::atomic<uint32_t> g_next_stack{0};
std::atomic<int> g_captures{0};
uint32_t TestCapture() {
  g_captures.fetch_add(1);
  return g_next_stack.load();
}

class CallStacksTest : public MemoryTest {
 protected:
  void SetUp() override { internal::RegisterStackCapture(&TestCapture); }
  void TearDown() override { internal::RegisterStackCapture(nullptr); }
  static uint32_t Stack(const std::string& source_line) {
    return internal::InternCallStack(
        CallStack{{"lib/profiler.py:1 in __enter__", source_line, "main.py:1 in <module>"}, 1});
  }
};

TEST_F(CallStacksTest, TopLevelCallsNameTheirSourceAndNestedOnesTakeIt) {
  const uint32_t train = Stack("train.py:10 in step");
  const uint32_t eval = Stack("eval.py:20 in run");
  const std::string path = testing::TempPath("call_stacks");
  EnableProfiler(ProfilerState::kCPU);
  internal::RecordStacks(true);
  g_captures = 0;
  void* held;
  for (int i = 0; i < 3; ++i) {
    g_next_stack = train;
    RecordEvent step("step");
    RecordEvent op("op");
    if (i == 0) held = cpu_.Allocate(4096);
  }
  g_next_stack = eval;
  {
    RecordEvent op("op");
  }
  EXPECT_EQ(g_captures, 4);  // top-level calls only
  const Report r = StopProfiler(EventSortingKey::kTotal, path);
  EXPECT_FALSE(internal::RecordingStacks());  // for that window only
  ASSERT_EQ(Row(r, "step").sources.size(), 1u);
  EXPECT_EQ(Row(r, "step").sources[0].frame, "train.py:10 in step");
  EXPECT_EQ(Row(r, "step").sources[0].calls, 3);
  const std::vector<SourceCalls>& op = Row(r, "op").sources;
  ASSERT_EQ(op.size(), 2u);
  EXPECT_EQ(op[0].frame, "train.py:10 in step");
  EXPECT_EQ(op[0].calls, 3);
  EXPECT_EQ(op[1].frame, "eval.py:20 in run");
  EXPECT_EQ(op[1].calls, 1);
  const PlaceSummary& cpu = PlaceOf(r, "CPU");
  ASSERT_EQ(cpu.at_peak.size(), 1u);
  EXPECT_EQ(cpu.at_peak[0].source, "train.py:10 in step");
  EXPECT_EQ(cpu.at_peak[0].path, (std::vector<std::string>{"step", "op"}));

  const nlohmann::json trace = testing::ReadJson(path);
  int with_stack = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (!e.contains("args") || !e.at("args").contains("stack")) continue;
    ++with_stack;
    EXPECT_EQ(e.at("args").at("stack").size(), 3u);
  }
  EXPECT_EQ(with_stack, 4);
  const nlohmann::json summary = testing::ReadJson(path + ".summary.json");
  EXPECT_EQ(summary.at("places")[0].at("at_peak")[0].at("source"), "train.py:10 in step");
  testing::RemoveProfileFiles(path);
  cpu_.Free(held);
}

TEST_F(CallStacksTest, AWindowWithoutRecordStacksCapturesNothing) {
  g_next_stack = Stack("train.py:10 in step");
  g_captures = 0;
  EnableProfiler(ProfilerState::kCPU);
  std::thread([] { RecordEvent e("on_thread"); }).join();
  {
    RecordEvent e("main");
  }
  const Report r = StopProfiler(EventSortingKey::kTotal);
  EXPECT_EQ(g_captures, 0);
  EXPECT_TRUE(Row(r, "main").sources.empty());
}

TEST(CallStackTableTest, EqualStacksShareAnIdAndUnknownIdsHaveNone) {
  const uint32_t a = internal::InternCallStack(CallStack{{"x.py:1 in f"}, 0});
  const uint32_t b = internal::InternCallStack(CallStack{{"x.py:1 in f"}, 0});
  EXPECT_GE(a, 1u);
  EXPECT_EQ(a, b);
  EXPECT_NE(internal::InternCallStack(CallStack{{"x.py:2 in f"}, 0}), a);
  EXPECT_EQ(internal::CallStackOf(0), nullptr);
  EXPECT_EQ(internal::CallStackOf(1u << 30), nullptr);
  EXPECT_EQ(internal::CallStackOf(a)->frames[0], "x.py:1 in f");
}

}  // namespace
}  // namespace paddle_prof
