// The window's capture (capture_files.h): where each window of the profiler captures,
// the capture of the open window, and the window control's steps that start, feed and
// end it (capture_control.cc).
#ifndef PADDLE_PROF_SRC_CAPTURE_CONTROL_H_
#define PADDLE_PROF_SRC_CAPTURE_CONTROL_H_

#include <cstdint>
#include <deque>
#include <string>

#include "capture_files.h"
#include "collection.h"
#include "window_state.h"

namespace paddle_prof::internal {

struct Control;

// The window control's part (window_control.h).
struct WindowCapture {
  // capture_dir: where each window of this profiler captures (empty: nowhere), the
  // capture of the open window (null: none), and why it has none when it was asked for.
  std::string dir;
  const CaptureTarget* open = nullptr;
  std::string warning;
  // Every capture so far, kept: a recorder may still read one that ended (40 bytes each).
  std::deque<CaptureTarget> all;
};

enum class CaptureFiles { kKeep, kKeepChunks, kRemove };
// `dir` made absolute (the program may change its working directory mid-window); as
// given when it does not exist.
std::string AbsoluteDir(const std::string& dir);
// Starts the capture of window `window` (about to open) in control.capture.dir; on
// failure, says why in control.capture.warning (and on stderr) and the window is
// recorded in memory only.
void StartCapture(Control& control, uint64_t window, bool fresh);
// Ends the open window's capture, its files kept or removed as `files` says.
void EndCapture(Control& control, CaptureFiles files);
// A step mark, into the capture: appended to its steps, and its meta rewritten.
void CaptureStep(const Control& control, const StepMark& step);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CAPTURE_CONTROL_H_
