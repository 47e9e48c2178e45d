#include "oom_dump.h"

#include <cstdio>
#include <mutex>
#include <optional>

#include "native_guard.h"
#include "out_of_memory.h"
#include "paddle_prof/report.h"
#include "place_registry.h"
#include "profiler_control.h"
#include "thread_recorder.h"
#include "window_state.h"

namespace paddle_prof::internal {

namespace {

// Never held while the dump is written: the profiler's lock comes after it, never before.
std::mutex g_mu;
uint64_t g_dumped_window = 0;
uint64_t g_failures_window = 0;
int64_t g_failures_after = 0;
uint64_t g_path_window = 0;
std::string g_path;

// True for the first failure of `window`; counts the others.
bool ClaimTheDump(uint64_t window, std::string* explicit_path) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_dumped_window == window) {
    if (g_failures_window != window) {
      g_failures_window = window;
      g_failures_after = 0;
    }
    ++g_failures_after;
    return false;
  }
  g_dumped_window = window;
  if (g_path_window == window) *explicit_path = g_path;
  return true;
}

void DumpOnOutOfMemory(const Place& place, size_t requested_bytes) {
  const uint64_t window = g_window.load(std::memory_order_acquire);
  if (window == 0) return;
  NativeGuard profiler_memory;
  std::string path;
  if (!ClaimTheDump(window, &path)) return;
  OutOfMemory oom;
  oom.place = PlaceName(place);
  oom.requested_bytes = static_cast<int64_t>(requested_bytes);
  if (ThreadRecorder* recorder = ThreadRecorder::Current()) {
    oom.path = recorder->OpenScopeNames(window);
  }
  oom.event = oom.path.empty() ? "[no event]" : oom.path.back();
  const int index = PlaceIndex(place);
  oom.live_bytes = index >= 0 ? PlaceLiveBytes(index) : 0;
  const std::optional<Report> dump = WriteOutOfMemoryDump(oom, path);
  if (!dump) return;  // the window closed meanwhile
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

void SetOutOfMemoryPath(uint64_t window, const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_path_window = window;
  g_path = path;
}

int64_t FailuresAfterTheDump(uint64_t window) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_failures_window == window ? g_failures_after : 0;
}

}  // namespace paddle_prof::internal
