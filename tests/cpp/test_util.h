// Helpers shared by the C++ tests.
#ifndef PADDLE_PROF_TESTS_CPP_TEST_UTIL_H_
#define PADDLE_PROF_TESTS_CPP_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "live_block_table.h"
#include "paddle_prof/paddle_prof.h"

namespace paddle_prof::testing {

// Busy work of about `us` microseconds (sleeping would let the scope's thread off CPU,
// which is fine for wall time but makes self-time arithmetic noisier).
inline void Spin(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + std::sqrt(x + 1.0);
}

// The row for (name, tag[, thread]); fails the test and returns a dummy when absent.
inline const EventRow& Row(const Report& report, const std::string& name,
                           const std::optional<std::string>& tag = std::nullopt,
                           std::optional<int> thread = std::nullopt) {
  for (const EventRow& row : report.events) {
    if (row.name == name && row.tag == tag && (!thread || row.thread == thread)) return row;
  }
  ADD_FAILURE() << "no row " << name << (tag ? " [" + *tag + "]" : "");
  static const EventRow kMissing;
  return kMissing;
}

// A row with its times; the average is total / calls.
inline EventRow TimedRow(const std::string& name, int64_t calls, double total, double self,
                         double min, double max, double ratio = 0) {
  EventRow row;
  row.name = name;
  row.calls = calls;
  row.total_ms = total;
  row.self_ms = self;
  row.min_ms = min;
  row.max_ms = max;
  row.ave_ms = calls > 0 ? total / static_cast<double>(calls) : 0;
  row.ratio = ratio;
  return row;
}

// Memory figures: the peak, what was allocated and freed (bytes and count), what is live.
inline MemoryStats Memory(int64_t peak, int64_t alloc, int64_t allocs, int64_t freed,
                          int64_t frees, int64_t live = 0) {
  MemoryStats m;
  m.peak_bytes = peak;
  m.alloc_bytes = alloc;
  m.alloc_count = allocs;
  m.free_bytes = freed;
  m.free_count = frees;
  m.live_bytes = live;
  return m;
}

// A row's figures on `place`; all zero when the row never touched it.
inline const MemoryStats& MemoryOn(const EventRow& row, const std::string& place) {
  static const MemoryStats kNone;
  const auto it = row.memory.find(place);
  return it != row.memory.end() ? it->second : kNone;
}

// A row's figures on the CPU place.
inline const MemoryStats& Cpu(const EventRow& row) { return MemoryOn(row, "CPU"); }

// The window's figures for `place`; fails the test and returns a dummy when absent.
inline const PlaceSummary& PlaceOf(const Report& report, const std::string& place) {
  for (const PlaceSummary& p : report.places) {
    if (p.place == place) return p;
  }
  ADD_FAILURE() << "no place " << place;
  static const PlaceSummary kNone;
  return kNone;
}

// A file for `name` in the test's temporary folder, apart for each test process.
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "_" + std::to_string(getpid()) + ".json";
}

// Removes the trace at `path` and the summary and page beside it.
inline void RemoveProfileFiles(const std::string& path) {
  std::remove(path.c_str());
  std::remove((path + ".summary.json").c_str());
  std::remove((path + ".html").c_str());
}

inline nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return nlohmann::json::parse(in);  // throws, failing the test, on malformed JSON
}

inline bool HasWarning(const Report& report, const std::string& text) {
  for (const std::string& w : report.warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

inline bool HasNote(const Report& report, const std::string& text) {
  for (const std::string& n : report.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

constexpr int64_t kMiB = 1 << 20;

// Fake device addresses for RecordAlloc/RecordFree: never dereferenced.
inline const void* Address(uintptr_t n) {
  return reinterpret_cast<const void*>(0x100000000000 + n * 4096);
}

// A live block of `size` bytes owned by `name` and `tag`, allocated at `step`; the rest as
// when profiling is off.
inline internal::LiveBlock LiveBlockOf(int64_t size, const char* name = nullptr,
                                       const char* tag = nullptr, int step = 0) {
  internal::LiveBlock b;
  b.size = size;
  b.name = name;
  b.tag = tag;
  b.step = step;
  return b;
}

// Tests of tracked memory: a tracked CPU allocator, and an op that allocates in a known
// pattern.
class MemoryTest : public ::testing::Test {
 protected:
  // A conv: a 1 MiB im2col buffer freed before it returns, a 256 KiB output it returns.
  void* Conv2d() {
    RecordEvent e("conv2d");
    void* im2col = cpu_.Allocate(kMiB);
    void* output = cpu_.Allocate(256 * 1024);
    cpu_.Free(im2col);
    return output;
  }

  TrackingAllocator cpu_{CPUAllocator(), CPUPlace()};
};

// The sanitizer runtimes of GCC 12 take no lock around fork() for their own
// allocators (AddressSanitizer's heap, ThreadSanitizer's heap-block metadata): a child
// forked while another thread was inside malloc can wait forever on the runtime's own
// lock, whatever the profiler does. Tests that fork while other threads allocate skip
// under them; they run in the plain build.
#define PADDLE_PROF_SKIP_IF_ALLOCATOR_NOT_FORK_SAFE()                                     \
  do {                                                                                    \
    if (::paddle_prof::testing::kSanitizerAllocatorNotForkSafe) {                         \
      GTEST_SKIP() << "the sanitizer's allocator can deadlock a child forked mid-malloc"; \
    }                                                                                     \
  } while (0)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerAllocatorNotForkSafe = true;
#else
inline constexpr bool kSanitizerAllocatorNotForkSafe = false;
#endif

// Every row keeps min <= ave <= max, ave = total / calls, and the ratios add up to 1.
inline void ExpectTimeInvariants(const Report& report) {
  double ratio_sum = 0;
  for (const EventRow& row : report.events) {
    SCOPED_TRACE(row.name);
    EXPECT_LE(row.min_ms, row.ave_ms);
    EXPECT_LE(row.ave_ms, row.max_ms);
    EXPECT_LE(row.self_ms, row.total_ms);
    if (row.calls > 0) EXPECT_DOUBLE_EQ(row.ave_ms * static_cast<double>(row.calls), row.total_ms);
    ratio_sum += row.ratio;
  }
  if (!report.events.empty()) EXPECT_NEAR(ratio_sum, 1.0, 1e-12);
}

}  // namespace paddle_prof::testing

#endif  // PADDLE_PROF_TESTS_CPP_TEST_UTIL_H_
