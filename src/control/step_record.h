// A step mark as the window keeps it: no heap allocation per step (own_arena.h says
// why). It becomes the Collection's StepMark as the window is read.
#ifndef PADDLE_PROF_SRC_STEP_RECORD_H_
#define PADDLE_PROF_SRC_STEP_RECORD_H_

#include <cstdint>
#include <optional>

#include "collection.h"
#include "place_registry.h"
#include "process_memory.h"

namespace paddle_prof::internal {

struct StepRecord {
  uint64_t tick = 0;
  PlaceStepFigures places;
  ProcessFigures process;
  std::optional<int64_t> samples;
  StepMark Mark() const;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_STEP_RECORD_H_
