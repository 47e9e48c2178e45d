// A scope still open on a thread as the window is collected: what its recorder says of
// it (ThreadRecorder::OpenScopes), and, on the thread that collected the window (its names
// are held while the report is built there), the outer part of call paths inside it.
#ifndef PADDLE_PROF_SRC_OPEN_CALL_H_
#define PADDLE_PROF_SRC_OPEN_CALL_H_

#include <cstdint>

namespace paddle_prof::internal {

struct OpenCall {
  int thread = 0;  // the collection's index of the thread
  const char* name = nullptr;
  const char* tag = nullptr;
  uint64_t start = 0;
  uint32_t depth = 0;
  uint32_t stack = 0;  // a top-level scope's call stack id (call_stacks.h)
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_OPEN_CALL_H_
