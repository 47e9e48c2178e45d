// The preload library's mappings table across fork: run under
// LD_PRELOAD=libpaddle_prof_preload.so. Two threads map and unmap without pause (each
// call edits the table under its lock) and a third marks steps (each reads the mappings
// too) while the main thread forks; each child reads the process's memory figures, which
// takes the lock again. Nothing holds that lock across fork, so a child forked while a
// thread edited the table must start its account afresh: one that found the lock copied
// held would wait forever, and the parent gives each child 10 s. A fork that waited on a
// lock in another order than the step marks take them would hang the parent itself: an
// alarm ends it after 60 s. Exit 0 when every child finished.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "paddle_prof/profiler.h"
#include "process_memory.h"

namespace {

// 0 when the child exited with 0, else what became of it.
const char* Outcome(pid_t child) {
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) {
      return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? nullptr : "failed";
    }
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec >= 10) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return "hung on the mappings lock";
    }
    usleep(1000);
  }
}

}  // namespace

int main() {
  std::atomic<bool> stop{false};
  auto map_and_unmap = [&stop] {
    while (!stop.load(std::memory_order_relaxed)) {
      void* region =
          mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (region != MAP_FAILED) munmap(region, 4096);
    }
  };
  auto mark_steps = [&stop] {
    while (!stop.load(std::memory_order_relaxed)) {
      paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
      for (int i = 0; i < 50; ++i) paddle_prof::MarkStep();
      paddle_prof::StopProfiler();
    }
  };
  alarm(60);
  std::thread mappers[] = {std::thread(map_and_unmap), std::thread(map_and_unmap),
                           std::thread(mark_steps)};
  int failures = 0;
  for (int i = 0; i < 1000 && failures == 0; ++i) {
    const pid_t child = fork();
    if (child == 0) {
      const auto figures = paddle_prof::internal::ReadProcessMemory();
      _exit(figures.ByName().count("mmap_reserved_bytes") == 1 ? 0 : 2);
    }
    if (child < 0) {
      std::printf("FAILED: fork\n");
      ++failures;
      break;
    }
    if (const char* outcome = Outcome(child)) {
      std::printf("FAILED: child %d %s\n", i, outcome);
      ++failures;
    }
  }
  stop.store(true);
  for (std::thread& mapper : mappers) mapper.join();
  if (failures != 0) return 1;
  std::printf("all children finished\n");
  return 0;
}
