#include "summary_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "call_durations.h"
#include "summary_format.h"

namespace paddle_prof::internal {

namespace {

using nlohmann::json;

// Deeper than any summary: nlohmann's dump() recurses per level, and a value nested deep
// enough ran an error's dump of it off the stack.
constexpr int kMaxNesting = 512;

// The offset at which `text` nests arrays and objects deeper than kMaxNesting, if it does.
std::optional<size_t> TooDeep(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// What a number read is, for an error: itself, or the type found instead.
std::string Found(const json& j) { return j.is_number() ? j.dump() : j.type_name(); }

// Integers as the writer writes them: whole JSON numbers in T's range, or a narrower
// one. json's own get<T>() would convert a float, or an integer out of T's range, with
// undefined or wrapped results.
template <typename T>
T Integer(const json& j, const char* key, T lowest = std::numeric_limits<T>::min(),
          T highest = std::numeric_limits<T>::max()) {
  bool fits = false;  // `highest` is never negative
  if (j.is_number_unsigned()) {
    fits = j.get<uint64_t>() <= static_cast<uint64_t>(highest);
  } else if (j.is_number_integer()) {
    const int64_t v = j.get<int64_t>();
    fits = v >= 0 ? static_cast<uint64_t>(v) <= static_cast<uint64_t>(highest)
                  : std::is_signed_v<T> && v >= static_cast<int64_t>(lowest);
  }
  if (!fits) {
    throw std::invalid_argument(std::string("'") + key + "' is " + Found(j) +
                                ", not an integer from " + std::to_string(lowest) + " to " +
                                std::to_string(highest));
  }
  return j.get<T>();
}

// Times and ratios: finite JSON numbers, small enough that no sum of them over inputs,
// rows and children reaches infinity (which the writer would write as null).
double Number(const json& j, const char* key) {
  if (!j.is_number() || !(std::abs(j.get<double>()) <= 1e300)) {
    throw std::invalid_argument(std::string("'") + key + "' is " + Found(j) +
                                ", not a number from -1e300 to 1e300");
  }
  return j.get<double>();
}

template <typename T, typename... Range>
T Get(const json& j, const char* key, Range... range) {
  if constexpr (std::is_floating_point_v<T>) {
    return Number(j.at(key), key);
  } else {
    return Integer<T>(j.at(key), key, range...);
  }
}

// Optional fields are null or absent; required ones throw json's own error, which the
// caller turns into one naming the file.
template <typename T>
std::optional<T> Optional(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if constexpr (std::is_integral_v<T>) {
    return Integer<T>(*it, key);
  } else if constexpr (std::is_floating_point_v<T>) {
    return Number(*it, key);
  } else {
    return it->get<T>();
  }
}

// A JSON object of integers, by name.
std::map<std::string, int64_t> IntegerMap(const json& j, const char* key) {
  std::map<std::string, int64_t> read;
  for (const auto& [name, value] : j.at(key).items()) read[name] = Integer<int64_t>(value, key);
  return read;
}

MemoryStats ReadMemory(const json& j) {
  MemoryStats m;
  m.peak_bytes = Get<int64_t>(j, "peak_bytes");
  m.alloc_bytes = Get<int64_t>(j, "alloc_bytes");
  m.alloc_count = Get<int64_t>(j, "alloc_count");
  m.free_bytes = Get<int64_t>(j, "free_bytes");
  m.free_count = Get<int64_t>(j, "free_count");
  m.live_bytes = Get<int64_t>(j, "live_bytes");
  return m;
}

EventRow ReadRow(const json& j) {
  EventRow row;
  row.name = j.at("name").get<std::string>();
  row.tag = Optional<std::string>(j, "tag");
  row.thread = Optional<int>(j, "thread");
  row.process = Optional<int64_t>(j, "process");
  row.calls = Get<int64_t>(j, "calls");
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
  const std::string in_row = "in row '" + row.name + "', ";
  if (row.min_ms > row.max_ms) throw std::invalid_argument(in_row + "'min_ms' is above 'max_ms'");
  if (const auto durations = j.find("durations"); durations != j.end()) {
    if (!(row.min_ms <= row.p10_ms && row.p10_ms <= row.p50_ms && row.p50_ms <= row.p90_ms &&
          row.p90_ms <= row.p99_ms && row.p99_ms <= row.max_ms)) {
      throw std::invalid_argument(in_row + "the percentiles are not in order within min and max");
    }
    for (const json& v : durations->at("ns")) row.durations.ns.push_back(Integer<int64_t>(v, "ns"));
    for (const json& v : durations->at("calls")) {
      row.durations.calls.push_back(Integer<int64_t>(v, "calls"));
    }
    row.durations.significant_bits = Get<int>(*durations, "significant_bits");
    if (!CountsAreWhole(row.durations, row.calls)) {
      throw std::invalid_argument(in_row + "'durations' are not ascending durations whose "
                                  "calls add up to the row's");
    }
  }
  if (row.gpu_total_ms.has_value() != row.gpu_min_ms.has_value() ||
      row.gpu_total_ms.has_value() != row.gpu_max_ms.has_value()) {
    throw std::invalid_argument(in_row +
                                "'gpu_total_ms', 'gpu_min_ms' and 'gpu_max_ms' are "
                                "not all null or all numbers");
  }
  if (row.gpu_min_ms > row.gpu_max_ms) {
    throw std::invalid_argument(in_row + "'gpu_min_ms' is above 'gpu_max_ms'");
  }
  for (const auto& [place, stats] : j.at("memory").items()) row.memory[place] = ReadMemory(stats);
  if (const auto spread = j.find("spread"); spread != j.end() && !spread->is_null()) {
    const json& total = spread->at("total_ms");
    row.spread = RowSpread{spread->at("by").get<std::string>(), Get<double>(total, "min"),
                           Get<double>(total, "median"), Get<double>(total, "max"),
                           Get<int64_t>(total, "argmax")};
  }
  if (const auto sources = j.find("sources"); sources != j.end()) {
    for (const json& s : *sources) {
      row.sources.push_back({s.at("frame").get<std::string>(), Get<int64_t>(s, "calls")});
    }
  }
  return row;
}

std::vector<RowBytes> ReadHolders(const json& holders) {
  std::vector<RowBytes> read;
  for (const json& holder : holders) {
    RowBytes r;
    r.name = holder.at("name").get<std::string>();
    r.tag = Optional<std::string>(holder, "tag");
    r.bytes = Get<int64_t>(holder, "bytes");
    // Summaries written before call paths have none.
    if (holder.contains("path")) r.path = holder.at("path").get<std::vector<std::string>>();
    r.source = Optional<std::string>(holder, "source");
    if (holder.contains("native_stack")) {
      r.native_stack = holder.at("native_stack").get<std::vector<std::string>>();
    }
    read.push_back(std::move(r));
  }
  return read;
}

PlaceSummary ReadPlace(const json& j) {
  PlaceSummary p;
  p.place = j.at("place").get<std::string>();
  p.process = Optional<int64_t>(j, "process");
  p.input = Optional<std::string>(j, "input").value_or("");
  p.peak_bytes = Get<int64_t>(j, "peak_bytes");
  p.start_bytes = Get<int64_t>(j, "start_bytes");
  p.end_bytes = Get<int64_t>(j, "end_bytes");
  p.untracked_frees = Get<int64_t>(j, "untracked_frees");
  p.at_peak = ReadHolders(j.at("at_peak"));
  if (j.contains("categories_at_peak")) {  // a window that categorised memory
    p.categories_at_peak = IntegerMap(j, "categories_at_peak");
    p.categories_end = IntegerMap(j, "categories_end");
    if (const auto it = j.find("activations_at_peak"); it != j.end()) {
      for (const json& m : *it) {
        p.activations_at_peak.push_back({m.at("module").get<std::string>(),
                                         Get<int64_t>(m, "bytes")});
      }
    }
  }
  return p;
}

// Fields of Part 3, absent from older summaries: read when present.
StepPhases ReadPhases(const json& j) {
  StepPhases p;
  p.data = Get<double>(j, "data");
  p.forward = Get<double>(j, "forward");
  p.backward = Get<double>(j, "backward");
  p.optimizer = Get<double>(j, "optimizer");
  p.other = Get<double>(j, "other");
  return p;
}

ModuleSummary ReadModule(const json& j) {
  ModuleSummary m;
  m.path = j.at("path").get<std::string>();
  m.type = j.at("type").get<std::string>();
  m.depth = Get<int>(j, "depth");
  m.calls = Get<int64_t>(j, "calls");
  m.forward_ms = Get<double>(j, "forward_ms");
  m.backward_ms = Get<double>(j, "backward_ms");
  m.params = Get<int64_t>(j, "params");
  m.param_bytes = Get<int64_t>(j, "param_bytes");
  for (const auto& [place, memory] : j.at("memory").items()) {
    m.memory[place] = {Get<int64_t>(memory, "peak_bytes"), Get<int64_t>(memory, "activation_bytes")};
  }
  return m;
}

StepSummary ReadStep(const json& j) {
  StepSummary s;
  s.step = Get<int>(j, "step");
  s.wall_ms = Get<double>(j, "wall_ms");
  s.peak_bytes = IntegerMap(j, "peak_bytes");
  s.end_bytes = IntegerMap(j, "end_bytes");
  if (j.contains("process")) s.process = IntegerMap(j, "process");
  if (j.contains("comm_ms")) s.comm_ms = Get<double>(j, "comm_ms");
  if (const auto it = j.find("wall_ms_by"); it != j.end()) {
    for (const auto& [by, ms] : it->items()) s.wall_ms_by[by] = Number(ms, "wall_ms_by");
  }
  s.slowest = Optional<int64_t>(j, "slowest");
  s.samples = Optional<int64_t>(j, "samples");
  if (const auto it = j.find("phases_ms"); it != j.end()) s.phases_ms = ReadPhases(*it);
  if (const auto it = j.find("phases_ms_by"); it != j.end()) {
    for (const auto& [by, phases] : it->items()) s.phases_ms_by[by] = ReadPhases(phases);
  }
  return s;
}

ProcessInfo ReadProcess(const json& j) {
  ProcessInfo p;
  p.pid = Get<int64_t>(j, "pid");
  p.host = j.at("host").get<std::string>();
  p.rank = Optional<int>(j, "rank");
  p.world_size = Optional<int>(j, "world_size");
  p.parent_pid = Optional<int64_t>(j, "parent_pid");
  p.role = j.at("role").get<std::string>();
  p.worker_id = Optional<int>(j, "worker_id");
  return p;
}

Report Read(const json& j) {
  Report r;
  r.state = ParseProfilerState(j.at("state").get<std::string>());
  r.sorted_by = ParseSortingKey(j.at("sorted_by").get<std::string>());
  r.wall_ms = Get<double>(j, "wall_ms");
  for (const json& p : j.at("places")) r.places.push_back(ReadPlace(p));
  if (const auto it = j.find("timeline"); it != j.end()) {  // absent in older summaries
    for (const auto& [label, points] : it->items()) {
      TimelinePoints& read = r.timeline[label];
      const json& t_ms = points.at("t_ms");
      const json& bytes = points.at("bytes");
      if (!t_ms.is_array() || !bytes.is_array() || t_ms.size() != bytes.size()) {
        throw std::invalid_argument("timeline '" + label + "' is not two arrays of one length");
      }
      for (const json& t : t_ms) read.t_ms.push_back(Number(t, "t_ms"));
      for (const json& b : bytes) read.bytes.push_back(Integer<int64_t>(b, "bytes"));
      if (const auto by = points.find("by_category"); by != points.end()) {
        if (!by->is_object()) throw std::invalid_argument("timeline '" + label + "': by_category");
        for (const auto& [category, series] : by->items()) {
          if (!series.is_array() || series.size() != t_ms.size()) {
            throw std::invalid_argument("timeline '" + label + "': by_category '" + category +
                                        "' is not an array as long as t_ms");
          }
          std::vector<int64_t>& read_series = read.by_category[category];
          for (const json& b : series) read_series.push_back(Integer<int64_t>(b, "by_category"));
        }
      }
    }
  }
  for (const json& e : j.at("events")) r.events.push_back(ReadRow(e));
  for (const json& s : j.at("steps")) r.steps.push_back(ReadStep(s));
  if (const auto it = j.find("phases_ms"); it != j.end()) r.phases_ms = ReadPhases(*it);
  if (const auto it = j.find("throughput"); it != j.end() && !it->is_null()) {
    r.throughput = Throughput{Optional<double>(*it, "samples_per_s"),
                              Get<double>(*it, "reader_cost_ms"), Get<double>(*it, "batch_cost_ms")};
  }
  if (const auto it = j.find("modules"); it != j.end()) {
    for (const json& m : *it) r.modules.push_back(ReadModule(m));
  }
  r.dropped_events = Get<int64_t>(j, "dropped_events");
  r.warnings = j.at("warnings").get<std::vector<std::string>>();
  if (const auto it = j.find("advice"); it != j.end()) {  // older summaries have none
    for (const json& a : *it) {
      r.advice.push_back({a.at("kind").get<std::string>(), a.at("message").get<std::string>(),
                          a.at("fix").get<std::string>(), Optional<int64_t>(a, "bytes"),
                          Optional<double>(a, "ms")});
    }
  }
  if (const auto it = j.find("notes"); it != j.end()) {
    r.notes = it->get<std::vector<std::string>>();
  }
  r.cycle = Optional<int>(j, "cycle");
  if (const auto oom = j.find("oom"); oom != j.end() && !oom->is_null()) {
    r.oom = OutOfMemory{
        oom->at("place").get<std::string>(),
        Get<uint64_t>(*oom, "requested_bytes"),
        oom->at("event").get<std::string>(),
        oom->at("path").get<std::vector<std::string>>(),
        Get<int64_t>(*oom, "live_bytes"),
        oom->contains("holders") ? ReadHolders(oom->at("holders")) : std::vector<RowBytes>()};
  }
  // Summaries written before processes and clocks were recorded have neither.
  if (const auto it = j.find("process"); it != j.end()) r.process = ReadProcess(*it);
  if (const auto it = j.find("clock"); it != j.end()) {
    // A start from 1970 to 2116 and an offset of at most 36 years: starts compared across
    // inputs cannot overflow.
    r.clock = {Get<int64_t>(*it, "unix_ns", 0, int64_t{1} << 62),
               Get<int64_t>(*it, "offset_ns", -(int64_t{1} << 60), int64_t{1} << 60)};
  }
  if (const auto it = j.find("processes"); it != j.end()) {
    for (const json& c : *it) {
      r.processes.push_back({Get<int64_t>(c, "pid"), c.at("role").get<std::string>(),
                             Optional<int>(c, "worker_id"), Get<int64_t>(c, "calls"),
                             Get<double>(c, "wall_ms"), c.at("summary_path").get<std::string>()});
    }
  }
  if (const auto it = j.find("merged_from"); it != j.end()) {
    for (const json& input : *it) {
      r.merged_from.push_back({Optional<std::string>(input, "path").value_or(""),
                               ReadProcess(input.at("process")),
                               Optional<double>(input, "start_ms").value_or(0),
                               Optional<std::string>(input, "label").value_or(""),
                               Optional<double>(input, "wall_ms").value_or(0),
                               Optional<std::string>(input, "key").value_or("")});
    }
  }
  if (const auto it = j.find("peaks_by"); it != j.end()) {
    for (const auto& kind : it->items()) r.peaks_by[kind.key()] = IntegerMap(*it, kind.key().c_str());
  }
  return r;
}

}  // namespace

Report ReportFromJson(const std::string& text, const std::string& source) {
  if (const std::optional<size_t> at = TooDeep(text)) {
    throw std::invalid_argument(source + ": not a paddle_prof summary (nesting deeper than " +
                                std::to_string(kMaxNesting) + " at byte " + std::to_string(*at) +
                                ")");
  }
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    throw std::invalid_argument(source + ": not a paddle_prof summary (not JSON)");
  }
  if (!j.is_object() || !j.contains("version") || !j.contains("events")) {
    throw std::invalid_argument(source + ": not a paddle_prof summary (no version or events)");
  }
  const json& version = j.at("version");
  if (!version.is_number()) {
    throw std::invalid_argument(source + ": not a paddle_prof summary (its version is " +
                                version.type_name() + ", not a number)");
  }
  if (version != kSummaryVersion) {
    throw std::invalid_argument(source + ": a paddle_prof summary of version " + version.dump() +
                                "; this paddle_prof reads version " +
                                std::to_string(kSummaryVersion));
  }
  try {
    return Read(j);
  } catch (const std::exception& e) {  // json's type and key errors, ours for names
    throw std::invalid_argument(source + ": not a paddle_prof summary (" + e.what() + ")");
  }
}

Report LoadSummary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read it (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  Report report = ReportFromJson(text.str(), path);
  report.summary_path = path;
  return report;
}

}  // namespace paddle_prof::internal
