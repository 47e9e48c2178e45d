// A per-thread flag that the preload library's malloc hooks honour: while it is set,
// malloc and free go straight to glibc, untracked. The profiler sets it around its own
// allocations, and TrackingAllocator around its base allocator (whose blocks it tracks
// on their own place already), so no byte is counted twice or counted for the profiler.
#ifndef PADDLE_PROF_SRC_NATIVE_GUARD_H_
#define PADDLE_PROF_SRC_NATIVE_GUARD_H_

namespace paddle_prof::internal {

// initial-exec: the hooks read it on every malloc with one %fs-relative load.
extern thread_local int t_native_guard __attribute__((tls_model("initial-exec")));

class NativeGuard {
 public:
  NativeGuard() { ++t_native_guard; }
  ~NativeGuard() { --t_native_guard; }
  NativeGuard(const NativeGuard&) = delete;
  NativeGuard& operator=(const NativeGuard&) = delete;
};

// The calling thread's T, made on first use and deleted as the thread exits, both as the
// profiler's memory (untracked). On the heap, where a thread_local T would take room in
// the static TLS block, which is small in a library Python loads. Null once the thread's
// destructors have deleted it (a later malloc hook may still run on the thread), and
// with `make` false, until it is first made.
template <typename T>
struct ThreadOwnedSlot {
  // initial-exec, trivially destructible: a use is one %fs-relative load, with no TLS
  // wrapper or __tls_get_addr call (the torch bridge finds its op stack so, per op).
  static inline thread_local T* object
      __attribute__((tls_model("initial-exec"), visibility("hidden"))) = nullptr;
  static inline thread_local bool gone
      __attribute__((tls_model("initial-exec"), visibility("hidden"))) = false;
};

template <typename T>
__attribute__((noinline)) T* MakeThreadOwned() {
  using Slot = ThreadOwnedSlot<T>;
  struct Deleter {
    ~Deleter() {
      NativeGuard profiler_memory;
      delete Slot::object;
      Slot::object = nullptr;
      Slot::gone = true;
    }
  };
  static thread_local Deleter deleter;  // its destructor runs as the thread exits
  (void)deleter;
  NativeGuard profiler_memory;
  Slot::object = new T;
  return Slot::object;
}

template <typename T>
T* ThreadOwned(bool make = true) {
  T* object = ThreadOwnedSlot<T>::object;
  if (object != nullptr || !make || ThreadOwnedSlot<T>::gone) return object;
  return MakeThreadOwned<T>();
}

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_NATIVE_GUARD_H_
