// The native place's bytes within a window (every malloc of the process, under the
// preload library): their net change since the window opened and its high-water mark,
// kept together in one 16-byte word that each tracked malloc and free of the window
// moves with one compare-and-swap. So the place's peak is exact across threads at any
// rate of events, and each move tells its thread whether the peak rose before it
// (another thread's move) or with it: how each thread knows its own share of the place
// at the moment of the peak (ThreadRecorder's native ledger), so that the holders at
// the peak add up to it. heaptrack and memray order every event through one lock or one
// stream; this is one atomic instruction, on a cache line the threads share, paid only
// while a window is open (between windows, threads keep to their own shares).
#ifndef PADDLE_PROF_SRC_NATIVE_PEAK_H_
#define PADDLE_PROF_SRC_NATIVE_PEAK_H_

#include <cstdint>
#include <vector>

namespace paddle_prof::internal {

// Net native bytes an owner (the innermost event open as the blocks were allocated)
// took or gave back on one thread.
struct NativeHolding {
  const char* name;
  const char* tag;
  int64_t bytes;
};

// A thread's share of the native place at the moment of the window's peak: its memory
// records up to `records_to` (a tick: all of them for UINT64_MAX), and `open`, its
// interval's owners then, not yet in a record.
struct NativeShare {
  uint64_t records_to = UINT64_MAX;
  std::vector<NativeHolding> open;
};

// What one move saw: the window's peak (above its start) just before it and just after
// it (higher when this move raised it).
struct NativeMove {
  int64_t peak_before = 0;
  int64_t peak_after = 0;
};

// A window opens: the net bytes and the peaks start over at 0.
void RestartNativeWindow();
// A tracked malloc (+) or free (-) while a window is open.
NativeMove MoveNativeBytes(int64_t delta);
// Since the window opened: the net bytes and their highest.
int64_t NativeWindowLive();
int64_t NativeWindowPeak();
// The highest net bytes since the last call (or the window's start), then starts over
// at the net bytes now: a step's exact peak. NativeStepPeakNow() reads it only.
int64_t TakeNativeStepPeak();
int64_t NativeStepPeakNow();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_NATIVE_PEAK_H_
