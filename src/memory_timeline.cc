#include "memory_timeline.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "event_record.h"
#include "name_interner.h"
#include "record_cursor.h"

namespace paddle_prof::internal {

std::vector<MemoryEvent> GatherMemoryEvents(const Collection& c) {
  std::vector<MemoryEvent> events;
  for (const ThreadSnapshot& t : c.threads) {
    for (RecordCursor records(t); records.Next();) {
      if (!records.at_call() && Kept(c, records.memory_event())) {
        events.push_back(records.memory_event());
      }
    }
  }
  // Each thread's events are already in order: a stable sort keeps ties as they were.
  std::stable_sort(events.begin(), events.end(),
                   [](const MemoryEvent& a, const MemoryEvent& b) { return a.tick < b.tick; });
  return events;
}

std::vector<RowBytes> RowsAtPeak(const std::vector<MemoryEvent>& events, int place,
                                 int64_t start_bytes, int64_t* highest_total) {
  int64_t running = start_bytes;
  int64_t highest = start_bytes;
  size_t peak_end = 0;  // events [0, peak_end) happened up to the peak
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].place != place) continue;
    running += events[i].delta;
    if (running > highest) {
      highest = running;
      peak_end = i + 1;
    }
  }
  if (highest_total != nullptr) *highest_total = highest;
  // Keyed as the report keys rows: an empty tag is a tag, apart from none.
  std::map<std::tuple<std::string, bool, std::string>, RowBytes> rows;
  auto row = [&rows](const char* name, const char* tag) -> RowBytes& {
    if (name == nullptr) name = kNoEventName;
    RowBytes& r = rows[{NameBytes(name), tag != nullptr, tag != nullptr ? NameBytes(tag) : ""}];
    if (r.name.empty()) {
      r.name = NameBytes(name);
      if (tag != nullptr) r.tag = NameBytes(tag);
    }
    return r;
  };
  row(kBeforeWindowName, nullptr).bytes = start_bytes;
  for (size_t i = 0; i < peak_end; ++i) {
    if (events[i].place == place) row(events[i].name, events[i].tag).bytes += events[i].delta;
  }
  std::vector<RowBytes> result;
  for (auto& [key, r] : rows) {
    if (r.bytes > 0) result.push_back(std::move(r));
  }
  std::sort(result.begin(), result.end(), [](const RowBytes& a, const RowBytes& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes
                              : std::tie(a.name, a.tag) < std::tie(b.name, b.tag);
  });
  return result;
}

}  // namespace paddle_prof::internal
