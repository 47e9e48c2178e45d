// The files a stopped window writes at its profile path: the Chrome trace, the summary
// JSON beside it (<path>.summary.json) and the HTML report (<path>.html; not for a
// followed child, whose files only its parent reads), each whole or not at all.
#ifndef PADDLE_PROF_SRC_PROFILE_FILES_H_
#define PADDLE_PROF_SRC_PROFILE_FILES_H_

#include <pthread.h>

#include <string>

#include "collection.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// What a profile path's summary adds to it: <path>.summary.json. The package's readers
// (paddle_prof.merge, the pytest plugin) take it from here.
inline constexpr char kSummarySuffix[] = ".summary.json";

// The Chrome trace of `c`, written at `path` on a thread of its own from construction
// on, while the caller builds the report from the same records: both only read them,
// and a long window's trace is most of the stop's time. Where no thread will start, the
// trace is written by Wait(). `c` must outlive the wait. A bare pthread, not a
// std::thread: the thread allocates nothing of its own that it would free outside the
// profiler's guard (native tracking would count that free as untracked).
class TraceWriting {
 public:
  TraceWriting(const Collection& c, std::string path);
  ~TraceWriting();  // waits
  TraceWriting(const TraceWriting&) = delete;
  TraceWriting& operator=(const TraceWriting&) = delete;

  const std::string& path() const { return path_; }
  // Once the trace is written: why it could not be, or empty.
  const std::string& Wait();

 private:
  static void* Run(void* self);
  void Join();
  void Write();

  const Collection& c_;
  const std::string path_;
  pthread_t thread_{};
  bool running_ = false;
  bool written_ = false;
  std::string error_;
};

// The summary and the page of `report`, beside the trace `trace` writes. A file that
// cannot be written is a warning of `report` (the summary carries the trace's, the page
// the trace's and the summary's), and a line on stderr.
void WriteProfileFiles(TraceWriting* trace, Report* report);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PROFILE_FILES_H_
