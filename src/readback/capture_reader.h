// Recovery of a capture (capture_files.h) that a process left behind when it ended
// without stopping its profiler: its records are read back into EventBuffers of this
// process, their name pointers rewritten to strings recovered from the capture's
// interned-name log or, for literal names, from the files the dead process had mapped
// there (its mappings are in the capture). The Collection they make goes to the same
// report builder and profile files as a window that stopped, with a warning that says
// how the process ended.
#ifndef PADDLE_PROF_SRC_CAPTURE_READER_H_
#define PADDLE_PROF_SRC_CAPTURE_READER_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "collection.h"
#include "event_buffer.h"
#include "paddle_prof/report.h"
#include "report_options.h"

namespace paddle_prof::internal {

// A recovered window: the Collection and what its threads' records point into.
struct RecoveredCapture {
  // Keeps the buffers for the next recovery: EventBuffers never return their memory.
  ~RecoveredCapture();

  Collection collection;
  std::vector<std::unique_ptr<EventBuffer>> buffers;
  std::deque<std::string> names;  // the recovered names the records point to
};

// The capture in `dir`, read back, its records not yet scanned (record_scan.h);
// std::runtime_error when `dir` holds none.
std::unique_ptr<RecoveredCapture> ReadCapture(const std::string& dir);

// How the process ended, where the one that waited for it knows (run's supervisor): a
// warning saying it, and the moment (CLOCK_REALTIME), which ends the window.
struct CaptureEnding {
  std::string how;
  int64_t unix_ns = 0;  // 0: not known; the window then ends at its last record
};

// Its report, with the profile files at options.profile_path when one is given.
Report RecoverCapture(const std::string& dir, const ReportOptions& options,
                      const CaptureEnding& ending = {});

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CAPTURE_READER_H_
