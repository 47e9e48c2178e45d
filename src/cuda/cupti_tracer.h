// The GPU tracer of CUDA builds: CUPTI's activity API collects kernels, copies and
// memsets with their GPU timestamps, and each scope's id, pushed as CUPTI's external
// correlation id, ties them to the scope that launched them (as Kineto does). CUPTI
// hands its buffers back on its own thread (or the one that flushes); they are read
// there, off the hot path, into compact records, and given back at once: the API
// records that carry the correlations, the bulk of a buffer, are not kept.
#ifndef PADDLE_PROF_SRC_CUDA_CUPTI_TRACER_H_
#define PADDLE_PROF_SRC_CUDA_CUPTI_TRACER_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "cupti_records.h"
#include "gpu_tracer.h"

namespace paddle_prof::internal {

class CuptiTracer final : public GpuTracer {
 public:
  static CuptiTracer& Get();

  // Held across fork(), so that the child finds it free.
  void LockForFork() { mu_.lock(); }
  void UnlockAfterFork() { mu_.unlock(); }

  void Start() override;
  void Discard() override;
  GpuCapture Stop() override;
  void DropEndedBefore(uint64_t tick) override;
  void PushScope(uint64_t scope_id) override {
    cuptiActivityPushExternalCorrelationId(kScopeCorrelationKind, scope_id);
  }
  void PopScope() override {
    uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(kScopeCorrelationKind, &last);
  }

 private:
  CuptiTracer() = default;
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer,
                                       size_t size, size_t valid_size);
  // What was read since the last call, after making CUPTI hand back all it holds.
  GpuCapture TakeCapture();
  // Pairs a CUPTI timestamp with a tick, to map GPU times onto the events' clock.
  void Anchor();

  std::mutex mu_;  // guards capture_ and reader_ (CUPTI's thread adds to them)
  GpuCapture capture_;
  CuptiRecordReader reader_{&capture_};
  uint64_t anchor_tick_ = 0;
  uint64_t anchor_ns_ = 0;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CUDA_CUPTI_TRACER_H_
