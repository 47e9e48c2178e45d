// The out-of-memory dump's state in the window control (oom_dump.cc says what the dump
// is): one dump per EnableProfiler(), resets included.
#ifndef PADDLE_PROF_SRC_OOM_DUMP_H_
#define PADDLE_PROF_SRC_OOM_DUMP_H_

#include <cstdint>
#include <string>

namespace paddle_prof::internal {

// The window control's part (window_control.h).
struct OomDump {
  std::string path;  // the caller's, else the default
  bool dumped = false;
  int64_t failures_after = 0;  // counted in the window's report
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_OOM_DUMP_H_
