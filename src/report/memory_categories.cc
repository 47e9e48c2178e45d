#include "memory_categories.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "block_kind.h"
#include "name_interner.h"
#include "record_cursor.h"
#include "step_phases.h"

namespace paddle_prof::internal {
namespace {

constexpr const char* kNames[kCategories] = {"parameter", "gradient", "optimizer_state", "input",
                                             "temporary", "activation", "other"};

// A block of the window: the thread and tick of its allocation.
struct BlockKey {
  int thread;
  uint64_t tick;
  bool operator==(const BlockKey& o) const { return thread == o.thread && tick == o.tick; }
};
struct BlockKeyHash {
  size_t operator()(const BlockKey& k) const {
    return std::hash<uint64_t>()(k.tick * 31 + static_cast<uint64_t>(k.thread));
  }
};
struct BlockFate {
  uint8_t kind = 0;
  uint64_t freed = 0;  // the tick of its free, 0 while live
};

bool IsOp(std::string_view name) {
  constexpr std::string_view kAten = "aten::";
  constexpr std::string_view kNode = "autograd::engine::evaluate_function: ";
  return name.substr(0, kAten.size()) == kAten || name.substr(0, kNode.size()) == kNode;
}

// Each thread's outermost op calls, in time order: no two overlap.
std::unordered_map<int, std::vector<std::pair<uint64_t, uint64_t>>> OutermostOps(const Collection& c) {
  std::unordered_map<int, std::vector<std::pair<uint64_t, uint64_t>>> ops;
  std::unordered_map<const char*, bool> is_op;  // by interned or literal name
  for (const ThreadSnapshot& thread : c.threads) {
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    for (RecordCursor records(thread); records.NextCall();) {
      const RecordedCall& call = records.call();
      if (!Kept(c, call)) continue;
      const auto [it, fresh] = is_op.try_emplace(call.name, false);
      if (fresh) it->second = IsOp(NameBytes(call.name));
      if (it->second) calls.emplace_back(call.start, call.end);
    }
    // By start, the longer first where two start together: a call inside the last kept
    // one is nested in it.
    std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::pair<uint64_t, uint64_t>>& outer = ops[thread.index];
    for (const auto& call : calls) {
      if (outer.empty() || call.first >= outer.back().second) outer.push_back(call);
    }
  }
  return ops;
}

// The end of the outermost op holding `tick` on the thread, or 0 for none.
uint64_t OpEnd(const std::vector<std::pair<uint64_t, uint64_t>>& ops, uint64_t tick) {
  const auto after = std::upper_bound(ops.begin(), ops.end(), tick,
                                      [](uint64_t t, const auto& op) { return t < op.first; });
  if (after == ops.begin()) return 0;
  return tick <= (after - 1)->second ? (after - 1)->second : 0;
}

MemoryCategory ByIdentity(uint8_t kind, MemoryCategory otherwise) {
  switch (IdentityOf(kind)) {
    case kParameterBlock: return MemoryCategory::kParameter;
    case kGradientBlock: return MemoryCategory::kGradient;
    case kOptimizerStateBlock: return MemoryCategory::kOptimizerState;
    default: return otherwise;
  }
}

}  // namespace

const char* CategoryName(int category) { return kNames[category]; }

BlockCategories CategorizeBlocks(const Collection& c) {
  // What each block of the window came to: told of by its free, or live at the stop.
  std::unordered_map<BlockKey, BlockFate, BlockKeyHash> fates;
  for (const MemoryEvent& e : c.memory_events) {
    if (e.delta < 0 && e.alloc_thread >= 0) fates[{e.alloc_thread, e.alloc_tick}] = {e.kind, e.tick};
  }
  for (const LiveBlock& b : c.live_blocks) fates[{b.thread, b.tick}].kind = b.kind;
  const std::vector<PhaseSpan> phases = PhaseSpans(c);
  const auto ops = OutermostOps(c);
  static const std::vector<std::pair<uint64_t, uint64_t>> kNoOps;

  BlockCategories out;
  out.of_event.resize(c.memory_events.size());
  out.start.assign(c.places.size(), CategoryBytes{});
  std::unordered_map<BlockKey, uint8_t, BlockKeyHash> of_block;
  for (size_t i = 0; i < c.memory_events.size(); ++i) {
    const MemoryEvent& e = c.memory_events[i];
    MemoryCategory category = MemoryCategory::kOther;
    if (e.delta > 0) {
      const auto fate = fates.find({e.alloc_thread, e.alloc_tick});
      const BlockFate f = fate != fates.end() ? fate->second : BlockFate{};
      const Phase phase = PhaseAt(phases, e.tick);
      const auto thread_ops = ops.find(e.alloc_thread);
      const uint64_t op_end = OpEnd(thread_ops != ops.end() ? thread_ops->second : kNoOps, e.tick);
      if (phase == Phase::kData || (phase == Phase::kNone && (f.kind & kHandedToModule) != 0)) {
        category = MemoryCategory::kInput;
      } else if (f.freed != 0 && op_end != 0 && f.freed <= op_end) {
        category = MemoryCategory::kTemporary;
      } else if (phase == Phase::kForward) {
        category = MemoryCategory::kActivation;
      }
      category = ByIdentity(f.kind, category);
      of_block[{e.alloc_thread, e.alloc_tick}] = static_cast<uint8_t>(category);
    } else if (e.alloc_thread >= 0) {
      const auto known = of_block.find({e.alloc_thread, e.alloc_tick});
      category = known != of_block.end() ? static_cast<MemoryCategory>(known->second)
                                         : ByIdentity(e.kind, MemoryCategory::kOther);
    } else {  // allocated before the window: known by identity, or handed to a model
      category = ByIdentity(e.kind, (e.kind & kHandedToModule) != 0 ? MemoryCategory::kInput
                                                                    : MemoryCategory::kOther);
      if (e.place >= 0 && e.place < static_cast<int>(out.start.size())) {
        out.start[e.place][static_cast<int>(category)] -= e.delta;
      }
    }
    out.of_event[i] = static_cast<uint8_t>(category);
  }
  for (const auto& [place_kind, bytes] : c.earlier_live) {
    const auto [place, kind] = place_kind;
    if (place < 0 || place >= static_cast<int>(out.start.size())) continue;
    const MemoryCategory category = ByIdentity(
        kind, (kind & kHandedToModule) != 0 ? MemoryCategory::kInput : MemoryCategory::kOther);
    out.start[place][static_cast<int>(category)] += bytes;
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
