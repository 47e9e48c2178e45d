// OpenMP parallel regions interposed (GOMP_parallel: `#pragma omp parallel` in torch's
// intra-op pool, MKL's threaded BLAS, oneDNN), so that what a team's worker threads
// allocate for an op is owned by the op open on the thread that started the region
// (LentOwner): an MKL sgemm's buffers, made on OpenMP workers where no
// event is open, are held by the convolution that called it, not by [no event].
//
// The region's function is wrapped: each worker runs it with the op lent, then gets back
// what it had. The cost is a few thread-local loads and stores per region and per worker,
// next to the microseconds a region takes to start; a region started with no event open
// (or no window) runs unwrapped.
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>

#include "native_guard.h"
#include "paddle_prof/profiler_enabled.h"
#include "thread_recorder.h"

namespace paddle_prof::internal {
namespace {

using ParallelFn = void (*)(void (*)(void*), void*, unsigned, unsigned);

// Looked up at the first region. Not a function-local static, whose guard a fork could
// copy held.
std::atomic<ParallelFn> g_next_parallel{nullptr};

// The OpenMP runtime after this library: in the global scope, or, where the program
// loaded it with RTLD_LOCAL (ctypes, an extension module), by its name among the objects
// already loaded. The first one found serves every region.
ParallelFn FindNextParallel() {
  if (void* next = dlsym(RTLD_NEXT, "GOMP_parallel")) return reinterpret_cast<ParallelFn>(next);
  for (const char* runtime : {"libgomp.so.1", "libiomp5.so", "libomp.so", "libomp.so.5"}) {
    void* handle = dlopen(runtime, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* next = dlsym(handle, "GOMP_parallel");
    dlclose(handle);  // RTLD_NOLOAD took a reference: the object stays loaded
    if (next != nullptr) return reinterpret_cast<ParallelFn>(next);
  }
  return nullptr;
}

ParallelFn NextParallel() {
  ParallelFn next = g_next_parallel.load(std::memory_order_acquire);
  if (next == nullptr) {
    NativeGuard lookup;  // dlsym may allocate: the profiler's, not the program's
    next = FindNextParallel();
    g_next_parallel.store(next, std::memory_order_release);
  }
  return next;
}

struct Region {
  void (*fn)(void*);
  void* data;
  LentOwner owner;
  pthread_t starter;
};

void RunLent(void* arg) {
  const Region& region = *static_cast<const Region*>(arg);
  if (pthread_equal(pthread_self(), region.starter)) {
    region.fn(region.data);  // the starting thread has the op open itself
    return;
  }
  const LentOwner previous = ThreadRecorder::Lend(region.owner);
  region.fn(region.data);
  ThreadRecorder::Lend(previous);
}

}  // namespace
}  // namespace paddle_prof::internal

extern "C" __attribute__((visibility("default"))) void GOMP_parallel(void (*fn)(void*),
                                                                     void* data,
                                                                     unsigned num_threads,
                                                                     unsigned flags) {
  using paddle_prof::internal::LentOwner;
  using paddle_prof::internal::ThreadRecorder;
  const paddle_prof::internal::ParallelFn next = paddle_prof::internal::NextParallel();
  if (next == nullptr) {  // no OpenMP runtime to pass it to: a team of one
    fn(data);
    return;
  }
  LentOwner owner;
  if (!ThreadRecorder::InnermostOpen(
          paddle_prof::internal::g_window.load(std::memory_order_acquire), &owner)) {
    next(fn, data, num_threads, flags);
    return;
  }
  // GOMP_parallel returns once every thread of the team has run the region: the
  // region lives on this stack until then.
  paddle_prof::internal::Region region{fn, data, owner, pthread_self()};
  next(&paddle_prof::internal::RunLent, &region, num_threads, flags);
}
