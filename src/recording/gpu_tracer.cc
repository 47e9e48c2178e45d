#include "gpu_tracer.h"

namespace paddle_prof::internal {

std::atomic<GpuTracer*> g_gpu_tracer{nullptr};

namespace {
std::atomic<GpuTracer*> g_test_tracer{nullptr};
}  // namespace

GpuTracer* GpuTracerToUse() {
  GpuTracer* test = g_test_tracer.load(std::memory_order_acquire);
  return test != nullptr ? test : BuildGpuTracer();
}

void SetGpuTracerForTesting(GpuTracer* tracer) {
  g_test_tracer.store(tracer, std::memory_order_release);
}

}  // namespace paddle_prof::internal
