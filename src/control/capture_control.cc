// The window's capture (capture_files.h): the window control writes the window's meta,
// steps and mappings as the window opens and at each step mark; the recorders map their
// chunks and log their names themselves.
#include <fcntl.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "atomic_file.h"
#include "capture_files.h"
#include "clock.h"
#include "flags.h"
#include "name_interner.h"
#include "native_guard.h"
#include "place_registry.h"
#include "profiler_control.h"
#include "recorder_registry.h"
#include "window_control.h"
#include "window_state.h"

namespace paddle_prof::internal {
namespace {

std::string ReadFileWhole(const char* path) {
  std::string bytes;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return bytes;
  char buffer[65536];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return bytes;
}

bool WriteCaptureFile(const std::string& dir, const char* name, std::string_view bytes,
                      std::string* error) {
  AtomicFile file(CaptureFile(dir, name));
  file.Write(bytes);
  return file.Commit(error);
}

// The window's meta (rewritten whole: places appear late) and the process's mappings
// (libraries load late), at open and at each step mark.
bool WriteCaptureMeta(const Control& control, std::string* error) {
  const CaptureTarget& capture = *control.capture.open;
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.17g", Clock::NsPerTick());
  std::string meta = std::string(kCaptureMetaMagic) + "window " + std::to_string(capture.window) + "\npid " +
                     std::to_string(getpid()) + "\nstate " + ProfilerStateName(control.state) +
                     "\nstart_tick " + std::to_string(control.start_tick) + "\nns_per_tick " +
                     rate + "\nunix_ns " + std::to_string(control.start_unix_ns) + "\ntimeline " +
                     (MemoryTimelineOn() ? "1" : "0") + "\nhost " + control.process.host +
                     "\n";
  if (control.process.rank) {
    meta += "rank " + std::to_string(*control.process.rank) + " " +
            std::to_string(control.process.world_size.value_or(0)) + "\n";
  }
  for (const PlaceSummary& p : PlaceWindowFigures()) {
    meta += "place " + std::to_string(p.start_bytes) + " " + std::to_string(p.peak_bytes) + " " +
            std::to_string(p.end_bytes) + " " + std::to_string(p.untracked_frees) + " " + p.place +
            "\n";
  }
  return WriteCaptureFile(capture.dir, "maps", ReadFileWhole("/proc/self/maps"), error) &&
         WriteCaptureFile(capture.dir, "meta", meta, error);
}

// One step mark, appended: its tick, then the figures StepMark holds.
void AppendCaptureStep(const Control& control, const StepMark& step) {
  std::string line = std::to_string(step.tick);
  for (const auto& [figures, tag] :
       {std::pair{&step.peak_bytes, "peak"}, std::pair{&step.end_bytes, "end"},
        std::pair{&step.process, "process"}}) {
    for (const auto& [name, value] : *figures) {
      line += std::string("\t") + tag + " " + std::to_string(value) + " " + name;
    }
  }
  line += "\n";
  const std::string path = CaptureFile(control.capture.open->dir, "steps");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (write(fd, line.data(), line.size()) < 0) {  // one write: a kill leaves whole lines
    LOG_FIRST_N(WARNING, 1) << "paddle_prof: " << path << ": " << std::strerror(errno);
  }
  close(fd);
}

}  // namespace

std::string AbsoluteDir(const std::string& dir) {
  char* real = realpath(dir.c_str(), nullptr);
  if (real == nullptr) return dir;
  std::string absolute = real;
  std::free(real);
  return absolute;
}

// Ends the open window's capture: recorders still writing its chunks write into files
// that are gone, unless a reset keeps them for the next window in the same directory. A
// window that stops normally leaves no capture behind.
void EndCapture(Control& control, CaptureFiles files) {
  if (control.capture.open == nullptr) return;
  g_capture.store(nullptr, std::memory_order_release);
  CloseCaptureNames();
  if (files != CaptureFiles::kKeep) {
    RemoveCaptureFiles(control.capture.open->dir, files == CaptureFiles::kKeepChunks);
  }
  control.capture.open = nullptr;  // kept in control.capture.all: a recorder may still read it
}

void StartCapture(Control& control, uint64_t window, bool fresh) {
  control.capture.warning.clear();
  if (control.capture.dir.empty()) return;
  const std::string dir = ExpandPathFields(control.capture.dir, control.process);
  std::string error;
  if (control.flight.keep_last_steps > 0) {
    error = "a flight recorder (keep_last_steps) reuses its memory and cannot be captured";
  } else if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    error = std::strerror(errno);
  } else {
    if (fresh) RemoveCaptureFiles(dir);  // a capture left by a process that died
    control.capture.open =
        &control.capture.all.emplace_back(CaptureTarget{window, AbsoluteDir(dir)});
    const std::string& absolute = control.capture.open->dir;
    if (!OpenCaptureNames(absolute, &error) ||
        !WriteCaptureFile(absolute, "steps", "", &error) || !WriteCaptureMeta(control, &error)) {
      EndCapture(control, CaptureFiles::kRemove);
    }
  }
  if (control.capture.open == nullptr) {
    control.capture.warning = "capture_dir '" + dir + "': cannot capture there (" + error +
                              "); the window was recorded in memory only.";
    LOG(WARNING) << "paddle_prof: " << control.capture.warning;
    return;
  }
  g_capture.store(control.capture.open, std::memory_order_release);
}

void CaptureStep(const Control& control, const StepMark& step) {
  AppendCaptureStep(control, step);
  if (std::string error; !WriteCaptureMeta(control, &error)) {
    LOG_FIRST_N(WARNING, 1) << "paddle_prof: capture: " << error;
  }
}

std::string SetCaptureDir(const std::string& dir, bool every_window) {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (every_window) FLAGS_paddle_prof_capture_dir = dir;
  if (g_window.load(std::memory_order_relaxed) == 0) return "";
  control.capture.dir = dir;
  if (control.gpu != nullptr) control.gpu->Discard();
  OpenWindow(control);
  return control.capture.warning;
}

}  // namespace paddle_prof::internal
