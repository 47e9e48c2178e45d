// What a GPU tracer hands the collector when a window closes: the kernels, copies and
// memsets that ran on the GPU, and for each GPU API call the scope that was open on
// the launching thread. Plain data, no CUDA types: the report, the trace and the tests
// read it without the CUDA toolkit.
#ifndef PADDLE_PROF_SRC_GPU_ACTIVITY_H_
#define PADDLE_PROF_SRC_GPU_ACTIVITY_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace paddle_prof::internal {

struct GpuActivity {
  enum class Kind : uint8_t { kKernel, kMemcpy, kMemset };
  Kind kind = Kind::kKernel;
  const char* name = nullptr;  // the kernel's (interned), or "Memcpy HtoD", "Memset", ...
  uint64_t start = 0;          // ticks of paddle_prof's clock
  uint64_t end = 0;
  int device = 0;
  uint32_t stream = 0;
  uint32_t correlation = 0;  // the GPU API call that launched it
};

struct GpuCapture {
  std::vector<GpuActivity> activities;  // in no particular order
  // GPU API call (correlation id) -> the id of the scope open when it was made
  // (GpuScopeId). Calls made with no scope open are absent.
  std::unordered_map<uint32_t, uint64_t> scope_of_call;
  int64_t dropped = 0;  // records the tracer lost (its buffers were full)
};

// Drops the activities that ended before `end` (in the capture's own time unit), and
// the API calls that launched them: what a flight recorder no longer keeps.
inline void DropEndedBefore(GpuCapture* capture, uint64_t end) {
  auto& activities = capture->activities;
  size_t kept = 0;
  for (GpuActivity& a : activities) {
    if (a.end < end) {
      capture->scope_of_call.erase(a.correlation);
    } else {
      activities[kept++] = a;
    }
  }
  activities.resize(kept);
}

// The id a scope pushes as the external correlation id of the GPU work it launches:
// its thread's recorder and its serial, so the collector finds the call record.
constexpr int kGpuScopeSerialBits = 40;
inline uint64_t GpuScopeId(int thread_index, uint64_t serial) {
  return (static_cast<uint64_t>(thread_index) + 1) << kGpuScopeSerialBits | serial;
}

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_GPU_ACTIVITY_H_
