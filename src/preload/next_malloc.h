// The malloc the preload library's hooks forward to: the one the process really uses.
// That is the next definition of malloc after this library (glibc's, or jemalloc,
// tcmalloc, mimalloc linked into the program or preloaded after this library); or, where
// another malloc comes before this library (earlier in LD_PRELOAD, or in the program
// itself), that one: then the hooks see only the calls it lacks, and track nothing.
//
// Every entry point is that allocator's own, read from the same file as its malloc; one
// it lacks (jemalloc has no pvalloc) is made from its others, never taken from another
// library, so no block is ever freed by an allocator that did not make it. Looked up by
// the first call, which may come from ld.so or another library's constructor before this
// library's own; the lookup allocates nothing, and calls other threads make meanwhile get
// bootstrap-arena blocks.
#ifndef PADDLE_PROF_SRC_PRELOAD_NEXT_MALLOC_H_
#define PADDLE_PROF_SRC_PRELOAD_NEXT_MALLOC_H_

#include <atomic>
#include <cstddef>

namespace paddle_prof::internal {

struct MallocFamily {
  void* (*malloc)(size_t size);
  void (*free)(void* ptr);
  void* (*calloc)(size_t count, size_t size);
  void* (*realloc)(void* ptr, size_t size);
  int (*posix_memalign)(void** out, size_t alignment, size_t size);
  void* (*aligned_alloc)(size_t alignment, size_t size);
  void* (*memalign)(size_t alignment, size_t size);
  void* (*valloc)(size_t size);
  void* (*pvalloc)(size_t size);
  size_t (*malloc_usable_size)(void* ptr);
};

// Null until looked up; hidden, so the hooks read it without a GOT load.
extern std::atomic<const MallocFamily*> g_next_malloc __attribute__((visibility("hidden")));

const MallocFamily& ResolveNextMalloc();

// One load and a predictable branch on the hot path.
inline const MallocFamily& NextMalloc() {
  const MallocFamily* family = g_next_malloc.load(std::memory_order_acquire);
  return __builtin_expect(family != nullptr, 1) ? *family : ResolveNextMalloc();
}

// Whether the process's malloc is this library's hook (else the hooks track nothing).
bool HooksAreTheProcessMalloc();

// The file the allocator comes from, as the dynamic linker names it ("" for the program).
const char* NextMallocFile();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PRELOAD_NEXT_MALLOC_H_
