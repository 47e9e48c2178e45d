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

// How one row's total time spreads over the inputs of a merge (paddle_prof.merge): each
// input counts, 0 where it has no such row; `median` is the lower middle value.
struct RowSpread {
  std::string by = "rank";  // "rank" when every input has one, else "process"
  double min_ms = 0;
  double median_ms = 0;
  double max_ms = 0;
  int64_t argmax = 0;  // the rank (or pid) of the slowest input
};

// Where a row's calls came from, with record_stacks: the source frame of the top-level
// call they ran in ("train.py:42 in forward"), and how many of them did.
struct SourceCalls {
  std::string frame;
  int64_t calls = 0;
};

// A row's call durations as the summary keeps them, so that merged rows have
// percentiles over all their calls: the distinct durations in nanoseconds, ascending,
// with how many calls took each. At most kMaxDistinct entries: past that, each duration
// is rounded down to its `significant_bits` leading binary digits (a relative error
// under 2^(1 - significant_bits)); 0 when exact.
struct CallDurationCounts {
  static constexpr size_t kMaxDistinct = 512;
  std::vector<int64_t> ns;
  std::vector<int64_t> calls;
  int significant_bits = 0;
};

struct EventRow {
  std::string name;
  std::optional<std::string> tag;
  std::optional<int> thread;       // set only for per-thread rows
  std::optional<int64_t> process;  // set only for per-process rows: the pid
  int64_t calls = 0;
  double total_ms = 0;  // sum of the calls' inclusive durations
  double self_ms = 0;   // total minus time in nested events of the same thread
  double min_ms = 0;
  double max_ms = 0;
  double ave_ms = 0;  // total_ms / calls, kept within [min_ms, max_ms]
  // Exact nearest-rank percentiles of the calls' durations (0 without calls); a merged
  // row's are over all its calls, to `durations`' rounding (0 where an input's summary
  // has no durations, being older).
  double p10_ms = 0, p50_ms = 0, p90_ms = 0, p99_ms = 0;
  CallDurationCounts durations;
  double ratio = 0;   // self_ms / sum of self_ms over all rows
  std::optional<double> gpu_total_ms, gpu_min_ms, gpu_max_ms, gpu_ave_ms;
  std::map<std::string, MemoryStats> memory;  // by place name
  std::optional<RowSpread> spread;            // set in merged reports
  static constexpr size_t kMaxSources = 3;
  std::vector<SourceCalls> sources;  // record_stacks: up to kMaxSources, most calls first
};

// Bytes a row held at a moment, by where they were allocated.
struct RowBytes {
  std::string name;
  std::optional<std::string> tag;
  int64_t bytes = 0;
  // The events open on the allocating thread when the blocks were allocated, outermost
  // first, ending with `name` (empty for "[no event]" and "[before profiling]").
  std::vector<std::string> path;
  // With record_stacks: the innermost frame of the program's own code in the stack of
  // the top-level call that allocated them ("train.py:42 in forward").
  std::optional<std::string> source;
  // Under --native with record_stacks, on the native place: the native frames (innermost
  // first, up to 16) that allocated most of its blocks held at the peak and still live
  // at the end.
  std::vector<std::string> native_stack;
};

struct PlaceSummary {
  std::string place;  // "CPU", "CUDA:0", "native"
  int64_t peak_bytes = 0;
  int64_t start_bytes = 0;
  int64_t end_bytes = 0;
  int64_t untracked_frees = 0;
  std::vector<RowBytes> at_peak;   // rows holding memory at the high-water mark
  std::optional<int64_t> process;  // the pid, once reports of several processes merge
  // In a merged report, the input it came from as the merge names it: "rank 3", or
  // "node2 pid 1" where the inputs have no ranks of their own (a child of a rank, too).
  std::string input;
  // paddle_prof.torch's memory categories ("parameter", "gradient", "optimizer_state",
  // "input", "temporary", "activation", "other"), each place's live bytes split at its
  // peak and at the window's end; empty where the window did not categorise memory.
  std::map<std::string, int64_t> categories_at_peak;
  std::map<std::string, int64_t> categories_end;
  // The modules whose forwards allocated the most of the activations live at the peak
  // ("Net.block.fc1"), up to five, most first.
  struct ModuleBytes {
    std::string module;
    int64_t bytes = 0;
  };
  std::vector<ModuleBytes> activations_at_peak;
};

// A place's live bytes over the window: t_ms[i] (from the window's start, on the report's
// clock) and bytes[i], in time order, at most 2,000 points, the place's peak among them.
struct TimelinePoints {
  std::vector<double> t_ms;
  std::vector<int64_t> bytes;
  // With memory categories: each category's bytes at each point, aligned with t_ms.
  std::map<std::string, std::vector<int64_t>> by_category;
};

// How a training step's wall time splits (paddle_prof.torch): inside a DataLoader
// iterator's __next__, the root modules' forward calls, autograd's backward, the
// optimizer's step and zero_grad, and the rest. The five add up to the step's wall time.
struct StepPhases {
  double data = 0;
  double forward = 0;
  double backward = 0;
  double optimizer = 0;
  double other = 0;

  StepPhases& operator+=(const StepPhases& o) {
    data += o.data;
    forward += o.forward;
    backward += o.backward;
    optimizer += o.optimizer;
    other += o.other;
    return *this;
  }
};

struct StepSummary {
  int step = 0;
  double wall_ms = 0;
  std::optional<int64_t> samples;  // the batch size MarkStep(num_samples) gave
  StepPhases phases_ms;
  std::map<std::string, int64_t> peak_bytes;  // by place name
  std::map<std::string, int64_t> end_bytes;
  // The process at the step's end: "rss_bytes", "heap_in_use_bytes", "heap_free_bytes"
  // (freed but kept by malloc), "malloc_mmap_bytes".
  std::map<std::string, int64_t> process;
  // Time some thread spent in collective communication (torch.distributed) during the
  // step: what a rank of a synchronous job waited for the others.
  double comm_ms = 0;
  // Merged reports: each input's wall time for this step, by rank (or pid), and the
  // slowest of them.
  std::map<std::string, double> wall_ms_by;
  std::optional<int64_t> slowest;
  std::map<std::string, StepPhases> phases_ms_by;  // merged reports: each input's phases
};

// Medians over the steps: samples per second of step time (none without samples), the
// data phase, and the step's wall time.
struct Throughput {
  std::optional<double> samples_per_s;
  double reader_cost_ms = 0;
  double batch_cost_ms = 0;
};

// One module of the model (paddle_prof.torch, modules=True), by its path: the events
// "nn.Module: <path>" (forward) and "nn.Module: <path>.backward".
struct ModuleMemory {
  int64_t peak_bytes = 0;        // the forward calls' peak, as a row's
  int64_t activation_bytes = 0;  // the most a forward call allocated and left alive
};
struct ModuleSummary {
  std::string path;  // "ResNet.layer1.0.conv1"
  std::string type;  // "Conv2d"
  int depth = 0;     // 0 for a root
  int64_t calls = 0;
  double forward_ms = 0;
  double backward_ms = 0;
  int64_t params = 0;  // elements of its parameters, children included
  int64_t param_bytes = 0;
  std::map<std::string, ModuleMemory> memory;  // by place name
};

// What to change about something the window measured, and the figures that say so.
struct Advice {
  // "varying_shapes", "malloc_retention", "data_bound", "activation_bound", "small_ops"
  // or "straggler".
  std::string kind;
  std::string message;           // what was found, with the figures that fired it
  std::string fix;               // what to change
  std::optional<int64_t> bytes;  // the memory at stake, if memory
  std::optional<double> ms;      // the time at stake, if time
};

// What an out-of-memory dump says of the allocation that failed.
struct OutOfMemory {
  std::string place;
  uint64_t requested_bytes = 0;  // as asked: above INT64_MAX too
  std::string event;              // the innermost event open on the failing thread
  std::vector<std::string> path;  // the events open there, outermost first
  int64_t live_bytes = 0;         // what the place held as it failed
  // What held it: the window's live blocks on the place by event, tag and call path,
  // largest first (at most 10).
  std::vector<RowBytes> holders;
};

// The process a report is of.
struct ProcessInfo {
  int64_t pid = 0;
  std::string host;
  std::optional<int> rank;  // torch.distributed's, else RANK, else none
  std::optional<int> world_size;
  std::optional<int64_t> parent_pid;  // a child of a profiled process
  std::string role = "main";          // "main", "child", "worker" (a DataLoader's)
  std::optional<int> worker_id;       // a DataLoader worker's
  std::string backend;                // torch.distributed's ("gloo", "nccl"); not in the summary
};

// When the window started, for lining up processes: its trace's ts 0 on CLOCK_REALTIME,
// and this process's clock offset to rank 0's (add it to read rank 0's time).
struct WindowClock {
  int64_t unix_ns = 0;
  int64_t offset_ns = 0;
};

// A child process merged into its parent's report.
struct ChildProcess {
  int64_t pid = 0;
  std::string role = "child";
  std::optional<int> worker_id;
  int64_t calls = 0;
  double wall_ms = 0;
  std::string summary_path;
};

// One input of a merged report.
struct MergedInput {
  std::string path;  // its summary file; empty for a report merged from memory
  ProcessInfo process;
  double start_ms = 0;  // when its window started, on the merged report's clock
  std::string label;    // "rank 3", or "node2 pid 1" where the inputs have no ranks
  double wall_ms = 0;   // its window's wall time
  // What the merge's maps by input (a step's wall_ms_by, peaks_by) key it by: its rank,
  // else its pid, else (pids that repeat) its label.
  std::string key;
};

class Report {
 public:
  ProfilerState state = ProfilerState::kCPU;
  EventSortingKey sorted_by = EventSortingKey::kTotal;
  double wall_ms = 0;  // enable (or last reset) to disable, on the events' clock
  std::vector<PlaceSummary> places;
  // By place label: the place's name ("CPU"), "CPU (rank 3)" or "CPU (node2 pid 1)" in a
  // merged report, "CPU (pid 1234)" for a child's place, as the table prints it; one per
  // entry of `places`.
  std::map<std::string, TimelinePoints> timeline;
  std::vector<EventRow> events;  // sorted by `sorted_by`, largest first
  std::vector<StepSummary> steps;
  StepPhases phases_ms;                  // summed over the steps
  std::optional<Throughput> throughput;  // set when there are steps
  std::vector<ModuleSummary> modules;    // in order of first call
  int64_t dropped_events = 0;  // scopes not recorded because the buffer bound was hit
  std::vector<std::string> warnings;
  std::vector<Advice> advice;
  // Caveats on how a figure was measured ("native: peak_bytes is the highest of ..."):
  // worth knowing, nothing gone wrong.
  std::vector<std::string> notes;
  std::optional<int> cycle;        // of a schedule (Python's paddle_prof.schedule), from 0
  std::optional<OutOfMemory> oom;  // set in the dump an allocation failure wrote
  ProcessInfo process;
  WindowClock clock;
  std::vector<ChildProcess> processes;   // children merged into this report
  std::vector<MergedInput> merged_from;  // set in merged reports
  // Merged reports: each input's peak per place kind ("CPU", "CUDA": each rank's own
  // device), by the input's key (its rank, else its pid; its label where pids repeat).
  std::map<std::string, std::map<std::string, int64_t>> peaks_by;
  std::string summary_path;              // where the summary was written (or read); empty otherwise

  // Rows the printed table shows by default (FLAGS_paddle_prof_row_limit).
  static constexpr int kDefaultRowLimit = 50;
  // The columns of the terminal the text report fits by default.
  static constexpr int kDefaultWidth = 120;
  // The text report, each thing once, in order: the header and memory lines, one
  // aligned row per event, warnings, why memory grew, advice, notes. `detailed` adds the
  // calls' P50 and P99, and allocated and freed bytes and counts per place. Past
  // `row_limit` rows (0: no limit), a line says how many more there are and where they
  // all are: the summary file, or the Report itself, which always holds every row.
  // Lines fit `width` columns (0: no limit): shape tags lose trailing empty arguments
  // and, where still too wide, the arguments the shown rows of that name share; the
  // text wraps. The files keep the full names.
  std::string Table(bool detailed = false, int row_limit = kDefaultRowLimit,
                    int width = kDefaultWidth) const;
  // The modules as a tree, children indented under their parents: path, type, calls,
  // forward and backward time, parameters, peak memory and activations.
  std::string ModuleTable() const;
  // Paddle's model summary: the step phases with calls (steps), total, average, max,
  // min and ratio of the steps' wall time.
  std::string PhaseTable() const;
  // The summary JSON (version 1), numbers in shortest round-trip form.
  std::string ToJson() const;
};

}  // namespace paddle_prof

#endif  // PADDLE_PROF_REPORT_H_
