// native=True: every malloc of the process tracked from inside, on the place "native",
// with no preload library and no restart (a notebook, a pytest session). As memray does,
// the relocation entries (the GOT) of every loaded ELF object that name a function of
// the malloc family are pointed at hooks that track the call and forward it to the
// function the entry held; those naming dlopen too, so that each object loaded later is
// patched as it loads. Stopping puts every entry back and forgets the native blocks
// tracked meanwhile (their frees no longer come through the hooks).
//
// The hooks forward to the malloc family the global scope resolves (glibc's, or a
// jemalloc or tcmalloc the program preloads), which every patched entry named. Left
// alone: paddle_prof's own objects (their memory is the profiler's), libc and the
// dynamic linker (their calls inside themselves do not go through the table), the vdso.
// An object loaded while tracking is patched at the first hooked call after its dlopen
// (dlopen's entries point at a hook that tail-calls it, so that it still sees its
// caller). Blocks allocated before the start and freed after it are untracked frees. A
// forked child passes its calls through untracked.
#ifndef PADDLE_PROF_SRC_IN_PROCESS_NATIVE_H_
#define PADDLE_PROF_SRC_IN_PROCESS_NATIVE_H_

#include <string>

namespace paddle_prof::internal {

// Starts tracking; "" when it tracks, or the reason it does not. Does nothing (and says
// so) where the preload library tracks already (run --native) or it tracks already.
std::string StartInProcessNative();
// Stops tracking, if StartInProcessNative started it.
void StopInProcessNative();
bool InProcessNativeOn();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_IN_PROCESS_NATIVE_H_
