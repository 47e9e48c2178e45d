#include "diff_outputs.h"
#include "json_writer.h"

namespace paddle_prof::internal {

namespace {

void WriteSide(JsonWriter* w, const std::optional<DiffSide>& side) {
  if (!side) {
    w->Null();
    return;
  }
  w->BeginObject();
  w->IntField("calls", side->calls);
  w->DoubleField("total_ms", side->total_ms);
  w->Key("p50_ms");
  w->OptionalDouble(side->p50_ms);
  w->Key("memory");
  w->BeginObject();
  for (const auto& [place, bytes] : side->memory) {
    w->Key(place);
    w->BeginObject();
    w->IntField("peak_bytes", bytes.peak_bytes);
    w->IntField("live_bytes", bytes.live_bytes);
    w->EndObject();
  }
  w->EndObject();
  w->EndObject();
}

void WriteDiffRow(JsonWriter* w, const ReportDiff& diff, const DiffRow& row) {
  w->BeginObject();
  w->StringField("name", row.name);
  w->Key("tag");
  w->OptionalString(row.tag);
  w->Key("status");
  w->BeginArray();
  for (const std::string& s : row.status) w->String(s);
  w->EndArray();
  w->Key("time_by");
  w->OptionalString(row.time_by);
  w->Key("base");
  WriteSide(w, row.base);
  w->Key("new");
  WriteSide(w, row.next);
  // Where rows match by thread or process, every row has the key: null on a row without.
  if (diff.by_thread) {
    w->Key("thread");
    w->OptionalInt(row.thread);
  }
  if (diff.by_process) {
    w->Key("process");
    w->OptionalString(row.process);
  }
  w->EndObject();
}

void WriteDiff(JsonWriter* w, const ReportDiff& diff) {
  w->BeginObject();
  w->DoubleField("time_threshold", diff.time_threshold);
  w->DoubleField("memory_threshold", diff.memory_threshold);
  w->Key("rows");
  w->BeginArray();
  for (const DiffRow& row : diff.rows) WriteDiffRow(w, diff, row);
  w->EndArray();
  auto write_place = [w](const DiffPlace& p) {
    w->BeginObject();
    w->StringField("place", p.place);
    w->Key("base_peak_bytes");
    w->OptionalInt(p.base_peak_bytes);
    w->Key("new_peak_bytes");
    w->OptionalInt(p.next_peak_bytes);
    w->StringField("status", p.status);
    w->EndObject();
  };
  w->Key("places");
  w->BeginArray();
  for (const DiffPlace& p : diff.places) write_place(p);
  w->EndArray();
  w->Key("regressions");
  w->BeginArray();
  for (const size_t i : diff.regressing_rows) WriteDiffRow(w, diff, diff.rows[i]);
  for (const size_t i : diff.regressing_places) write_place(diff.places[i]);
  w->EndArray();
  w->Key("changed");
  w->BeginArray();
  for (const size_t i : diff.changed) w->Int(static_cast<int64_t>(i));
  w->EndArray();
  w->EndObject();
}

}  // namespace

std::string DiffJson(const ReportDiff& diff) {
  std::string out;
  JsonWriter w(&out);
  WriteDiff(&w, diff);
  return out;
}

}  // namespace paddle_prof::internal
