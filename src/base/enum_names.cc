// The names of profiler states, as the report, the flags and the bindings spell them
// (the sort keys' are in sort_keys.cc, with the rest of each key).
#include "enum_names.h"

#include <stdexcept>
#include <utility>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof {

namespace {

constexpr std::pair<ProfilerState, const char*> kStates[] = {
    {ProfilerState::kCPU, "CPU"}, {ProfilerState::kCUDA, "GPU"}, {ProfilerState::kAll, "All"}};

}  // namespace

std::string ProfilerStateName(ProfilerState state) {
  for (const auto& [s, name] : kStates) {
    if (s == state) return name;
  }
  return "disabled";
}

ProfilerState ParseProfilerState(const std::string& name) {
  std::string valid;
  for (const auto& [s, n] : kStates) {
    if (name == n) return s;
    valid += std::string(valid.empty() ? "'" : ", '") + n + "'";
  }
  throw std::invalid_argument("unknown profiler state '" + name + "'; valid states are " + valid);
}

namespace internal {

std::vector<std::string> ProfilerStateNames() {
  std::vector<std::string> names;
  for (const auto& entry : kStates) names.push_back(entry.second);
  return names;
}

}  // namespace internal

}  // namespace paddle_prof
