// Where an allocation that failed is reported: the tracking allocators (and the torch
// bridge's) call OnOutOfMemory() before the failure goes on to their caller unchanged.
// The window control installs what it does (oom_dump.cc: a dump of the running window);
// the allocators, below it, know only this hook.
#ifndef PADDLE_PROF_SRC_OUT_OF_MEMORY_H_
#define PADDLE_PROF_SRC_OUT_OF_MEMORY_H_

#include <cstddef>

#include "paddle_prof/place.h"

namespace paddle_prof::internal {

using OutOfMemoryHandler = void (*)(const Place& place, size_t requested_bytes);

void SetOutOfMemoryHandler(OutOfMemoryHandler handler);

// Calls the handler, if any; never throws (the caller's own failure must go on).
void OnOutOfMemory(const Place& place, size_t requested_bytes) noexcept;

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_OUT_OF_MEMORY_H_
