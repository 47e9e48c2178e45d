#include "row_label.h"

#include "text_escape.h"

namespace paddle_prof::internal {

std::string RowHead(const EventRow& row) {
  std::string head;
  if (row.process) head = "pid" + std::to_string(*row.process) + "::";
  if (row.thread) head += "thread" + std::to_string(*row.thread) + "::";
  return head + EscapeForTable(row.name);
}

std::string TagText(const std::string& tag) {
  // Shapes come bracketed already ("[32, 3, 224, 224]"); other tags get brackets.
  const bool bracketed = !tag.empty() && (tag.front() == '[' || tag.front() == '(');
  return bracketed ? EscapeForTable(tag) : "[" + EscapeForTable(tag) + "]";
}

std::string RowLabel(const EventRow& row) {
  return row.tag ? RowHead(row) + " " + TagText(*row.tag) : RowHead(row);
}

std::string PlaceLabel(const PlaceSummary& place) {
  if (!place.input.empty()) return place.place + " (" + place.input + ")";
  if (!place.process) return place.place;
  return place.place + " (pid " + std::to_string(*place.process) + ")";
}

std::string JoinPath(const std::vector<std::string>& path) {
  std::string joined;
  for (const std::string& name : path) joined += (joined.empty() ? "" : " > ") + name;
  return joined;
}

std::string ShortPath(const std::vector<std::string>& path) {
  if (path.size() < 2) return path.empty() ? "" : path.back();
  const auto name_space = [](const std::string& name) {
    const size_t colons = name.rfind("::");
    return colons == std::string::npos ? std::string() : name.substr(0, colons);
  };
  const std::string leaf = name_space(path.back());
  size_t outer = path.size() - 2;
  for (size_t i = path.size() - 1; i-- > 0;) {
    if (name_space(path[i]) != leaf) {
      outer = i;
      break;
    }
  }
  return path[outer] + " > " + path.back();
}

}  // namespace paddle_prof::internal
