#include "sort_keys.h"

#include <stdexcept>

namespace paddle_prof {
namespace internal {
namespace {

struct SortKey {
  EventSortingKey key;
  const char* name;
  const char* description;
  SortValue value;
};

// kDefault reads as kTotal everywhere.
constexpr SortKey kSortKeys[] = {
    {EventSortingKey::kCalls, "calls", "number of calls",
     [](const EventRow& r) { return static_cast<double>(r.calls); }},
    {EventSortingKey::kTotal, "total", "total time", [](const EventRow& r) { return r.total_ms; }},
    {EventSortingKey::kSelf, "self", "self time", [](const EventRow& r) { return r.self_ms; }},
    {EventSortingKey::kMax, "max", "maximum time", [](const EventRow& r) { return r.max_ms; }},
    {EventSortingKey::kMin, "min", "minimum time", [](const EventRow& r) { return r.min_ms; }},
    {EventSortingKey::kAve, "ave", "average time", [](const EventRow& r) { return r.ave_ms; }},
    {EventSortingKey::kPeakMemory, "peak_memory", "peak memory",
     [](const EventRow& r) {
       return static_cast<double>(SumOverPlaces(r, &MemoryStats::peak_bytes));
     }},
    {EventSortingKey::kLiveMemory, "live_memory", "live memory",
     [](const EventRow& r) {
       return static_cast<double>(SumOverPlaces(r, &MemoryStats::live_bytes));
     }},
};

const SortKey& Find(EventSortingKey key) {
  if (key == EventSortingKey::kDefault) key = EventSortingKey::kTotal;
  for (const SortKey& k : kSortKeys) {
    if (k.key == key) return k;
  }
  return Find(EventSortingKey::kTotal);  // an enumerator the table lacks
}

}  // namespace

std::vector<std::string> SortingKeyNames() {
  std::vector<std::string> names;
  for (const SortKey& k : kSortKeys) names.push_back(k.name);
  return names;
}

EventSortingKey SortingKeyNamed(const std::string& name) {
  std::string valid;
  for (const SortKey& k : kSortKeys) {
    if (name == k.name) return k.key;
    valid += std::string(valid.empty() ? "'" : ", '") + k.name + "'";
  }
  throw std::invalid_argument("unknown sorting key '" + name + "'; valid keys are " + valid);
}

std::string SortDescription(EventSortingKey key) { return Find(key).description; }

SortValue SortValueOf(EventSortingKey key) { return Find(key).value; }

int64_t SumOverPlaces(const EventRow& row, int64_t MemoryStats::*field) {
  int64_t sum = 0;
  for (const auto& [place, stats] : row.memory) sum += stats.*field;
  return sum;
}

}  // namespace internal

std::string SortingKeyName(EventSortingKey key) { return internal::Find(key).name; }

EventSortingKey ParseSortingKey(const std::string& name) {
  // FLAGS_paddle_prof_sorted_key's spellings of the default.
  if (name.empty() || name == "default") return EventSortingKey::kTotal;
  return internal::SortingKeyNamed(name);
}

}  // namespace paddle_prof
