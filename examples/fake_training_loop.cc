// A training loop of fake operators, profiled: nested scopes, a data-loader thread,
// a warm-up left out with ResetProfiler(), one step mark per iteration.
//
//   ./fake_training_loop [profile_path]
//
// prints the report and, given a path, writes a Chrome trace there (open it in
// https://ui.perfetto.dev) and the summary next to it.
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "paddle_prof/paddle_prof.h"

namespace {

// Busy work of about `us` microseconds, so the times are easy to check by eye.
void Spin(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + std::sqrt(x + 1.0);
}

void Conv2D() {
  PADDLE_PROF_RECORD_EVENT("conv2d");
  {
    PADDLE_PROF_RECORD_EVENT("im2col");
    Spin(150);
  }
  {
    PADDLE_PROF_RECORD_EVENT("gemm");
    Spin(300);
  }
}

void Relu() {
  PADDLE_PROF_RECORD_EVENT("relu");
  Spin(50);
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
      Conv2D();
      Relu();
      Optimizer();
    }
    loader.join();
    paddle_prof::MarkStep();
  }
  paddle_prof::DisableProfiler(paddle_prof::EventSortingKey::kTotal, profile_path);
  return 0;
}
