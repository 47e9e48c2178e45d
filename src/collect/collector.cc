#include "collector.h"

#include <algorithm>

#include "call_stacks.h"
#include "event_buffer.h"
#include "flags.h"
#include "gpu_correlation.h"
#include "live_block_table.h"
#include "place_registry.h"
#include "recorder_registry.h"
#include "thread_recorder.h"
#include "window_state.h"

namespace paddle_prof::internal {

namespace {

// What one thread recorded in its window: its records (read in place) and its counts.
void CollectRecorder(const ThreadRecorder& r, const KeptStart* kept_from, Collection* c) {
  NativeShare native;
  if (c->native_peak >= 0) native = r.NativeShareAt(c->native_peak);
  const size_t size = r.buffer().Size();  // before the calls begun, which it bounds
  const RecorderCounters& counters = r.counters();
  const int64_t begun = kept_from != nullptr
                            ? static_cast<int64_t>(r.SerialNow() - kept_from->serial)
                            : r.BegunInWindow();
  c->forced_closes += counters.forced_closes;
  c->foreign_ends += counters.foreign_ends;
  c->dropped += counters.dropped;
  c->dropped_memory += counters.dropped_memory;
  c->lost_places += counters.lost_places;
  c->autograd_ops += counters.autograd_ops;
  for (int place = 0; place < static_cast<int>(c->places.size()); ++place) {
    NoEventUsage u;
    u.thread = r.index();
    u.place = place;
    u.stats = r.root_usage(place).Stats();
    if (u.stats.alloc_count > 0 || u.stats.free_count > 0) c->no_event.push_back(u);
  }
  c->threads.push_back(
      {r.index(), r.os_tid(), r.thread_name(), &r.buffer(),
       std::max(kept_from != nullptr ? kept_from->record : 0, r.buffer().ReleasedBelow()), size,
       begun - counters.dropped - counters.abandoned.load(std::memory_order_relaxed),
       std::move(native)});
}

}  // namespace

void CollectThreads(uint64_t window, uint64_t first_window,
                    const std::unordered_map<const ThreadRecorder*, KeptStart>& kept_from,
                    Collection* c) {
  if (const ThreadRecorder* self = ThreadRecorder::CurrentIfRegistered()) {
    c->open_calls = self->OpenScopes(window);
  }
  const int native = g_native_place_index.load(std::memory_order_relaxed);
  if (native >= 0 && native < static_cast<int>(c->places.size())) {
    c->native_peak = c->places[native].peak_bytes - c->places[native].start_bytes;
  }
  for (const ThreadRecorder* r : RecorderRegistry::Get().LockAll(&c->records_lock)) {
    if (r->window() == window) {
      const auto kept = kept_from.find(r);
      CollectRecorder(*r, kept != kept_from.end() ? &kept->second : nullptr, c);
    }
    // Calls begun before a reset of this profiler and still open: left out, like the
    // open calls of this window, whether or not their thread acted since the reset.
    c->open_before_reset += r->OpenScopesBegunIn(first_window, window);
  }
  LiveBlocks::ForEach([c, window](const LiveBlock& block) {
    if (SameWindow(block.window, window)) {
      c->live_blocks.push_back(block);
    } else {
      c->earlier_live[{block.place, block.kind}] += block.size;
    }
  });
  c->record_stacks = RecordingStacks();
  c->buffer_chunks = EventBuffer::ChunksInUse();
  c->buffer_bound_mb = EventBuffer::BoundMb();
  c->trace_counter_points = FLAGS_paddle_prof_trace_counter_points;
  c->memory_timeline = MemoryTimelineOn();
  c->memory_categories = MemoryCategoriesOn();
  c->plain_op_names = PlainOpNamesOn();
  c->place_movers = PlaceMovers();
  c->gpu_correlation = CorrelateGpu(*c);
}

}  // namespace paddle_prof::internal
