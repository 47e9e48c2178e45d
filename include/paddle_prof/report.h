// paddle_prof: the Report that DisableProfiler() returns.
//
// One row per event name and tag (and thread, when per-thread rows are asked for),
// with call counts and times, plus the window's wall time, steps and warnings.
// Table() is the text report; ToJson() is the summary JSON (schema version 1).
//
//   paddle_prof::Report r = paddle_prof::StopProfiler(paddle_prof::EventSortingKey::kSelf);
//   for (const auto& row : r.events) std::cout << row.name << " " << row.self_ms << "\n";
//   std::cout << r.Table();
#ifndef PADDLE_PROF_REPORT_H_
#define PADDLE_PROF_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace paddle_prof {

enum class ProfilerState { kDisabled, kCPU, kCUDA, kAll };
enum class EventSortingKey {
  kDefault,  // the same as kTotal
  kCalls,
  kTotal,
  kSelf,
  kMin,
  kMax,
  kAve,
  kPeakMemory,
  kLiveMemory
};

// "CPU", "GPU", "All" ("disabled" for kDisabled).
std::string ProfilerStateName(ProfilerState state);
// "total", "calls", "self", "min", "max", "ave", "peak_memory", "live_memory"
// (kDefault is "total").
std::string SortingKeyName(EventSortingKey key);
// The inverse of SortingKeyName; throws std::invalid_argument naming the valid keys.
EventSortingKey ParseSortingKey(const std::string& name);
// "CPU", "GPU" or "All"; throws std::invalid_argument naming the valid states.
ProfilerState ParseProfilerState(const std::string& name);

// Memory figures of one row on one place, in bytes.
struct MemoryStats {
  int64_t peak_bytes = 0;
  int64_t alloc_bytes = 0;
  int64_t alloc_count = 0;
  int64_t free_bytes = 0;
  int64_t free_count = 0;
  int64_t live_bytes = 0;
};

struct EventRow {
  std::string name;
  std::optional<std::string> tag;
  std::optional<int> thread;  // set only for per-thread rows
  int64_t calls = 0;
  double total_ms = 0;  // sum of the calls' inclusive durations
  double self_ms = 0;   // total minus time in nested events of the same thread
  double min_ms = 0;
  double max_ms = 0;
  double ave_ms = 0;  // total_ms / calls, kept within [min_ms, max_ms]
  double ratio = 0;   // self_ms / sum of self_ms over all rows
  std::optional<double> gpu_total_ms, gpu_min_ms, gpu_max_ms, gpu_ave_ms;
  std::map<std::string, MemoryStats> memory;  // by place name
};

struct RowBytes {
  std::string name;
  std::optional<std::string> tag;
  int64_t bytes = 0;
};

struct PlaceSummary {
  std::string place;  // "CPU", "CUDA:0", "native"
  int64_t peak_bytes = 0;
  int64_t start_bytes = 0;
  int64_t end_bytes = 0;
  int64_t untracked_frees = 0;
  std::vector<RowBytes> at_peak;  // rows holding memory at the high-water mark
};

struct StepSummary {
  int step = 0;
  double wall_ms = 0;
  std::map<std::string, int64_t> peak_bytes;  // by place name
  std::map<std::string, int64_t> end_bytes;
  // The process at the step's end: "rss_bytes", "heap_in_use_bytes", "heap_free_bytes"
  // (freed but kept by malloc), "malloc_mmap_bytes".
  std::map<std::string, int64_t> process;
};

// What an out-of-memory dump says of the allocation that failed.
struct OutOfMemory {
  std::string place;
  int64_t requested_bytes = 0;
  std::string event;              // the innermost event open on the failing thread
  std::vector<std::string> path;  // the events open there, outermost first
  int64_t live_bytes = 0;         // what the place held as it failed
};

class Report {
 public:
  ProfilerState state = ProfilerState::kCPU;
  EventSortingKey sorted_by = EventSortingKey::kTotal;
  double wall_ms = 0;  // enable (or last reset) to disable, on the events' clock
  std::vector<PlaceSummary> places;
  std::vector<EventRow> events;  // sorted by `sorted_by`, largest first
  std::vector<StepSummary> steps;
  int64_t dropped_events = 0;  // scopes not recorded because the buffer bound was hit
  std::vector<std::string> warnings;
  std::optional<int> cycle;        // of a schedule (Python's paddle_prof.schedule), from 0
  std::optional<OutOfMemory> oom;  // set in the dump an allocation failure wrote
  std::string summary_path;        // where the summary was written; empty when it was not

  // Rows the printed table shows by default (FLAGS_paddle_prof_row_limit).
  static constexpr int kDefaultRowLimit = 50;
  // The text report: a header line, then one aligned row per event; `detailed` adds
  // allocated and freed bytes and counts per place. Past `row_limit` rows (0: no limit),
  // a line says how many more there are and where they all are: the summary file, or
  // the Report itself, which always holds every row.
  std::string Table(bool detailed = false, int row_limit = kDefaultRowLimit) const;
  // The summary JSON (version 1), numbers in shortest round-trip form.
  std::string ToJson() const;
};

}  // namespace paddle_prof

#endif  // PADDLE_PROF_REPORT_H_
