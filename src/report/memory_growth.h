// Explains memory that grows from step to step: when the tracked live bytes at step
// ends rise as a trend (not necessarily every step: caches evict, inputs repeat), it
// names the events whose still-live blocks were allocated in later and later steps,
// with their tags, largest first — the oneDNN primitive-cache case, one cached
// primitive per new input shape.
#ifndef PADDLE_PROF_SRC_MEMORY_GROWTH_H_
#define PADDLE_PROF_SRC_MEMORY_GROWTH_H_

#include <string>

#include "call_paths.h"
#include "collection.h"

namespace paddle_prof::internal {

// The warning's text, or "" when live memory does not grow over the steps. Each holder
// names the call path (`paths`) that allocated most of what it holds.
std::string MemoryGrowthWarning(const Collection& collection, CallPaths* paths = nullptr);

// When the process's resident memory grows as a trend over the steps: how much of it
// is malloc's heap in use (and of that, tracked), freed but kept by malloc, malloc's
// mappings, and the rest. "" otherwise.
std::string ProcessGrowthWarning(const Collection& collection);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MEMORY_GROWTH_H_
