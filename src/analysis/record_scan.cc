#include "record_scan.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "call_paths.h"
#include "call_rows.h"
#include "memory_categories.h"
#include "record_cursor.h"

namespace paddle_prof::internal {

namespace {

// The GPU time of `call`: its own launches and its children's, merged; the merged
// intervals pass on to its parent.
uint64_t GpuTicks(const Collection& c,
                  const std::unordered_map<size_t, std::vector<size_t>>* launched_by,
                  const RecordedCall& call, uint32_t depth,
                  std::vector<std::vector<TickInterval>>* child_gpu) {
  std::vector<TickInterval> intervals = std::move((*child_gpu)[depth + 1]);
  (*child_gpu)[depth + 1].clear();
  if (launched_by != nullptr) {
    if (const auto own = launched_by->find(call.index); own != launched_by->end()) {
      for (size_t a : own->second) {
        intervals.emplace_back(c.gpu.activities[a].start, c.gpu.activities[a].end);
      }
    }
  }
  const uint64_t ticks = MergeIntervals(&intervals);
  auto& parent = (*child_gpu)[depth];
  parent.insert(parent.end(), intervals.begin(), intervals.end());
  return ticks;
}

// Calls come in the order they ended, children first, each with its depth:
// child_time[d] sums the durations of finished calls at depth d whose parent has not
// ended yet, which is exactly what the parent subtracts for its self time. child_gpu[d]
// likewise holds the GPU intervals those calls launched, for the parent's GPU time.
// With `gathered`, the thread's allocations and frees go to its end on the way.
ThreadCalls ScanThread(const Collection& c, size_t position, std::vector<MemoryEvent>* gathered) {
  const ThreadSnapshot& thread = c.threads[position];
  ThreadCalls out;
  // The memory categories (a paddle_prof.torch window's) need each thread's outermost ops.
  const bool categorised = c.Categorised();
  std::vector<TickInterval> op_calls;
  if (categorised) op_calls.reserve(static_cast<size_t>(std::max<int64_t>(thread.begun_unreported, 0)));
  std::vector<uint64_t> child_time(kMaxScopeDepth + 1, 0);
  std::vector<std::vector<TickInterval>> child_gpu(c.gpu_traced ? kMaxScopeDepth + 1 : 0);
  const auto* launched_by = position < c.gpu_correlation.launched_by.size()
                                ? &c.gpu_correlation.launched_by[position]
                                : nullptr;
  PointerKey last{nullptr, nullptr};
  Accumulator* last_row = nullptr;  // consecutive records are often the same event
  bool last_is_op = false;
  int64_t reported = 0;             // calls of the window in the report
  std::vector<Accumulator*> awaiting_source;  // kept calls since the last top-level one
  RecordCursor records(thread);
  while (gathered != nullptr ? records.NextCallGathering(gathered, c.end_tick)
                             : records.NextCall()) {
    const RecordedCall& call = records.call();
    const uint32_t depth = std::min(call.depth, kMaxScopeDepth - 1);
    const uint64_t duration = call.duration();
    const uint64_t children = child_time[depth + 1];
    child_time[depth + 1] = 0;
    child_time[depth] += duration;
    uint64_t gpu_ticks = 0;
    if (c.gpu_traced) gpu_ticks = GpuTicks(c, launched_by, call, depth, &child_gpu);
    const bool kept = Kept(c, call);
    if (!kept) {
      if (call.cut) ++out.cut;  // else it ended after the window: left out as open
    } else {
      ++reported;
      const PointerKey key{call.name, call.tag};
      if (last_row == nullptr || !(key == last)) {
        last = key;
        last_row = &out.rows[key];
        last_is_op = categorised && IsOpName(call.name, c.plain_op_names);
      }
      if (last_is_op) op_calls.emplace_back(call.start, call.end);
      last_row->Add(duration, duration > children ? duration - children : 0);
      if (c.gpu_traced) last_row->AddGpu(gpu_ticks);
      for (int p = 0; p < call.places; ++p) {
        last_row->AddMemory(call.memory[p].place, call.memory[p].stats);
      }
    }
    // A top-level call ends after everything nested in it: its source is theirs too.
    if (c.record_stacks) {
      if (kept) awaiting_source.push_back(last_row);
      if (call.depth == 0) {
        if (const std::string* source = CallPaths::SourceOfStack(call.stack)) {
          for (Accumulator* row : awaiting_source) ++row->sources[source];
        }
        awaiting_source.clear();
      }
    }
  }
  // A race at the window's close can only make this undercount, never go below zero.
  out.open = std::max<int64_t>(thread.begun_unreported - reported, 0);
  if (categorised) out.outermost_ops = OutermostCalls(std::move(op_calls));
  return out;
}

// The thread's allocations and frees alone, to the end of `gathered`.
void GatherThread(const Collection& c, const ThreadSnapshot& thread,
                  std::vector<MemoryEvent>* gathered) {
  RecordCursor cursor(thread);
  for (;;) {  // each read into its slot, which a record past the window gives back
    MemoryEvent& e = gathered->emplace_back();
    if (!cursor.NextMemoryEvent(&e)) {
      gathered->pop_back();
      return;
    }
    if (!Kept(c, e)) gathered->pop_back();
  }
}

}  // namespace

void ScanRecords(Collection* c, bool calls) {
  // Each thread's events are in order already: merged run by run, as a stable merge
  // keeps ties as they were.
  std::vector<size_t> runs = {0};  // where each thread's events start, then the end
  std::vector<MemoryEvent>& events = c->memory_events;
  events.clear();
  c->thread_calls.clear();
  for (size_t position = 0; position < c->threads.size(); ++position) {
    if (calls) {
      c->thread_calls.push_back(ScanThread(*c, position, &events));
    } else {
      GatherThread(*c, c->threads[position], &events);
    }
    if (events.size() > runs.back()) runs.push_back(events.size());
  }
  // Pairs of neighbouring runs, then pairs of those, ...: log2(threads) passes.
  const auto by_tick = [](const MemoryEvent& a, const MemoryEvent& b) { return a.tick < b.tick; };
  for (size_t width = 1; width + 1 < runs.size(); width *= 2) {
    for (size_t i = 0; i + width + 1 < runs.size(); i += 2 * width) {
      const size_t end = runs[std::min(i + 2 * width, runs.size() - 1)];
      std::inplace_merge(events.begin() + runs[i], events.begin() + runs[i + width],
                         events.begin() + end, by_tick);
    }
  }
}

std::vector<ThreadCalls> ScanCalls(const Collection& c) {
  std::vector<ThreadCalls> calls;
  for (size_t position = 0; position < c.threads.size(); ++position) {
    calls.push_back(ScanThread(c, position, nullptr));
  }
  return calls;
}

}  // namespace paddle_prof::internal
