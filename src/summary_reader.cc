#include "summary_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace paddle_prof::internal {

namespace {

using nlohmann::json;

// Optional fields are null or absent; required ones throw json's own error, which the
// caller turns into one naming the file.
template <typename T>
std::optional<T> Optional(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

MemoryStats ReadMemory(const json& j) {
  MemoryStats m;
  m.peak_bytes = j.at("peak_bytes").get<int64_t>();
  m.alloc_bytes = j.at("alloc_bytes").get<int64_t>();
  m.alloc_count = j.at("alloc_count").get<int64_t>();
  m.free_bytes = j.at("free_bytes").get<int64_t>();
  m.free_count = j.at("free_count").get<int64_t>();
  m.live_bytes = j.at("live_bytes").get<int64_t>();
  return m;
}

EventRow ReadRow(const json& j) {
  EventRow row;
  row.name = j.at("name").get<std::string>();
  row.tag = Optional<std::string>(j, "tag");
  row.thread = Optional<int>(j, "thread");
  row.process = Optional<int64_t>(j, "process");
  row.calls = j.at("calls").get<int64_t>();
  row.total_ms = j.at("total_ms").get<double>();
  row.self_ms = j.at("self_ms").get<double>();
  row.min_ms = j.at("min_ms").get<double>();
  row.max_ms = j.at("max_ms").get<double>();
  row.ave_ms = j.at("ave_ms").get<double>();
  row.ratio = j.at("ratio").get<double>();
  row.gpu_total_ms = Optional<double>(j, "gpu_total_ms");
  row.gpu_min_ms = Optional<double>(j, "gpu_min_ms");
  row.gpu_max_ms = Optional<double>(j, "gpu_max_ms");
  row.gpu_ave_ms = Optional<double>(j, "gpu_ave_ms");
  for (const auto& [place, stats] : j.at("memory").items()) row.memory[place] = ReadMemory(stats);
  if (const auto spread = j.find("spread"); spread != j.end() && !spread->is_null()) {
    const json& total = spread->at("total_ms");
    row.spread = RowSpread{spread->at("by").get<std::string>(), total.at("min").get<double>(),
                           total.at("median").get<double>(), total.at("max").get<double>(),
                           total.at("argmax").get<int64_t>()};
  }
  if (const auto sources = j.find("sources"); sources != j.end()) {
    for (const json& s : *sources) {
      row.sources.push_back({s.at("frame").get<std::string>(), s.at("calls").get<int64_t>()});
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
    r.bytes = holder.at("bytes").get<int64_t>();
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
  p.peak_bytes = j.at("peak_bytes").get<int64_t>();
  p.start_bytes = j.at("start_bytes").get<int64_t>();
  p.end_bytes = j.at("end_bytes").get<int64_t>();
  p.untracked_frees = j.at("untracked_frees").get<int64_t>();
  p.at_peak = ReadHolders(j.at("at_peak"));
  return p;
}

StepSummary ReadStep(const json& j) {
  StepSummary s;
  s.step = j.at("step").get<int>();
  s.wall_ms = j.at("wall_ms").get<double>();
  s.peak_bytes = j.at("peak_bytes").get<std::map<std::string, int64_t>>();
  s.end_bytes = j.at("end_bytes").get<std::map<std::string, int64_t>>();
  if (const auto it = j.find("process"); it != j.end()) {
    s.process = it->get<std::map<std::string, int64_t>>();
  }
  if (const auto it = j.find("comm_ms"); it != j.end()) s.comm_ms = it->get<double>();
  if (const auto it = j.find("wall_ms_by"); it != j.end()) {
    s.wall_ms_by = it->get<std::map<std::string, double>>();
  }
  s.slowest = Optional<int64_t>(j, "slowest");
  return s;
}

ProcessInfo ReadProcess(const json& j) {
  ProcessInfo p;
  p.pid = j.at("pid").get<int64_t>();
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
  r.wall_ms = j.at("wall_ms").get<double>();
  for (const json& p : j.at("places")) r.places.push_back(ReadPlace(p));
  if (const auto it = j.find("timeline"); it != j.end()) {  // absent in older summaries
    for (const auto& [label, points] : it->items()) {
      r.timeline[label] = {points.at("t_ms").get<std::vector<double>>(),
                           points.at("bytes").get<std::vector<int64_t>>()};
    }
  }
  for (const json& e : j.at("events")) r.events.push_back(ReadRow(e));
  for (const json& s : j.at("steps")) r.steps.push_back(ReadStep(s));
  r.dropped_events = j.at("dropped_events").get<int64_t>();
  r.warnings = j.at("warnings").get<std::vector<std::string>>();
  r.cycle = Optional<int>(j, "cycle");
  if (const auto oom = j.find("oom"); oom != j.end() && !oom->is_null()) {
    r.oom = OutOfMemory{
        oom->at("place").get<std::string>(), oom->at("requested_bytes").get<uint64_t>(),
        oom->at("event").get<std::string>(), oom->at("path").get<std::vector<std::string>>(),
        oom->at("live_bytes").get<int64_t>(),
        oom->contains("holders") ? ReadHolders(oom->at("holders")) : std::vector<RowBytes>()};
  }
  // Summaries written before processes and clocks were recorded have neither.
  if (const auto it = j.find("process"); it != j.end()) r.process = ReadProcess(*it);
  if (const auto it = j.find("clock"); it != j.end()) {
    r.clock = {it->at("unix_ns").get<int64_t>(), it->at("offset_ns").get<int64_t>()};
  }
  if (const auto it = j.find("processes"); it != j.end()) {
    for (const json& c : *it) {
      r.processes.push_back({c.at("pid").get<int64_t>(), c.at("role").get<std::string>(),
                             Optional<int>(c, "worker_id"), c.at("calls").get<int64_t>(),
                             c.at("wall_ms").get<double>(),
                             c.at("summary_path").get<std::string>()});
    }
  }
  if (const auto it = j.find("merged_from"); it != j.end()) {
    for (const json& input : *it) {
      r.merged_from.push_back({Optional<std::string>(input, "path").value_or(""),
                               ReadProcess(input.at("process")),
                               Optional<double>(input, "start_ms").value_or(0)});
    }
  }
  return r;
}

}  // namespace

Report ReportFromJson(const std::string& text, const std::string& source) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    throw std::invalid_argument(source + ": not a paddle_prof summary (not JSON)");
  }
  if (!j.is_object() || !j.contains("version") || !j.contains("events")) {
    throw std::invalid_argument(source + ": not a paddle_prof summary (no version or events)");
  }
  if (j["version"] != 1) {
    throw std::invalid_argument(source + ": a paddle_prof summary of version " +
                                j["version"].dump() + "; this paddle_prof reads version 1");
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
