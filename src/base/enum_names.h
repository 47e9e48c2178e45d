// Every name ParseProfilerState() accepts, from the same table: what the Python package
// offers as STATES and its CLI as choices. The sort keys' names are in sort_keys.h.
#ifndef PADDLE_PROF_SRC_ENUM_NAMES_H_
#define PADDLE_PROF_SRC_ENUM_NAMES_H_

#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

std::vector<std::string> ProfilerStateNames();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_ENUM_NAMES_H_
