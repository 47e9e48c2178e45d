// Summary files merged as they are read (merge_files.h): on any number of threads the
// merge is the one of the files read one by one, and the first bad file in order is the
// one named.
#include "merge_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "report_merge.h"
#include "summary_reader.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::MergeSummaryFiles;
using testing::TempPath;
using testing::TimedRow;

// Eleven ranks' summaries: more than a batch of reads on two threads (8), fewer on three.
std::vector<std::string> WriteRanks(int ranks) {
  std::vector<std::string> paths;
  for (int rank = 0; rank < ranks; ++rank) {
    Report r;
    r.process.pid = 100 + rank;
    r.process.host = "node1";
    r.process.rank = rank;
    r.events = {TimedRow("op", rank + 1, rank + 1.0, rank + 1.0, 1, rank + 1.0),
                TimedRow("only_" + std::to_string(rank % 3), 1, 1, 1, 1, 1)};
    r.places.push_back(PlaceSummary{"CPU", 1000 * (rank + 1), 0, 0, 0, {}, {}});
    paths.push_back(TempPath("merge_files_rank" + std::to_string(rank)) + ".summary.json");
    std::ofstream(paths.back()) << r.ToJson();
  }
  return paths;
}

void Remove(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) std::remove(path.c_str());
}

TEST(MergeFilesTest, AnyNumberOfThreadsMergesAsTheFilesReadOneByOne) {
  const std::vector<std::string> paths = WriteRanks(11);
  std::vector<Report> read;
  for (const std::string& path : paths) read.push_back(internal::LoadSummary(path));
  const std::string one_by_one = internal::MergeReports(read, EventSortingKey::kTotal).ToJson();
  for (const unsigned threads : {1u, 2u, 3u, 0u}) {
    const Report merged = MergeSummaryFiles(paths, EventSortingKey::kTotal, threads);
    EXPECT_EQ(merged.ToJson(), one_by_one) << threads << " threads";
    ASSERT_EQ(merged.merged_from.size(), 11u);
    EXPECT_EQ(merged.merged_from[10].path, paths[10]);
    EXPECT_EQ(testing::Row(merged, "op").calls, 66);  // 1 + 2 + ... + 11
    EXPECT_EQ(merged.peaks_by.at("CPU").at("10"), 11000);
  }
  Remove(paths);
}

TEST(MergeFilesTest, TheFirstBadFileInOrderIsNamed) {
  const std::vector<std::string> written = WriteRanks(11);
  std::vector<std::string> paths = written;
  std::ofstream(paths[9]) << "{";  // cut short
  const std::string missing = TempPath("merge_files_missing") + ".summary.json";
  paths[10] = missing;
  for (const unsigned threads : {1u, 2u, 3u}) {
    try {
      MergeSummaryFiles(paths, EventSortingKey::kTotal, threads);
      ADD_FAILURE() << "a bad file merged";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(paths[9] + ": not a paddle_prof summary", 0), 0u)
          << e.what();
    }
  }
  paths[9] = paths[0];  // given twice
  paths.pop_back();
  try {
    MergeSummaryFiles(paths, EventSortingKey::kTotal, 2);
    ADD_FAILURE() << "a file merged twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), paths[0] + " is given twice (inputs 1 and 10): merge each "
                                                "profile once");
  }
  // The same file spelt another way, or through a symbolic link, is the same profile.
  const std::string link = TempPath("merge_files_link") + ".summary.json";
  ASSERT_EQ(symlink(paths[0].c_str(), link.c_str()), 0);
  for (const std::string& again : {paths[0].substr(0, paths[0].rfind('/')) + "/." +
                                       paths[0].substr(paths[0].rfind('/')),
                                   link}) {
    try {
      MergeSummaryFiles({paths[0], paths[1], again}, EventSortingKey::kTotal, 2);
      ADD_FAILURE() << "a file merged twice as " << again;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), paths[0] + " and " + again +
                                           " are the same file (inputs 1 and 3): merge each "
                                           "profile once");
    }
  }
  std::remove(link.c_str());
  EXPECT_THROW(MergeSummaryFiles({}, EventSortingKey::kTotal), std::invalid_argument);
  Remove(written);
}

}  // namespace
}  // namespace paddle_prof
