// Memory that grows over the steps: the warning that names the events holding blocks
// from later and later steps, and the breakdown of the process's resident growth; end to
// end, and on hand-made step figures.
#include "memory_growth.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::Cpu;
using testing::HasWarning;
using testing::MemoryTest;
using testing::Row;

// One cached block per new input shape, as oneDNN caches a primitive per shape.
void RunCacheSteps(TrackingAllocator* cpu, bool evict_each_step, std::vector<void*>* cache) {
  for (int step = 0; step < 10; ++step) {
    {
      RecordEvent forward("forward");
      RecordEvent e("conv2d", "[1, 3, " + std::to_string(32 + step) + ", 32]");
      cache->push_back(cpu->Allocate(64 * 1024));
      void* scratch = cpu->Allocate(128 * 1024);
      cpu->Free(scratch);
    }
    {
      RecordEvent e("relu");
      void* out = cpu->Allocate(4096);
      cpu->Free(out);
    }
    if (evict_each_step) {
      cpu->Free(cache->back());
      cache->pop_back();
    }
    MarkStep();
  }
}

TEST_F(MemoryTest, GrowingCacheIsNamedWithItsTags) {
  std::vector<void*> cache;
  EnableProfiler(ProfilerState::kCPU);
  RunCacheSteps(&cpu_, /*evict_each_step=*/false, &cache);
  const Report report = StopProfiler(EventSortingKey::kLiveMemory);
  ASSERT_EQ(report.steps.size(), 10u);
  EXPECT_EQ(report.steps[9].end_bytes.at("CPU") - report.steps[0].end_bytes.at("CPU"),
            9 * 64 * 1024);
  EXPECT_EQ(report.steps[0].peak_bytes.at("CPU") - report.steps[0].end_bytes.at("CPU"), 128 * 1024);
  std::string growth;
  for (const std::string& w : report.warnings) {
    if (w.find("live memory grew") != std::string::npos) growth = w;
  }
  ASSERT_FALSE(growth.empty()) << report.Table();
  EXPECT_NE(growth.find("held by: conv2d (655,360 bytes from 10 steps, 10 tags:"),
            std::string::npos)
      << growth;
  EXPECT_NE(growth.find("[1, 3, 41, 32] 65,536 bytes"), std::string::npos) << growth;
  EXPECT_NE(growth.find(", +6 more; path: forward > conv2d)"), std::string::npos) << growth;
  EXPECT_EQ(growth.find("relu"), std::string::npos);
  // Each shape is its own row, holding its own block.
  EXPECT_EQ(Cpu(Row(report, "conv2d", "[1, 3, 35, 32]")).live_bytes, 64 * 1024);
  EXPECT_EQ(Cpu(Row(report, "conv2d", "[1, 3, 35, 32]")).peak_bytes, 192 * 1024);
  EXPECT_EQ(report.events.front().name, "conv2d");  // sorted by live memory
  for (void* p : cache) cpu_.Free(p);
}

TEST_F(MemoryTest, FlatRunGivesNoGrowthWarning) {
  std::vector<void*> cache;
  EnableProfiler(ProfilerState::kCPU);
  RunCacheSteps(&cpu_, /*evict_each_step=*/true, &cache);
  const Report report = StopProfiler();
  EXPECT_FALSE(HasWarning(report, "live memory grew")) << report.Table();
  EXPECT_FALSE(HasWarning(report, "resident memory grew")) << report.Table();
  EXPECT_EQ(report.steps.size(), 10u);
}

TEST_F(MemoryTest, ProcessGrowthIsBrokenIntoItsParts) {
  std::vector<void*> untracked;  // plain malloc: seen only in the process figures
  EnableProfiler(ProfilerState::kCPU);
  for (int step = 0; step < 10; ++step) {
    for (int i = 0; i < 16; ++i) {
      untracked.push_back(std::malloc(64 * 1024));
      std::memset(untracked.back(), 1, 64 * 1024);  // resident, not just reserved
    }
    MarkStep();
  }
  const Report report = StopProfiler();
  ASSERT_EQ(report.steps.size(), 10u);
  for (void* p : untracked) std::free(p);
  if (report.steps[0].process.count("heap_in_use_bytes") == 0) {
    GTEST_SKIP() << "malloc is not glibc's here (a sanitizer's): no heap figures";
  }
  for (const StepSummary& s : report.steps) {
    EXPECT_GT(s.process.at("rss_bytes"), 0);
    EXPECT_GT(s.process.at("heap_in_use_bytes"), 0);
    EXPECT_TRUE(s.process.count("heap_free_bytes") && s.process.count("malloc_mmap_bytes"));
  }
  const int64_t heap_growth = report.steps[9].process.at("heap_in_use_bytes") -
                              report.steps[0].process.at("heap_in_use_bytes");
  EXPECT_GE(heap_growth, 9 * 16 * 64 * 1024);
  std::string growth;
  for (const std::string& w : report.warnings) {
    if (w.find("resident memory grew over 10 steps") != std::string::npos) growth = w;
  }
  ASSERT_FALSE(growth.empty()) << report.Table();
  EXPECT_NE(growth.find("malloc's heap in use"), std::string::npos);
  EXPECT_NE(growth.find("the tracked places' live bytes (in malloc's heap or its mappings) by 0 "
                        "bytes."),
            std::string::npos)
      << growth;
}

}  // namespace

namespace internal {
namespace {

using testing::LiveBlockOf;
using Figures = std::map<std::string, int64_t>;

// A collection whose steps ended with these live bytes per place and process figures.
Collection Steps(const std::vector<Figures>& end_bytes, const std::vector<Figures>& process = {}) {
  Collection c;
  for (size_t i = 0; i < end_bytes.size(); ++i) {
    StepMark step;
    step.tick = i + 1;
    step.end_bytes = end_bytes[i];
    if (i < process.size()) step.process = process[i];
    c.steps.push_back(step);
  }
  return c;
}

TEST(MemoryGrowthWarningTest, NamesTheEventsHoldingBlocksFromSeveralSteps) {
  // Live bytes at step ends, summed over the places: 0, 8192, 16384.
  Collection c = Steps({{{"CPU", 0}, {"CUDA:0", 0}},
                        {{"CPU", 4096}, {"CUDA:0", 4096}},
                        {{"CPU", 8192}, {"CUDA:0", 8192}}});
  c.live_blocks = {LiveBlockOf(100, "small"), LiveBlockOf(4096, "cache", "[1]", 1),
                   LiveBlockOf(4096, "cache", "[2]", 2), LiveBlockOf(8192, "one_step", nullptr, 2),
                   LiveBlockOf(200, "small", nullptr, 2)};
  EXPECT_EQ(FindMemoryGrowth(c).warning,
            "live memory grew over 3 steps, from 0 bytes to 16,384 bytes at step ends; "
            "still-live blocks allocated in later and later steps are held by: cache (8,192 "
            "bytes from 2 steps, 2 tags: [2] 4,096 bytes, [1] 4,096 bytes); small (300 bytes "
            "from 2 steps).");
}

TEST(MemoryGrowthWarningTest, ARiseOf4096BytesOverThreeStepsIsTheLeastThatWarns) {
  const auto growth = [](int64_t last) {
    Collection c = Steps({{{"CPU", 1000}}, {{"CPU", 3000}}, {{"CPU", last}}});
    c.live_blocks = {LiveBlockOf(2000, "cache", nullptr, 1),
                     LiveBlockOf(last - 3000, "cache", nullptr, 2)};
    return FindMemoryGrowth(c).warning;
  };
  EXPECT_EQ(growth(5095), "");
  EXPECT_EQ(growth(5096),
            "live memory grew over 3 steps, from 1,000 bytes to 5,096 bytes at step ends; "
            "still-live blocks allocated in later and later steps are held by: cache (4,096 "
            "bytes from 2 steps).");
  EXPECT_EQ(FindMemoryGrowth(Steps({{{"CPU", 0}}, {{"CPU", 1 << 20}}})).warning, "");
}

TEST(MemoryGrowthWarningTest, WhatWasMadeOnceIsNoGrowth) {
  // A parameter added at the second step, an optimizer's state made at its first step
  // (the third): each still live, each from one step; and a rise freed before the stop.
  Collection once = Steps({{{"CPU", 0}}, {{"CPU", 8192}}, {{"CPU", 40960}}, {{"CPU", 40960}}});
  once.live_blocks = {LiveBlockOf(8192, "aten::empty", nullptr, 1),
                      LiveBlockOf(32768, "aten::zeros_like", nullptr, 2)};
  EXPECT_EQ(FindMemoryGrowth(once).warning, "");
  EXPECT_EQ(FindMemoryGrowth(Steps({{{"CPU", 0}}, {{"CPU", 8192}}, {{"CPU", 16384}}})).warning, "");
}

TEST(MemoryGrowthWarningTest, StepsThatMostlyFallAreNoTrend) {
  // The end is 4096 above the start, but five of the six changes go down.
  EXPECT_EQ(FindMemoryGrowth(Steps({{{"CPU", 0}},
                                       {{"CPU", 9000}},
                                       {{"CPU", 8000}},
                                       {{"CPU", 7000}},
                                       {{"CPU", 6000}},
                                       {{"CPU", 5000}},
                                       {{"CPU", 4096}}}))
                .warning,
            "");
}

TEST(MemoryGrowthWarningTest, GrowthWarningsAreKnownBehindAMergedInputsName) {
  EXPECT_TRUE(IsGrowthWarning("live memory grew over 3 steps, from 0 bytes"));
  EXPECT_TRUE(IsGrowthWarning("rank 1: the process's resident memory grew over 3 steps by 1"));
  EXPECT_TRUE(IsGrowthWarning("rank 0: pid 7: live memory grew over 3 steps"));
  EXPECT_FALSE(IsGrowthWarning("rank 1 is a straggler in live memory grew over"));
  EXPECT_FALSE(IsGrowthWarning("3 scope(s) ended on another thread"));
}

TEST(ProcessGrowthWarningTest, BreaksTheResidentGrowthIntoItsParts) {
  const std::vector<Figures> ends = {{{"CPU", 0}}, {{"CPU", 16384}}, {{"CPU", 40960}}};
  std::vector<Figures> process = {{{"rss_bytes", 10 << 20},
                                   {"heap_in_use_bytes", 4 << 20},
                                   {"heap_free_bytes", 0},
                                   {"malloc_mmap_bytes", 0}},
                                  {{"rss_bytes", 11 << 20},
                                   {"heap_in_use_bytes", 9 << 19},
                                   {"heap_free_bytes", 0},
                                   {"malloc_mmap_bytes", 0}},
                                  {{"rss_bytes", 12 << 20},
                                   {"heap_in_use_bytes", 11 << 19},
                                   {"heap_free_bytes", 262144},
                                   {"malloc_mmap_bytes", 65536}}};
  EXPECT_EQ(FindProcessGrowth(Steps(ends, process)).warning,
            "the process's resident memory grew over 3 steps: its floor (the least of the last "
            "third of the steps less that of the first) rose by 2,097,152 bytes, from 10,485,760 "
            "bytes at the first step's end to 12,582,912 bytes at the last's; the floors of "
            "malloc's heap in use rose by 1,572,864 bytes, freed but kept by malloc 262,144 "
            "bytes, malloc's own mappings 65,536 bytes, the rest (196,608 bytes) outside malloc: "
            "code, stacks, other mappings; the tracked places' live bytes (in malloc's heap or "
            "its mappings) by 40,960 bytes.");
  // Under the preload library, the program's own mappings are a part of their own.
  const int64_t reserved[] = {0, 1 << 19, 1 << 20}, resident[] = {0, 4096, 32768};
  for (size_t i = 0; i < process.size(); ++i) {
    process[i]["mmap_reserved_bytes"] = reserved[i];
    process[i]["mmap_resident_bytes"] = resident[i];
  }
  EXPECT_EQ(FindProcessGrowth(Steps(ends, process)).warning,
            "the process's resident memory grew over 3 steps: its floor (the least of the last "
            "third of the steps less that of the first) rose by 2,097,152 bytes, from 10,485,760 "
            "bytes at the first step's end to 12,582,912 bytes at the last's; the floors of "
            "malloc's heap in use rose by 1,572,864 bytes, freed but kept by malloc 262,144 "
            "bytes, malloc's own mappings 65,536 bytes, the program's anonymous mappings 32,768 "
            "bytes resident of 1,048,576 bytes reserved, the rest (163,840 bytes) outside malloc: "
            "code, stacks, other mappings; the tracked places' live bytes (in malloc's heap or "
            "its mappings) by 40,960 bytes.");
}

TEST(ProcessGrowthWarningTest, ARiseNoWiderThanTheSwingsIsNotGrowth) {
  // A flat loop's resident memory (measured, in MiB), swinging as malloc trims its free
  // lists: its floor happened to land 2 MiB higher in the last third.
  const int64_t mib = 1 << 20;
  const std::vector<int64_t> rss = {264, 266, 270, 265, 263, 265, 266, 270, 266, 266};
  std::vector<Figures> process;
  for (const int64_t r : rss) {
    process.push_back({{"rss_bytes", r * mib}, {"heap_in_use_bytes", 71 * mib},
                       {"heap_free_bytes", (r - 258) * mib}, {"malloc_mmap_bytes", 0}});
  }
  const std::vector<Figures> ends(rss.size(), Figures{{"CPU", 0}});
  EXPECT_EQ(FindProcessGrowth(Steps(ends, process)).warning, "");
  // The same swings on a rise of 3 MiB a step are growth.
  for (size_t i = 0; i < process.size(); ++i) {
    process[i]["rss_bytes"] += static_cast<int64_t>(3 * i) * mib;
  }
  EXPECT_NE(FindProcessGrowth(Steps(ends, process)).warning, "");
  // So is a steady rise of 1 MiB a step with one spike of 20 MiB: a spike is no swing.
  for (size_t i = 0; i < process.size(); ++i) {
    process[i]["rss_bytes"] = (100 + static_cast<int64_t>(i) + (i == 5 ? 20 : 0)) * mib;
  }
  EXPECT_NE(FindProcessGrowth(Steps(ends, process)).warning, "");
}

TEST(ProcessGrowthWarningTest, UnderOneMiBOrWithoutHeapFiguresNothingIsSaid) {
  auto process = [](int64_t last_rss, bool heap_figures) {
    std::vector<Figures> steps;
    for (const int64_t rss : {int64_t{0}, int64_t{1} << 19, last_rss}) {
      steps.push_back({{"rss_bytes", rss}});
      if (heap_figures) steps.back()["heap_in_use_bytes"] = 0;
    }
    return steps;
  };
  const std::vector<Figures> ends(3, Figures{{"CPU", 0}});
  EXPECT_EQ(FindProcessGrowth(Steps(ends, process((1 << 20) - 1, true))).warning, "");
  EXPECT_NE(FindProcessGrowth(Steps(ends, process(1 << 20, true))).warning, "");
  EXPECT_EQ(FindProcessGrowth(Steps(ends, process(8 << 20, false))).warning, "");
}

}  // namespace
}  // namespace internal
}  // namespace paddle_prof
