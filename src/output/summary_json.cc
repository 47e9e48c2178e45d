// Report::ToJson(): the summary JSON (summary_format.h).
#include "call_durations.h"
#include "json_writer.h"
#include "paddle_prof/report.h"
#include "summary_format.h"

namespace paddle_prof {

using internal::JsonWriter;

namespace {

void WriteMemory(JsonWriter* w, const MemoryStats& m) {
  w->BeginObject();
  w->IntField("peak_bytes", m.peak_bytes);
  w->IntField("alloc_bytes", m.alloc_bytes);
  w->IntField("alloc_count", m.alloc_count);
  w->IntField("free_bytes", m.free_bytes);
  w->IntField("free_count", m.free_count);
  w->IntField("live_bytes", m.live_bytes);
  w->EndObject();
}

void WritePhases(JsonWriter* w, const StepPhases& p) {
  w->BeginObject();
  w->DoubleField("data", p.data);
  w->DoubleField("forward", p.forward);
  w->DoubleField("backward", p.backward);
  w->DoubleField("optimizer", p.optimizer);
  w->DoubleField("other", p.other);
  w->EndObject();
}

void WriteModule(JsonWriter* w, const ModuleSummary& m) {
  w->BeginObject();
  w->StringField("path", m.path);
  w->StringField("type", m.type);
  w->IntField("depth", m.depth);
  w->IntField("calls", m.calls);
  w->DoubleField("forward_ms", m.forward_ms);
  w->DoubleField("backward_ms", m.backward_ms);
  w->IntField("params", m.params);
  w->IntField("param_bytes", m.param_bytes);
  w->Key("memory");
  w->BeginObject();
  for (const auto& [place, memory] : m.memory) {
    w->Key(place);
    w->BeginObject();
    w->IntField("peak_bytes", memory.peak_bytes);
    w->IntField("activation_bytes", memory.activation_bytes);
    w->EndObject();
  }
  w->EndObject();
  w->EndObject();
}

void WriteEvent(JsonWriter* w, const EventRow& row) {
  w->BeginObject();
  w->StringField("name", row.name);
  w->Key("tag");
  w->OptionalString(row.tag);
  w->Key("thread");
  w->OptionalInt(row.thread);
  if (row.process) w->IntField("process", *row.process);
  w->IntField("calls", row.calls);
  w->DoubleField("total_ms", row.total_ms);
  w->DoubleField("self_ms", row.self_ms);
  w->DoubleField("min_ms", row.min_ms);
  w->DoubleField("max_ms", row.max_ms);
  w->DoubleField("ave_ms", row.ave_ms);
  // Null where they are not known: a merged row of an input written without durations.
  const bool percentiles = internal::PercentilesKnown(row);
  for (const auto& [key, ms] : {std::pair{"p10_ms", row.p10_ms}, std::pair{"p50_ms", row.p50_ms},
                                std::pair{"p90_ms", row.p90_ms}, std::pair{"p99_ms", row.p99_ms}}) {
    w->Key(key);
    percentiles ? w->Double(ms) : w->Null();
  }
  w->DoubleField("ratio", row.ratio);
  w->Key("gpu_total_ms");
  w->OptionalDouble(row.gpu_total_ms);
  w->Key("gpu_min_ms");
  w->OptionalDouble(row.gpu_min_ms);
  w->Key("gpu_max_ms");
  w->OptionalDouble(row.gpu_max_ms);
  w->Key("gpu_ave_ms");
  w->OptionalDouble(row.gpu_ave_ms);
  w->Key("memory");
  w->BeginObject();
  for (const auto& [place, stats] : row.memory) {
    w->Key(place);
    WriteMemory(w, stats);
  }
  w->EndObject();
  if (row.spread) {
    w->Key("spread");
    w->BeginObject();
    w->StringField("by", row.spread->by);
    w->Key("total_ms");
    w->BeginObject();
    w->DoubleField("min", row.spread->min_ms);
    w->DoubleField("median", row.spread->median_ms);
    w->DoubleField("max", row.spread->max_ms);
    w->IntField("argmax", row.spread->argmax);
    w->EndObject();
    w->EndObject();
  }
  if (!row.durations.ns.empty()) {  // what a merge takes the percentiles from
    w->Key("durations");
    w->BeginObject();
    for (const auto& [key, values] : {std::pair{"ns", &row.durations.ns},
                                      std::pair{"calls", &row.durations.calls}}) {
      w->Key(key);
      w->BeginArray();
      for (const int64_t v : *values) w->Int(v);
      w->EndArray();
    }
    w->IntField("significant_bits", row.durations.significant_bits);
    w->EndObject();
  }
  if (!row.sources.empty()) {  // record_stacks
    w->Key("sources");
    w->BeginArray();
    for (const SourceCalls& s : row.sources) {
      w->BeginObject();
      w->StringField("frame", s.frame);
      w->IntField("calls", s.calls);
      w->EndObject();
    }
    w->EndArray();
  }
  w->EndObject();
}

// at_peak entries and an out-of-memory dump's holders.
void WriteHolders(JsonWriter* w, const std::vector<RowBytes>& holders) {
  w->BeginArray();
  for (const RowBytes& r : holders) {
    w->BeginObject();
    w->StringField("name", r.name);
    w->Key("tag");
    w->OptionalString(r.tag);
    w->IntField("bytes", r.bytes);
    w->Key("path");
    w->BeginArray();
    for (const std::string& name : r.path) w->String(name);
    w->EndArray();
    if (r.source) w->StringField("source", *r.source);
    if (!r.native_stack.empty()) {
      w->Key("native_stack");
      w->BeginArray();
      for (const std::string& frame : r.native_stack) w->String(frame);
      w->EndArray();
    }
    w->EndObject();
  }
  w->EndArray();
}

void WriteBytesByName(JsonWriter* w, const std::map<std::string, int64_t>& bytes) {
  w->BeginObject();
  for (const auto& [name, n] : bytes) w->IntField(name, n);
  w->EndObject();
}

void WritePlace(JsonWriter* w, const PlaceSummary& p) {
  w->BeginObject();
  w->StringField("place", p.place);
  if (p.process) w->IntField("process", *p.process);
  if (!p.input.empty()) w->StringField("input", p.input);
  w->IntField("peak_bytes", p.peak_bytes);
  w->IntField("start_bytes", p.start_bytes);
  w->IntField("end_bytes", p.end_bytes);
  w->IntField("untracked_frees", p.untracked_frees);
  w->Key("at_peak");
  WriteHolders(w, p.at_peak);
  if (!p.categories_at_peak.empty()) {  // a window that categorised memory
    w->Key("categories_at_peak");
    WriteBytesByName(w, p.categories_at_peak);
    w->Key("categories_end");
    WriteBytesByName(w, p.categories_end);
    w->Key("activations_at_peak");
    w->BeginArray();
    for (const PlaceSummary::ModuleBytes& m : p.activations_at_peak) {
      w->BeginObject();
      w->StringField("module", m.module);
      w->IntField("bytes", m.bytes);
      w->EndObject();
    }
    w->EndArray();
  }
  w->EndObject();
}

void WriteOptionalInt(JsonWriter* w, std::string_view key, const std::optional<int64_t>& v) {
  w->Key(key);
  w->OptionalInt(v);
}

void WriteProcess(JsonWriter* w, const ProcessInfo& p) {
  w->BeginObject();
  w->IntField("pid", p.pid);
  w->StringField("host", p.host);
  WriteOptionalInt(w, "rank", p.rank);
  WriteOptionalInt(w, "world_size", p.world_size);
  WriteOptionalInt(w, "parent_pid", p.parent_pid);
  w->StringField("role", p.role);
  if (p.worker_id) w->IntField("worker_id", *p.worker_id);
  w->EndObject();
}

void WriteChild(JsonWriter* w, const ChildProcess& child) {
  w->BeginObject();
  w->IntField("pid", child.pid);
  w->StringField("role", child.role);
  WriteOptionalInt(w, "worker_id", child.worker_id);
  w->IntField("calls", child.calls);
  w->DoubleField("wall_ms", child.wall_ms);
  w->StringField("summary_path", child.summary_path);
  w->EndObject();
}

}  // namespace

std::string Report::ToJson() const {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.IntField("version", internal::kSummaryVersion);
  w.StringField("state", ProfilerStateName(state));
  w.StringField("sorted_by", SortingKeyName(sorted_by));
  w.DoubleField("wall_ms", wall_ms);
  w.Key("places");
  w.BeginArray();
  for (const PlaceSummary& p : places) WritePlace(&w, p);
  w.EndArray();
  w.Key("timeline");
  w.BeginObject();
  for (const auto& [label, points] : timeline) {
    w.Key(label);
    w.BeginObject();
    w.Key("t_ms");
    w.BeginArray();
    for (const double t : points.t_ms) w.Double(t);
    w.EndArray();
    w.Key("bytes");
    w.BeginArray();
    for (const int64_t b : points.bytes) w.Int(b);
    w.EndArray();
    if (!points.by_category.empty()) {
      w.Key("by_category");
      w.BeginObject();
      for (const auto& [category, series] : points.by_category) {
        w.Key(category);
        w.BeginArray();
        for (const int64_t b : series) w.Int(b);
        w.EndArray();
      }
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndObject();
  w.Key("events");
  w.BeginArray();
  for (const EventRow& row : events) WriteEvent(&w, row);
  w.EndArray();
  w.Key("steps");
  w.BeginArray();
  for (const StepSummary& s : steps) {
    w.BeginObject();
    w.IntField("step", s.step);
    w.DoubleField("wall_ms", s.wall_ms);
    w.Key("peak_bytes");
    WriteBytesByName(&w, s.peak_bytes);
    w.Key("end_bytes");
    WriteBytesByName(&w, s.end_bytes);
    w.Key("process");
    WriteBytesByName(&w, s.process);
    w.DoubleField("comm_ms", s.comm_ms);
    w.Key("samples");
    w.OptionalInt(s.samples);
    w.Key("phases_ms");
    WritePhases(&w, s.phases_ms);
    if (s.slowest) {
      w.Key("wall_ms_by");
      w.BeginObject();
      for (const auto& [input, ms] : s.wall_ms_by) w.DoubleField(input, ms);
      w.EndObject();
      w.IntField("slowest", *s.slowest);
    }
    if (!s.phases_ms_by.empty()) {
      w.Key("phases_ms_by");
      w.BeginObject();
      for (const auto& [input, phases] : s.phases_ms_by) {
        w.Key(input);
        WritePhases(&w, phases);
      }
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("phases_ms");
  WritePhases(&w, phases_ms);
  w.Key("throughput");
  if (throughput) {
    w.BeginObject();
    w.Key("samples_per_s");
    throughput->samples_per_s ? w.Double(*throughput->samples_per_s) : w.Null();
    w.DoubleField("reader_cost_ms", throughput->reader_cost_ms);
    w.DoubleField("batch_cost_ms", throughput->batch_cost_ms);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("modules");
  w.BeginArray();
  for (const ModuleSummary& m : modules) WriteModule(&w, m);
  w.EndArray();
  w.IntField("dropped_events", dropped_events);
  w.Key("cycle");
  w.OptionalInt(cycle);
  w.Key("oom");
  if (oom) {
    w.BeginObject();
    w.StringField("place", oom->place);
    w.UnsignedField("requested_bytes", oom->requested_bytes);
    w.StringField("event", oom->event);
    w.Key("path");
    w.BeginArray();
    for (const std::string& name : oom->path) w.String(name);
    w.EndArray();
    w.IntField("live_bytes", oom->live_bytes);
    w.Key("holders");
    WriteHolders(&w, oom->holders);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("process");
  WriteProcess(&w, process);
  w.Key("clock");
  w.BeginObject();
  w.IntField("unix_ns", clock.unix_ns);
  w.IntField("offset_ns", clock.offset_ns);
  w.EndObject();
  w.Key("processes");
  w.BeginArray();
  for (const ChildProcess& child : processes) WriteChild(&w, child);
  w.EndArray();
  if (!merged_from.empty()) {
    w.Key("merged_from");
    w.BeginArray();
    for (const MergedInput& input : merged_from) {
      w.BeginObject();
      w.Key("path");
      input.path.empty() ? w.Null() : w.String(input.path);
      w.Key("process");
      WriteProcess(&w, input.process);
      w.DoubleField("start_ms", input.start_ms);
      w.StringField("label", input.label);
      w.DoubleField("wall_ms", input.wall_ms);
      w.StringField("key", input.key);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!peaks_by.empty()) {
    w.Key("peaks_by");
    w.BeginObject();
    for (const auto& [kind, by_input] : peaks_by) {
      w.Key(kind);
      WriteBytesByName(&w, by_input);
    }
    w.EndObject();
  }
  w.Key("warnings");
  w.BeginArray();
  for (const std::string& warning : warnings) w.String(warning);
  w.EndArray();
  w.Key("advice");
  w.BeginArray();
  for (const Advice& a : advice) {
    w.BeginObject();
    w.StringField("kind", a.kind);
    w.StringField("message", a.message);
    w.StringField("fix", a.fix);
    w.Key("bytes");
    w.OptionalInt(a.bytes);
    w.Key("ms");
    w.OptionalDouble(a.ms);
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes");
  w.BeginArray();
  for (const std::string& note : notes) w.String(note);
  w.EndArray();
  w.EndObject();
  out.push_back('\n');
  return out;
}

}  // namespace paddle_prof
