// A training loop of fake operators, profiled: nested scopes, a data-loader thread,
// memory through a TrackingAllocator (a conv's im2col buffer freed before it returns,
// a cache that keeps a block per new input shape), a warm-up left out with
// ResetProfiler(), one step mark per iteration.
//
//   ./fake_training_loop [profile_path]
//
// prints the report and, given a path, writes a Chrome trace there (open it in
// https://ui.perfetto.dev) and the summary next to it.
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "paddle_prof/paddle_prof.h"

namespace {

paddle_prof::TrackingAllocator& Cpu() {
  static paddle_prof::TrackingAllocator allocator(paddle_prof::CPUAllocator(),
                                                  paddle_prof::CPUPlace());
  return allocator;
}

// A tensor's buffer, given back to the tracking allocator when it goes.
struct FreeToCpu {
  void operator()(void* p) const { Cpu().Free(p); }
};
using Buffer = std::unique_ptr<void, FreeToCpu>;
Buffer Alloc(size_t bytes) { return Buffer(Cpu().Allocate(bytes)); }

// Busy work of about `us` microseconds, so the times are easy to check by eye.
void Spin(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + std::sqrt(x + 1.0);
}

// Like a oneDNN primitive cache: one block kept per input shape never seen before.
std::vector<Buffer> g_primitive_cache;

Buffer Conv2D(int height) {
  const std::string shape = "[32, 3, " + std::to_string(height) + ", 224]";
  paddle_prof::RecordEvent conv("conv2d", shape);
  if (height > 224) g_primitive_cache.push_back(Alloc(256 * 1024));  // a new shape
  Buffer columns;
  {
    PADDLE_PROF_RECORD_EVENT("im2col");
    columns = Alloc(4 << 20);
    Spin(150);
  }
  Buffer output;
  {
    PADDLE_PROF_RECORD_EVENT("gemm");
    output = Alloc(1 << 20);
    Spin(300);
  }
  return output;  // the im2col buffer is freed here: in the peak, not in what is left
}

Buffer Relu(const Buffer& input) {
  PADDLE_PROF_RECORD_EVENT("relu");
  Buffer output = Alloc(1 << 20);
  Spin(50);
  return output;
}

void Optimizer() {
  for (const std::string& param : {"conv.weight", "conv.bias"}) {
    paddle_prof::RecordEvent e("sgd", param);  // one row per parameter
    Spin(20);
  }
}

void LoadBatch() {
  PADDLE_PROF_RECORD_EVENT("data_loader");
  Spin(400);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string profile_path = argc > 1 ? argv[1] : "";
  paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  for (int it = 0; it < 10; ++it) {
    if (it == 2) paddle_prof::ResetProfiler();  // the first two iterations are warm-up
    std::thread loader(LoadBatch);              // the next batch loads meanwhile
    {
      PADDLE_PROF_RECORD_EVENT("train_step");
      Buffer activation = Conv2D(it < 5 ? 224 : 224 + it);  // new input sizes from it 5 on
      Buffer output = Relu(activation);
      Optimizer();
    }
    loader.join();
    paddle_prof::MarkStep();
  }
  paddle_prof::DisableProfiler(paddle_prof::EventSortingKey::kTotal, profile_path);
  g_primitive_cache.clear();  // while the allocator, a function-local static, still exists
  return 0;
}
