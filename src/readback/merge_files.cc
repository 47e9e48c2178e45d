#include "merge_files.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>

#include "report_merge.h"
#include "summary_reader.h"

namespace paddle_prof::internal {

namespace {

constexpr unsigned kMaxThreads = 8;
constexpr size_t kBatchPerThread = 4;  // files read ahead per thread

}  // namespace

Report MergeSummaryFiles(const std::vector<std::string>& paths, EventSortingKey key,
                         unsigned threads) {
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  const size_t batch = threads * kBatchPerThread;
  ReportMerger merger;
  for (size_t first = 0; first < paths.size(); first += batch) {
    const size_t count = std::min(batch, paths.size() - first);
    std::vector<std::optional<Report>> read(count);
    std::vector<std::exception_ptr> failed(count);
    std::atomic<size_t> next{0};
    const auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < count;) {
        try {
          read[i] = LoadSummary(paths[first + i]);
        } catch (...) {
          failed[i] = std::current_exception();
        }
      }
    };
    std::vector<std::thread> helpers;
    helpers.reserve(threads);  // no reallocation may throw past a running thread
    for (size_t t = 1; t < std::min<size_t>(threads, count); ++t) {
      try {
        helpers.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // no thread to be had: fewer read at once, and this one reads the rest
      }
    }
    work();
    for (std::thread& helper : helpers) helper.join();
    for (size_t i = 0; i < count; ++i) {
      if (failed[i]) std::rethrow_exception(failed[i]);
      merger.Add(std::move(*read[i]));
    }
  }
  return merger.Finish(key);
}

}  // namespace paddle_prof::internal
