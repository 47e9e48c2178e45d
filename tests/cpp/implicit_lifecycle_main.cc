// A program profiled by FLAGS_paddle_prof_state alone, for implicit_profiler_test, which
// ends it in several ways. Each mode records 3 "outer" calls of 10 "leaf" calls first.
//   fork        forks; the parent returns from main at once, the child once the parent
//               has exited, after recording 5 "child_op" calls
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "paddle_prof/record_event.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  for (int i = 0; i < 3; ++i) {
    PADDLE_PROF_RECORD_EVENT("outer");
    for (int j = 0; j < 10; ++j) {
      PADDLE_PROF_RECORD_EVENT("leaf");
    }
  }
  if (mode == "fork") {
    const pid_t parent = getpid();
    if (fork() != 0) return 0;
    // Last to exit: what it would write at exit would be the last word.
    for (int i = 0; i < 3000 && getppid() == parent; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (int i = 0; i < 5; ++i) {
      PADDLE_PROF_RECORD_EVENT("child_op");
    }
    return 0;
  }
  std::fprintf(stderr, "usage: %s fork\n", argv[0]);
  return 2;
}
