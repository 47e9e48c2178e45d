// libpaddle_prof_preload.so: the malloc family interposed, so that memory no framework
// allocator sees (a oneDNN primitive cache, a library's buffers) is charged, block by
// block, to the event open on the allocating thread, on the place "native".
//
//   LD_PRELOAD=libpaddle_prof_preload.so program        (python3 -m paddle_prof run --native)
//
// Each hook calls glibc's own entry points (__libc_malloc and friends), so no dlsym is
// needed and nothing runs before they can. A block is tracked only once the library is
// initialised, and not while the calling thread holds the profiler's NativeGuard (the
// profiler's own memory, and a TrackingAllocator's base allocator). The library takes
// itself out of LD_PRELOAD when it loads, so programs the profiled one starts are not
// profiled; a forked child stops tracking, so it neither deadlocks on a lock held by
// another thread at the fork nor counts its memory in the parent's report.
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "memory_tracker.h"
#include "native_guard.h"
#include "paddle_prof/place.h"
#include "place_registry.h"

extern "C" {
void* __libc_malloc(size_t size);
void __libc_free(void* ptr);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace paddle_prof::internal {
namespace {

std::atomic<int> g_native_place{-1};  // -1 until initialised, and in a forked child

void StopTrackingInChild() { g_native_place.store(-1, std::memory_order_relaxed); }

// Removes this library from LD_PRELOAD: the programs the profiled one starts run plain.
void RemoveFromPreload() {
  const char* preload = getenv("LD_PRELOAD");
  if (preload == nullptr) return;
  std::string kept;
  const std::string list = preload;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of(": ", start);
    if (end == std::string::npos) end = list.size();
    const std::string entry = list.substr(start, end - start);
    if (!entry.empty() && entry.find("libpaddle_prof_preload") == std::string::npos) {
      kept += (kept.empty() ? "" : ":") + entry;
    }
    start = end + 1;
  }
  if (kept.empty()) {
    unsetenv("LD_PRELOAD");
  } else {
    setenv("LD_PRELOAD", kept.c_str(), 1);
  }
}

__attribute__((constructor)) void Initialise() {
  NativeGuard setting_up;
  RemoveFromPreload();
  pthread_atfork(nullptr, nullptr, &StopTrackingInChild);
  g_native_place.store(PlaceIndex(NativePlace()), std::memory_order_release);
}

// The place to track on, or -1 to pass the call through untracked.
inline int TrackingPlace() {
  if (t_native_guard != 0) return -1;
  return g_native_place.load(std::memory_order_relaxed);
}

inline void* Allocated(int place, void* ptr, size_t size) {
  if (place >= 0 && ptr != nullptr) {
    NativeGuard tracking;  // what the tracker allocates is the profiler's
    TrackAlloc(place, ptr, size);
  }
  return ptr;
}

inline void Freed(int place, void* ptr) {
  if (place >= 0 && ptr != nullptr) {
    NativeGuard tracking;
    TrackFree(place, ptr);
  }
}

}  // namespace
}  // namespace paddle_prof::internal

using paddle_prof::internal::Allocated;
using paddle_prof::internal::Freed;
using paddle_prof::internal::TrackingPlace;

extern "C" {

__attribute__((visibility("default"))) void* malloc(size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, __libc_malloc(size), size);
}

__attribute__((visibility("default"))) void free(void* ptr) {
  Freed(TrackingPlace(), ptr);  // before glibc may hand the address out again
  __libc_free(ptr);
}

__attribute__((visibility("default"))) void* calloc(size_t count, size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, __libc_calloc(count, size), count * size);
}

// A free of the old block plus an allocation of the new one, as the report counts it.
__attribute__((visibility("default"))) void* realloc(void* ptr, size_t size) {
  const int place = TrackingPlace();
  if (ptr == nullptr) return Allocated(place, __libc_malloc(size), size);
  Freed(place, ptr);
  void* moved = __libc_realloc(ptr, size);
  if (moved == nullptr && size != 0) {
    Allocated(place, ptr, malloc_usable_size(ptr));  // failed: the old block lives on
    return nullptr;
  }
  return Allocated(place, moved, size);
}

__attribute__((visibility("default"))) void* reallocarray(void* ptr, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(ptr, bytes);
}

__attribute__((visibility("default"))) int posix_memalign(void** out, size_t alignment,
                                                          size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  const int place = TrackingPlace();
  void* ptr = __libc_memalign(alignment, size);
  if (ptr == nullptr) return ENOMEM;
  *out = Allocated(place, ptr, size);
  return 0;
}

__attribute__((visibility("default"))) void* aligned_alloc(size_t alignment, size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, __libc_memalign(alignment, size), size);
}

__attribute__((visibility("default"))) void* memalign(size_t alignment, size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, __libc_memalign(alignment, size), size);
}

__attribute__((visibility("default"))) void* valloc(size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, __libc_memalign(static_cast<size_t>(sysconf(_SC_PAGESIZE)), size), size);
}

__attribute__((visibility("default"))) void* pvalloc(size_t size) {
  const int place = TrackingPlace();
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t rounded = (size + page - 1) & ~(page - 1);
  return Allocated(place, __libc_memalign(page, rounded), rounded);
}

}  // extern "C"
