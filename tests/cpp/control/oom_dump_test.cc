// The out-of-memory dump: an allocation that fails while a window is open writes a
// snapshot that names the request, the event, its path and the place's holders; the
// failure then reaches the caller unchanged.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <new>
#include <string>

#include "flags.h"
#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::HasWarning;
using testing::Row;

constexpr size_t kHuge = size_t{1} << 44;  // 16 TiB

// Serves up to a limit; past it fails as `throws` says: nullptr, or std::bad_alloc.
class LimitedAllocator final : public Allocator {
 public:
  explicit LimitedAllocator(bool throws) : throws_(throws) {}
  void* Allocate(size_t bytes) override {
    if (bytes < kHuge) return CPUAllocator()->Allocate(bytes);
    if (throws_) throw std::bad_alloc();
    return nullptr;
  }
  void Free(void* ptr) override { CPUAllocator()->Free(ptr); }

 private:
  bool throws_;
};

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

void Remove(const std::string& path) { testing::RemoveProfileFiles(path); }

class OomDumpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FLAGS_paddle_prof_oom_path = path_;
    Remove(path_);
  }
  void TearDown() override {
    FLAGS_paddle_prof_oom_path = "";
    Remove(path_);
  }
  const std::string path_ = testing::TempPath("oom");
};

TEST_F(OomDumpTest, AFailingBaseWritesTheDumpAndTheCallerGetsItsNullptr) {
  TrackingAllocator cpu(std::make_shared<LimitedAllocator>(false), CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  void* held;
  void* failed;
  {
    RecordEvent step("train_step");
    RecordEvent conv("aten::conv2d");
    held = cpu.Allocate(1000);
    RecordEvent empty("aten::empty");
    failed = cpu.Allocate(kHuge);
  }
  EXPECT_EQ(failed, nullptr);
  const nlohmann::json dump = testing::ReadJson(path_ + ".summary.json");
  EXPECT_TRUE(Exists(path_));  // the trace beside it
  const nlohmann::json& oom = dump.at("oom");
  EXPECT_EQ(oom.at("place"), "CPU");
  EXPECT_EQ(oom.at("requested_bytes"), static_cast<int64_t>(kHuge));
  EXPECT_EQ(oom.at("event"), "aten::empty");
  EXPECT_EQ(oom.at("path"), nlohmann::json({"train_step", "aten::conv2d", "aten::empty"}));
  EXPECT_GE(oom.at("live_bytes").get<int64_t>(), 1000);
  const std::string warning = dump.at("warnings").at(0);
  EXPECT_EQ(warning.rfind("out of memory on CPU asking 17,592,186,044,416 bytes in aten::empty "
                          "(train_step > aten::conv2d > aten::empty); the place held ",
                          0),
            0u)
      << warning;
  // Its holders, with the path of the scopes still open around them.
  EXPECT_NE(warning.find(": aten::conv2d 1,000 bytes (train_step > aten::conv2d)."),
            std::string::npos)
      << warning;
  ASSERT_EQ(oom.at("holders").size(), 1u) << oom;
  EXPECT_EQ(oom.at("holders")[0].at("name"), "aten::conv2d");
  EXPECT_EQ(oom.at("holders")[0].at("bytes"), 1000);
  EXPECT_EQ(oom.at("holders")[0].at("path"), nlohmann::json({"train_step", "aten::conv2d"}));
  // The calls open at the failure are left out, as in any snapshot; the block they hold
  // is charged to its row.
  ASSERT_EQ(dump.at("events").size(), 1u) << dump.at("events");
  EXPECT_EQ(dump.at("events").at(0).at("name"), "aten::conv2d");
  EXPECT_EQ(dump.at("events").at(0).at("calls"), 0);
  EXPECT_EQ(dump.at("events").at(0).at("memory").at("CPU").at("live_bytes"), 1000);

  // One dump per window: a later failure writes nothing and is counted.
  Remove(path_);
  EXPECT_EQ(cpu.Allocate(kHuge), nullptr);
  EXPECT_FALSE(Exists(path_ + ".summary.json"));
  cpu.Free(held);
  const Report report = StopProfiler();
  EXPECT_FALSE(report.oom.has_value());
  EXPECT_TRUE(HasWarning(report,
                         "1 allocation failure(s) after the window's out-of-memory dump: one "
                         "dump is written per window."));
  // The next window dumps again.
  EnableProfiler(ProfilerState::kCPU);
  EXPECT_EQ(cpu.Allocate(kHuge), nullptr);
  StopProfiler();
  EXPECT_EQ(testing::ReadJson(path_ + ".summary.json").at("oom").at("event"), "[no event]");
}

TEST_F(OomDumpTest, AnExceptionOfTheBaseReachesTheCallerAfterTheDump) {
  TrackingAllocator cpu(std::make_shared<LimitedAllocator>(true), CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent op("op");
    EXPECT_THROW(cpu.Allocate(kHuge), std::bad_alloc);
  }
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "op").calls, 1);
  const nlohmann::json dump = testing::ReadJson(path_ + ".summary.json");
  EXPECT_EQ(dump.at("oom").at("path"), nlohmann::json({"op"}));
  EXPECT_NE(dump.at("warnings")
                .at(0)
                .get<std::string>()
                .find("; the place held 0 bytes, none of it allocated by an event of this window."),
            std::string::npos)
      << dump.at("warnings");
}

// A size no allocator can serve (SIZE_MAX, above INT64_MAX) is named as asked.
TEST_F(OomDumpTest, ARequestAboveINT64MAXIsNamedAsAsked) {
  TrackingAllocator cpu(CPUAllocator(), CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent empty("aten::empty");
    EXPECT_EQ(cpu.Allocate(SIZE_MAX), nullptr);
  }
  const nlohmann::json dump = testing::ReadJson(path_ + ".summary.json");
  EXPECT_EQ(dump.at("oom").at("requested_bytes").get<uint64_t>(), uint64_t{SIZE_MAX});
  EXPECT_EQ(dump.at("warnings").at(0).get<std::string>().rfind(
                "out of memory on CPU asking 18,446,744,073,709,551,615 bytes in aten::empty", 0),
            0u)
      << dump.at("warnings").at(0);
  StopProfiler();
}

TEST_F(OomDumpTest, NoWindowNoDump) {
  TrackingAllocator cpu(std::make_shared<LimitedAllocator>(false), CPUPlace());
  EXPECT_EQ(cpu.Allocate(kHuge), nullptr);
  EXPECT_FALSE(Exists(path_ + ".summary.json"));
  EnableProfiler(ProfilerState::kCPU);
  const Report report = StopProfiler();
  EXPECT_FALSE(report.oom.has_value());
  EXPECT_EQ(nlohmann::json::parse(report.ToJson()).at("oom"), nullptr);
}

// A reset keeps the profiler's one dump and its count: it is the same profiler.
TEST_F(OomDumpTest, AResetNeitherAllowsASecondDumpNorLosesTheCount) {
  TrackingAllocator cpu(std::make_shared<LimitedAllocator>(false), CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  EXPECT_EQ(cpu.Allocate(kHuge), nullptr);
  ASSERT_TRUE(Exists(path_ + ".summary.json"));
  Remove(path_);
  ResetProfiler();
  EXPECT_EQ(cpu.Allocate(kHuge), nullptr);
  EXPECT_FALSE(Exists(path_ + ".summary.json"));
  EXPECT_TRUE(HasWarning(StopProfiler(),
                         "1 allocation failure(s) after the window's out-of-memory dump: one "
                         "dump is written per window."));
}

}  // namespace
}  // namespace paddle_prof
