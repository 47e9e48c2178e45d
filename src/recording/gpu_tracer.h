// The GPU side of a profiling window (states kCUDA and kAll): something that collects
// what ran on the GPU and knows which scope launched it. CUDA builds have the CUPTI
// tracer (src/cuda/cupti_tracer.cc); tests install a fake one.
#ifndef PADDLE_PROF_SRC_GPU_TRACER_H_
#define PADDLE_PROF_SRC_GPU_TRACER_H_

#include <atomic>
#include <cstdint>

#include "gpu_activity.h"

namespace paddle_prof::internal {

class GpuTracer {
 public:
  virtual ~GpuTracer() = default;
  // Starts collecting. Throws std::runtime_error saying why the GPU cannot be profiled
  // (no driver, no device, CUPTI refused).
  virtual void Start() = 0;
  // Drops what was collected so far and goes on collecting (ResetProfiler).
  virtual void Discard() = 0;
  // Stops collecting and hands over everything since Start() or the last Discard().
  virtual GpuCapture Stop() = 0;
  // Forgets the work that ended before `tick` (a flight recorder's dropped steps).
  virtual void DropEndedBefore(uint64_t tick) = 0;
  // Called on the owner thread as a scope opens and as it leaves the thread's stack
  // (LIFO per thread): GPU work launched in between is charged to `scope_id`.
  virtual void PushScope(uint64_t scope_id) = 0;
  virtual void PopScope() = 0;
};

// The tracer EnableProfiler(kCUDA/kAll) uses: the one installed for tests, else the
// build's own (nullptr in builds without CUDA).
GpuTracer* GpuTracerToUse();
// Tests: replaces the build's tracer; nullptr restores it.
void SetGpuTracerForTesting(GpuTracer* tracer);
// The build's tracer: the CUPTI one in CUDA builds, nullptr otherwise.
GpuTracer* BuildGpuTracer();
// The build's tracer's lock (if it has one), held across fork(), so that the child
// finds it free.
void LockGpuTracerForFork();
void UnlockGpuTracerAfterFork();

// The tracer of the open GPU window, nullptr when the window does not trace the GPU.
// Read by every scope as it opens.
extern std::atomic<GpuTracer*> g_gpu_tracer;

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_GPU_TRACER_H_
