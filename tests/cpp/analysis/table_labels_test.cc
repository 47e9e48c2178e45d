// The text table's event labels: shape tags trimmed and elided to what tells rows apart,
// never two rows alike where their full labels differ, and a width held.
#include "table_labels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text_columns.h"

namespace paddle_prof::internal {
namespace {

EventRow Tagged(const std::string& name, const std::optional<std::string>& tag) {
  EventRow row;
  row.name = name;
  row.tag = tag;
  return row;
}

std::vector<std::string> Fit(const std::vector<EventRow>& rows, size_t width) {
  std::vector<const EventRow*> pointers;
  for (const EventRow& row : rows) pointers.push_back(&row);
  return FitRowLabels(pointers, width);
}

TEST(TableLabelsTest, TrailingEmptyArgumentsGo) {
  EXPECT_EQ(TrimShapeTag("[[64, 16, 28, 28], [], [], [], [], []]"), "[[64, 16, 28, 28]]");
  EXPECT_EQ(TrimShapeTag("[[], [3], [], []]"), "[[], [3]]");  // inner ones stay
  EXPECT_EQ(TrimShapeTag("[[], []]"), "");
  EXPECT_EQ(TrimShapeTag("[[64, 16]]"), "[[64, 16]]");
  EXPECT_EQ(TrimShapeTag("[]"), "");
  EXPECT_EQ(TrimShapeTag("batch 3"), "batch 3");  // not a list
  EXPECT_EQ(TrimShapeTag("[[1], []"), "[[1], []");  // not well formed
}

TEST(TableLabelsTest, TellApartShowsOnlyTheArgumentsThatDiffer) {
  EXPECT_EQ(TellApart({"[[1, 41], [16, 3], [0]]", "[[1, 60], [16, 3], [0]]"}),
            (std::vector<std::string>{"[[1, 41], …]", "[[1, 60], …]"}));
  EXPECT_EQ(TellApart({"[[1], [2], [3]]", "[[1], [5], [3]]"}),
            (std::vector<std::string>{"[…, [2], …]", "[…, [5], …]"}));
  // Another argument count, a tag of another form, or one tag alone: whole.
  EXPECT_EQ(TellApart({"[[1], [2]]", "[[1]]"}), (std::vector<std::string>{"[[1], [2]]", "[[1]]"}));
  EXPECT_EQ(TellApart({"[[1], [2]]", "x"}), (std::vector<std::string>{"[[1], [2]]", "x"}));
  EXPECT_EQ(TellApart({"[[1], [2]]"}), (std::vector<std::string>{"[[1], [2]]"}));
  EXPECT_EQ(TellApart({"[1, 3, 41]", "[1, 3, 60]"}),
            (std::vector<std::string>{"[1, 3, 41]", "[1, 3, 60]"}));
}

TEST(TableLabelsTest, WithoutAWidthTagsOnlyLoseTheirTrailingEmptyArguments) {
  const std::vector<EventRow> rows = {
      Tagged("aten::empty", "[[64, 16, 28, 28], [], [], [], [], []]"),
      Tagged("aten::relu", "[[], []]"), Tagged("step", "warm"), Tagged("plain", std::nullopt)};
  EXPECT_EQ(Fit(rows, 0), (std::vector<std::string>{"aten::empty [[64, 16, 28, 28]]",
                                                     "aten::relu", "step [warm]", "plain"}));
}

TEST(TableLabelsTest, RowsThatWouldReadAlikeKeepTheirFullTags) {
  const std::vector<EventRow> rows = {Tagged("aten::empty", "[[8], []]"),
                                      Tagged("aten::empty", "[[8], [], []]"),
                                      Tagged("aten::empty", "[[9], []]")};
  EXPECT_EQ(Fit(rows, 0), (std::vector<std::string>{"aten::empty [[8], []]",
                                                     "aten::empty [[8], [], []]",
                                                     "aten::empty [[9]]"}));
}

// The seed's case: convolutions told apart by their input's height alone.
TEST(TableLabelsTest, TooWideATagKeepsTheArgumentsItsRowsDifferIn) {
  const std::string rest = ", [16, 16, 3, 3], [0], [1, 1], [1, 1], [1, 1], []]";
  const std::vector<EventRow> rows = {
      Tagged("aten::mkldnn_convolution", "[[1, 16, 41, 32]" + rest),
      Tagged("aten::mkldnn_convolution", "[[1, 16, 60, 32]" + rest),
      Tagged("aten::_convolution", "[[1, 3, 32, 32], [16, 3, 3, 3], [16], [1, 1], [], []]")};
  const std::vector<std::string> labels = Fit(rows, 54);
  EXPECT_EQ(labels, (std::vector<std::string>{
                        "aten::mkldnn_convolution [[1, 16, 41, 32], …]",
                        "aten::mkldnn_convolution [[1, 16, 60, 32], …]",
                        // Alone under its name: as many arguments from the left as fit.
                        "aten::_convolution [[1, 3, 32, 32], [16, 3, 3, 3], …]"}));
  // Narrower: the tag loses its spaces, then the middle goes.
  EXPECT_EQ(Fit(rows, 42)[0], "aten::mkldnn_convolution [[1,16,41,32],…]");
  const std::string cut = Fit(rows, 30)[0];
  EXPECT_EQ(TextWidth(cut), 30u);
  EXPECT_EQ(cut, "aten::m…ution [[1,16,41,32],…]");
}

TEST(TableLabelsTest, ALongNameKeepsItsStartAndItsEnd) {
  const std::vector<EventRow> rows = {
      Tagged("autograd::engine::evaluate_function: MaxPool2DWithIndicesBackward0", "[]")};
  const std::vector<std::string> labels = Fit(rows, 40);
  EXPECT_EQ(labels[0], "autograd::…MaxPool2DWithIndicesBackward0");
  EXPECT_EQ(TextWidth(labels[0]), 40u);
}

}  // namespace
}  // namespace paddle_prof::internal
