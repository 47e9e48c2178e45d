#include "cupti_tracer.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include "clock.h"
#include "native_guard.h"

namespace paddle_prof::internal {

namespace {

constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kBufferAlign = 8;  // CUPTI's requirement

// Runtime and driver API records are what external ids attach to; the rest is timed.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
};

[[noreturn]] void Fail(const std::string& why) {
  throw std::runtime_error("paddle_prof: cannot profile the GPU: " + why);
}

void CheckDevices() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  switch (error) {
    case cudaSuccess:
      if (count == 0) Fail("no CUDA device was found (the driver reports 0 devices)");
      return;
    case cudaErrorNoDevice:
      Fail("no CUDA device was found (cudaErrorNoDevice)");
    case cudaErrorInsufficientDriver:
      Fail(
          "no usable NVIDIA driver is loaded (cudaErrorInsufficientDriver: none installed, "
          "or older than the CUDA runtime)");
    default:
      Fail(std::string("the CUDA runtime failed to start: ") + cudaGetErrorName(error) + " (" +
           cudaGetErrorString(error) + ")");
  }
}

void CheckCupti(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  std::string why = std::string("CUPTI ") + what + " failed with error " +
                    std::to_string(static_cast<int>(result)) + " (" +
                    (text != nullptr ? text : "unknown") + ")";
  if (result == CUPTI_ERROR_UNKNOWN) {
    why += ": often another profiler holds the GPU, or the driver does not allow profiling here";
  } else if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    why += ": profiling needs NVreg_RestrictProfilingToAdminUsers=0 or root";
  }
  Fail(why);
}

}  // namespace

CuptiTracer& CuptiTracer::Get() {
  static auto* tracer = new CuptiTracer;  // leaked: CUPTI may call back during exit
  return *tracer;
}

void CUPTIAPI CuptiTracer::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  NativeGuard profiler_memory;  // may run inside a scope: not the program's memory
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI CuptiTracer::BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer,
                                           size_t /*size*/, size_t valid_size) {
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
  NativeGuard profiler_memory;  // the records read are the profiler's memory
  CuptiTracer& tracer = Get();
  {
    std::lock_guard<std::mutex> lock(tracer.mu_);
    tracer.reader_.ReadBuffer(buffer, valid_size);
    tracer.capture_.dropped += static_cast<int64_t>(dropped);
  }
  std::free(buffer);
}

void CuptiTracer::Anchor() {
  const auto cupti_ns = [] {
    uint64_t ns = 0;
    cuptiGetTimestamp(&ns);
    return ns;
  };
  Clock::ReadPaired(cupti_ns, &anchor_ns_, &anchor_tick_);
}

void CuptiTracer::Start() {
  CheckDevices();
  // Each time: the buffer callbacks are process-wide, and a torch.profiler session since
  // the last window (Kineto) registered its own.
  CheckCupti(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted),
             "cuptiActivityRegisterCallbacks");
  for (size_t i = 0; i < std::size(kKinds); ++i) {
    const CUptiResult result = cuptiActivityEnable(kKinds[i]);
    if (result != CUPTI_SUCCESS) {
      while (i > 0) cuptiActivityDisable(kKinds[--i]);
      CheckCupti(result, "cuptiActivityEnable");
    }
  }
  Discard();  // whatever an earlier window left behind
}

GpuCapture CuptiTracer::TakeCapture() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(mu_);
  GpuCapture taken = std::move(capture_);
  capture_ = GpuCapture{};  // the reader goes on reading into it
  // Captures are taken as windows start, reset and stop, under the profiler's lock, so
  // the collector is done with the capture before this one.
  reader_.NextCapture();
  return taken;
}

void CuptiTracer::Discard() {
  NativeGuard profiler_memory;
  TakeCapture();
  Anchor();
}

GpuCapture CuptiTracer::Stop() {
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  NativeGuard profiler_memory;
  GpuCapture capture = TakeCapture();
  // CUPTI's nanoseconds onto ticks, through the anchor taken when collecting began.
  const double ticks_per_ns = 1.0 / Clock::NsPerTick();
  const auto to_tick = [this, ticks_per_ns](uint64_t ns) {
    const double delta = (static_cast<double>(ns) - static_cast<double>(anchor_ns_)) * ticks_per_ns;
    return static_cast<uint64_t>(static_cast<double>(anchor_tick_) + delta);
  };
  for (GpuActivity& a : capture.activities) {
    a.start = to_tick(a.start);
    a.end = to_tick(a.end);
  }
  return capture;
}

void CuptiTracer::DropEndedBefore(uint64_t tick) {
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(mu_);
  // The capture keeps CUPTI's nanoseconds until Stop(): the tick goes through the anchor.
  const double ns =
      static_cast<double>(anchor_ns_) +
      (static_cast<double>(tick) - static_cast<double>(anchor_tick_)) * Clock::NsPerTick();
  if (ns > 0) internal::DropEndedBefore(&capture_, static_cast<uint64_t>(ns));
}

GpuTracer* BuildGpuTracer() { return &CuptiTracer::Get(); }
void LockGpuTracerForFork() { CuptiTracer::Get().LockForFork(); }
void UnlockGpuTracerAfterFork() { CuptiTracer::Get().UnlockAfterFork(); }

}  // namespace paddle_prof::internal
