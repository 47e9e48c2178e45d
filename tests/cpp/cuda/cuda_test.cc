// CUDA builds: CUPTI records read from synthetic buffers, the errors where no GPU can be
// profiled, and (on a machine with an NVIDIA GPU; skipped elsewhere) kernels and device
// memory charged to the scopes that launched and allocated them.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "cupti_records.h"
#include "paddle_prof/paddle_prof.h"
#include "test_util.h"
#ifdef PADDLE_PROF_TEST_KERNELS
#include "cuda_kernels.h"
#endif

namespace paddle_prof {
namespace {

using internal::CuptiRecordReader;
using internal::GpuActivity;
using internal::GpuCapture;
using testing::Row;

int DeviceCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

#define SKIP_WITHOUT_GPU() \
  if (DeviceCount() == 0) GTEST_SKIP() << "no usable CUDA device on this machine"

TEST(CuptiRecords, KernelsCopiesMemsetsAndCorrelationsAreRead) {
  GpuCapture capture;
  CuptiRecordReader reader(&capture);

  CUpti_ActivityKernel10 kernel;
  std::memset(&kernel, 0, sizeof(kernel));
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.start = 1000;
  kernel.end = 1500;
  kernel.deviceId = 1;
  kernel.streamId = 7;
  kernel.correlationId = 42;
  std::string name = "sgemm_128x64";
  kernel.name = name.c_str();
  reader.Read(reinterpret_cast<const CUpti_Activity&>(kernel));
  reader.Read(reinterpret_cast<const CUpti_Activity&>(kernel));  // same name: one pointer
  name = "overwritten";  // CUPTI's string may go away: the reader keeps a copy

  CUpti_ActivityMemcpy6 copy;
  std::memset(&copy, 0, sizeof(copy));
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.start = 2000;
  copy.end = 2100;
  copy.streamId = 8;
  copy.correlationId = 43;
  reader.Read(reinterpret_cast<const CUpti_Activity&>(copy));

  CUpti_ActivityMemset4 memset_record;
  std::memset(&memset_record, 0, sizeof(memset_record));
  memset_record.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  memset_record.start = 3000;
  memset_record.end = 3010;
  memset_record.correlationId = 44;
  reader.Read(reinterpret_cast<const CUpti_Activity&>(memset_record));

  CUpti_ActivityExternalCorrelation external;
  std::memset(&external, 0, sizeof(external));
  external.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  external.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
  external.externalId = 0x1000000002a;
  external.correlationId = 42;
  reader.Read(reinterpret_cast<const CUpti_Activity&>(external));
  // Kineto's kinds, for the same and another call: not ours, ignored.
  external.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  external.externalId = 7;
  reader.Read(reinterpret_cast<const CUpti_Activity&>(external));
  external.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
  external.correlationId = 43;
  reader.Read(reinterpret_cast<const CUpti_Activity&>(external));

  CUpti_ActivityAPI api;  // carries correlations only: not an activity of its own
  std::memset(&api, 0, sizeof(api));
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  reader.Read(reinterpret_cast<const CUpti_Activity&>(api));

  ASSERT_EQ(capture.activities.size(), 4u);
  const GpuActivity& k = capture.activities[0];
  EXPECT_EQ(k.kind, GpuActivity::Kind::kKernel);
  EXPECT_STREQ(k.name, "sgemm_128x64");
  EXPECT_EQ(k.name, capture.activities[1].name);
  EXPECT_EQ(k.start, 1000u);
  EXPECT_EQ(k.end, 1500u);
  EXPECT_EQ(k.device, 1);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.correlation, 42u);
  EXPECT_EQ(capture.activities[2].kind, GpuActivity::Kind::kMemcpy);
  EXPECT_STREQ(capture.activities[2].name, "Memcpy HtoD");
  EXPECT_EQ(capture.activities[3].kind, GpuActivity::Kind::kMemset);
  EXPECT_EQ(capture.activities[3].end - capture.activities[3].start, 10u);
  ASSERT_EQ(capture.scope_of_call.size(), 1u);
  EXPECT_EQ(capture.scope_of_call.at(42), 0x1000000002au);
}

TEST(CudaProfiler, WithoutAGpuTheGpuStatesSayWhy) {
  if (DeviceCount() > 0) GTEST_SKIP() << "this machine has a GPU";
  for (ProfilerState state : {ProfilerState::kCUDA, ProfilerState::kAll}) {
    try {
      EnableProfiler(state);
      FAIL() << "EnableProfiler did not throw";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cannot profile the GPU: "), std::string::npos) << what;
      EXPECT_TRUE(what.find("driver") != std::string::npos ||
                  what.find("device") != std::string::npos)
          << what;
    }
    EXPECT_FALSE(IsProfilerEnabled());
  }
  EXPECT_THROW(CUDAAllocator(0), std::runtime_error);
  EnableProfiler(ProfilerState::kCPU);  // the CPU side is untouched
  { RecordEvent op("op"); }
  EXPECT_EQ(StopProfiler().events.size(), 1u);
}

TEST(CudaProfiler, CudaMallocOf64MiBReadsExactly) {
  SKIP_WITHOUT_GPU();
  TrackingAllocator gpu(CUDAAllocator(0), CUDAPlace(0));
  EnableProfiler(ProfilerState::kAll);
  void* block = nullptr;
  {
    RecordEvent alloc("alloc_64MiB");
    block = gpu.Allocate(size_t{64} << 20);
  }
  const Report r = StopProfiler();
  gpu.Free(block);
  const MemoryStats& m = Row(r, "alloc_64MiB").memory.at("CUDA:0");
  EXPECT_EQ(m.peak_bytes, 67108864);
  EXPECT_EQ(m.live_bytes, 67108864);
  EXPECT_EQ(m.alloc_bytes, 67108864);
  EXPECT_EQ(m.alloc_count, 1);
}

#ifdef PADDLE_PROF_TEST_KERNELS
TEST(CudaProfiler, KernelIsChargedToItsScopeWithinItsWallTime) {
  SKIP_WITHOUT_GPU();
  constexpr int kN = 1 << 20;
  float* data = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&data), kN * sizeof(float)), cudaSuccess);
  testing::LaunchAddOne(data, kN, 1);  // warm up: module load and context outside the window
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  EnableProfiler(ProfilerState::kCUDA);
  for (int i = 0; i < 3; ++i) {
    RecordEvent step("step");
    {
      RecordEvent matmul("matmul");
      testing::LaunchAddOne(data, kN, 200);
      cudaDeviceSynchronize();
    }
    RecordEvent relu("relu");  // no GPU work
  }
  const Report r = StopProfiler(EventSortingKey::kTotal);
  cudaFree(data);
  std::printf("%s", r.Table().c_str());

  const EventRow& matmul = Row(r, "matmul");
  EXPECT_EQ(matmul.calls, 3);
  ASSERT_TRUE(matmul.gpu_total_ms.has_value());
  EXPECT_GT(*matmul.gpu_min_ms, 0.0);
  EXPECT_LE(*matmul.gpu_min_ms, *matmul.gpu_ave_ms);
  EXPECT_LE(*matmul.gpu_ave_ms, *matmul.gpu_max_ms);
  // Synchronised inside the scope: the GPU was busy for part of the scope's wall time.
  EXPECT_LE(*matmul.gpu_total_ms, matmul.total_ms);
  EXPECT_LE(*matmul.gpu_max_ms, matmul.max_ms);
  EXPECT_EQ(*Row(r, "step").gpu_total_ms, *matmul.gpu_total_ms);
  EXPECT_EQ(*Row(r, "relu").gpu_total_ms, 0.0);
  for (const std::string& w : r.warnings) ADD_FAILURE() << "warning: " << w;
}
#endif

}  // namespace
}  // namespace paddle_prof
