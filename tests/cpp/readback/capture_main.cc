// A program whose profiling window has a capture directory (capture_test.cc):
// FLAGS_paddle_prof_capture_dir=DIR in its environment.
//   capture_main   records 1000 "op" calls, one "alloc" that allocates 1000 and 500
//                  bytes on CPU and frees the 1000, 10 of a dynamic name with a dynamic tag
//                      and 50 "worker_op" calls on a second thread, one "aten::mm" with
//                      the details a framework's bridge notes (its inputs, its autograd
//                      sequence number), marks two steps, prints MARKER, then sleeps
//                      until it is killed.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "op_details.h"
#include "paddle_prof/paddle_prof.h"

int main(int argc, char** /*argv*/) {
  paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  for (int i = 0; i < 1000; ++i) paddle_prof::RecordEvent op("op");
  const auto cpu = std::make_shared<paddle_prof::TrackingAllocator>(paddle_prof::CPUAllocator(),
                                                                    paddle_prof::CPUPlace());
  {
    paddle_prof::RecordEvent alloc("alloc");
    void* freed = cpu->Allocate(1000);
    cpu->Allocate(500);  // still live at the kill
    cpu->Free(freed);
  }
  paddle_prof::MarkStep();
  const std::string name = std::string("dynamic_") + std::to_string(argc + 6);
  for (int i = 0; i < 10; ++i) paddle_prof::RecordEvent dynamic(name, std::string("tag_") + "x");
  std::thread worker([] {
    for (int i = 0; i < 50; ++i) paddle_prof::RecordEvent op("worker_op");
  });
  worker.join();
  {
    paddle_prof::RecordEvent mm("aten::mm", "[[2, 3], [3, 4]]");
    paddle_prof::internal::NoteOpInputs(&mm, R"([[[2, 3], [3, 4]], ["float", "float"]])");
    paddle_prof::internal::NoteOpSequence(&mm, 5, 0, 1);
  }
  paddle_prof::MarkStep();
  {
    paddle_prof::RecordEvent open("open_at_the_kill");
    std::fputs("MARKER\n", stdout);
    std::fflush(stdout);
    for (;;) pause();
  }
}
