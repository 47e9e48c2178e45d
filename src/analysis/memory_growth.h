// Explains memory that grows from step to step: when the tracked live bytes at step
// ends rise as a trend (not necessarily every step: caches evict, inputs repeat), it
// names the events whose still-live blocks were allocated in later and later steps,
// with their tags, largest first — the oneDNN primitive-cache case, one cached
// primitive per new input shape.
#ifndef PADDLE_PROF_SRC_MEMORY_GROWTH_H_
#define PADDLE_PROF_SRC_MEMORY_GROWTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "call_paths.h"
#include "collection.h"

namespace paddle_prof::internal {

// An event whose still-live blocks were allocated in several steps.
struct GrowingHolder {
  std::string name;
  int64_t bytes = 0;
  size_t steps = 0;         // steps its blocks were allocated in
  size_t tags = 0;          // distinct tags of its blocks ("no tag" counts as one)
  std::string largest_tag;  // the tag holding most, shortened (TrimShapeTag)
  std::vector<std::string> path;  // the call path that allocated most, outermost first
};

// Tracked live bytes at step ends that rise as a trend, held by events whose still-live
// blocks were allocated in several steps (no warning when none is: what rose was made
// once, or was freed before the window stopped).
struct MemoryGrowth {
  std::string warning;  // "" when live memory does not grow over the steps
  size_t steps = 0;
  std::vector<GrowingHolder> holders;  // largest first
};

// Each holder names the call path (`paths`) that allocated most of what it holds.
MemoryGrowth FindMemoryGrowth(const Collection& collection, CallPaths* paths = nullptr);

// The process's resident memory rising as a trend over the steps, split into malloc's
// heap in use, freed but kept by malloc, malloc's mappings, and the rest, beside the
// tracked places' live bytes. Each figure's rise is that of its floor (the least value
// of the last third of the steps less that of the first): the swings of a program that
// allocates and frees whole tensors do not count, nor does a warm-up (the floor must
// still rise after the first third), nor a rise no more than twice as far as the figure
// strays from its trend line (the 80th percentile of its distances: one spike aside).
struct ProcessGrowth {
  std::string warning;  // "" when resident memory does not grow
  size_t steps = 0;
  int64_t resident_bytes = 0;
  int64_t in_use_bytes = 0;
  int64_t kept_bytes = 0;  // freed by the program, kept by malloc
};
ProcessGrowth FindProcessGrowth(const Collection& collection);

// Whether `warning` (perhaps behind a merged input's "rank 1: ") is one of the above.
bool IsGrowthWarning(const std::string& warning);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MEMORY_GROWTH_H_
