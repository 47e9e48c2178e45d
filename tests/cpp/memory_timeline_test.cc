// The memory timeline: which rows held memory at a place's high-water mark (at_peak),
// with the timeline and without it.
#include "memory_timeline.h"

#include <gtest/gtest.h>

#include "flags.h"
#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::Cpu;
using testing::MemoryTest;
using testing::PlaceOf;
using testing::Row;

TEST_F(MemoryTest, AtPeakNamesTheRowsLiveAtTheHighWaterMark) {
  EnableProfiler(ProfilerState::kCPU);
  void* weights;
  {
    RecordEvent e("load_weights");
    weights = cpu_.Allocate(300);
  }
  {
    RecordEvent e("matmul", "[8, 8]");
    void* workspace = cpu_.Allocate(500);
    cpu_.Free(workspace);
  }
  void* small = cpu_.Allocate(100);  // no event: after the peak, not part of it
  const Report report = StopProfiler();
  const PlaceSummary& place = PlaceOf(report, "CPU");
  EXPECT_EQ(place.peak_bytes - place.start_bytes, 800);
  ASSERT_GE(place.at_peak.size(), 2u);
  EXPECT_EQ(place.at_peak[0].name, "matmul");
  EXPECT_EQ(place.at_peak[0].tag, "[8, 8]");
  EXPECT_EQ(place.at_peak[0].bytes, 500);
  EXPECT_EQ(place.at_peak[1].name, "load_weights");
  EXPECT_EQ(place.at_peak[1].bytes, 300);
  EXPECT_EQ(Cpu(Row(report, "[no event]")).live_bytes, 100);
  cpu_.Free(weights);
  cpu_.Free(small);
}

TEST_F(MemoryTest, WithoutTheTimelineFiguresStayExactAndAtPeakIsLeftOut) {
  gflags::FlagSaver restore_flags;
  FLAGS_paddle_prof_memory_timeline = false;
  void* weights = cpu_.Allocate(4096);
  EnableProfiler(ProfilerState::kCPU);
  void* out = Conv2d();
  const Report report = StopProfiler();
  EXPECT_EQ(Cpu(Row(report, "conv2d")).peak_bytes, 1310720);
  EXPECT_EQ(Cpu(Row(report, "conv2d")).live_bytes, 262144);
  EXPECT_EQ(PlaceOf(report, "CPU").peak_bytes - PlaceOf(report, "CPU").start_bytes, 1310720);
  ASSERT_EQ(PlaceOf(report, "CPU").at_peak.size(), 1u);  // only what predates the window
  EXPECT_EQ(PlaceOf(report, "CPU").at_peak[0].name, "[before profiling]");
  cpu_.Free(out);
  cpu_.Free(weights);
}

}  // namespace
}  // namespace paddle_prof
