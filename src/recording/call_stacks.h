// The call stacks of top-level calls (record_stacks): a language binding registers a
// capture function (the Python module's reads the interpreter's frames), which a window
// that records stacks calls as each call with no parent event on its thread begins. It
// returns the id of the stack, interned here by content, so a call's record carries a
// number and the report reads the frames once per distinct stack.
#ifndef PADDLE_PROF_SRC_CALL_STACKS_H_
#define PADDLE_PROF_SRC_CALL_STACKS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace paddle_prof::internal {

// Frames, innermost first ("train.py:42 in forward"), at most kMaxFrames of them.
struct CallStack {
  static constexpr int kMaxFrames = 16;
  std::vector<std::string> frames;
  // The innermost frame of the program's own code (outside the profiler and the
  // framework), -1 when none is: what rows and holders name as their source.
  int source = -1;
};

// Returns the calling thread's stack id, 0 for none. Called on the hot path of a
// top-level call's begin, only while a window records stacks.
using StackCapture = uint32_t (*)();

// What the recorders call: the registered capture while the open window records stacks.
inline std::atomic<StackCapture> g_stack_capture{nullptr};

// The binding's capture function, for every window to come (nullptr: none).
void RegisterStackCapture(StackCapture capture);
// Whether the open window records stacks (FLAGS_paddle_prof_record_stacks as it opens,
// or a profiler's record_stacks=True): the registered capture's and, where native memory
// is tracked, native ones (native_stacks.h).
void RecordStacks(bool on);
bool RecordingStacks();

// The table's lock, held across fork() (profiler.cc) so that a child finds it free.
void LockCallStacksForFork();
void UnlockCallStacksAfterFork();

// Interns `stack` (thread-safe; called for stacks never seen before): its id, >= 1.
uint32_t InternCallStack(CallStack stack);
// The stack of `id`; nullptr for 0 or an id never handed out. Valid for the process.
const CallStack* CallStackOf(uint32_t id);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CALL_STACKS_H_
