#include "recorder_registry.h"

#include "paddle_prof/profiler_enabled.h"

namespace paddle_prof::internal {

RecorderRegistry& RecorderRegistry::Get() {
  static auto* registry = new RecorderRegistry;  // leaked: threads outlive static destructors
  return *registry;
}

ThreadRecorder* RecorderRegistry::Register(int os_tid, std::string thread_name) {
  std::lock_guard<std::mutex> lock(mu_);
  // Window ids only grow, so a recorder that holds an older window than the open one
  // (or any window, while profiling is off and the collector is done) is never read again.
  const uint64_t open_window = g_window.load(std::memory_order_acquire);
  for (const auto& r : recorders_) {
    // In the open window, one whose records a flight recorder released is free too: a
    // window that lasts for days may see threads come and go by the thousand.
    if (r->retired() && (r->window() != open_window || r->AllRecordsReleased())) {
      r->Adopt(os_tid, std::move(thread_name));
      return r.get();
    }
  }
  recorders_.push_back(std::make_unique<ThreadRecorder>(static_cast<int>(recorders_.size()), os_tid,
                                                        std::move(thread_name)));
  return recorders_.back().get();
}

std::vector<const ThreadRecorder*> RecorderRegistry::LockAll(std::unique_lock<std::mutex>* lock) {
  *lock = std::unique_lock<std::mutex>(mu_);
  std::vector<const ThreadRecorder*> all;
  all.reserve(recorders_.size());
  for (const auto& r : recorders_) all.push_back(r.get());
  return all;
}

void RecorderRegistry::DetachCapturesInChild() {
  for (const std::unique_ptr<ThreadRecorder>& r : recorders_) r->DetachCaptureInChild();
}

void RecorderRegistry::ReleaseRetiredNames() {
  std::lock_guard<std::mutex> lock(mu_);  // none is adopted meanwhile
  for (const auto& r : recorders_) {
    if (r->retired()) r->ReleaseNames();
  }
}

}  // namespace paddle_prof::internal
