#include "autograd_links.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "record_cursor.h"

namespace paddle_prof::internal {

namespace {

struct SequencedCall {
  uint64_t start;
  uint64_t end;
  uint64_t key;  // CallKey
  int64_t sequence;
  uint64_t forward_thread;
  uint64_t torch_thread;
};

}  // namespace

AutogradLinks LinkForwardToBackward(const Collection& c) {
  if (c.autograd_ops == 0) return {};  // no pass over the records for nothing
  std::vector<SequencedCall> calls;
  for (size_t t = 0; t < c.threads.size(); ++t) {
    for (RecordCursor records(c.threads[t]); records.NextCall();) {
      const RecordedCall& call = records.call();
      if (call.sequence < 0 || !Kept(c, call)) continue;
      calls.push_back({call.start, call.end, CallKey(t, call.index), call.sequence,
                       call.forward_thread, call.torch_thread});
    }
  }
  AutogradLinks links;
  if (calls.empty()) return links;
  // In the order they ended, as they happened: a node ends after the op it came from.
  std::stable_sort(calls.begin(), calls.end(),
                   [](const SequencedCall& a, const SequencedCall& b) { return a.end < b.end; });
  std::map<std::pair<uint64_t, int64_t>, const SequencedCall*> last_forward;  // by thread, number
  uint64_t next_id = 1;
  for (const SequencedCall& call : calls) {
    if (call.forward_thread == 0) {
      const SequencedCall*& op = last_forward[{call.torch_thread, call.sequence}];
      if (op == nullptr || call.start >= op->start) op = &call;
      continue;
    }
    const auto op = last_forward.find({call.forward_thread, call.sequence});
    if (op == last_forward.end()) continue;  // its forward op is outside the window
    links[op->second->key] = {next_id, true};
    links[call.key] = {next_id, false};
    ++next_id;
    last_forward.erase(op);  // one arrow per forward op
  }
  return links;
}

}  // namespace paddle_prof::internal
