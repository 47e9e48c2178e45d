#include "memory_growth.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "call_durations.h"
#include "name_interner.h"
#include "native_stacks.h"
#include "number_format.h"
#include "row_label.h"
#include "table_labels.h"

namespace paddle_prof::internal {

namespace {

struct Holder {
  std::string name;
  int64_t bytes = 0;
  std::set<int> steps;
  std::map<int, int64_t> by_path;                      // CallPaths ids
  std::map<const std::string*, int64_t> by_source;     // with record_stacks
  std::map<uint32_t, int64_t> by_native_stack;          // native blocks, with record_stacks
  struct TagBytes {
    int64_t bytes = 0;
    int last_step = 0;
  };
  std::map<std::string, TagBytes> by_tag;  // "" for no tag
};

// A rise over the steps that is a trend, not a blip: the end is above the start by at
// least `min_rise`, and by 1% of the largest value or 256 KiB, whichever is less (a
// large baseline, such as an interpreter's heap under --native, must not hide a cache
// that grows by a few hundred kilobytes); the least-squares slope is positive; and at
// least a third of the step-to-step changes go up.
bool GrowsAsATrend(const std::vector<int64_t>& ends, int64_t min_rise = 4096) {
  const size_t n = ends.size();
  if (n < 3) return false;
  const int64_t largest = *std::max_element(ends.begin(), ends.end());
  const int64_t rise = ends.back() - ends.front();
  if (rise < min_rise || rise < std::min<int64_t>(largest / 100, 256 * 1024)) return false;
  double mean_x = (n - 1) / 2.0, mean_y = 0;
  for (const int64_t e : ends) mean_y += static_cast<double>(e) / n;
  double covariance = 0;
  size_t ups = 0;
  for (size_t i = 0; i < n; ++i) {
    covariance += (i - mean_x) * (static_cast<double>(ends[i]) - mean_y);
    if (i > 0 && ends[i] > ends[i - 1]) ++ups;
  }
  return covariance > 0 && 3 * ups >= n - 1;
}

// How far the series' floor rose: the least value of its last third less that of its
// first. Resident memory and malloc's free lists swing by whole tensors as a program
// allocates and frees them; their floors move only when memory is really kept.
int64_t FloorRise(const std::vector<int64_t>& v, size_t from_third = 0) {
  const size_t third = std::max<size_t>(v.size() / 3, 1);
  if (v.size() < 3) return v.empty() ? 0 : v.back() - v.front();
  const auto floor = [&v](size_t begin, size_t end) {
    return *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(begin),
                             v.begin() + static_cast<std::ptrdiff_t>(end));
  };
  const size_t start = from_third == 0 ? 0 : third;
  const size_t end = from_third == 0 ? third : v.size() - third;
  return floor(v.size() - third, v.size()) - floor(start, end);
}

// How far the series strays from its least-squares line, as the 80th percentile
// (nearest rank) of its distances from it: the swings a figure makes by itself from step
// to step (a whole tensor's pages, a free list trimmed), or the bend of a warm-up that
// levels off, while one spike among them (which the floor ignores) does not count. A
// floor that rose by no more than twice that may be where the swings happened to land
// (a flat loop of 10 steps read a 4 MiB rise among swings of 3 MiB either way).
int64_t Swing(const std::vector<int64_t>& v) {
  const double n = static_cast<double>(v.size());
  double mean_x = (n - 1) / 2.0, mean_y = 0, covariance = 0, variance = 0;
  for (const int64_t y : v) mean_y += static_cast<double>(y) / n;
  for (size_t i = 0; i < v.size(); ++i) {
    covariance += (i - mean_x) * (static_cast<double>(v[i]) - mean_y);
    variance += (i - mean_x) * (i - mean_x);
  }
  const double slope = variance > 0 ? covariance / variance : 0;
  std::vector<double> distances;
  for (size_t i = 0; i < v.size(); ++i) {
    distances.push_back(std::abs(static_cast<double>(v[i]) - (mean_y + slope * (i - mean_x))));
  }
  if (distances.empty()) return 0;
  const auto rank = static_cast<size_t>(NearestRank(80, static_cast<int64_t>(distances.size())));
  std::nth_element(distances.begin(), distances.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   distances.end());
  return static_cast<int64_t>(distances[rank - 1]);
}

}  // namespace

constexpr char kLiveGrowth[] = "live memory grew over ";
constexpr char kResidentGrowth[] = "the process's resident memory grew over ";

MemoryGrowth FindMemoryGrowth(const Collection& c, CallPaths* paths) {
  MemoryGrowth growth;
  std::vector<int64_t> ends;
  for (const StepMark& step : c.steps) {
    int64_t sum = 0;
    for (const auto& [place, bytes] : step.end_bytes) sum += bytes;
    ends.push_back(sum);
  }
  if (!GrowsAsATrend(ends)) return growth;
  growth.steps = ends.size();

  // Still-live blocks by owning event: those held from several steps are the growth.
  std::map<std::string, Holder> holders;
  for (const LiveBlock& block : c.live_blocks) {
    const std::string name = NameBytes(block.name);
    Holder& h = holders[name];
    h.name = name;
    h.bytes += block.size;
    h.steps.insert(block.step);
    Holder::TagBytes& t = h.by_tag[block.tag != nullptr ? NameBytes(block.tag) : ""];
    t.bytes += block.size;
    t.last_step = std::max(t.last_step, block.step);
    if (paths != nullptr) {
      const CallPaths::Origin origin = paths->OriginOf(block.thread, block.tick, block.name);
      h.by_path[origin.path] += block.size;
      if (origin.source != nullptr) h.by_source[origin.source] += block.size;
    }
    if (block.native_stack != 0) h.by_native_stack[block.native_stack] += block.size;
  }
  std::vector<Holder> growing;
  for (auto& [name, h] : holders) {
    if (h.steps.size() >= 2) growing.push_back(std::move(h));
  }
  std::sort(growing.begin(), growing.end(),
            [](const Holder& a, const Holder& b) { return a.bytes > b.bytes; });

  std::string text = kLiveGrowth + std::to_string(ends.size()) + " steps, from " +
                     FormatByteCount(ends.front()) + " to " + FormatByteCount(ends.back()) +
                     " at step ends";
  // What is still live was each event's in one step (an optimizer's state made at its
  // first step, a parameter added once), or was freed before the window stopped: a rise,
  // not memory that keeps growing.
  if (growing.empty()) return MemoryGrowth();
  text += "; still-live blocks allocated in later and later steps are held by:";
  constexpr size_t kHolders = 3, kTags = 4;
  for (size_t i = 0; i < growing.size(); ++i) {
    const Holder& h = growing[i];
    GrowingHolder& held = growth.holders.emplace_back();
    held.name = h.name;
    held.bytes = h.bytes;
    held.steps = h.steps.size();
    held.tags = h.by_tag.size();
    std::vector<std::pair<std::string, Holder::TagBytes>> tags(h.by_tag.begin(), h.by_tag.end());
    // Largest first; among equals the newest, where the growth is going on.
    std::sort(tags.begin(), tags.end(), [](const auto& a, const auto& b) {
      return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes
                                              : a.second.last_step > b.second.last_step;
    });
    // Shape tags say only what tells them apart.
    std::vector<std::string> told;
    for (const auto& [tag, bytes] : tags) told.push_back(TrimShapeTag(tag));
    told = TellApart(told);
    for (size_t t = 0; t < tags.size(); ++t) tags[t].first = told[t];
    held.largest_tag = tags.front().first;
    // Where it was allocated: the path holding most of it.
    const auto most = std::max_element(h.by_path.begin(), h.by_path.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    held.path = most != h.by_path.end() ? paths->Names(most->first) : std::vector<std::string>();
    if (i >= kHolders) continue;

    text += (i == 0 ? " " : "; ") + h.name + " (" + FormatByteCount(h.bytes) + " from " +
            std::to_string(h.steps.size()) + " steps";
    if (!(tags.size() == 1 && h.by_tag.begin()->first.empty())) {
      text += ", " + std::to_string(tags.size()) + " tags:";
      for (size_t t = 0; t < tags.size() && t < kTags; ++t) {
        text += (t == 0 ? " " : ", ") + (tags[t].first.empty() ? "(none)" : tags[t].first) + " " +
                FormatByteCount(tags[t].second.bytes);
      }
      if (tags.size() > kTags) text += ", +" + std::to_string(tags.size() - kTags) + " more";
    }
    const std::vector<std::string>& path = held.path;
    if (path.size() > 1) {  // more than the holder's own name
      text += "; path: " + JoinPath(path);
      if (h.by_path.size() > 1) text += " (+" + std::to_string(h.by_path.size() - 1) + " more)";
    }
    const auto source = std::max_element(h.by_source.begin(), h.by_source.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (source != h.by_source.end()) text += "; source: " + *source->first;
    const auto native = std::max_element(h.by_native_stack.begin(), h.by_native_stack.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (native != h.by_native_stack.end()) {
      const std::vector<std::string> frames = NativeFrames(native->first);
      constexpr size_t kFrames = 8;
      for (size_t f = 0; f < frames.size() && f < kFrames; ++f) {
        text += (f == 0 ? "; native: " : " < ") + frames[f];
      }
    }
    text += ")";
  }
  if (growing.size() > kHolders) {
    text += "; +" + std::to_string(growing.size() - kHolders) + " more events";
  }
  growth.warning = text + ".";
  return growth;
}

ProcessGrowth FindProcessGrowth(const Collection& c) {
  auto series = [&c](const std::string& figure) {
    std::vector<int64_t> values;
    for (const StepMark& step : c.steps) {
      const auto it = step.process.find(figure);
      if (it == step.process.end()) return std::vector<int64_t>();
      values.push_back(it->second);
    }
    return values;
  };
  // Resident memory moves by pages as a program warms up (first touches of its heap,
  // stacks, code): below 1 MiB a rise is not worth a warning.
  constexpr int64_t kMinResidentRise = int64_t{1} << 20;
  const std::vector<int64_t> rss = series("rss_bytes");
  ProcessGrowth growth;
  // A trend whose floor rose, and still rose after the first third: not a warm-up.
  if (!GrowsAsATrend(rss, kMinResidentRise) || FloorRise(rss) < kMinResidentRise ||
      FloorRise(rss, /*from_third=*/1) < kMinResidentRise / 2 || FloorRise(rss) <= 2 * Swing(rss) ||
      series("heap_in_use_bytes").empty()) {
    return growth;
  }
  const auto rise = [](const std::vector<int64_t>& v) { return FloorRise(v); };
  // The tracked places' live bytes at step ends, risen as the other figures are: by
  // their floor. They are held in malloc's heap or in its own mappings (a large block),
  // so they are a figure of their own, not a part of either.
  std::vector<int64_t> tracked_ends;
  for (const StepMark& step : c.steps) {
    int64_t sum = 0;
    for (const auto& [place, bytes] : step.end_bytes) sum += bytes;
    tracked_ends.push_back(sum);
  }
  const int64_t in_use = rise(series("heap_in_use_bytes"));
  const int64_t kept = rise(series("heap_free_bytes"));
  const int64_t mapped = rise(series("malloc_mmap_bytes"));
  const int64_t total = rise(rss);
  growth.steps = rss.size();
  growth.resident_bytes = total;
  growth.in_use_bytes = in_use;
  growth.kept_bytes = kept;
  std::string text = kResidentGrowth + std::to_string(rss.size()) + " steps: its floor (the " +
                     "least of the last third of the steps less that of the first) rose by " +
                     FormatByteCount(total) + ", from " + FormatByteCount(rss.front()) +
                     " at the first step's end to " + FormatByteCount(rss.back()) +
                     " at the last's; the floors of malloc's heap in use rose by " +
                     FormatByteCount(in_use) + ", freed but kept by malloc " +
                     FormatByteCount(kept) + ", malloc's own mappings " + FormatByteCount(mapped);
  int64_t rest = total - in_use - kept - mapped;
  // Under the preload library: the program's own anonymous mappings (JIT code, say).
  const std::vector<int64_t> reserved = series("mmap_reserved_bytes");
  const std::vector<int64_t> resident = series("mmap_resident_bytes");
  if (!reserved.empty() && !resident.empty()) {
    text += ", the program's anonymous mappings " + FormatByteCount(rise(resident)) +
            " resident of " + FormatByteCount(rise(reserved)) + " reserved";
    rest -= rise(resident);
  }
  growth.warning = text + ", the rest (" + FormatByteCount(rest) +
                   ") outside malloc: code, stacks, other mappings; the tracked places' live "
                   "bytes (in malloc's heap or its mappings) by " +
                   FormatByteCount(rise(tracked_ends)) + ".";
  return growth;
}

bool IsGrowthWarning(const std::string& warning) {
  for (const std::string_view opening : {kLiveGrowth, kResidentGrowth}) {
    const size_t at = warning.find(opening);
    // At the start, or after a merged input's "rank 1: ".
    if (at == 0 || (at != std::string::npos && at >= 2 && warning.compare(at - 2, 2, ": ") == 0)) {
      return true;
    }
  }
  return false;
}

}  // namespace paddle_prof::internal
