// Native frames of native blocks (run --native with record_stacks): the return
// addresses of each tracked native allocation, taken as it is made, interned, and turned
// into symbols only when a report needs them (the blocks held at the peak and still live
// at the end, the growth holders). The unwinder is libunwind's unw_backtrace, about 80 ns
// for a dozen frames where glibc's backtrace() takes a microsecond; it is loaded when
// stacks are first asked for, RTLD_LOCAL, so that its _Unwind_* and backtrace never
// replace the process's own.
#ifndef PADDLE_PROF_SRC_NATIVE_STACKS_H_
#define PADDLE_PROF_SRC_NATIVE_STACKS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace paddle_prof::internal {

// Whether native allocations capture their stacks now.
inline std::atomic<bool> g_native_stacks{false};

// Turns capture on (loading the unwinder, if the process tracks native memory at all)
// or off. Returns whether stacks are captured.
bool CaptureNativeStacks(bool on);

// On the allocating thread, inside the malloc hook: the interned id of its stack, 0 when
// it could not be taken. No lock unless the stack was never seen on this thread.
uint32_t CaptureNativeStack();

// The table's lock, taken inside malloc hooks: held across fork() (profiler.cc) so that a
// child finds it free.
void LockNativeStacksForFork();
void UnlockNativeStacksAfterFork();

// Up to 16 frames of stack `id`, innermost first, the profiler's own left out:
// "at::native::mkldnn_convolution (libtorch_cpu.so)", or "libdnnl.so.2+0x1c2f0" where
// the object exports no symbol there. Empty for 0.
std::vector<std::string> NativeFrames(uint32_t id);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_NATIVE_STACKS_H_
