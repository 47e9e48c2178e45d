// Every name ParseProfilerState() and ParseSortingKey() accept, from the same tables:
// what the Python package offers as STATES and SORTED_KEYS and its CLI as choices.
#ifndef PADDLE_PROF_SRC_ENUM_NAMES_H_
#define PADDLE_PROF_SRC_ENUM_NAMES_H_

#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

std::vector<std::string> ProfilerStateNames();
std::vector<std::string> SortingKeyNames();
// The key of one of SortingKeyNames(); std::invalid_argument naming them otherwise
// (ParseSortingKey also takes "" and "default", as the flag does).
EventSortingKey SortingKeyNamed(const std::string& name);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_ENUM_NAMES_H_
