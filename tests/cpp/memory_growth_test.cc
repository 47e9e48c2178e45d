// Memory that grows over the steps: the warning that names the events holding blocks
// from later and later steps, and the breakdown of the process's resident growth.
#include "memory_growth.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
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
  EXPECT_NE(growth.find("malloc heap in use"), std::string::npos);
  EXPECT_NE(growth.find("(of which tracked places 0 bytes)"), std::string::npos) << growth;
}

}  // namespace
}  // namespace paddle_prof
