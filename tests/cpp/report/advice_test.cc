// Advice on hand-made evidence: each kind given exactly at its threshold and not below
// it, citing its figures, with what is at stake in bytes or milliseconds.
#include "advice.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace paddle_prof::internal {
namespace {

using testing::kMiB;

std::vector<std::string> Kinds(const std::vector<Advice>& advice) {
  std::vector<std::string> kinds;
  for (const Advice& a : advice) kinds.push_back(a.kind);
  return kinds;
}

GrowingHolder Holder(const std::string& name, size_t tags) {
  GrowingHolder h;
  h.name = name;
  h.bytes = 3 * kMiB;
  h.steps = 20;
  h.tags = tags;
  h.largest_tag = "[[1, 16, 41, 32], …]";
  h.path = {"nn.Module: Net", "aten::conv2d", name};
  return h;
}

TEST(AdviceTest, VaryingShapesNeedsEightTagsOnOneGrowingOp) {
  MemoryGrowth live;
  live.steps = 20;
  live.holders = {Holder("aten::mkldnn_convolution", 7), Holder("aten::empty", 7)};
  EXPECT_TRUE(GrowthAdvice(live, {}).empty());  // 14 tags, but no op has 8
  live.holders[0].tags = 8;
  const std::vector<Advice> advice = GrowthAdvice(live, {});
  ASSERT_EQ(Kinds(advice), std::vector<std::string>{"varying_shapes"});
  EXPECT_EQ(advice[0].bytes, 3 * kMiB);
  EXPECT_FALSE(advice[0].ms);
  EXPECT_EQ(advice[0].message,
            "aten::mkldnn_convolution holds 3.00 MiB of live memory that grew over 20 steps, in "
            "blocks allocated under 8 different input shapes (most under [[1, 16, 41, 32], …]) "
            "and never freed: a cache that keeps something for every new shape.");
  // A oneDNN op gets the cache settings that were tried: both, never LRU_CACHE_CAPACITY=0.
  EXPECT_NE(advice[0].fix.find("LRU_CACHE_CAPACITY=1 ONEDNN_PRIMITIVE_CACHE_CAPACITY=0"),
            std::string::npos);
  live.holders[0].name = "aten::add";
  live.holders[0].path = {"aten::add"};
  const std::string other_fix = GrowthAdvice(live, {})[0].fix;
  EXPECT_EQ(other_fix, "Bin or pad the inputs to a few sizes, so that few shapes reach the op.");
}

TEST(AdviceTest, MallocRetentionNeeds16MiBOfResidentGrowthHalfOfItKeptByMalloc) {
  ProcessGrowth p;
  p.steps = 10;
  p.resident_bytes = 16 * kMiB - 1;
  p.kept_bytes = 12 * kMiB;
  p.in_use_bytes = kMiB;
  EXPECT_TRUE(GrowthAdvice({}, p).empty());
  p.resident_bytes = 16 * kMiB;
  p.kept_bytes = 8 * kMiB - 1;
  EXPECT_TRUE(GrowthAdvice({}, p).empty());
  p.kept_bytes = 8 * kMiB;
  const std::vector<Advice> advice = GrowthAdvice({}, p);
  ASSERT_EQ(Kinds(advice), std::vector<std::string>{"malloc_retention"});
  EXPECT_EQ(advice[0].bytes, 8 * kMiB);
  EXPECT_EQ(advice[0].message,
            "the process's resident memory grew by 16.00 MiB over 10 steps, 8.00 MiB (50%) of "
            "it memory the program freed and malloc kept; the heap in use grew by 1.00 MiB.");
  EXPECT_NE(advice[0].fix.find("MALLOC_MMAP_THRESHOLD_=65536"), std::string::npos);
}

Report WithSteps(double data_ms, double other_ms) {
  Report r;
  for (int i = 0; i < 2; ++i) {
    StepSummary step;
    step.step = i;
    step.phases_ms.data = data_ms / 2;
    step.phases_ms.other = other_ms / 2;
    step.wall_ms = (data_ms + other_ms) / 2;
    r.phases_ms += step.phases_ms;
    r.steps.push_back(step);
  }
  return r;
}

TEST(AdviceTest, DataBoundFromThirtyPercentOfStepTime) {
  EXPECT_TRUE(FigureAdvice(WithSteps(29.9, 70.1)).empty());
  EXPECT_TRUE(FigureAdvice(Report()).empty());  // no steps, no phases
  const std::vector<Advice> advice = FigureAdvice(WithSteps(30, 70));
  ASSERT_EQ(Kinds(advice), std::vector<std::string>{"data_bound"});
  EXPECT_EQ(advice[0].ms, 30.0);
  EXPECT_EQ(advice[0].message,
            "the steps wait for their data: the data phase (the DataLoader's __next__) takes 30% "
            "of step time, 30.0 ms of 100.0 ms over 2 steps.");
  EXPECT_NE(advice[0].fix.find("num_workers"), std::string::npos);
  EXPECT_NE(advice[0].fix.find("pin_memory"), std::string::npos);
  Report r = WithSteps(30, 70);  // a PaddlePaddle program's
  r.events.push_back(testing::TimedRow("paddle.io.DataLoader#_DataLoaderIterMultiProcess.__next__",
                                       8, 30, 30, 1, 10));
  const std::vector<Advice> paddle = FigureAdvice(r);
  ASSERT_EQ(Kinds(paddle), std::vector<std::string>{"data_bound"});
  EXPECT_NE(paddle[0].fix.find("paddle.io.DataLoader(num_workers=N)"), std::string::npos);
  EXPECT_EQ(paddle[0].fix.find("pin_memory"), std::string::npos);  // Paddle's has none
}

ModuleSummary Module(const std::string& path, int depth, int64_t activation_bytes) {
  ModuleSummary m;
  m.path = path;
  m.depth = depth;
  m.memory["CPU"].activation_bytes = activation_bytes;
  return m;
}

EventRow Op(const std::string& name, double self_ms, double p50_ms) {
  EventRow row = testing::TimedRow(name, 100, self_ms, self_ms, p50_ms, p50_ms);
  row.p10_ms = row.p50_ms = row.p90_ms = row.p99_ms = p50_ms;
  return row;
}

TEST(AdviceTest, ActivationBoundFromHalfAPlacesPeakNamingTheModulesThatKeepTheMost) {
  Report r;
  r.places.push_back({"CPU", 10 * kMiB, 0, 0, 0, {}});
  r.places[0].categories_at_peak = {{"activation", 5 * kMiB - 1}, {"parameter", 5 * kMiB + 1}};
  r.events = {Op("nn.Module: Net", 1.0, 1.0)};  // a PyTorch program's
  r.modules = {Module("Net", 0, 5 * kMiB), Module("Net.features", 1, 4 * kMiB),
               Module("Net.features.0", 2, 3 * kMiB), Module("Net.head", 1, kMiB),
               Module("Net.pool", 1, 512 * 1024), Module("Net.drop", 1, 1024)};
  EXPECT_TRUE(FigureAdvice(r).empty());
  r.places[0].categories_at_peak["activation"] = 5 * kMiB;
  const std::vector<Advice> advice = FigureAdvice(r);
  ASSERT_EQ(Kinds(advice), std::vector<std::string>{"activation_bound"});
  EXPECT_EQ(advice[0].bytes, 5 * kMiB);
  EXPECT_EQ(advice[0].message, "activations are 5.00 MiB (50%) of the peak on CPU, 10.00 MiB.");
  // Not the root, and not a module inside one named.
  EXPECT_EQ(advice[0].fix,
            "Recompute activations in the backward pass instead of keeping them: activation "
            "checkpointing (torch.utils.checkpoint.checkpoint) around the modules that keep the "
            "most: Net.features (4.00 MiB), Net.head (1.00 MiB), Net.pool (512.00 KiB); or a "
            "smaller batch.");
  r.events = {Op("nn.Layer: Net", 1.0, 1.0)};  // a PaddlePaddle program's: Paddle's tool
  EXPECT_EQ(FigureAdvice(r)[0].fix,
            "Recompute activations in the backward pass instead of keeping them: activation "
            "checkpointing (paddle.distributed.fleet.utils.recompute) around the layers that "
            "keep the most: Net.features (4.00 MiB), Net.head (1.00 MiB), Net.pool (512.00 "
            "KiB); or a smaller batch.");
  r.events = {Op("conv2d", 1.0, 1.0)};  // a framework's of its own: no tool
  EXPECT_EQ(FigureAdvice(r)[0].fix.rfind("Recompute activations in the backward pass instead "
                                         "of keeping them: activation checkpointing around",
                                         0),
            0u);
}

TEST(AdviceTest, SmallOpsFromHalfOfSelfTimeInCallsUnderTwentyMicroseconds) {
  Report r;
  r.events = {Op("aten::add", 1.0, 0.010), Op("aten::mul", 0.5, 0.005),
              Op("aten::conv2d", 1.6, 0.020)};  // 20 µs is not under 20 µs
  EXPECT_TRUE(FigureAdvice(r).empty());          // 1.5 of 3.1 ms: under half
  r.events[2].self_ms = 1.5;                     // 1.5 of 3.0 ms: half
  std::vector<Advice> advice = FigureAdvice(r);
  ASSERT_EQ(Kinds(advice), std::vector<std::string>{"small_ops"});
  EXPECT_EQ(advice[0].ms, 1.5);
  EXPECT_EQ(advice[0].message,
            "50% of self time, 1.5 ms, is in 2 rows whose median call takes under 20 µs, most in "
            "aten::add (1.0 ms, median 10.0 µs), aten::mul (0.5 ms, median 5.0 µs): the time "
            "goes to calling ops, not to their work.");
  EXPECT_NE(advice[0].fix.find("torch.compile"), std::string::npos);
  // A PaddlePaddle program's ops: no torch tool, and no Paddle one, none helping there.
  for (EventRow& row : r.events) row.name = row.name.substr(6);
  advice = FigureAdvice(r);
  ASSERT_EQ(Kinds(advice), std::vector<std::string>{"small_ops"});
  EXPECT_EQ(advice[0].fix, "Give each call more work: larger batches, fewer and larger ops.");
  // Under a millisecond of such calls is not worth fusing.
  r.events = {Op("aten::add", 0.9, 0.010)};
  EXPECT_TRUE(FigureAdvice(r).empty());
}

TEST(AdviceTest, AStragglerIsNamedWithWhatItLostInAll) {
  StragglerEvidence e;
  e.input = "rank 1";
  e.ops = 2;
  e.steps = 3;
  e.of_steps = 4;
  e.behind_ms = 150;
  e.worst = "step 2: 70.3 ms against a median of 20.1 ms over 2 ranks";
  const Advice a = StragglerAdvice(e);
  EXPECT_EQ(a.kind, "straggler");
  EXPECT_EQ(a.ms, 150.0);
  EXPECT_FALSE(a.bytes);
  EXPECT_EQ(a.message,
            "rank 1 is behind the others in 3 of 4 steps and in 2 ops, by 150.0 ms in all; "
            "worst: step 2: 70.3 ms against a median of 20.1 ms over 2 ranks.");
  EXPECT_EQ(a.fix.rfind("Look at rank 1 first", 0), 0u);
}

}  // namespace
}  // namespace paddle_prof::internal
