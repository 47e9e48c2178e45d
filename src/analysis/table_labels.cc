#include "table_labels.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "row_label.h"
#include "text_columns.h"

namespace paddle_prof::internal {

namespace {

constexpr char kEllipsis[] = "\u2026";  // one column

// The top-level arguments of a bracketed list ("[[1, 2], [], 3]" -> "[1, 2]", "[]",
// "3"); nullopt for any other text.
std::optional<std::vector<std::string>> Arguments(const std::string& tag) {
  if (tag.size() < 2 || tag.front() != '[' || tag.back() != ']') return std::nullopt;
  std::vector<std::string> args;
  int depth = 0;
  size_t start = 1;
  for (size_t i = 1; i + 1 < tag.size(); ++i) {
    if (tag[i] == '[') {
      ++depth;
    } else if (tag[i] == ']') {
      if (--depth < 0) return std::nullopt;
    } else if (tag[i] == ',' && depth == 0) {
      args.push_back(tag.substr(start, i - start));
      start = i + 1;
      if (start < tag.size() && tag[start] == ' ') ++start;
    }
  }
  if (depth != 0) return std::nullopt;
  const std::string last = tag.substr(start, tag.size() - 1 - start);
  if (!args.empty() || !last.empty()) args.push_back(last);  // "[]" has none
  return args;
}

// Whether each argument is itself a list: the tag of an op's inputs, not one shape
// ("[1, 3, 41, 32]"), whose dimensions only read together.
bool OfLists(const std::vector<std::string>& args) {
  return std::all_of(args.begin(), args.end(),
                     [](const std::string& a) { return !a.empty() && a.front() == '['; });
}

// "[a, …, d]": the arguments `keep` marks, each run of the others one "…".
std::string JoinKept(const std::vector<std::string>& args, const std::vector<bool>& keep) {
  std::string out = "[";
  for (size_t i = 0; i < args.size(); ++i) {
    if (!keep[i] && i > 0 && !keep[i - 1]) continue;
    if (i > 0) out += ", ";
    out += keep[i] ? args[i] : kEllipsis;
  }
  return out + "]";
}

std::string JoinAll(const std::vector<std::string>& args) {
  return JoinKept(args, std::vector<bool>(args.size(), true));
}

// The first `chars` characters of `text`, or its last when `from_end`.
std::string Chars(const std::string& text, size_t chars, bool from_end) {
  std::vector<size_t> starts;  // byte offset of each character
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  if (chars >= starts.size()) return text;
  return from_end ? text.substr(starts[starts.size() - chars]) : text.substr(0, starts[chars]);
}

std::string CutMiddle(const std::string& text, size_t width) {
  const size_t head = width / 4;
  const size_t tail = width > head + 1 ? width - head - 1 : 0;
  return Chars(text, head, false) + kEllipsis + Chars(text, tail, true);
}

struct Label {
  std::string head;                 // process, thread and name
  std::optional<std::string> tag;   // as shown
  std::optional<std::vector<std::string>> args;  // of a shape tag, as shown
  std::string Text() const { return tag && !tag->empty() ? head + " " + *tag : head; }
};

}  // namespace

std::string TrimShapeTag(const std::string& tag) {
  std::optional<std::vector<std::string>> args = Arguments(tag);
  if (!args) return tag;
  const size_t count = args->size();
  while (!args->empty() && args->back() == "[]") args->pop_back();
  if (args->empty()) return "";
  return args->size() == count ? tag : JoinAll(*args);
}

std::vector<std::string> TellApart(const std::vector<std::string>& tags) {
  std::vector<std::optional<std::vector<std::string>>> args;
  for (const std::string& tag : tags) args.push_back(Arguments(tag));
  std::vector<std::string> out = tags;
  if (tags.size() < 2 || !args.front() || !OfLists(*args.front())) return out;
  const std::vector<std::string>& first = *args.front();
  std::vector<bool> differ(first.size());
  for (const auto& a : args) {
    if (!a || a->size() != first.size() || !OfLists(*a)) return out;
    for (size_t k = 0; k < first.size(); ++k) differ[k] = differ[k] || (*a)[k] != first[k];
  }
  for (size_t i = 0; i < tags.size(); ++i) out[i] = JoinKept(*args[i], differ);
  return out;
}

std::vector<std::string> FitRowLabels(const std::vector<const EventRow*>& rows, size_t width) {
  std::vector<Label> labels(rows.size());
  std::map<std::string, std::set<std::string>> full_by_short;
  for (size_t i = 0; i < rows.size(); ++i) {
    Label& l = labels[i];
    l.head = RowHead(*rows[i]);
    if (!rows[i]->tag) continue;
    const std::string tag = TagText(*rows[i]->tag);
    l.tag = TrimShapeTag(tag);
    l.args = Arguments(*l.tag);
    if (l.args && !OfLists(*l.args)) l.args.reset();
    full_by_short[l.Text()].insert(l.head + " " + tag);
  }
  // Trimmed, two rows that read the same read in full.
  for (size_t i = 0; i < rows.size(); ++i) {
    Label& l = labels[i];
    if (l.tag && full_by_short[l.Text()].size() > 1) {
      l.tag = TagText(*rows[i]->tag);
      l.args = Arguments(*l.tag);
      if (l.args && !OfLists(*l.args)) l.args.reset();
    }
  }
  std::vector<std::string> out;
  for (const Label& l : labels) out.push_back(l.Text());
  if (width == 0) return out;

  // Which arguments tell apart the rows of one name (and argument count).
  std::map<std::pair<std::string, size_t>, std::vector<bool>> differ;
  std::map<std::pair<std::string, size_t>, const std::vector<std::string>*> first;
  for (const Label& l : labels) {
    if (!l.args) continue;
    const auto key = std::pair(l.head, l.args->size());
    auto [it, added] = first.emplace(key, &*l.args);
    std::vector<bool>& d = differ[key];
    d.resize(l.args->size());
    for (size_t k = 0; k < l.args->size(); ++k) d[k] = d[k] || (*l.args)[k] != (*it->second)[k];
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    const Label& l = labels[i];
    if (TextWidth(out[i]) <= width) continue;
    if (l.args && !l.args->empty()) {
      std::vector<bool> keep = differ[{l.head, l.args->size()}];
      for (size_t k = 0; k < keep.size(); ++k) {  // the shared ones, from the left, as fit
        if (keep[k]) continue;
        keep[k] = true;
        if (TextWidth(l.head + " " + JoinKept(*l.args, keep)) > width) {
          keep[k] = false;
          break;
        }
      }
      out[i] = l.head + " " + JoinKept(*l.args, keep);
    }
    if (TextWidth(out[i]) > width && l.args) {  // "[[1,16,32,32],…]"
      std::string compact = out[i].substr(0, l.head.size() + 1);
      for (size_t k = l.head.size() + 1; k < out[i].size(); ++k) {
        if (out[i][k] != ' ') compact += out[i][k];
      }
      out[i] = std::move(compact);
    }
    if (TextWidth(out[i]) > width) out[i] = CutMiddle(out[i], width);
  }
  return out;
}

}  // namespace paddle_prof::internal
