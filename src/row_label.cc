#include "row_label.h"

#include "text_escape.h"

namespace paddle_prof::internal {

std::string RowLabel(const EventRow& row) {
  std::string label;
  if (row.process) label = "pid" + std::to_string(*row.process) + "::";
  if (row.thread) label += "thread" + std::to_string(*row.thread) + "::";
  label += EscapeForTable(row.name);
  if (row.tag) {
    // Shapes come bracketed already ("[32, 3, 224, 224]"); other tags get brackets.
    const bool bracketed =
        !row.tag->empty() && (row.tag->front() == '[' || row.tag->front() == '(');
    const std::string tag = EscapeForTable(*row.tag);
    label += bracketed ? " " + tag : " [" + tag + "]";
  }
  return label;
}

std::string PlaceLabel(const PlaceSummary& place) {
  if (!place.process) return place.place;
  return place.place + " (pid " + std::to_string(*place.process) + ")";
}

}  // namespace paddle_prof::internal
