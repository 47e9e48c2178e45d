// The flight recorder (flight_recorder.h): its step marks, its report's start, and
// keep_last_steps as the API sets it.
#include "flight_recorder.h"

#include <glog/logging.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu_tracer.h"
#include "place_registry.h"
#include "profiler_control.h"
#include "recorder_registry.h"
#include "window_control.h"
#include "window_state.h"

namespace paddle_prof::internal {

void KeepToTheKeptSteps(const Control& control, Collection* c) {
  c->keep_last_steps = control.flight.keep_last_steps;
  c->steps_dropped = control.flight.steps_dropped;
  if (!control.flight.before_kept) return;
  const StepMark before = control.flight.before_kept->Mark();
  c->start_tick = before.tick;
  const std::vector<int64_t> running = PlaceStepPeaks();
  for (size_t i = 0; i < c->places.size(); ++i) {
    PlaceSummary& p = c->places[i];
    if (const auto start = before.end_bytes.find(p.place); start != before.end_bytes.end()) {
      p.start_bytes = start->second;
    }
    p.peak_bytes = std::max({p.start_bytes, p.end_bytes, i < running.size() ? running[i] : 0});
    for (const StepMark& step : c->steps) {
      if (const auto peak = step.peak_bytes.find(p.place); peak != step.peak_bytes.end()) {
        p.peak_bytes = std::max(p.peak_bytes, peak->second);
      }
    }
  }
}

std::unordered_map<const ThreadRecorder*, KeptStart> KeptStarts(const Control& control) {
  std::unordered_map<const ThreadRecorder*, KeptStart> kept;
  for (const auto& [recorder, starts] : control.flight.step_starts) {
    if (starts.size() == static_cast<size_t>(control.flight.keep_last_steps) + 1) {
      kept[recorder] = starts.front();
    }
  }
  return kept;
}

void DropStepsPastTheLast(Control& control) {
  const uint64_t window = g_window.load(std::memory_order_relaxed);
  const auto keep = static_cast<size_t>(control.flight.keep_last_steps);
  std::unique_lock<std::mutex> registry_lock;
  for (const ThreadRecorder* r : RecorderRegistry::Get().LockAll(&registry_lock)) {
    if (r->window() != window) continue;
    std::deque<KeptStart>& starts = control.flight.step_starts[r];
    starts.push_back({r->buffer().Size(), r->SerialNow()});
    if (starts.size() > keep + 1) starts.pop_front();
    if (starts.size() == keep + 1) r->buffer().ReleaseBelow(starts.front().record);
  }
  while (control.steps.size() > keep) {
    control.flight.before_kept = std::move(control.steps.front());
    control.steps.erase(control.steps.begin());
    ++control.flight.steps_dropped;
  }
  if (control.gpu != nullptr && control.flight.before_kept) {
    control.gpu->DropEndedBefore(control.flight.before_kept->tick);
  }
}

void SetKeepLastSteps(int steps) {
  if (steps < 0) throw std::invalid_argument("keep_last_steps must be >= 0");
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return;
  // The steps already marked were kept, or released, under the bound they had.
  if (!control.steps.empty() || control.flight.steps_dropped > 0) {
    throw std::logic_error("keep_last_steps is set before the window's first step mark");
  }
  control.flight.keep_last_steps = steps;
  if (steps > 0 && control.capture.open != nullptr) {
    EndCapture(control, CaptureFiles::kRemove);
    control.capture.warning = "capture_dir '" + control.capture.dir +
                              "': a flight recorder (keep_last_steps) reuses its memory and "
                              "cannot be captured; the window was recorded in memory only.";
    LOG(WARNING) << "paddle_prof: " << control.capture.warning;
  }
}

}  // namespace paddle_prof::internal
