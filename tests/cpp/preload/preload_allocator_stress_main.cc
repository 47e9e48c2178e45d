// A program that must never hang under libpaddle_prof_preload.so, whatever malloc it is
// linked with (jemalloc, tcmalloc, mimalloc, glibc's): four threads allocate through every
// entry point, in sizes that make the allocator map memory of its own (its mmap then calls
// the hooks from inside the allocator, under its locks), print as they go, and a fork
// happens in the middle. PADDLE_PROF_TEST_PROFILE=1 opens a profiling window around it all,
// with a scope per round, so that blocks are charged. Exit 0 when every thread and the
// child finished; tests/python/test_preload_allocators.py starts it with its output piped
// and gives it 10 s.
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "paddle_prof/paddle_prof.h"

namespace {

// Sizes from a few bytes to a few MiB: the large ones are mapped by every allocator.
size_t SizeOf(unsigned round, unsigned i) {
  static const size_t kSizes[] = {24, 200, 4096, 70000, 300000, 2 << 20, 5 << 20};
  return kSizes[(round + i) % (sizeof(kSizes) / sizeof(kSizes[0]))];
}

void Work(int thread, bool scoped) {
  for (unsigned round = 0; round < 60; ++round) {
    std::unique_ptr<paddle_prof::RecordEvent> scope;
    if (scoped) scope = std::make_unique<paddle_prof::RecordEvent>("stress_round");
    std::string text;
    for (int i = 0; i < 200; ++i) text += "grows through every capacity ";
    auto numbers = std::make_unique<std::vector<double>>(SizeOf(round, 1) / sizeof(double));
    void* block = malloc(SizeOf(round, 2));
    block = realloc(block, SizeOf(round, 3));
    void* aligned = nullptr;
    if (posix_memalign(&aligned, 64, SizeOf(round, 4)) != 0) aligned = nullptr;
    void* zeroed = calloc(16, SizeOf(round, 5) / 16);
    if (block != nullptr) std::memset(block, thread, 16);  // the smallest size is 24
    free(block);
    free(aligned);
    free(zeroed);
    // A mapping of the program's own, grown in place or moved, then unmapped.
    void* own = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (own != MAP_FAILED) {
      void* moved = mremap(own, 1 << 16, 1 << 20, MREMAP_MAYMOVE);
      munmap(moved != MAP_FAILED ? moved : own, moved != MAP_FAILED ? 1 << 20 : 1 << 16);
    }
    if (round % 20 == 0) std::printf("thread %d round %u: %zu\n", thread, round, text.size());
  }
}

}  // namespace

int main() {
  const char* profile = getenv("PADDLE_PROF_TEST_PROFILE");
  const bool profiled = profile != nullptr && std::strcmp(profile, "1") == 0;
  if (profiled) paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(Work, t, profiled);
  const pid_t child = fork();  // while the threads allocate
  if (child == 0) {
    Work(4, false);
    _exit(0);
  }
  for (std::thread& t : threads) t.join();
  int status = 1;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    std::printf("FAILED: the forked child did not finish\n");
    return 1;
  }
  if (profiled) {
    const paddle_prof::Report report = paddle_prof::StopProfiler();
    std::printf("%zu rows\n", report.events.size());
  }
  std::printf("all threads finished\n");
  return 0;
}
