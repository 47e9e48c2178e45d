// The sort keys' table: every key has its own name, description and value, and the
// names read back to the keys they came from.
#include "sort_keys.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "test_util.h"

namespace paddle_prof::internal {
namespace {

TEST(SortKeysTest, EveryKeyHasItsOwnNameDescriptionAndValue) {
  EventRow row = testing::TimedRow("op", 4, 10, 7, 1, 5);  // ave 2.5
  row.memory["CPU"] = testing::Memory(30, 40, 2, 10, 1, 20);
  row.memory["GPU"] = testing::Memory(8, 8, 1, 0, 0, 8);
  std::set<std::string> descriptions;
  std::set<double> values;
  for (const std::string& name : SortingKeyNames()) {
    const EventSortingKey key = SortingKeyNamed(name);
    EXPECT_EQ(SortingKeyName(key), name);
    EXPECT_EQ(ParseSortingKey(name), key);
    descriptions.insert(SortDescription(key));
    values.insert(SortValueOf(key)(row));
  }
  EXPECT_EQ(SortingKeyNames().size(), 8u);
  EXPECT_EQ(descriptions.size(), 8u);
  EXPECT_EQ(values, (std::set<double>{4, 10, 7, 1, 5, 2.5, 38, 28}));
  EXPECT_EQ(SortValueOf(EventSortingKey::kPeakMemory)(row), 38);  // summed over places
  EXPECT_EQ(SortValueOf(EventSortingKey::kDefault)(row), 10);     // the default is total
  EXPECT_EQ(SortingKeyName(EventSortingKey::kDefault), "total");
  EXPECT_EQ(SortDescription(EventSortingKey::kDefault), "total time");
  EXPECT_THROW(SortingKeyNamed("default"), std::invalid_argument);
  EXPECT_EQ(ParseSortingKey("default"), EventSortingKey::kTotal);
}

}  // namespace
}  // namespace paddle_prof::internal
