// A program whose profiling window has a capture directory (capture_test.cc):
// FLAGS_paddle_prof_capture_dir=DIR in its environment.
//   capture_main   records 1000 "op" calls, 10 of a dynamic name with a dynamic tag
//                      and 50 "worker_op" calls on a second thread, marks two steps,
//                      prints MARKER, then sleeps until it is killed.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include "paddle_prof/paddle_prof.h"

int main(int argc, char** /*argv*/) {
  paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  for (int i = 0; i < 1000; ++i) paddle_prof::RecordEvent op("op");
  paddle_prof::MarkStep();
  const std::string name = std::string("dynamic_") + std::to_string(argc + 6);
  for (int i = 0; i < 10; ++i) paddle_prof::RecordEvent dynamic(name, std::string("tag_") + "x");
  std::thread worker([] {
    for (int i = 0; i < 50; ++i) paddle_prof::RecordEvent op("worker_op");
  });
  worker.join();
  paddle_prof::MarkStep();
  {
    paddle_prof::RecordEvent open("open_at_the_kill");
    std::fputs("MARKER\n", stdout);
    std::fflush(stdout);
    for (;;) pause();
  }
}
