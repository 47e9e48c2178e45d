// The flight recorder (keep_last_steps): a window that keeps only its last steps'
// records, each recorder releasing what came before the oldest kept step, so that its
// memory stays flat however long it runs; its report covers the kept steps.
#ifndef PADDLE_PROF_SRC_FLIGHT_RECORDER_H_
#define PADDLE_PROF_SRC_FLIGHT_RECORDER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>

#include "collection.h"
#include "collector.h"
#include "step_record.h"
#include "thread_recorder.h"

namespace paddle_prof::internal {

struct Control;

// The window control's part (window_control.h).
struct FlightRecorder {
  int keep_last_steps = 0;  // 0: every step
  int64_t steps_dropped = 0;
  std::optional<StepRecord> before_kept;  // closed the step before the oldest kept
  // Per recorder, where each of the last keep_last_steps + 1 steps began.
  std::unordered_map<const ThreadRecorder*, std::deque<KeptStart>> step_starts;
};

// A step mark: each recorder notes where the next step begins, and the records before
// the oldest step it keeps go back to be reused. Caller holds control.mu.
void DropStepsPastTheLast(Control& control);
// Where each recorder's oldest kept step begins, for those that recorded before it.
std::unordered_map<const ThreadRecorder*, KeptStart> KeptStarts(const Control& control);
// The report covers the kept steps: it starts where the step before them ended, and
// its places' figures are those of the kept steps.
void KeepToTheKeptSteps(const Control& control, Collection* c);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_FLIGHT_RECORDER_H_
