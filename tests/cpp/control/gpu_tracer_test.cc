// GPU profiling without a GPU: a fake tracer stands where CUPTI would, so the
// correlation of GPU work with the calls that launched it, the GPU columns, the
// warnings and the trace's stream tracks are checked on any machine.
#include "gpu_tracer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "clock.h"
#include "flags.h"
#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::Clock;
using internal::GpuActivity;
using internal::GpuCapture;
using testing::HasWarning;
using testing::ReadJson;
using testing::Row;
using testing::TempPath;

// Stands in for CUPTI: keeps each thread's stack of pushed scope ids, and "launches"
// GPU work as CUPTI would record it: an API call correlated with the top of the stack.
class FakeGpuTracer final : public internal::GpuTracer {
 public:
  void Start() override {
    if (!start_error.empty()) throw std::runtime_error(start_error);
    ++starts;
  }
  void Discard() override { capture_ = GpuCapture{}; }
  void DropEndedBefore(uint64_t tick) override { internal::DropEndedBefore(&capture_, tick); }
  size_t Held() const { return capture_.activities.size(); }
  GpuCapture Stop() override {
    ++stops;
    GpuCapture out = std::move(capture_);
    capture_ = GpuCapture{};
    // CUPTI hands buffers back in no particular order.
    std::shuffle(out.activities.begin(), out.activities.end(), std::mt19937(7));
    out.dropped = dropped;
    return out;
  }
  void PushScope(uint64_t id) override { Stack().push_back(id); }
  void PopScope() override {
    ASSERT_FALSE(Stack().empty()) << "a pop without a push";
    Stack().pop_back();
  }

  // A kernel launched now on the calling thread, running [start, start + ticks) on the GPU.
  void Launch(const char* name, uint64_t start, uint64_t ticks, uint32_t stream = 7) {
    const uint32_t correlation = ++last_correlation_;
    if (!Stack().empty()) capture_.scope_of_call[correlation] = Stack().back();
    capture_.activities.push_back(
        {GpuActivity::Kind::kKernel, name, start, start + ticks, 0, stream, correlation});
  }
  // An API call whose scope id names no call the report holds.
  void LaunchForUnknownScope(uint64_t start) {
    const uint32_t correlation = ++last_correlation_;
    capture_.scope_of_call[correlation] = ~uint64_t{0} >> 1;
    capture_.activities.push_back(
        {GpuActivity::Kind::kMemset, "Memset", start, start + 10, 0, 7, correlation});
  }
  static size_t Depth() { return Stack().size(); }

  std::string start_error;
  int64_t dropped = 0;
  int starts = 0;
  int stops = 0;

 private:
  static std::vector<uint64_t>& Stack() {
    thread_local std::vector<uint64_t> stack;
    return stack;
  }
  GpuCapture capture_;
  uint32_t last_correlation_ = 0;
};

class GpuTracerTest : public ::testing::Test {
 protected:
  void SetUp() override { internal::SetGpuTracerForTesting(&fake_); }
  void TearDown() override {
    if (IsProfilerEnabled()) StopProfiler();
    internal::SetGpuTracerForTesting(nullptr);
  }
  // The clock's rate is refined as time passes: equal to 0.01%.
  static void ExpectTicks(const std::optional<double>& ms, uint64_t ticks) {
    ASSERT_TRUE(ms.has_value());
    const double expected = static_cast<double>(ticks) * Clock::NsPerTick() / 1e6;
    EXPECT_NEAR(*ms, expected, expected * 1e-4);
  }

  FakeGpuTracer fake_;
};

TEST_F(GpuTracerTest, KernelIsChargedToTheScopeThatLaunchedIt) {
  EnableProfiler(ProfilerState::kCUDA);
  uint64_t launched_at = 0;
  {
    RecordEvent matmul("matmul");
    launched_at = Clock::NowOutOfLine();
    fake_.Launch("sgemm_kernel", launched_at, 3000);
    EXPECT_EQ(FakeGpuTracer::Depth(), 1u);
  }
  { RecordEvent idle("idle"); }
  EXPECT_EQ(FakeGpuTracer::Depth(), 0u);
  const Report r = StopProfiler();
  EXPECT_EQ(fake_.starts, 1);
  EXPECT_EQ(fake_.stops, 1);
  const EventRow& matmul = Row(r, "matmul");
  ExpectTicks(matmul.gpu_total_ms, 3000);
  EXPECT_EQ(*matmul.gpu_min_ms, *matmul.gpu_total_ms);
  EXPECT_EQ(*matmul.gpu_max_ms, *matmul.gpu_total_ms);
  EXPECT_EQ(*Row(r, "idle").gpu_total_ms, 0.0);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  EXPECT_NE(r.Table().find("GPU Total"), std::string::npos);
}

TEST_F(GpuTracerTest, OverlappingKernelsCountOnceAndParentsIncludeChildren) {
  EnableProfiler(ProfilerState::kAll);
  const uint64_t t = Clock::NowOutOfLine();
  for (int step = 0; step < 2; ++step) {
    RecordEvent forward("forward");
    {
      RecordEvent conv("conv2d");
      // Two streams at once: 1000 + 1000 ticks of kernels in 1500 ticks of GPU time.
      fake_.Launch("im2col", t, 1000, 7);
      fake_.Launch("gemm", t + 500, 1000, 8);
    }
    {
      RecordEvent relu("relu");
      fake_.Launch("relu_kernel", t + 4000, step == 0 ? 100 : 300);
    }
  }
  const Report r = StopProfiler();
  ExpectTicks(Row(r, "conv2d").gpu_total_ms, 2 * 1500);
  const EventRow& relu = Row(r, "relu");
  ExpectTicks(relu.gpu_total_ms, 400);
  ExpectTicks(relu.gpu_min_ms, 100);
  ExpectTicks(relu.gpu_max_ms, 300);
  ExpectTicks(relu.gpu_ave_ms, 200);
  EXPECT_LE(*relu.gpu_min_ms, *relu.gpu_ave_ms);
  EXPECT_LE(*relu.gpu_ave_ms, *relu.gpu_max_ms);
  // Each forward: conv's 1500 ticks and relu's, which do not overlap conv's.
  ExpectTicks(Row(r, "forward").gpu_total_ms, 2 * 1500 + 400);
}

TEST_F(GpuTracerTest, WorkOutsideRecordedCallsAndDroppedRecordsAreReported) {
  fake_.dropped = 12;
  EnableProfiler(ProfilerState::kCUDA);
  const uint64_t t = Clock::NowOutOfLine();
  fake_.Launch("no_scope_kernel", t, 500);  // no scope open
  fake_.LaunchForUnknownScope(t);
  { RecordEvent op("op"); }
  const Report r = StopProfiler();
  EXPECT_TRUE(HasWarning(r, "1 GPU kernel(s), copies or memsets (")) << r.Table();
  EXPECT_TRUE(HasWarning(r, "launched with no event open"));
  EXPECT_TRUE(HasWarning(r, "launched by calls the report leaves out"));
  EXPECT_TRUE(HasWarning(r, "12 GPU activity record(s) dropped by CUPTI"));
  EXPECT_EQ(*Row(r, "op").gpu_total_ms, 0.0);
}

TEST_F(GpuTracerTest, ResetDropsEarlierGpuWork) {
  EnableProfiler(ProfilerState::kCUDA);
  {
    RecordEvent op("op");
    fake_.Launch("before_reset", Clock::NowOutOfLine(), 800);
  }
  ResetProfiler();
  {
    RecordEvent op("op");
    fake_.Launch("after_reset", Clock::NowOutOfLine(), 200);
  }
  const Report r = StopProfiler();
  EXPECT_EQ(Row(r, "op").calls, 1);
  ExpectTicks(Row(r, "op").gpu_total_ms, 200);
}

TEST_F(GpuTracerTest, CpuStateNeitherTracesNorShowsGpuColumns) {
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent op("op");
    EXPECT_EQ(FakeGpuTracer::Depth(), 0u);  // nothing pushed
  }
  const Report r = StopProfiler();
  EXPECT_EQ(fake_.starts, 0);
  EXPECT_FALSE(Row(r, "op").gpu_total_ms.has_value());
  EXPECT_EQ(r.Table().find("GPU Total"), std::string::npos);
}

TEST_F(GpuTracerTest, StartFailureLeavesTheProfilerOffWithTheReason) {
  fake_.start_error = "paddle_prof: cannot profile the GPU: no CUDA device was found";
  try {
    EnableProfiler(ProfilerState::kCUDA);
    FAIL() << "EnableProfiler(kCUDA) did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos);
  }
  EXPECT_FALSE(IsProfilerEnabled());
  EnableProfiler(ProfilerState::kCPU);  // everything else still works
  { RecordEvent op("op"); }
  EXPECT_EQ(StopProfiler().events.size(), 1u);
}

TEST_F(GpuTracerTest, PushesAndPopsStayBalancedOnOddEnds) {
  EnableProfiler(ProfilerState::kCUDA);
  {
    auto outer = std::make_unique<RecordEvent>("outer");
    auto inner = std::make_unique<RecordEvent>("inner");
    EXPECT_EQ(FakeGpuTracer::Depth(), 2u);
    outer.reset();  // ends inner with it
    EXPECT_EQ(FakeGpuTracer::Depth(), 0u);
  }
  {
    // Ended on another thread: its own thread drops it at its next scope.
    auto abandoned = std::make_unique<RecordEvent>("abandoned");
    std::thread([&abandoned] { abandoned.reset(); }).join();
    EXPECT_EQ(FakeGpuTracer::Depth(), 1u);
    RecordEvent next("next");
    EXPECT_EQ(FakeGpuTracer::Depth(), 1u);
  }
  EXPECT_EQ(FakeGpuTracer::Depth(), 0u);
  StopProfiler();
}

TEST_F(GpuTracerTest, TraceHasAStreamTrackAndAnArrowFromTheCall) {
  const std::string path = TempPath("gpu_trace");
  EnableProfiler(ProfilerState::kCUDA);
  {
    RecordEvent matmul("matmul");
    fake_.Launch("sgemm_kernel", Clock::NowOutOfLine(), 1000, 13);
  }
  StopProfiler(EventSortingKey::kTotal, path);
  const nlohmann::json trace = ReadJson(path);
  int kernels = 0, flow_starts = 0, flow_ends = 0;
  bool stream_named = false;
  int64_t op_tid = -1;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "matmul") op_tid = e["tid"];
  }
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "sgemm_kernel") {
      ++kernels;
      EXPECT_EQ(e["tid"], 13);
      EXPECT_EQ(e["cat"], "kernel");
    }
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "stream 13") {
      stream_named = true;
    }
    if (e["ph"] == "s") {
      ++flow_starts;
      EXPECT_EQ(e["tid"], op_tid);
    }
    if (e["ph"] == "f") {
      ++flow_ends;
      EXPECT_EQ(e["tid"], 13);
      EXPECT_EQ(e["bp"], "e");
    }
  }
  EXPECT_EQ(kernels, 1);
  EXPECT_TRUE(stream_named);
  EXPECT_EQ(flow_starts, 1);
  EXPECT_EQ(flow_ends, 1);
  testing::RemoveProfileFiles(path);
}

// A flight recorder forgets the GPU work of the steps it drops: the tracer holds only the
// kept steps' kernels, and the report charges them to the kept calls.
TEST_F(GpuTracerTest, AFlightRecorderKeepsOnlyTheKeptStepsGpuWork) {
  FLAGS_paddle_prof_keep_last_steps = 2;
  EnableProfiler(ProfilerState::kCUDA);
  FLAGS_paddle_prof_keep_last_steps = 0;
  for (int step = 0; step < 10; ++step) {
    {
      RecordEvent op("op");
      fake_.Launch("kernel", Clock::NowOutOfLine(), 1);
    }
    MarkStep();
    EXPECT_LE(fake_.Held(), 3u);  // two kept steps', and the last step's until its mark
  }
  const Report r = StopProfiler();
  EXPECT_EQ(Row(r, "op").calls, 2);
  ExpectTicks(Row(r, "op").gpu_total_ms, 2);
  EXPECT_FALSE(HasWarning(r, "GPU kernel(s), copies or memsets were launched by calls"));
}

}  // namespace
}  // namespace paddle_prof
