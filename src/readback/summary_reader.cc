#include "summary_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "call_durations.h"
#include "json_document.h"
#include "summary_format.h"

namespace paddle_prof::internal {

namespace {

// Deeper than any summary: the reader recurses once per level.
constexpr int kMaxNesting = 512;

// What a number read is, for an error: itself, or the type found instead.
std::string Found(JsonValue j) { return j.is_number() ? j.NumberText() : j.type_name(); }

// The member `key` of object `j`, which a summary always has.
JsonValue At(JsonValue j, const char* key) {
  if (!j.is_object()) {
    throw std::invalid_argument(std::string("'") + key + "' is in " + j.type_name() +
                                ", not in an object");
  }
  const std::optional<JsonValue> found = j.find(key);
  if (!found) throw std::invalid_argument(std::string("'") + key + "' is missing");
  return *found;
}

// `j`, named `key` in errors, as `type` wants it.
void Expect(JsonValue j, const char* key, bool is, const char* type) {
  if (!is) {
    throw std::invalid_argument(std::string("'") + key + "' is " + Found(j) + ", not " + type);
  }
}

JsonValue::Elements Array(JsonValue j, const char* key) {
  Expect(j, key, j.is_array(), "an array");
  return j.elements();
}

JsonValue::Members Object(JsonValue j, const char* key) {
  Expect(j, key, j.is_object(), "an object");
  return j.members();
}

std::string String(JsonValue j, const char* key) {
  Expect(j, key, j.is_string(), "a string");
  return std::string(j.as_string());
}

std::vector<std::string> Strings(JsonValue j, const char* key) {
  std::vector<std::string> read;
  for (const JsonValue s : Array(j, key)) read.push_back(String(s, key));
  return read;
}

// Integers as the writer writes them: whole JSON numbers in T's range, or a narrower
// one, never a float or an integer that T would wrap.
template <typename T>
T Integer(JsonValue j, const char* key, T lowest = std::numeric_limits<T>::min(),
          T highest = std::numeric_limits<T>::max()) {
  bool fits = false;  // `highest` is never negative
  if (j.type() == JsonValue::Type::kUnsigned) {
    fits = j.as_unsigned() <= static_cast<uint64_t>(highest);
  } else if (j.type() == JsonValue::Type::kInteger) {
    const int64_t v = j.as_integer();
    fits = v >= 0 ? static_cast<uint64_t>(v) <= static_cast<uint64_t>(highest)  // -0
                  : std::is_signed_v<T> && v >= static_cast<int64_t>(lowest);
  }
  if (!fits) {
    throw std::invalid_argument(std::string("'") + key + "' is " + Found(j) +
                                ", not an integer from " + std::to_string(lowest) + " to " +
                                std::to_string(highest));
  }
  return j.type() == JsonValue::Type::kUnsigned ? static_cast<T>(j.as_unsigned())
                                                 : static_cast<T>(j.as_integer());
}

// Times and ratios: finite JSON numbers, small enough that no sum of them over inputs,
// rows and children reaches infinity (which the writer would write as null).
double Number(JsonValue j, const char* key) {
  if (!j.is_number() || !(std::abs(j.as_double()) <= 1e300)) {
    throw std::invalid_argument(std::string("'") + key + "' is " + Found(j) +
                                ", not a number from -1e300 to 1e300");
  }
  return j.as_double();
}

template <typename T, typename... Range>
T Get(JsonValue j, const char* key, Range... range) {
  if constexpr (std::is_floating_point_v<T>) {
    return Number(At(j, key), key);
  } else {
    return Integer<T>(At(j, key), key, range...);
  }
}

// Optional fields are null or absent.
template <typename T>
std::optional<T> Optional(JsonValue j, const char* key) {
  const std::optional<JsonValue> found = j.find(key);
  if (!found || found->is_null()) return std::nullopt;
  if constexpr (std::is_integral_v<T>) {
    return Integer<T>(*found, key);
  } else if constexpr (std::is_floating_point_v<T>) {
    return Number(*found, key);
  } else {
    return String(*found, key);
  }
}

// A JSON object of integers, by name. Of members that share a name, the first counts
// here as everywhere in the reader (JsonValue::find).
std::map<std::string, int64_t> IntegersByName(
    JsonValue object, const char* key, int64_t lowest = std::numeric_limits<int64_t>::min()) {
  std::map<std::string, int64_t> read;
  for (const auto& [name, value] : Object(object, key)) {
    read.emplace_hint(read.end(), name, Integer<int64_t>(value, key, lowest));
  }
  return read;
}

std::map<std::string, int64_t> IntegerMap(JsonValue j, const char* key,
                                          int64_t lowest = std::numeric_limits<int64_t>::min()) {
  return IntegersByName(At(j, key), key, lowest);
}

// Bytes and counts, which no writer writes below 0: a negative one would pass for less
// memory in a diff and shrink a merge's sums.
int64_t Count(JsonValue j, const char* key) { return Get<int64_t>(j, key, int64_t{0}); }

MemoryStats ReadMemory(JsonValue j) {
  MemoryStats m;
  m.peak_bytes = Count(j, "peak_bytes");
  m.alloc_bytes = Count(j, "alloc_bytes");
  m.alloc_count = Count(j, "alloc_count");
  m.free_bytes = Count(j, "free_bytes");
  m.free_count = Count(j, "free_count");
  m.live_bytes = Count(j, "live_bytes");
  return m;
}

EventRow ReadRow(JsonValue j) {
  EventRow row;
  row.name = String(At(j, "name"), "name");
  row.tag = Optional<std::string>(j, "tag");
  row.thread = Optional<int>(j, "thread");
  row.process = Optional<int64_t>(j, "process");
  row.calls = Count(j, "calls");
  row.total_ms = Get<double>(j, "total_ms");
  row.self_ms = Get<double>(j, "self_ms");
  row.min_ms = Get<double>(j, "min_ms");
  row.max_ms = Get<double>(j, "max_ms");
  row.ave_ms = Get<double>(j, "ave_ms");
  row.ratio = Get<double>(j, "ratio");
  row.p10_ms = Optional<double>(j, "p10_ms").value_or(0);
  row.p50_ms = Optional<double>(j, "p50_ms").value_or(0);
  row.p90_ms = Optional<double>(j, "p90_ms").value_or(0);
  row.p99_ms = Optional<double>(j, "p99_ms").value_or(0);
  row.gpu_total_ms = Optional<double>(j, "gpu_total_ms");
  row.gpu_min_ms = Optional<double>(j, "gpu_min_ms");
  row.gpu_max_ms = Optional<double>(j, "gpu_max_ms");
  row.gpu_ave_ms = Optional<double>(j, "gpu_ave_ms");
  // As the writer writes rows, and merges take them (an average clamped to the extremes).
  const auto in_row = [&row] { return "in row '" + row.name + "', "; };
  if (row.min_ms > row.max_ms) {
    throw std::invalid_argument(in_row() + "'min_ms' is above 'max_ms'");
  }
  if (const std::optional<JsonValue> durations = j.find("durations")) {
    if (!(row.min_ms <= row.p10_ms && row.p10_ms <= row.p50_ms && row.p50_ms <= row.p90_ms &&
          row.p90_ms <= row.p99_ms && row.p99_ms <= row.max_ms)) {
      throw std::invalid_argument(in_row() +
                                  "the percentiles are not in order within min and max");
    }
    const JsonValue ns = At(*durations, "ns");
    const JsonValue calls = At(*durations, "calls");
    row.durations.ns.reserve(ns.is_array() ? ns.size() : 0);
    for (const JsonValue v : Array(ns, "ns")) row.durations.ns.push_back(Integer<int64_t>(v, "ns"));
    row.durations.calls.reserve(calls.is_array() ? calls.size() : 0);
    for (const JsonValue v : Array(calls, "calls")) {
      row.durations.calls.push_back(Integer<int64_t>(v, "calls"));
    }
    row.durations.significant_bits = Get<int>(*durations, "significant_bits");
    if (!CountsAreWhole(row.durations, row.calls)) {
      throw std::invalid_argument(in_row() + "'durations' are not ascending durations whose "
                                  "calls add up to the row's");
    }
  }
  if (row.gpu_total_ms.has_value() != row.gpu_min_ms.has_value() ||
      row.gpu_total_ms.has_value() != row.gpu_max_ms.has_value()) {
    throw std::invalid_argument(in_row() +
                                "'gpu_total_ms', 'gpu_min_ms' and 'gpu_max_ms' are "
                                "not all null or all numbers");
  }
  if (row.gpu_min_ms > row.gpu_max_ms) {
    throw std::invalid_argument(in_row() + "'gpu_min_ms' is above 'gpu_max_ms'");
  }
  for (const auto& [place, stats] : Object(At(j, "memory"), "memory")) {
    row.memory.emplace(place, ReadMemory(stats));
  }
  if (const std::optional<JsonValue> spread = j.find("spread"); spread && !spread->is_null()) {
    const JsonValue total = At(*spread, "total_ms");
    row.spread = RowSpread{String(At(*spread, "by"), "by"), Get<double>(total, "min"),
                           Get<double>(total, "median"), Get<double>(total, "max"),
                           Get<int64_t>(total, "argmax")};
  }
  if (const std::optional<JsonValue> sources = j.find("sources")) {
    for (const JsonValue s : Array(*sources, "sources")) {
      row.sources.push_back({String(At(s, "frame"), "frame"), Count(s, "calls")});
    }
  }
  return row;
}

std::vector<RowBytes> ReadHolders(JsonValue holders, const char* key) {
  std::vector<RowBytes> read;
  for (const JsonValue holder : Array(holders, key)) {
    RowBytes r;
    r.name = String(At(holder, "name"), "name");
    r.tag = Optional<std::string>(holder, "tag");
    r.bytes = Count(holder, "bytes");
    // Summaries written before call paths have none.
    if (const std::optional<JsonValue> path = holder.find("path")) r.path = Strings(*path, "path");
    r.source = Optional<std::string>(holder, "source");
    if (const std::optional<JsonValue> stack = holder.find("native_stack")) {
      r.native_stack = Strings(*stack, "native_stack");
    }
    read.push_back(std::move(r));
  }
  return read;
}

PlaceSummary ReadPlace(JsonValue j) {
  PlaceSummary p;
  p.place = String(At(j, "place"), "place");
  p.process = Optional<int64_t>(j, "process");
  p.input = Optional<std::string>(j, "input").value_or("");
  p.peak_bytes = Count(j, "peak_bytes");
  p.start_bytes = Count(j, "start_bytes");
  p.end_bytes = Count(j, "end_bytes");
  p.untracked_frees = Count(j, "untracked_frees");
  p.at_peak = ReadHolders(At(j, "at_peak"), "at_peak");
  if (j.find("categories_at_peak")) {  // a window that categorised memory
    p.categories_at_peak = IntegerMap(j, "categories_at_peak");
    p.categories_end = IntegerMap(j, "categories_end");
    if (const std::optional<JsonValue> modules = j.find("activations_at_peak")) {
      for (const JsonValue m : Array(*modules, "activations_at_peak")) {
        p.activations_at_peak.push_back({String(At(m, "module"), "module"),
                                         Count(m, "bytes")});
      }
    }
  }
  return p;
}

// Fields of Part 3, absent from older summaries: read when present.
StepPhases ReadPhases(JsonValue j) {
  StepPhases p;
  p.data = Get<double>(j, "data");
  p.forward = Get<double>(j, "forward");
  p.backward = Get<double>(j, "backward");
  p.optimizer = Get<double>(j, "optimizer");
  p.other = Get<double>(j, "other");
  return p;
}

ModuleSummary ReadModule(JsonValue j) {
  ModuleSummary m;
  m.path = String(At(j, "path"), "path");
  m.type = String(At(j, "type"), "type");
  m.depth = Get<int>(j, "depth");
  m.calls = Count(j, "calls");
  m.forward_ms = Get<double>(j, "forward_ms");
  m.backward_ms = Get<double>(j, "backward_ms");
  m.params = Count(j, "params");
  m.param_bytes = Count(j, "param_bytes");
  for (const auto& [place, memory] : Object(At(j, "memory"), "memory")) {
    m.memory.emplace(place, ModuleMemory{Count(memory, "peak_bytes"),
                                         Count(memory, "activation_bytes")});
  }
  return m;
}

StepSummary ReadStep(JsonValue j) {
  StepSummary s;
  s.step = Get<int>(j, "step");
  s.wall_ms = Get<double>(j, "wall_ms");
  s.peak_bytes = IntegerMap(j, "peak_bytes", 0);
  s.end_bytes = IntegerMap(j, "end_bytes", 0);
  if (j.find("process")) s.process = IntegerMap(j, "process");
  if (j.find("comm_ms")) s.comm_ms = Get<double>(j, "comm_ms");
  if (const std::optional<JsonValue> by = j.find("wall_ms_by")) {
    for (const auto& [key, ms] : Object(*by, "wall_ms_by")) {
      s.wall_ms_by.emplace(key, Number(ms, "wall_ms_by"));
    }
  }
  s.slowest = Optional<int64_t>(j, "slowest");
  s.samples = Optional<int64_t>(j, "samples");
  if (const std::optional<JsonValue> phases = j.find("phases_ms")) {
    s.phases_ms = ReadPhases(*phases);
  }
  if (const std::optional<JsonValue> by = j.find("phases_ms_by")) {
    for (const auto& [key, phases] : Object(*by, "phases_ms_by")) {
      s.phases_ms_by.emplace(key, ReadPhases(phases));
    }
  }
  return s;
}

ProcessInfo ReadProcess(JsonValue j) {
  ProcessInfo p;
  p.pid = Get<int64_t>(j, "pid");
  p.host = String(At(j, "host"), "host");
  p.rank = Optional<int>(j, "rank");
  p.world_size = Optional<int>(j, "world_size");
  p.parent_pid = Optional<int64_t>(j, "parent_pid");
  p.role = String(At(j, "role"), "role");
  p.worker_id = Optional<int>(j, "worker_id");
  return p;
}

void ReadTimeline(JsonValue timeline, Report* r) {
  for (const auto& [name, points] : Object(timeline, "timeline")) {
    const std::string label(name);
    if (r->timeline.count(label) != 0) continue;  // the first of two that share a label
    TimelinePoints& read = r->timeline[label];
    const JsonValue t_ms = At(points, "t_ms");
    const JsonValue bytes = At(points, "bytes");
    if (!t_ms.is_array() || !bytes.is_array() || t_ms.size() != bytes.size()) {
      throw std::invalid_argument("timeline '" + label + "' is not two arrays of one length");
    }
    read.t_ms.reserve(t_ms.size());
    for (const JsonValue t : t_ms.elements()) read.t_ms.push_back(Number(t, "t_ms"));
    read.bytes.reserve(bytes.size());
    for (const JsonValue b : bytes.elements()) read.bytes.push_back(Integer<int64_t>(b, "bytes"));
    if (const std::optional<JsonValue> by = points.find("by_category")) {
      if (!by->is_object()) throw std::invalid_argument("timeline '" + label + "': by_category");
      for (const auto& [category, series] : by->members()) {
        const auto [at, added] = read.by_category.try_emplace(std::string(category));
        if (!added) continue;  // the first of two that share a name
        if (!series.is_array() || series.size() != t_ms.size()) {
          throw std::invalid_argument("timeline '" + label + "': by_category '" +
                                      std::string(category) + "' is not an array as long as t_ms");
        }
        std::vector<int64_t>& read_series = at->second;
        read_series.reserve(series.size());
        for (const JsonValue b : series.elements()) {
          read_series.push_back(Integer<int64_t>(b, "by_category"));
        }
      }
    }
  }
}

Report Read(JsonValue j) {
  Report r;
  r.state = ParseProfilerState(String(At(j, "state"), "state"));
  r.sorted_by = ParseSortingKey(String(At(j, "sorted_by"), "sorted_by"));
  r.wall_ms = Get<double>(j, "wall_ms");
  for (const JsonValue p : Array(At(j, "places"), "places")) r.places.push_back(ReadPlace(p));
  // Absent in older summaries.
  if (const std::optional<JsonValue> timeline = j.find("timeline")) ReadTimeline(*timeline, &r);
  const JsonValue events = At(j, "events");
  r.events.reserve(events.is_array() ? events.size() : 0);
  for (const JsonValue e : Array(events, "events")) r.events.push_back(ReadRow(e));
  for (const JsonValue s : Array(At(j, "steps"), "steps")) r.steps.push_back(ReadStep(s));
  if (const std::optional<JsonValue> phases = j.find("phases_ms")) {
    r.phases_ms = ReadPhases(*phases);
  }
  if (const std::optional<JsonValue> t = j.find("throughput"); t && !t->is_null()) {
    r.throughput = Throughput{Optional<double>(*t, "samples_per_s"),
                              Get<double>(*t, "reader_cost_ms"), Get<double>(*t, "batch_cost_ms")};
  }
  if (const std::optional<JsonValue> modules = j.find("modules")) {
    for (const JsonValue m : Array(*modules, "modules")) r.modules.push_back(ReadModule(m));
  }
  r.dropped_events = Count(j, "dropped_events");
  r.warnings = Strings(At(j, "warnings"), "warnings");
  if (const std::optional<JsonValue> advice = j.find("advice")) {  // older summaries have none
    for (const JsonValue a : Array(*advice, "advice")) {
      r.advice.push_back({String(At(a, "kind"), "kind"), String(At(a, "message"), "message"),
                          String(At(a, "fix"), "fix"), Optional<int64_t>(a, "bytes"),
                          Optional<double>(a, "ms")});
    }
  }
  if (const std::optional<JsonValue> notes = j.find("notes")) r.notes = Strings(*notes, "notes");
  r.cycle = Optional<int>(j, "cycle");
  if (const std::optional<JsonValue> oom = j.find("oom"); oom && !oom->is_null()) {
    const std::optional<JsonValue> holders = oom->find("holders");
    r.oom = OutOfMemory{String(At(*oom, "place"), "place"),
                        Get<uint64_t>(*oom, "requested_bytes"),
                        String(At(*oom, "event"), "event"),
                        Strings(At(*oom, "path"), "path"),
                        Count(*oom, "live_bytes"),
                        holders ? ReadHolders(*holders, "holders") : std::vector<RowBytes>()};
  }
  // Summaries written before processes and clocks were recorded have neither.
  if (const std::optional<JsonValue> process = j.find("process")) r.process = ReadProcess(*process);
  if (const std::optional<JsonValue> clock = j.find("clock")) {
    // A start from 1970 to 2116 and an offset of at most 36 years: starts compared across
    // inputs cannot overflow.
    r.clock = {Get<int64_t>(*clock, "unix_ns", 0, int64_t{1} << 62),
               Get<int64_t>(*clock, "offset_ns", -(int64_t{1} << 60), int64_t{1} << 60)};
  }
  if (const std::optional<JsonValue> processes = j.find("processes")) {
    for (const JsonValue c : Array(*processes, "processes")) {
      r.processes.push_back({Get<int64_t>(c, "pid"), String(At(c, "role"), "role"),
                             Optional<int>(c, "worker_id"), Count(c, "calls"),
                             Get<double>(c, "wall_ms"),
                             String(At(c, "summary_path"), "summary_path")});
    }
  }
  if (const std::optional<JsonValue> inputs = j.find("merged_from")) {
    for (const JsonValue input : Array(*inputs, "merged_from")) {
      r.merged_from.push_back({Optional<std::string>(input, "path").value_or(""),
                               ReadProcess(At(input, "process")),
                               Optional<double>(input, "start_ms").value_or(0),
                               Optional<std::string>(input, "label").value_or(""),
                               Optional<double>(input, "wall_ms").value_or(0),
                               Optional<std::string>(input, "key").value_or("")});
    }
  }
  if (const std::optional<JsonValue> peaks = j.find("peaks_by")) {
    for (const auto& [kind, by] : Object(*peaks, "peaks_by")) {
      r.peaks_by.emplace(kind, IntegersByName(by, "peaks_by", 0));
    }
  }
  return r;
}

}  // namespace

Report ReportFromJson(const std::string& text, const std::string& source) {
  const auto not_a_summary = [&source](const std::string& why) {
    return std::invalid_argument(source + ": not a paddle_prof summary (" + why + ")");
  };
  std::optional<JsonDocument> document;
  try {
    document.emplace(text, kMaxNesting);
  } catch (const JsonSyntaxError& e) {
    if (!e.too_deep) throw not_a_summary("not JSON");
    throw not_a_summary("nesting deeper than " + std::to_string(kMaxNesting) + " at byte " +
                        std::to_string(e.offset));
  }
  const JsonValue j = document->root();
  if (!j.is_object() || !j.find("version") || !j.find("events")) {
    throw not_a_summary("no version or events");
  }
  const JsonValue version = *j.find("version");
  if (!version.is_number()) {
    throw not_a_summary(std::string("its version is ") + version.type_name() + ", not a number");
  }
  if (version.as_double() != kSummaryVersion) {
    throw std::invalid_argument(source + ": a paddle_prof summary of version " +
                                version.NumberText() + "; this paddle_prof reads version " +
                                std::to_string(kSummaryVersion));
  }
  try {
    return Read(j);
  } catch (const std::exception& e) {  // missing fields, wrong types, numbers out of range
    throw not_a_summary(e.what());
  }
}

Report LoadSummary(const std::string& path) {
  struct stat file;
  if (stat(path.c_str(), &file) == 0 && S_ISDIR(file.st_mode)) {  // which reads as empty
    throw std::invalid_argument(path + ": cannot read it (" + std::strerror(EISDIR) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read it (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  Report report = ReportFromJson(text.str(), path);
  report.summary_path = path;
  return report;
}

}  // namespace paddle_prof::internal
