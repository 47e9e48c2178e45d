// The names of states and sort keys, as the report, the flags and the bindings spell them.
#include "enum_names.h"

#include <stdexcept>
#include <utility>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof {

namespace {

constexpr std::pair<EventSortingKey, const char*> kSortingKeys[] = {
    {EventSortingKey::kCalls, "calls"},
    {EventSortingKey::kTotal, "total"},
    {EventSortingKey::kSelf, "self"},
    {EventSortingKey::kMax, "max"},
    {EventSortingKey::kMin, "min"},
    {EventSortingKey::kAve, "ave"},
    {EventSortingKey::kPeakMemory, "peak_memory"},
    {EventSortingKey::kLiveMemory, "live_memory"},
};

constexpr std::pair<ProfilerState, const char*> kStates[] = {
    {ProfilerState::kCPU, "CPU"}, {ProfilerState::kCUDA, "GPU"}, {ProfilerState::kAll, "All"}};

template <typename Table>
std::vector<std::string> Names(const Table& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.push_back(entry.second);
  return names;
}

template <typename Table>
std::string ValidNames(const Table& table) {
  std::string names;
  for (const auto& entry : table)
    names += std::string(names.empty() ? "'" : ", '") + entry.second + "'";
  return names;
}

}  // namespace

std::string ProfilerStateName(ProfilerState state) {
  for (const auto& [s, name] : kStates) {
    if (s == state) return name;
  }
  return "disabled";
}

std::string SortingKeyName(EventSortingKey key) {
  if (key == EventSortingKey::kDefault) key = EventSortingKey::kTotal;
  for (const auto& [k, name] : kSortingKeys) {
    if (k == key) return name;
  }
  return "total";
}

EventSortingKey ParseSortingKey(const std::string& name) {
  // FLAGS_paddle_prof_sorted_key's spellings of the default.
  if (name.empty() || name == "default") return EventSortingKey::kTotal;
  return internal::SortingKeyNamed(name);
}

ProfilerState ParseProfilerState(const std::string& name) {
  for (const auto& [s, n] : kStates) {
    if (name == n) return s;
  }
  throw std::invalid_argument("unknown profiler state '" + name + "'; valid states are " +
                              ValidNames(kStates));
}

namespace internal {

std::vector<std::string> ProfilerStateNames() { return Names(kStates); }
std::vector<std::string> SortingKeyNames() { return Names(kSortingKeys); }

EventSortingKey SortingKeyNamed(const std::string& name) {
  for (const auto& [k, n] : kSortingKeys) {
    if (name == n) return k;
  }
  throw std::invalid_argument("unknown sorting key '" + name + "'; valid keys are " +
                              ValidNames(kSortingKeys));
}

}  // namespace internal

}  // namespace paddle_prof
