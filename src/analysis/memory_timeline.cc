#include "memory_timeline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "event_record.h"
#include "name_interner.h"
#include "record_cursor.h"

namespace paddle_prof::internal {

size_t AllocationEvent(const std::vector<MemoryEvent>& events, int thread, uint64_t tick,
                       size_t hint) {
  const auto before = [](const MemoryEvent& e, uint64_t t) { return e.tick < t; };
  if (events.empty()) return 0;
  hint = std::min(hint, events.size() - 1);
  size_t lo = 0;
  size_t hi = events.size();
  if (events[hint].tick >= tick) {  // it is at or before the hint
    hi = hint;
    for (size_t step = 1; hi > 0; step *= 2) {
      const size_t probe = hi > step ? hi - step : 0;
      if (events[probe].tick < tick) {
        lo = probe + 1;
        break;
      }
      hi = probe;
    }
  } else {
    lo = hint + 1;
    for (size_t step = 1; lo < events.size(); step *= 2) {
      const size_t probe = std::min(lo + step, events.size());
      if (probe == events.size() || events[probe].tick >= tick) {
        hi = probe;
        break;
      }
      lo = probe + 1;
    }
  }
  for (size_t i = std::lower_bound(events.begin() + lo, events.begin() + hi, tick, before) -
                  events.begin();
       i < events.size() && events[i].tick == tick; ++i) {
    if (events[i].delta > 0 && events[i].alloc_thread == thread) return i;
  }
  return events.size();
}

namespace {

// What rows hold, while replaying: by pointers and path ids.
struct Holdings {
  std::map<std::pair<const char*, const char*>, std::map<std::pair<int, const std::string*>, int64_t>>
      by_pointer;
  std::set<std::pair<const char*, const char*>> unsplit;  // rows a free did not say of

  void Add(const MemoryEvent& e, CallPaths* paths) {
    const char* name = e.name != nullptr ? e.name : kNoEventName;
    const bool known = e.delta > 0 || e.alloc_thread >= 0 || CallPaths::NoEvent(name);
    const CallPaths::Origin origin = paths != nullptr && known
                                         ? paths->OriginOf(e.alloc_thread, e.alloc_tick, name)
                                         : CallPaths::Origin();
    by_pointer[{name, e.tag}][{origin.path, origin.source}] += e.delta;
    if (!known && paths != nullptr) unsplit.insert({name, e.tag});
  }
  // Bytes whose blocks' origins are not known (a native interval's net figures).
  void AddUnsplit(const char* name, const char* tag, int64_t bytes) {
    name = name != nullptr ? name : kNoEventName;
    by_pointer[{name, tag}][{CallPaths::kEmpty, nullptr}] += bytes;
    if (!CallPaths::NoEvent(name)) unsplit.insert({name, tag});
  }

  // The rows, largest first: one entry per call path where every free said where its
  // block came from, else one entry with the path that allocated most of it.
  std::vector<RowBytes> Rows(int64_t start_bytes, CallPaths* paths) const {
    // A row's bytes, and how they split over the paths that allocated them, by text.
    using Where = std::pair<std::vector<std::string>, std::optional<std::string>>;  // path, source
    struct Held {
      int64_t bytes = 0;
      bool split = true;  // every free said where its block came from
      std::map<Where, int64_t> by_path;
    };
    // Keyed as the report keys rows: an empty tag is a tag, apart from none.
    std::map<std::tuple<std::string, bool, std::string>, Held> rows;
    auto row = [&rows](const char* name, const char* tag) -> Held& {
      return rows[{NameBytes(name), tag != nullptr, tag != nullptr ? NameBytes(tag) : ""}];
    };
    row(kBeforeWindowName, nullptr).bytes = start_bytes;
    row(kBeforeWindowName, nullptr).by_path[{}] = start_bytes;
    for (const auto& [key, split] : by_pointer) {
      Held& h = row(key.first, key.second);
      if (unsplit.count(key) != 0) h.split = false;
      for (const auto& [where, bytes] : split) {
        h.bytes += bytes;
        Where text{paths != nullptr ? paths->Names(where.first) : std::vector<std::string>(),
                   where.second != nullptr ? std::optional<std::string>(*where.second) : std::nullopt};
        h.by_path[std::move(text)] += bytes;
      }
    }
    std::vector<RowBytes> result;
    for (auto& [key, h] : rows) {
      if (h.bytes <= 0) continue;
      RowBytes r;
      r.name = std::get<0>(key);
      if (std::get<1>(key)) r.tag = std::get<2>(key);
      const bool split = h.split && std::all_of(h.by_path.begin(), h.by_path.end(),
                                                [](const auto& p) { return p.second >= 0; });
      if (split) {
        for (const auto& [where, bytes] : h.by_path) {
          if (bytes <= 0) continue;
          std::tie(r.path, r.source) = where;
          r.bytes = bytes;
          result.push_back(r);
        }
        continue;
      }
      const auto most = std::max_element(
          h.by_path.begin(), h.by_path.end(),
          [](const auto& a, const auto& b) { return a.second < b.second; });
      if (most != h.by_path.end()) std::tie(r.path, r.source) = most->first;
      r.bytes = h.bytes;
      result.push_back(std::move(r));
    }
    std::sort(result.begin(), result.end(), [](const RowBytes& a, const RowBytes& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes
                                : std::tie(a.name, a.tag, a.path, a.source) <
                                      std::tie(b.name, b.tag, b.path, b.source);
    });
    return result;
  }
};

}  // namespace

std::vector<RowBytes> RowsAtPeak(const std::vector<MemoryEvent>& events, int place,
                                 int64_t start_bytes, int64_t* highest_total, CallPaths* paths,
                                 uint64_t* peak_tick) {
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
  if (peak_tick != nullptr) *peak_tick = peak_end > 0 ? events[peak_end - 1].tick : 0;
  Holdings held;
  for (size_t i = 0; i < peak_end; ++i) {
    if (events[i].place == place) held.Add(events[i], paths);
  }
  return held.Rows(start_bytes, paths);
}

std::vector<RowBytes> NativeRowsAtPeak(const Collection& c, int place, CallPaths* paths) {
  Holdings held;
  for (const ThreadSnapshot& t : c.threads) {
    MemoryEvent e;
    for (RecordCursor cursor(t); cursor.NextMemoryEvent(&e);) {
      if (e.place == place && e.tick <= t.native.records_to && Kept(c, e)) held.Add(e, paths);
    }
    for (const NativeHolding& h : t.native.open) {
      if (h.bytes != 0) held.AddUnsplit(h.name, h.tag, h.bytes);
    }
  }
  return held.Rows(c.places[place].start_bytes, paths);
}

std::vector<int64_t> ReplayedStepPeaks(const Collection& c, int place) {
  std::vector<int64_t> peaks;
  int64_t live = c.places[place].start_bytes;
  auto e = c.memory_events.begin();
  for (const StepMark& step : c.steps) {
    int64_t high = live;
    for (; e != c.memory_events.end() && e->tick <= step.tick; ++e) {
      if (e->place != place) continue;
      live += e->delta;
      high = std::max(high, live);
    }
    peaks.push_back(high);
  }
  return peaks;
}

TimelinePoints PlaceTimeline(const Collection& c, int place, int64_t peak_bytes,
                             const BlockCategories* categories) {
  TimelinePoints points;
  std::vector<size_t> applied;  // each point's count of the place's events replayed
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
    applied.push_back(p.index);
  });
  const auto by_category = [&] {
    if (categories == nullptr) return;
    const std::vector<CategoryBytes> split = CategoriesAfter(c, *categories, place, applied);
    for (int k = 0; k < kCategories; ++k) {
      std::vector<int64_t>& series = points.by_category[CategoryName(k)];
      for (const CategoryBytes& bytes : split) series.push_back(bytes[k]);
    }
  };
  // No allocation or free: the end bytes at the window's end, the last point whatever
  // the peak's.
  const bool replayed_none = points.bytes.size() == 1;
  if (replayed_none) {
    points.t_ms.push_back(ms(c.end_tick));
    points.bytes.push_back(c.places[place].end_bytes);
    applied.push_back(0);
  }
  const auto highest = std::max_element(points.bytes.begin(), points.bytes.end());
  if (*highest >= peak_bytes) {
    by_category();
    return points;
  }
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
  const size_t i = static_cast<size_t>(at - points.t_ms.begin());
  points.bytes.insert(points.bytes.begin() + i, peak_bytes);
  points.t_ms.insert(at, t_ms);
  applied.insert(applied.begin() + i, i > 0 ? applied[i - 1] : 0);
  by_category();
  return points;
}

}  // namespace paddle_prof::internal
