#include "call_paths.h"

#include <algorithm>
#include <cstring>

#include "call_stacks.h"
#include "event_record.h"
#include "name_interner.h"
#include "record_cursor.h"

namespace paddle_prof::internal {

CallPaths::Thread* CallPaths::ThreadAt(int index, uint64_t tick) {
  auto found = threads_.find(index);
  if (found == threads_.end()) {
    const auto snapshot = std::find_if(c_.threads.begin(), c_.threads.end(),
                                       [index](const ThreadSnapshot& t) { return t.index == index; });
    if (snapshot == c_.threads.end()) return nullptr;
    found = threads_.emplace(index, Thread{}).first;
    Thread& t = found->second;
    t.cursor = std::make_unique<RecordCursor>(*snapshot);
    t.waiting.resize(kMaxScopeDepth + 1);
  }
  Thread& t = found->second;
  if (t.read_all || tick < t.read_past) return &t;
  ReadCalls(index, tick, &t);
  return &t;
}

void CallPaths::ReadCalls(int index, uint64_t tick, Thread* thread) {
  Thread& t = *thread;
  // Calls come children first: those at depth d + 1 waiting for their parent are the
  // next call at depth d's children.
  auto adopt = [&t](uint32_t depth, int32_t parent) {
    if (depth + 1 >= t.waiting.size()) return;
    for (const int32_t child : t.waiting[depth + 1]) {
      // A parent lost to the buffer bound would hand its children to a later call.
      const Call& p = t.calls[parent];
      if (p.start <= t.calls[child].start && p.end >= t.calls[child].end) {
        t.calls[child].parent = parent;
      }
    }
    t.waiting[depth + 1].clear();
  };
  // Read on to a top-level call begun after `tick`: every call begun by then, and its
  // parents, are read (what follows begins later). At least twice as many calls each
  // time, so that the sort below costs O(n log n) over all the reads.
  const size_t enough = std::max<size_t>(2 * t.calls.size(), 1024);
  bool more = true;
  while ((more = t.cursor->NextCall())) {
    const RecordedCall& call = t.cursor->call();
    const uint32_t depth = std::min(call.depth, kMaxScopeDepth - 1);
    const auto i = static_cast<int32_t>(t.calls.size());
    t.calls.push_back({call.start, call.end, call.cut ? nullptr : call.name, -1, -1, -1,
                       SourceOfStack(call.stack)});
    adopt(depth, i);
    t.waiting[depth].push_back(i);
    if (depth == 0 && call.start > tick && t.calls.size() >= enough) {
      t.read_past = call.start;
      break;
    }
  }
  if (!more) {
    t.read_all = true;
    // The collecting thread's open scopes are the outermost calls of what it recorded.
    for (const OpenCall& open : c_.open_calls) {
      if (open.thread != index) continue;
      const auto i = static_cast<int32_t>(t.calls.size());
      t.calls.push_back({open.start, UINT64_MAX, open.name, -1, -1, -1, SourceOfStack(open.stack)});
      adopt(open.depth, i);
      if (open.depth > 0 && i > 0 && t.calls[i - 1].end == UINT64_MAX) t.calls[i].parent = i - 1;
    }
  }
  t.by_start.resize(t.calls.size());
  for (size_t i = 0; i < t.calls.size(); ++i) t.by_start[i] = static_cast<int32_t>(i);
  // Ends come in order, so of two calls starting on one tick the later-ending parent
  // sorts first, its child after it.
  std::stable_sort(t.by_start.begin(), t.by_start.end(), [&t](int32_t a, int32_t b) {
    const Call& x = t.calls[a];
    const Call& y = t.calls[b];
    return x.start != y.start ? x.start < y.start : x.end > y.end;
  });
}

int CallPaths::Child(int path, const char* name) {
  const auto [it, added] = children_.try_emplace({path, name}, static_cast<int>(steps_.size()));
  if (added) steps_.push_back({path, name});
  return it->second;
}

int CallPaths::PathOfCall(Thread& t, int32_t call) {
  // Up to the first call whose path is known, then down again, so that deep paths cost
  // no recursion.
  chain_.clear();
  for (int32_t i = call; i >= 0 && t.calls[i].path < 0; i = t.calls[i].parent) chain_.push_back(i);
  for (auto it = chain_.rbegin(); it != chain_.rend(); ++it) {
    Call& x = t.calls[*it];
    const int parent = x.parent >= 0 ? t.calls[x.parent].path : kEmpty;
    x.path = x.name != nullptr ? Child(parent, x.name) : parent;
    x.root = x.parent >= 0 ? t.calls[x.parent].root : *it;
  }
  return t.calls[call].path;
}

int32_t CallPaths::InnermostCall(int thread, uint64_t tick, Thread** found) {
  *found = ThreadAt(thread, tick);
  if (*found == nullptr) return -1;
  Thread& t = **found;
  // The last call begun by `tick`, then up its parents to the first still open then:
  // calls nest, so that is the innermost call around `tick`.
  auto after = std::upper_bound(t.by_start.begin(), t.by_start.end(), tick,
                                [&t](uint64_t tick, int32_t i) { return tick < t.calls[i].start; });
  int32_t call = after == t.by_start.begin() ? -1 : *(after - 1);
  while (call >= 0 && t.calls[call].end < tick) call = t.calls[call].parent;
  return call;
}

CallPaths::Origin CallPaths::OriginOf(int thread, uint64_t tick, const char* owner) {
  Origin origin;
  if (NoEvent(owner)) return origin;
  const char* innermost = nullptr;
  Thread* t = nullptr;
  int32_t call = InnermostCall(thread, tick, &t);
  // A block made with no call open on its thread, yet owned by an op: a worker's, lent
  // the op open on the thread that started its parallel region (thread_recorder.h). Its
  // path is that op's, found open at `tick` on another thread.
  for (size_t i = 0; call < 0 && i < c_.threads.size(); ++i) {
    if (c_.threads[i].index == thread) continue;
    call = InnermostCall(c_.threads[i].index, tick, &t);
    if (call >= 0 && t->calls[call].name != owner &&
        (t->calls[call].name == nullptr || std::strcmp(t->calls[call].name, owner) != 0)) {
      call = -1;
    }
  }
  if (call >= 0) {
    origin.path = PathOfCall(*t, call);
    origin.source = t->calls[t->calls[call].root].source;
    innermost = t->calls[call].name;
  }
  if (innermost != owner && (innermost == nullptr || std::strcmp(innermost, owner) != 0)) {
    origin.path = Child(origin.path, owner);
  }
  return origin;
}

bool CallPaths::NoEvent(const char* owner) {
  return owner == nullptr || std::strcmp(owner, kNoEventName) == 0 ||
         std::strcmp(owner, kBeforeWindowName) == 0;
}

const std::string* CallPaths::SourceOfStack(uint32_t stack) {
  const CallStack* s = stack != 0 ? CallStackOf(stack) : nullptr;
  return s != nullptr && s->source >= 0 ? &s->frames[s->source] : nullptr;
}

std::vector<std::string> CallPaths::Names(int path) const {
  std::vector<std::string> names;
  for (int p = path; p > kEmpty; p = steps_[p].parent) names.push_back(NameBytes(steps_[p].name));
  std::reverse(names.begin(), names.end());
  return names;
}

}  // namespace paddle_prof::internal
