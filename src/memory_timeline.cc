#include "memory_timeline.h"

#include <algorithm>
#include <cmath>
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

TimelinePoints PlaceTimeline(const Collection& c, int place, int64_t peak_bytes) {
  TimelinePoints points;
  // Whole microseconds, rounded down so that none is past wall_ms, the window's end
  // exactly: about 9 characters in the summary, where a shortest double of the ticks
  // takes 17.
  const auto ms = [&c](uint64_t tick) {
    if (tick >= c.end_tick) return c.TicksToMs(c.end_tick - c.start_tick);
    return std::floor(c.TicksToUs(tick > c.start_tick ? tick - c.start_tick : 0)) / 1e3;
  };
  ForEachLivePoint(c, place, kTimelinePoints - 1, BucketKeeps::kHigh, [&](const LivePoint& p) {
    points.t_ms.push_back(ms(p.tick));
    points.bytes.push_back(p.bytes);
  });
  // No allocation or free: the end bytes at the window's end, the last point whatever
  // the peak's.
  const bool replayed_none = points.bytes.size() == 1;
  if (replayed_none) {
    points.t_ms.push_back(ms(c.end_tick));
    points.bytes.push_back(c.places[place].end_bytes);
  }
  const auto highest = std::max_element(points.bytes.begin(), points.bytes.end());
  if (*highest >= peak_bytes) return points;
  auto at = points.t_ms.begin() + (highest - points.bytes.begin());
  double t_ms = *at++;
  for (const StepMark& step : c.steps) {
    const auto step_peak = step.peak_bytes.find(c.places[place].place);
    if (step_peak == step.peak_bytes.end() || step_peak->second != peak_bytes) continue;
    t_ms = ms(step.tick);
    at = std::upper_bound(points.t_ms.begin(), points.t_ms.end(), t_ms);
    break;
  }
  if (replayed_none) at = std::min(at, points.t_ms.end() - 1);
  points.bytes.insert(points.bytes.begin() + (at - points.t_ms.begin()), peak_bytes);
  points.t_ms.insert(at, t_ms);
  return points;
}

}  // namespace paddle_prof::internal
