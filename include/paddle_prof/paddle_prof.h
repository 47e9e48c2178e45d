// paddle_prof: an operator profiler for deep-learning frameworks. This header
// includes the whole public API.
//
//   #include <paddle_prof/paddle_prof.h>
//
//   paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
//   { PADDLE_PROF_RECORD_EVENT("conv2d"); Conv2D(); }
//   paddle_prof::DisableProfiler(paddle_prof::EventSortingKey::kTotal, "profile.json");
#ifndef PADDLE_PROF_PADDLE_PROF_H_
#define PADDLE_PROF_PADDLE_PROF_H_

#include "paddle_prof/allocator.h"
#include "paddle_prof/place.h"
#include "paddle_prof/profiler.h"
#include "paddle_prof/record_event.h"
#include "paddle_prof/report.h"

#endif  // PADDLE_PROF_PADDLE_PROF_H_
