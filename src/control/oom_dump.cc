// The out-of-memory dump: when an allocation fails while a window is open (a
// TrackingAllocator's base, the torch bridge's CPU allocator), a snapshot of the window
// is written before the failure goes on to the program unchanged. Its summary says what
// failed ("oom": the place, the bytes asked, the event and the path of events open on
// the failing thread, what the place held) and a warning, also printed on stderr, names
// the largest holders. One dump per EnableProfiler() (its resets included); later
// failures are counted in the window's report. The dump is out_of_memory.h's handler from the
// moment the library loads; under the window control's lock, WriteOutOfMemoryDump decides
// which failure is dumped and where (oom_dump.h holds its state).
#include "oom_dump.h"

#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "flags.h"
#include "native_guard.h"
#include "out_of_memory.h"
#include "paddle_prof/report.h"
#include "place_registry.h"
#include "profiler_control.h"
#include "thread_recorder.h"
#include "window_control.h"
#include "window_state.h"

namespace paddle_prof::internal {

namespace {

// On the failing thread: what failed, where, and what the place held; the window
// control writes the dump (the first failure of the window) or counts it.
void DumpOnOutOfMemory(const Place& place, size_t requested_bytes) {
  const uint64_t window = g_window.load(std::memory_order_acquire);
  if (window == 0) return;
  NativeGuard profiler_memory;
  OutOfMemory oom;
  oom.place = PlaceName(place);
  oom.requested_bytes = requested_bytes;
  if (ThreadRecorder* recorder = ThreadRecorder::Current()) {
    oom.path = recorder->OpenScopeNames(window);
  }
  oom.event = oom.path.empty() ? "[no event]" : oom.path.back();
  const int index = PlaceIndex(place);
  oom.live_bytes = index >= 0 ? PlaceLiveBytes(index) : 0;
  const std::optional<Report> dump = WriteOutOfMemoryDump(oom);
  if (!dump) return;  // a later failure of the window, or the window closed meanwhile
  for (const std::string& warning : dump->warnings) {
    if (warning.rfind("out of memory on ", 0) == 0) {
      std::fprintf(stderr, "paddle_prof: %s (dump: %s)\n", warning.c_str(),
                   dump->summary_path.c_str());
    }
  }
}

// The handler is a constant-initialised atomic: safe whatever the order files load in.
const bool g_installed = (SetOutOfMemoryHandler(DumpOnOutOfMemory), true);

}  // namespace

std::optional<Report> WriteOutOfMemoryDump(const OutOfMemory& oom) {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return std::nullopt;
  if (std::exchange(control.oom.dumped, true)) {
    ++control.oom.failures_after;
    return std::nullopt;
  }
  ReportOptions options = control.launcher_report.value_or(ReportFromFlags());
  if (!control.oom.path.empty()) {
    options.profile_path = control.oom.path;
  } else if (!FLAGS_paddle_prof_oom_path.empty()) {
    options.profile_path = FLAGS_paddle_prof_oom_path;
  } else if (std::string base = WindowProfilePath(control, options); !base.empty()) {
    options.profile_path = base + ".oom.json";
  } else {
    options.profile_path = "paddle_prof.oom." + std::to_string(getpid()) + ".json";
  }
  return SnapshotLocked(control, options, &oom);
}

void SetOutOfMemoryPath(const std::string& path) {
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0) control.oom.path = path;
}

}  // namespace paddle_prof::internal
