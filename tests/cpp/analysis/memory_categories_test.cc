// Memory categories (memory_categories.h): blocks told of by identity (MarkBlock) keep it
// for their whole life; the others are input, temporary, activation or other by when
// they lived; every place's categories add up to its live bytes.
#include "memory_categories.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <string>
#include <vector>

#include "block_kind.h"
#include "memory_tracker.h"
#include "paddle_prof/paddle_prof.h"
#include "profiler_control.h"
#include "summary_reader.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::kGradientBlock;
using internal::kHandedToModule;
using internal::kOptimizerStateBlock;
using internal::kParameterBlock;
using internal::MarkBlock;

TEST(BlockKindTest, TheFirstIdentityWinsAndFlagsAddUp) {
  using internal::MergeKinds;
  EXPECT_EQ(MergeKinds(0, kGradientBlock), kGradientBlock);
  EXPECT_EQ(MergeKinds(kGradientBlock, kParameterBlock), kParameterBlock);
  EXPECT_EQ(MergeKinds(kParameterBlock, kOptimizerStateBlock), kParameterBlock);
  EXPECT_EQ(MergeKinds(kOptimizerStateBlock, kHandedToModule), kOptimizerStateBlock | kHandedToModule);
  EXPECT_EQ(MergeKinds(kHandedToModule, 0), kHandedToModule);
}

int64_t Sum(const std::map<std::string, int64_t>& categories) {
  int64_t sum = 0;
  for (const auto& [name, bytes] : categories) sum += bytes;
  return sum;
}

TEST(MemoryCategoriesTest, EachBlockHasOneCategoryAndTheyAddUpToTheLiveBytes) {
  TrackingAllocator alloc(CPUAllocator(), CPUPlace());
  void* weight = alloc.Allocate(4000);  // made before the window: known by identity
  void* batch = alloc.Allocate(300);    // made before it too, then handed to the model
  void* stale = alloc.Allocate(7);      // made before it, never told of
  EnableProfiler(ProfilerState::kCPU);
  internal::SetMemoryCategories(true);
  ASSERT_TRUE(MarkBlock(weight, kParameterBlock));
  ASSERT_TRUE(MarkBlock(batch, kHandedToModule));
  EXPECT_FALSE(MarkBlock(reinterpret_cast<void*>(0x10), kParameterBlock));  // no block there
  void* loaded = nullptr;
  {
    RecordEvent next("enumerate(DataLoader)#It.__next__");
    loaded = alloc.Allocate(1000);  // input: the data phase
  }
  void* activation = nullptr;
  void* grad = nullptr;
  void* state = nullptr;
  {
    RecordEvent forward("nn.Module: Net");
    {
      RecordEvent op("aten::linear");
      void* scratch = alloc.Allocate(50);  // temporary: freed inside its op
      {
        RecordEvent inner("aten::empty");
        activation = alloc.Allocate(2000);  // activation: outlives its op
      }
      alloc.Free(scratch);
    }
  }
  {
    RecordEvent backward("torch.autograd.backward");
    RecordEvent node("autograd::engine::evaluate_function: MmBackward0");
    grad = alloc.Allocate(4000);
    ASSERT_TRUE(MarkBlock(grad, kGradientBlock));
  }
  {
    RecordEvent step("Optimizer.step#Adam.step");
    state = alloc.Allocate(8000);
    ASSERT_TRUE(MarkBlock(state, kOptimizerStateBlock));
    ASSERT_TRUE(MarkBlock(grad, kOptimizerStateBlock));  // a gradient comes first
  }
  void* other = alloc.Allocate(10);  // outside every phase and op
  alloc.Free(grad);                  // a gradient freed keeps its category to the end
  MarkStep();
  const Report report = DisableProfiler(EventSortingKey::kTotal, "");
  const PlaceSummary& cpu = testing::PlaceOf(report, "CPU");
  EXPECT_EQ(cpu.start_bytes, 4307);
  const std::map<std::string, int64_t> at_peak = {
      {"parameter", 4000}, {"gradient", 4000}, {"optimizer_state", 8000}, {"input", 1300},
      {"temporary", 0},    {"activation", 2000}, {"other", 7 + 10}};
  EXPECT_EQ(cpu.categories_at_peak, at_peak);
  EXPECT_EQ(Sum(cpu.categories_at_peak), cpu.peak_bytes);
  ASSERT_EQ(cpu.activations_at_peak.size(), 1u);  // charged to the module that made it
  EXPECT_EQ(cpu.activations_at_peak[0].module, "Net");
  EXPECT_EQ(cpu.activations_at_peak[0].bytes, 2000);
  std::map<std::string, int64_t> end = at_peak;
  end["gradient"] = 0;
  EXPECT_EQ(cpu.categories_end, end);
  EXPECT_EQ(Sum(cpu.categories_end), cpu.end_bytes);
  // Along the timeline: each point's categories add up to its bytes; the scratch block
  // is a temporary while it lives.
  const TimelinePoints& line = report.timeline.at("CPU");
  ASSERT_EQ(line.by_category.size(), 7u);
  bool temporary_seen = false;
  for (size_t i = 0; i < line.t_ms.size(); ++i) {
    int64_t sum = 0;
    for (const auto& [name, series] : line.by_category) {
      ASSERT_EQ(series.size(), line.t_ms.size()) << name;
      sum += series[i];
    }
    EXPECT_EQ(sum, line.bytes[i]) << i;
    temporary_seen |= line.by_category.at("temporary")[i] == 50;
  }
  EXPECT_TRUE(temporary_seen);
  // The summary keeps them, and the table says them in one line (unwrapped).
  const Report read = internal::ReportFromJson(report.ToJson(), "test");
  EXPECT_EQ(testing::PlaceOf(read, "CPU").categories_at_peak, at_peak);
  EXPECT_EQ(testing::PlaceOf(read, "CPU").activations_at_peak[0].module, "Net");
  EXPECT_EQ(read.timeline.at("CPU").by_category, line.by_category);
  EXPECT_NE(report.Table(false, Report::kDefaultRowLimit, 0).find("; by kind: optimizer_state 7.81 KiB (41%), gradient 3.91 KiB "
                                "(21%), parameter 3.91 KiB (21%), activation 1.95 KiB (10%), "
                                "input 1.27 KiB (7%), other 17 B (0%)\n"),
            std::string::npos)
      << report.Table();
  for (void* p : {weight, batch, stale, loaded, activation, state, other}) alloc.Free(p);
}

TEST(MemoryCategoriesTest, BlocksOfBeforeAResetAreAtTheStartByTheirKind) {
  TrackingAllocator alloc(CPUAllocator(), CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  internal::SetMemoryCategories(true);
  void* weight = alloc.Allocate(4000);
  void* kept = alloc.Allocate(100);
  ASSERT_TRUE(MarkBlock(weight, kParameterBlock));
  ResetProfiler();  // the two are now the window's start
  ASSERT_TRUE(MarkBlock(kept, kGradientBlock));
  alloc.Free(weight);
  const Report report = DisableProfiler(EventSortingKey::kTotal, "");
  const PlaceSummary& cpu = testing::PlaceOf(report, "CPU");
  EXPECT_EQ(cpu.start_bytes, 4100);
  EXPECT_EQ(cpu.categories_at_peak.at("parameter"), 4000);
  EXPECT_EQ(cpu.categories_at_peak.at("gradient"), 100);
  EXPECT_EQ(cpu.categories_end.at("parameter"), 0);
  EXPECT_EQ(cpu.categories_end.at("gradient"), 100);
  EXPECT_EQ(Sum(cpu.categories_end), cpu.end_bytes);
  alloc.Free(kept);
}

TEST(MemoryCategoriesTest, AWindowThatDoesNotCategoriseHasNone) {
  TrackingAllocator alloc(CPUAllocator(), CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  void* block = alloc.Allocate(64);
  const Report report = DisableProfiler(EventSortingKey::kTotal, "");
  EXPECT_TRUE(testing::PlaceOf(report, "CPU").categories_at_peak.empty());
  EXPECT_TRUE(report.timeline.at("CPU").by_category.empty());
  EXPECT_EQ(report.ToJson().find("categories"), std::string::npos);
  alloc.Free(block);
}

// The temporary bytes the timeline of a window shows at once at most: a scratch block
// of 50 bytes freed inside an op named `op`, outside every phase.
int64_t MostTemporary(const char* op, bool plain_op_names) {
  TrackingAllocator alloc(CPUAllocator(), CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  internal::SetMemoryCategories(true, plain_op_names);
  {
    RecordEvent call(op);
    alloc.Free(alloc.Allocate(50));
  }
  const Report report = DisableProfiler(EventSortingKey::kTotal, "");
  const std::vector<int64_t>& series = report.timeline.at("CPU").by_category.at("temporary");
  return series.empty() ? 0 : *std::max_element(series.begin(), series.end());
}

TEST(MemoryCategoriesTest, AFrameworkThatNamesItsOpsPlainlyHasTemporariesInThemToo) {
  EXPECT_EQ(MostTemporary("aten::mm", false), 50);
  EXPECT_EQ(MostTemporary("matmul_grad", true), 50);  // PaddlePaddle's
  EXPECT_EQ(MostTemporary("matmul_grad", false), 0);  // a user's scope in a torch window
  EXPECT_EQ(MostTemporary("nn.Layer: Net", true), 0);
}

TEST(OutermostCallsTest, OpsAreATenOpsAndAutogradNodes) {
  using internal::IsOpName;
  EXPECT_TRUE(IsOpName("aten::add"));
  EXPECT_TRUE(IsOpName("autograd::engine::evaluate_function: MmBackward0"));
  EXPECT_FALSE(IsOpName("aten:"));
  EXPECT_FALSE(IsOpName("MmBackward0"));
  EXPECT_FALSE(IsOpName("nn.Module: Net"));
  EXPECT_FALSE(IsOpName(""));
  // PaddlePaddle's, where the window says its framework names ops plainly.
  EXPECT_FALSE(IsOpName("matmul_grad"));
  EXPECT_TRUE(IsOpName("matmul_grad", /*plain_op_names=*/true));
  EXPECT_TRUE(IsOpName("aten::add", /*plain_op_names=*/true));
  EXPECT_FALSE(IsOpName("nn.Layer: Net", /*plain_op_names=*/true));
  EXPECT_FALSE(IsOpName("GradNodeAccumulation", /*plain_op_names=*/true));
  EXPECT_FALSE(IsOpName("", /*plain_op_names=*/true));
}

TEST(OutermostCallsTest, NestedCallsAreDroppedInTheOrderTheyEndedOrInAnyOther) {
  using internal::OutermostCalls;
  using Calls = std::vector<internal::TickInterval>;
  // As a thread records them: a (10-20) holds b (12-15) and c (15-20, ending with it);
  // d (30-40) holds e (30-31), which starts with it; f (40-50) starts as d ends.
  const Calls ended = {{12, 15}, {15, 20}, {10, 20}, {30, 31}, {30, 40}, {40, 50}};
  const Calls outer = {{10, 20}, {30, 40}, {40, 50}};
  EXPECT_EQ(OutermostCalls(ended), outer);
  // Out of that order the same calls give the same.
  EXPECT_EQ(OutermostCalls({{40, 50}, {30, 31}, {10, 20}, {30, 40}, {15, 20}, {12, 15}}), outer);
  // Overlapping without nesting: the first to start is kept, what starts within it is not.
  EXPECT_EQ(OutermostCalls({{10, 20}, {15, 25}, {26, 27}}), (Calls{{10, 20}, {26, 27}}));
  EXPECT_EQ(OutermostCalls({{15, 25}, {10, 20}, {26, 27}}), (Calls{{10, 20}, {26, 27}}));
  EXPECT_TRUE(OutermostCalls({}).empty());
}

}  // namespace
}  // namespace paddle_prof
