// libpaddle_prof_preload.so: the malloc family interposed, so that memory no framework
// allocator sees (a oneDNN primitive cache, a library's buffers) is charged, block by
// block, to the event open on the allocating thread, on the place "native"; and mmap,
// munmap and mremap, so that each step can say how much the program's own anonymous mappings
// reserve and how much of that is resident (JIT code buffers, say; mapped_regions.h keeps
// that account).
//
//   LD_PRELOAD=libpaddle_prof_preload.so program        (python3 -m paddle_prof run --native)
//
// Each hook forwards to the malloc the process really uses, glibc's or jemalloc, tcmalloc,
// mimalloc... (next_malloc.h), so a block is always freed by the allocator that made it.
// A block is tracked only once the library is initialised, and not while the calling
// thread holds the profiler's NativeGuard (the profiler's own memory, and a
// TrackingAllocator's base allocator). The library takes itself out of LD_PRELOAD when it
// loads, so programs the profiled one starts are not profiled; a forked child stops
// tracking, so that it never counts its memory in the parent's report, until a profile
// of its own (a child following its parent's window, from Python) resumes it
// (native_tracking.h). The hooks the allocator itself calls (mmap, munmap, mremap:
// jemalloc and tcmalloc map memory under their own locks) never allocate and never wait on
// a thread that may be inside the allocator (mapped_regions.h).
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "bootstrap_arena.h"
#include "mapped_regions.h"
#include "memory_tracker.h"
#include "native_guard.h"
#include "native_tracking.h"
#include "next_malloc.h"
#include "paddle_prof/place.h"
#include "place_registry.h"
#include "process_memory.h"

namespace paddle_prof::internal {
namespace {

std::atomic<int> g_native_place{-1};  // -1 until initialised, and in a forked child
int g_initialised_place = -1;         // what it was set to as the library initialised

void AfterForkInChild() {
  CheckMappingsInChild();
  g_native_place.store(-1, std::memory_order_relaxed);  // until a followed child resumes it
}
// A followed child profiles itself (native_tracking.h).
void ResumeTrackingInChild() {
  g_native_place.store(g_initialised_place, std::memory_order_release);
}

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

// The place to track on, or -1 to pass the call through untracked.
inline int TrackingPlace() {
  if (t_native_guard != 0) return -1;
  return g_native_place.load(std::memory_order_relaxed);
}

// The tracker's own allocations (a new table, a thread's first registration, a record
// chunk) take the guard where they happen, off the common path.
inline void* Allocated(int place, void* ptr, size_t size) {
  if (place >= 0 && ptr != nullptr) TrackAlloc(place, ptr, size);
  return ptr;
}

inline void Freed(int place, void* ptr) {
  if (place >= 0 && ptr != nullptr) TrackFree(place, ptr);
}

}  // namespace
}  // namespace paddle_prof::internal

using paddle_prof::internal::Allocated;
using paddle_prof::internal::BootstrapBlockSize;
using paddle_prof::internal::Freed;
using paddle_prof::internal::InBootstrapArena;
using paddle_prof::internal::NextMalloc;
using paddle_prof::internal::PageRounded;
using paddle_prof::internal::TrackingPlace;

extern "C" {

__attribute__((visibility("default"))) void* malloc(size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, NextMalloc().malloc(size), size);
}

__attribute__((visibility("default"))) void free(void* ptr) {
  if (InBootstrapArena(ptr)) return;  // never the allocator's
  Freed(TrackingPlace(), ptr);        // before the allocator may hand the address out again
  NextMalloc().free(ptr);
}

__attribute__((visibility("default"))) void* calloc(size_t count, size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, NextMalloc().calloc(count, size), count * size);
}

// A free of the old block plus an allocation of the new one, as the report counts it.
__attribute__((visibility("default"))) void* realloc(void* ptr, size_t size) {
  const int place = TrackingPlace();
  if (ptr == nullptr) return Allocated(place, NextMalloc().malloc(size), size);
  if (InBootstrapArena(ptr)) {  // moves to the allocator (or, while looking it up, the arena)
    void* moved = NextMalloc().malloc(size);
    if (moved != nullptr) {
      const size_t old_size = BootstrapBlockSize(ptr);
      memcpy(moved, ptr, old_size < size ? old_size : size);
    }
    return Allocated(place, moved, size);
  }
  Freed(place, ptr);
  void* moved = NextMalloc().realloc(ptr, size);
  if (moved == nullptr && size != 0) {  // failed: the old block lives on
    Allocated(place, ptr, NextMalloc().malloc_usable_size(ptr));
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
  const int place = TrackingPlace();
  const int rc = NextMalloc().posix_memalign(out, alignment, size);
  if (rc == 0) Allocated(place, *out, size);
  return rc;
}

__attribute__((visibility("default"))) void* aligned_alloc(size_t alignment, size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, NextMalloc().aligned_alloc(alignment, size), size);
}

__attribute__((visibility("default"))) void* memalign(size_t alignment, size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, NextMalloc().memalign(alignment, size), size);
}

__attribute__((visibility("default"))) void* valloc(size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, NextMalloc().valloc(size), size);
}

__attribute__((visibility("default"))) void* pvalloc(size_t size) {
  const int place = TrackingPlace();
  return Allocated(place, NextMalloc().pvalloc(size), PageRounded(size));
}

// Interposed for the arena's blocks, which the allocator does not know.
__attribute__((visibility("default"))) size_t malloc_usable_size(void* ptr) {
  if (InBootstrapArena(ptr)) return BootstrapBlockSize(ptr);
  return NextMalloc().malloc_usable_size(ptr);
}

}  // extern "C"

namespace paddle_prof::internal {
namespace {

void WarnNotTheProcessMalloc() {
  const char* file = NextMallocFile();
  const std::string message =
      std::string("paddle_prof: the process's malloc is ") +
      (*file != '\0' ? file : "the program's") +
      ", which comes before libpaddle_prof_preload.so: native memory is not tracked. Load "
      "libpaddle_prof_preload.so first (first in LD_PRELOAD).\n";
  if (write(STDERR_FILENO, message.data(), message.size()) < 0) return;  // nowhere to say it
}

// No hook holds a lock across fork (mapped_regions.h), so the order of the fork handlers
// does not matter here.
__attribute__((constructor)) void Initialise() {
  NativeGuard setting_up;
  RemoveFromPreload();
  if (!HooksAreTheProcessMalloc()) {
    WarnNotTheProcessMalloc();
    return;
  }
  pthread_atfork(nullptr, nullptr, &AfterForkInChild);
  SetMappingReader({&ReadMappings, &MappingsNotFollowed});
  g_initialised_place = PlaceIndex(NativePlace());
  SetNativeTrackingResumer(&ResumeTrackingInChild);
  g_native_place.store(g_initialised_place, std::memory_order_release);
}

}  // namespace
}  // namespace paddle_prof::internal

// The program's own anonymous mappings, accounted in mapped_regions.cc.
extern "C" {

__attribute__((visibility("default"))) void* mmap(void* addr, size_t length, int prot, int flags,
                                                  int fd, off_t offset) {
  void* result = reinterpret_cast<void*>(syscall(SYS_mmap, addr, length, prot, flags, fd, offset));
  const bool anonymous = (flags & MAP_ANONYMOUS) != 0;
  // A file mapped with MAP_FIXED replaces whatever anonymous memory was there.
  if (result != MAP_FAILED && (anonymous || (flags & MAP_FIXED) != 0) &&
      paddle_prof::internal::TrackingPlace() >= 0) {
    paddle_prof::internal::NoteMapping(reinterpret_cast<uintptr_t>(result), length, anonymous);
  }
  return result;
}

// Large-file builds call mmap64; on 64-bit targets it is the same call.
__attribute__((visibility("default"))) void* mmap64(void* addr, size_t length, int prot, int flags,
                                                    int fd, off_t offset) {
  return mmap(addr, length, prot, flags, fd, offset);
}

__attribute__((visibility("default"))) int munmap(void* addr, size_t length) {
  if (paddle_prof::internal::TrackingPlace() >= 0) {
    paddle_prof::internal::NoteMapping(reinterpret_cast<uintptr_t>(addr), length,
                                       /*mapped=*/false);
  }
  return static_cast<int>(syscall(SYS_munmap, addr, length));
}

// A mapping the program grows, shrinks or moves (glibc's own realloc calls the kernel
// directly, and is not seen here).
__attribute__((visibility("default"))) void* mremap(void* old_address, size_t old_size,
                                                    size_t new_size, int flags, ...) {
  void* new_address = nullptr;
  if ((flags & MREMAP_FIXED) != 0) {
    va_list args;
    va_start(args, flags);
    new_address = va_arg(args, void*);
    va_end(args);
  }
  void* result = reinterpret_cast<void*>(
      syscall(SYS_mremap, old_address, old_size, new_size, flags, new_address));
  if (result != MAP_FAILED && paddle_prof::internal::TrackingPlace() >= 0) {
    paddle_prof::internal::NoteRemapping(
        reinterpret_cast<uintptr_t>(old_address), old_size, reinterpret_cast<uintptr_t>(result),
        new_size, /*old_kept=*/(flags & MREMAP_DONTUNMAP) != 0);
  }
  return result;
}

}  // extern "C"
