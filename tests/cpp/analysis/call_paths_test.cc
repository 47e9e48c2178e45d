// Call paths: the events open on the allocating thread when a block was allocated, on
// every at_peak entry (split by path, exact bytes), rebuilt from the call records at
// report time; the table's short form.
#include "call_paths.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "paddle_prof/paddle_prof.h"
#include "row_label.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::MemoryTest;
using testing::PlaceOf;
using Path = std::vector<std::string>;

// The at_peak entry of `name` on `path`, or nullptr.
const RowBytes* Entry(const PlaceSummary& place, const std::string& name, const Path& path) {
  for (const RowBytes& r : place.at_peak) {
    if (r.name == name && r.path == path) return &r;
  }
  return nullptr;
}

TEST_F(MemoryTest, AtPeakEntriesAreSplitByTheCallPathThatAllocated) {
  EnableProfiler(ProfilerState::kCPU);
  std::vector<void*> held;
  {
    RecordEvent step("train_step");
    {
      RecordEvent forward("forward");
      RecordEvent empty("aten::empty");
      held.push_back(cpu_.Allocate(1000));
    }
    {
      RecordEvent backward("ConvolutionBackward0");
      {
        RecordEvent empty("aten::empty");
        held.push_back(cpu_.Allocate(3000));
        void* freed = cpu_.Allocate(500);  // freed before the peak: in no entry
        cpu_.Free(freed);
      }
      RecordEvent empty("aten::empty");
      held.push_back(cpu_.Allocate(2000));
    }
  }
  const Report r = StopProfiler(EventSortingKey::kTotal);
  const PlaceSummary& cpu = PlaceOf(r, "CPU");
  ASSERT_EQ(cpu.at_peak.size(), 2u);
  const RowBytes* backward =
      Entry(cpu, "aten::empty", {"train_step", "ConvolutionBackward0", "aten::empty"});
  const RowBytes* forward = Entry(cpu, "aten::empty", {"train_step", "forward", "aten::empty"});
  ASSERT_NE(backward, nullptr);
  ASSERT_NE(forward, nullptr);
  EXPECT_EQ(backward->bytes, 5000);  // two calls on one path, one entry
  EXPECT_EQ(forward->bytes, 1000);
  EXPECT_EQ(&cpu.at_peak[0], backward);  // largest first
  EXPECT_NE(r.Table(false, 0, 0).find("at the peak held by ConvolutionBackward0 > aten::empty 4.88 KiB, "
                           "forward > aten::empty 1000 B"),
            std::string::npos)
      << r.Table();
  for (void* p : held) cpu_.Free(p);
}

TEST_F(MemoryTest, AFreeOnAnotherPathLowersThePathThatAllocated) {
  EnableProfiler(ProfilerState::kCPU);
  void* a;
  void* b;
  {
    RecordEvent outer("producer");
    RecordEvent alloc("alloc");
    a = cpu_.Allocate(400);
    b = cpu_.Allocate(600);
  }
  {
    RecordEvent other("consumer");
    cpu_.Free(a);  // charged back to producer > alloc, not to consumer's path
  }
  void* c;
  {
    RecordEvent alloc("alloc");
    c = cpu_.Allocate(900);  // the peak: 600 + 900
  }
  const Report r = StopProfiler(EventSortingKey::kTotal);
  const PlaceSummary& cpu = PlaceOf(r, "CPU");
  EXPECT_EQ(cpu.peak_bytes, 1500);
  ASSERT_EQ(cpu.at_peak.size(), 2u);
  EXPECT_EQ(cpu.at_peak[0].path, (Path{"alloc"}));
  EXPECT_EQ(cpu.at_peak[0].bytes, 900);
  EXPECT_EQ(cpu.at_peak[1].path, (Path{"producer", "alloc"}));
  EXPECT_EQ(cpu.at_peak[1].bytes, 600);
  cpu_.Free(b);
  cpu_.Free(c);
}

TEST_F(MemoryTest, APathInsideAScopeStillOpenAtTheStopStartsWithIt) {
  EnableProfiler(ProfilerState::kCPU);
  void* p;
  Report r;
  {
    RecordEvent open("still_open");
    {
      RecordEvent inner("inner");
      p = cpu_.Allocate(100);
    }
    r = StopProfiler(EventSortingKey::kTotal);
  }
  const PlaceSummary& cpu = PlaceOf(r, "CPU");
  ASSERT_EQ(cpu.at_peak.size(), 1u);
  EXPECT_EQ(cpu.at_peak[0].path, (Path{"still_open", "inner"}));
  cpu_.Free(p);
}

TEST_F(MemoryTest, PathsAreThoseOfTheAllocatingThread) {
  EnableProfiler(ProfilerState::kCPU);
  void* p;
  {
    RecordEvent main_scope("main_scope");
    std::thread([&] {
      RecordEvent worker("worker");
      RecordEvent op("op");
      p = cpu_.Allocate(700);
    }).join();
  }
  const Report r = StopProfiler(EventSortingKey::kTotal);
  const PlaceSummary& cpu = PlaceOf(r, "CPU");
  ASSERT_EQ(cpu.at_peak.size(), 1u);
  EXPECT_EQ(cpu.at_peak[0].path, (Path{"worker", "op"}));
  EXPECT_EQ(cpu.at_peak[0].bytes, 700);
  cpu_.Free(p);
}

TEST_F(MemoryTest, PathsOfBlocksFarApartInALongWindowAreFound) {
  // The calls are read only as far as a lookup needs, a thousand and more at a time.
  EnableProfiler(ProfilerState::kCPU);
  void* early = nullptr;
  void* late = nullptr;
  for (int i = 0; i < 5000; ++i) {
    RecordEvent step(i < 4000 ? "step" : "late");
    RecordEvent op(i < 4000 ? "op" : "inner");
    if (i == 1500) early = cpu_.Allocate(1000);
    if (i == 4900) late = cpu_.Allocate(2000);
    cpu_.Free(cpu_.Allocate(10));
  }
  const Report r = StopProfiler(EventSortingKey::kTotal);
  const PlaceSummary& cpu = PlaceOf(r, "CPU");
  EXPECT_EQ(cpu.peak_bytes, 3010);
  ASSERT_EQ(cpu.at_peak.size(), 2u);
  EXPECT_EQ(cpu.at_peak[0].path, (Path{"late", "inner"}));
  EXPECT_EQ(cpu.at_peak[0].bytes, 2010);  // with the small block the peak's call holds
  EXPECT_EQ(cpu.at_peak[1].path, (Path{"step", "op"}));
  EXPECT_EQ(cpu.at_peak[1].bytes, 1000);
  cpu_.Free(early);
  cpu_.Free(late);
}

TEST(ShortPathTest, TheLastEventAfterTheInnermostOneOfAnotherNamespace) {
  using internal::ShortPath;
  EXPECT_EQ(ShortPath({}), "");
  EXPECT_EQ(ShortPath({"aten::empty"}), "aten::empty");
  EXPECT_EQ(ShortPath({"autograd::engine::evaluate_function: ConvolutionBackward0",
                       "ConvolutionBackward0", "aten::convolution_backward", "aten::empty"}),
            "ConvolutionBackward0 > aten::empty");
  EXPECT_EQ(ShortPath({"aten::conv2d", "aten::convolution", "aten::empty"}),
            "aten::convolution > aten::empty");
  EXPECT_EQ(ShortPath({"train", "forward", "matmul"}), "forward > matmul");
  EXPECT_EQ(internal::JoinPath({"a", "b::c"}), "a > b::c");
}

}  // namespace
}  // namespace paddle_prof
