// The profiler's gflags. Each can also be given in the environment as
// FLAGS_<name>=<value>, read when the library loads.
#ifndef PADDLE_PROF_SRC_FLAGS_H_
#define PADDLE_PROF_SRC_FLAGS_H_

#include <gflags/gflags.h>

DECLARE_string(paddle_prof_state);
DECLARE_string(paddle_prof_sorted_key);
DECLARE_string(paddle_prof_path);
DECLARE_bool(paddle_prof_per_thread);
DECLARE_bool(paddle_prof_per_process);
DECLARE_bool(paddle_prof_follow_children);
DECLARE_int32(paddle_prof_max_buffer_mb);
DECLARE_bool(paddle_prof_memory_timeline);
DECLARE_bool(paddle_prof_record_stacks);
DECLARE_string(paddle_prof_snapshot_signal);
DECLARE_int32(paddle_prof_row_limit);
DECLARE_string(paddle_prof_oom_path);
DECLARE_int32(paddle_prof_keep_last_steps);
DECLARE_string(paddle_prof_capture_dir);
DECLARE_int32(paddle_prof_trace_counter_points);

namespace paddle_prof::internal {

// For code that runs as the library loads: calls `fn` once the flags hold the
// environment's values, now or as soon as they do (the order in which files' static
// initialisers run is not defined). One caller: the implicit profiler's start.
void WhenFlagsRead(void (*fn)());

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_FLAGS_H_
