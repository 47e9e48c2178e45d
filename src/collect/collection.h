// What the collector hands to every output (report builder, trace, summary): the
// window's bounds and clock rate, each thread's records (read in place through
// record_cursor.h, while `records_lock` holds the recorder registry) and the counts
// behind the warnings. Outputs read only this, never the live recorders or the flags.
#ifndef PADDLE_PROF_SRC_COLLECTION_H_
#define PADDLE_PROF_SRC_COLLECTION_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "call_rows.h"
#include "event_buffer.h"
#include "gpu_activity.h"
#include "gpu_correlation.h"
#include "live_block_table.h"
#include "memory_tracker.h"
#include "module_registry.h"
#include "native_peak.h"
#include "open_call.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

struct ThreadSnapshot {
  int index = 0;  // "thread0" in per-thread rows
  int os_tid = 0;
  std::string name;
  const EventBuffer* buffer = nullptr;
  size_t first = 0;  // the oldest record kept (a flight recorder drops older ones)
  size_t size = 0;   // records published when the window closed
  // Calls begun in the window by then, less those dropped or ended on another thread:
  // each is a call record within `size`, or a call left out as still open.
  int64_t begun_unreported = 0;
  NativeShare native;  // its share of the native place at the window's peak
};

// One allocation or free of the window, from any thread.
struct MemoryEvent {
  uint64_t tick;
  int16_t place;     // one of at most 16 (EventRecord's 4 bits): an event is 48 bytes
  uint8_t kind = 0;  // a free's: what its block was known to be (block_kind.h)
  // Where the block was allocated: its thread's index (ThreadSnapshot::index) and tick
  // (-1 and 0 when not in the window, or its free's origin record was lost). An
  // allocation's own thread and tick.
  int alloc_thread = -1;
  int64_t delta;     // + bytes allocated, - bytes freed
  const char* name;  // the event that owns the block (kNoEventName, kBeforeWindowName)
  const char* tag;
  uint64_t alloc_tick = 0;
};
static_assert(sizeof(MemoryEvent) == 48, "the report's passes read millions of them");

// What one thread did with no event open, on one place: the "[no event]" row.
struct NoEventUsage {
  int thread = 0;
  int place = 0;
  MemoryStats stats;  // live_bytes unused: live blocks are counted apart
};

// What MarkStep() took when a step closed.
struct StepMark {
  uint64_t tick = 0;
  std::map<std::string, int64_t> peak_bytes;  // by place name: the step's high-water mark
  std::map<std::string, int64_t> end_bytes;   // live bytes as it closed
  std::map<std::string, int64_t> process;     // ReadProcessMemory()
  std::optional<int64_t> samples;             // MarkStep(num_samples)
};

struct Collection {
  ProfilerState state = ProfilerState::kCPU;
  ProcessInfo process;    // who recorded it
  WindowClock clock;      // the wall-clock time of start_tick
  bool snapshot = false;  // of a window that goes on (SnapshotProfiler)
  uint64_t start_tick = 0;
  uint64_t end_tick = 0;
  double ns_per_tick = 1.0;
  std::vector<ThreadSnapshot> threads;
  std::vector<StepMark> steps;       // one per MarkStep(), in order
  std::vector<PlaceSummary> places;  // by place index; at_peak left to the report builder
  std::vector<ModuleInfo> modules;   // noted so far (paddle_prof.torch's module paths)
  // FLAGS_paddle_prof_memory_timeline as the window opened: with it, the replay of the
  // memory events finds each place's and step's peak; without it, the threads' shares
  // did (place_shares.h).
  bool memory_timeline = true;
  // By place index: the most threads that moved its bytes between two of its samples;
  // without the memory timeline, past 1 its peak_bytes are upper bounds.
  std::vector<int> place_movers;
  // The native place's peak above its start as its word kept it (native_peak.h), -1
  // without the place; each thread's `native` share is of that moment.
  int64_t native_peak = -1;
  std::vector<NoEventUsage> no_event;
  std::vector<LiveBlock> live_blocks;      // allocated in the window and still live
  // Blocks allocated before the window and still live: bytes by (place, kind).
  std::map<std::pair<int, uint8_t>, int64_t> earlier_live;
  std::vector<MemoryEvent> memory_events;  // the threads' allocations and frees, by time
  // By position in `threads`, where read with the memory events (record_scan.h).
  std::vector<ThreadCalls> thread_calls;
  std::vector<OpenCall> open_calls;        // the collecting thread's, outermost first
  bool gpu_traced = false;                 // state kCUDA or kAll
  bool record_stacks = false;              // top-level calls carry their stack ids
  bool memory_categories = false;          // the report splits memory by category
  bool plain_op_names = false;             // ops are named "matmul", not "aten::mm"
  GpuCapture gpu;                          // what ran on the GPU, times in ticks
  GpuCorrelation gpu_correlation;          // which call launched it
  int64_t open_before_reset = 0;           // calls begun before a reset, still open at the stop
  std::optional<OutOfMemory> oom;          // the failure an out-of-memory dump is for
  int keep_last_steps = 0;                 // a flight recorder's bound, 0 for none
  int64_t steps_dropped = 0;               // the steps before `steps`, no longer held
  int64_t failures_after_oom = 0;          // allocation failures after the window's dump
  // Summed over the window's recorders.
  int64_t forced_closes = 0;
  int64_t foreign_ends = 0;
  int64_t dropped = 0;
  int64_t dropped_memory = 0;         // memory records lost to the buffer bound
  size_t buffer_chunks = 0;           // EventBuffer chunks of all threads, when it closed
  int64_t buffer_bound_mb = 0;        // FLAGS_paddle_prof_max_buffer_mb, when it closed
  int64_t lost_places = 0;            // scope figures lost: a scope touched too many places
  int64_t autograd_ops = 0;           // calls recorded with torch's sequence number
  TrackerCounts tracker;              // during the window
  std::vector<std::string> warnings;  // found while collecting (the clock's)
  // FLAGS_paddle_prof_trace_counter_points, when it closed: the most points of a place's
  // memory counter in the trace (0: no bound).
  int64_t trace_counter_points = 100000;
  // Keeps the recorders' buffers in place while `threads` point into them.
  std::unique_lock<std::mutex> records_lock;

  // Whether the report replays the memory events for the places' and steps' peaks, and
  // splits the memory by category.
  bool Replayed() const { return memory_timeline && dropped_memory == 0; }
  bool Categorised() const { return memory_categories && Replayed(); }
  double TicksToMs(uint64_t ticks) const { return static_cast<double>(ticks) * ns_per_tick / 1e6; }
  double TicksToUs(uint64_t ticks) const { return static_cast<double>(ticks) * ns_per_tick / 1e3; }
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_COLLECTION_H_
