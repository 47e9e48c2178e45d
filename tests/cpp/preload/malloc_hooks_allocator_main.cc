// The preload library in front of another malloc: run under LD_PRELOAD with the program
// linked with, or preloaded with, jemalloc or tcmalloc. The environment says which
// allocator must serve the blocks (PADDLE_PROF_TEST_ALLOCATOR: jemalloc, tcmalloc or
// glibc) and whether the hooks must track them (PADDLE_PROF_TEST_TRACKED=1), or must
// stand aside because that allocator comes first (0). Exit 0 when every check holds,
// 1 on a failed one, 77 (skipped) where the allocator is not loaded.
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "paddle_prof/paddle_prof.h"

namespace {

int g_failures = 0;

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++g_failures;
  }
}

// Bytes the allocator under test has handed out, read through its own interface: a block
// made elsewhere leaves it unchanged. -1 where that allocator is not loaded.
int64_t AllocatorBytes(const std::string& allocator) {
  if (allocator == "jemalloc") {
    using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
    auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
    uint64_t allocated = 0;
    size_t length = sizeof(allocated);
    if (mallctl == nullptr || mallctl("thread.allocated", &allocated, &length, nullptr, 0) != 0) {
      return -1;
    }
    return static_cast<int64_t>(allocated);
  }
  if (allocator == "tcmalloc") {
    using Property = int (*)(const char*, size_t*);
    auto property =
        reinterpret_cast<Property>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
    size_t allocated = 0;
    if (property == nullptr || !property("generic.current_allocated_bytes", &allocated)) return -1;
    return static_cast<int64_t>(allocated);
  }
  return static_cast<int64_t>(mallinfo2().uordblks);
}

const paddle_prof::EventRow* Row(const paddle_prof::Report& report, const std::string& name) {
  for (const auto& row : report.events) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

// What the row charged to place native; zeros where it charged nothing.
paddle_prof::MemoryStats Native(const paddle_prof::Report& report, const std::string& name) {
  const paddle_prof::EventRow* row = Row(report, name);
  if (row == nullptr || row->memory.count("native") == 0) return {};
  return row->memory.at("native");
}

}  // namespace

int main() {
  const char* allocator_env = getenv("PADDLE_PROF_TEST_ALLOCATOR");
  const char* tracked_env = getenv("PADDLE_PROF_TEST_TRACKED");
  if (allocator_env == nullptr || tracked_env == nullptr) {
    std::printf("set PADDLE_PROF_TEST_ALLOCATOR and PADDLE_PROF_TEST_TRACKED\n");
    return 1;
  }
  const std::string allocator = allocator_env;
  const bool tracked = std::strcmp(tracked_env, "1") == 0;
  if (AllocatorBytes(allocator) < 0) {
    std::printf("%s is not loaded: skipped\n", allocator.c_str());
    return 77;
  }

  paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  void* kept = nullptr;
  {
    PADDLE_PROF_RECORD_EVENT("native_op");
    const int64_t before = AllocatorBytes(allocator);
    kept = malloc(12345);
    const int64_t served = AllocatorBytes(allocator) - before;
    Check(served >= 12345,
          allocator + " served the block (its count grew by " + std::to_string(served) + " bytes)");
  }
  {
    // The entry points jemalloc lacks (pvalloc, reallocarray) and the aligned ones: each
    // block must be freed by the allocator that made it.
    PADDLE_PROF_RECORD_EVENT("aligned_ops");
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* blocks[6] = {};
    blocks[0] = pvalloc(page + 1);  // charged as two pages
    blocks[1] = valloc(100);
    blocks[2] = memalign(64, 1000);
    blocks[3] = aligned_alloc(64, 1024);
    Check(posix_memalign(&blocks[4], 64, 2000) == 0, "posix_memalign");
    blocks[5] = reallocarray(nullptr, 10, 30);
    for (void* block : blocks) Check(block != nullptr, "an aligned allocation");
    Check(reinterpret_cast<uintptr_t>(blocks[0]) % page == 0, "pvalloc is page-aligned");
    Check(reinterpret_cast<uintptr_t>(blocks[3]) % 64 == 0, "aligned_alloc is aligned");
    for (void* block : blocks) free(block);
  }
  const paddle_prof::Report report = paddle_prof::DisableProfiler();
  free(kept);

  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const paddle_prof::MemoryStats op = Native(report, "native_op");
  const paddle_prof::MemoryStats aligned = Native(report, "aligned_ops");
  const int64_t aligned_bytes = static_cast<int64_t>(2 * page + 100 + 1000 + 1024 + 2000 + 300);
  if (tracked) {
    Check(op.live_bytes == 12345,
          "native_op holds 12345 bytes, not " + std::to_string(op.live_bytes));
    Check(op.alloc_count == 1, "native_op made one block, not " + std::to_string(op.alloc_count));
    Check(aligned.alloc_bytes == aligned_bytes, "aligned_ops allocated " +
                                                    std::to_string(aligned_bytes) + " bytes, not " +
                                                    std::to_string(aligned.alloc_bytes));
    Check(aligned.alloc_count == 6 && aligned.free_count == 6 && aligned.live_bytes == 0,
          "aligned_ops made and freed six blocks");
  } else {
    Check(op.alloc_count == 0 && aligned.alloc_count == 0,
          "nothing is tracked where another malloc comes first");
  }
  if (g_failures != 0) return 1;
  std::printf("all checks passed\n");
  return 0;
}
