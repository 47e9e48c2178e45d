#include "memory_categories.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "block_kind.h"
#include "memory_timeline.h"
#include "step_phases.h"

namespace paddle_prof::internal {
namespace {

constexpr const char* kNames[kCategories] = {"parameter", "gradient", "optimizer_state", "input",
                                             "temporary", "activation", "other"};

struct BlockFate {
  uint8_t kind = 0;
  uint64_t freed = 0;  // the tick of its free, 0 while live
};

// The end of the outermost op holding each tick asked, on one thread, ticks asked in
// increasing order (the events' order): a walk, not a search per allocation.
class OpEnds {
 public:
  explicit OpEnds(const std::vector<TickInterval>* ops) : ops_(ops) {}
  uint64_t At(uint64_t tick) {  // 0 for none
    if (ops_ == nullptr) return 0;
    while (next_ < ops_->size() && (*ops_)[next_].second < tick) ++next_;
    return next_ < ops_->size() && (*ops_)[next_].first <= tick ? (*ops_)[next_].second : 0;
  }

 private:
  const std::vector<TickInterval>* ops_;
  size_t next_ = 0;
};

// The phase holding each tick asked, ticks asked in increasing order.
class PhaseWalk {
 public:
  explicit PhaseWalk(const std::vector<PhaseSpan>& spans) : spans_(spans) {}
  Phase At(uint64_t tick) {
    while (next_ < spans_.size() && spans_[next_].end <= tick) ++next_;
    return next_ < spans_.size() && spans_[next_].start <= tick ? spans_[next_].phase : Phase::kNone;
  }

 private:
  const std::vector<PhaseSpan>& spans_;
  size_t next_ = 0;
};

MemoryCategory ByIdentity(uint8_t kind, MemoryCategory otherwise) {
  switch (IdentityOf(kind)) {
    case kParameterBlock: return MemoryCategory::kParameter;
    case kGradientBlock: return MemoryCategory::kGradient;
    case kOptimizerStateBlock: return MemoryCategory::kOptimizerState;
    default: return otherwise;
  }
}

// A block live at the window's start: nothing is known of when it was made, only what
// it was told to be.
MemoryCategory OfEarlier(uint8_t kind) {
  return ByIdentity(kind, (kind & kHandedToModule) != 0 ? MemoryCategory::kInput
                                                        : MemoryCategory::kOther);
}

}  // namespace

const char* CategoryName(int category) { return kNames[category]; }

bool IsOpName(const char* name, bool plain_op_names) {
  constexpr std::string_view kAten = "aten::";
  constexpr std::string_view kNode = "autograd::engine::evaluate_function: ";
  if (std::strncmp(name, kAten.data(), kAten.size()) == 0 ||
      std::strncmp(name, kNode.data(), kNode.size()) == 0) {
    return true;
  }
  return plain_op_names && IsPlainOpName(name);
}

std::vector<TickInterval> OutermostCalls(std::vector<TickInterval> calls) {
  std::vector<TickInterval> outer;
  bool nested = true;
  for (size_t i = 0; i < calls.size() && nested; ++i) {
    const TickInterval& call = calls[i];
    if (i > 0 && call.second < calls[i - 1].second) nested = false;
    while (!outer.empty() && outer.back().first >= call.first) outer.pop_back();
    if (!outer.empty() && outer.back().second > call.first) nested = false;
    outer.push_back(call);
  }
  if (nested) return outer;
  // By start, the longer first where two start together: a call inside the last kept
  // one is nested in it.
  std::sort(calls.begin(), calls.end(), [](const TickInterval& a, const TickInterval& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  outer.clear();
  for (const TickInterval& call : calls) {
    if (outer.empty() || call.first >= outer.back().second) outer.push_back(call);
  }
  return outer;
}

BlockCategories CategorizeBlocks(const Collection& c, const std::vector<ThreadCalls>& calls,
                                 const std::vector<PhaseSpan>& phase_spans) {
  const std::vector<MemoryEvent>& events = c.memory_events;
  // Each block of the window by its allocation, then what came of it: told of by its
  // free, or live at the stop.
  const size_t none = events.size();
  std::vector<BlockFate> fate(events.size());
  std::vector<size_t> allocated_at(events.size(), none);  // a free's allocation
  for (size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& e = events[i];
    if (e.delta >= 0 || e.alloc_thread < 0) continue;
    const size_t found = AllocationEvent(events, e.alloc_thread, e.alloc_tick, i);
    if (found == none) continue;
    fate[found] = {e.kind, e.tick};
    allocated_at[i] = found;
  }
  std::vector<CategoryBytes> earlier(c.places.size(), CategoryBytes{});  // live at the start
  for (const LiveBlock& b : c.live_blocks) {
    const size_t found = AllocationEvent(events, b.thread, b.tick, none);
    if (found != none) {
      fate[found].kind = b.kind;
    } else if (b.place >= 0 && b.place < static_cast<int>(earlier.size())) {
      earlier[b.place][static_cast<int>(OfEarlier(b.kind))] += b.size;  // before a reset
    }
  }
  PhaseWalk phases(phase_spans);
  std::unordered_map<int, OpEnds> op_ends;
  for (size_t position = 0; position < calls.size(); ++position) {
    op_ends.emplace(c.threads[position].index, OpEnds(&calls[position].outermost_ops));
  }

  BlockCategories out;
  out.of_event.resize(events.size());
  out.start = std::move(earlier);
  // The thread whose ops were looked up last (most often the next event's; none at
  // first), and its walk.
  int ops_thread = std::numeric_limits<int>::min();
  OpEnds* ops = nullptr;
  for (size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& e = events[i];
    MemoryCategory category = MemoryCategory::kOther;
    if (e.delta > 0) {
      const BlockFate f = fate[i];
      const Phase phase = phases.At(e.tick);
      if (e.alloc_thread != ops_thread) {
        const auto found = op_ends.find(e.alloc_thread);
        ops_thread = e.alloc_thread;
        ops = found != op_ends.end() ? &found->second : nullptr;
      }
      const uint64_t op_end = ops != nullptr ? ops->At(e.tick) : 0;
      if (phase == Phase::kData || (phase == Phase::kNone && (f.kind & kHandedToModule) != 0)) {
        category = MemoryCategory::kInput;
      } else if (f.freed != 0 && op_end != 0 && f.freed <= op_end) {
        category = MemoryCategory::kTemporary;
      } else if (phase == Phase::kForward) {
        category = MemoryCategory::kActivation;
      }
      category = ByIdentity(f.kind, category);
    } else if (allocated_at[i] < events.size()) {
      category = static_cast<MemoryCategory>(out.of_event[allocated_at[i]]);
    } else {  // live at the window's start (before it, or before its reset): by its kind
      category = OfEarlier(e.kind);
      if (e.place >= 0 && e.place < static_cast<int>(out.start.size())) {
        out.start[e.place][static_cast<int>(category)] -= e.delta;
      }
    }
    out.of_event[i] = static_cast<uint8_t>(category);
  }
  for (const auto& [place_kind, bytes] : c.earlier_live) {
    const auto [place, kind] = place_kind;
    if (place < 0 || place >= static_cast<int>(out.start.size())) continue;
    out.start[place][static_cast<int>(OfEarlier(kind))] += bytes;
  }
  // What the blocks found do not account for of the start bytes (blocks of another
  // source, a table that had no room) is other: the categories add up to the live bytes.
  for (size_t place = 0; place < out.start.size(); ++place) {
    int64_t known = 0;
    for (const int64_t bytes : out.start[place]) known += bytes;
    out.start[place][static_cast<int>(MemoryCategory::kOther)] += c.places[place].start_bytes - known;
  }
  return out;
}

std::vector<CategoryBytes> CategoriesAfter(const Collection& c, const BlockCategories& categories,
                                           int place, const std::vector<size_t>& applied) {
  std::vector<CategoryBytes> out;
  out.reserve(applied.size());
  CategoryBytes bytes = categories.start[place];
  size_t done = 0;  // the place's events applied
  size_t i = 0;     // into c.memory_events
  for (const size_t want : applied) {
    for (; done < want && i < c.memory_events.size(); ++i) {
      const MemoryEvent& e = c.memory_events[i];
      if (e.place != place) continue;
      bytes[categories.of_event[i]] += e.delta;
      ++done;
    }
    out.push_back(bytes);
  }
  return out;
}

std::map<std::string, int64_t> Named(const CategoryBytes& bytes) {
  std::map<std::string, int64_t> named;
  for (int i = 0; i < kCategories; ++i) named[kNames[i]] = bytes[i];
  return named;
}

}  // namespace paddle_prof::internal
