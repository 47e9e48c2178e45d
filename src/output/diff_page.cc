#include "diff_outputs.h"
#include "diff_page_template.h"
#include "html_report.h"
#include "json_writer.h"

namespace paddle_prof::internal {

namespace {

// Where the template takes the diff, inside its JSON script element.
constexpr std::string_view kDiffMark = "@PADDLE_PROF_DIFF@";
static_assert(kDiffPageTemplate.find(kDiffMark) != std::string_view::npos,
              "src/html/diff.html must hold @PADDLE_PROF_DIFF@");

// What the page draws of one run: its memory over time and its steps.
void WriteRun(JsonWriter* w, const Report& run) {
  w->BeginObject();
  w->Key("timeline");
  w->BeginObject();
  for (const auto& [place, points] : run.timeline) {
    w->Key(place);
    w->BeginObject();
    w->Key("t_ms");
    w->BeginArray();
    for (const double t : points.t_ms) w->Double(t);
    w->EndArray();
    w->Key("bytes");
    w->BeginArray();
    for (const int64_t b : points.bytes) w->Int(b);
    w->EndArray();
    w->EndObject();
  }
  w->EndObject();
  w->Key("steps");
  w->BeginArray();
  for (const StepSummary& s : run.steps) {
    w->BeginObject();
    w->IntField("step", s.step);
    w->DoubleField("wall_ms", s.wall_ms);
    w->EndObject();
  }
  w->EndArray();
  w->DoubleField("wall_ms", run.wall_ms);
  w->EndObject();
}

}  // namespace

std::string DiffPage(const ReportDiff& diff, const Report& base, const Report& next) {
  std::string data;
  JsonWriter w(&data);
  w.BeginObject();
  w.Key("diff");
  w.Raw(DiffJson(diff));
  w.Key("base");
  WriteRun(&w, base);
  w.Key("new");
  WriteRun(&w, next);
  w.EndObject();
  return PageWithJson(kDiffPageTemplate, kDiffMark, data);
}

}  // namespace paddle_prof::internal
