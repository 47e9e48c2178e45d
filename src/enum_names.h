// Every name ParseProfilerState() and ParseSortingKey() accept, from the same tables:
// what the Python package offers as STATES and SORTED_KEYS and its CLI as choices.
#ifndef PADDLE_PROF_SRC_ENUM_NAMES_H_
#define PADDLE_PROF_SRC_ENUM_NAMES_H_

#include <string>
#include <vector>

namespace paddle_prof::internal {

std::vector<std::string> ProfilerStateNames();
std::vector<std::string> SortingKeyNames();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_ENUM_NAMES_H_
