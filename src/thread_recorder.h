// The per-thread half of recording: a stack of the thread's open scopes and the
// buffer its finished calls go to. Only the owner thread writes; the collector reads
// the buffer and the counters from another thread while the owner goes on.
//
// Windows (enable → reset → … → disable) are told apart by id: a recorder holds the
// records of one window, and the first scope a thread begins or ends in a newer window
// rewinds its buffer. So a reset from any thread never touches another thread's
// memory, and records of an older window are never read as current.
#ifndef PADDLE_PROF_SRC_THREAD_RECORDER_H_
#define PADDLE_PROF_SRC_THREAD_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "event_buffer.h"
#include "name_interner.h"

namespace paddle_prof::internal {

struct OpenScope {
  const char* name;
  const char* tag;
  uint64_t start;
  uint64_t window;
  uint64_t serial;
};

// Per-window counts for the report's warnings, written by the owner only.
struct RecorderCounters {
  std::atomic<int64_t> open{0};           // scopes of this window still open
  std::atomic<int64_t> forced_closes{0};  // ends that closed scopes opened after them
  std::atomic<int64_t> foreign_ends{0};   // scopes ended on a thread that did not begin them
  std::atomic<int64_t> dropped{0};        // calls lost to the buffer budget or depth bound

  void Clear() {
    for (auto* c : {&open, &forced_closes, &foreign_ends, &dropped}) {
      c->store(0, std::memory_order_relaxed);
    }
  }
};

class ThreadRecorder {
 public:
  static constexpr uint32_t kMaxDepth = kMaxScopeDepth;

  // The calling thread's recorder, registered on first use; nullptr while the thread
  // is exiting.
  static ThreadRecorder* Current() {
    ThreadRecorder* r = current_;
    return r != nullptr ? r : RegisterCurrentThread();
  }

  ThreadRecorder(int index, int os_tid, std::string thread_name);

  // Owner-thread operations.
  // Opens a scope in `window`; returns false (and counts a drop) past kMaxDepth.
  bool Begin(const char* name, const char* tag, uint64_t window, uint32_t* depth,
             uint64_t* serial);
  // Ends the scope at `depth` if it is still open (an outer end may have closed it).
  void End(uint32_t depth, uint64_t serial, uint64_t end_tick);
  // Counts a scope that this thread ended but another thread began.
  void CountForeignEnd();
  const char* Intern(std::string_view s) { return names_.Intern(s); }

  // Collector-side reads.
  uint64_t window() const { return window_.load(std::memory_order_acquire); }
  const EventBuffer& buffer() const { return buffer_; }
  const RecorderCounters& counters() const { return counters_; }
  int index() const { return index_; }
  int os_tid() const { return os_tid_; }
  const std::string& thread_name() const { return thread_name_; }

  // Registry-side: a recorder whose thread exited can be handed to a new thread
  // once nobody needs its records.
  bool retired() const { return retired_.load(std::memory_order_acquire); }
  void Retire() { retired_.store(true, std::memory_order_release); }
  void Adopt(int os_tid, std::string thread_name);

 private:
  struct ExitNotifier;
  static ThreadRecorder* RegisterCurrentThread();
  // Rewinds buffer and counters when `window` is newer than what they hold.
  void SyncWindow(uint64_t window) {
    if (window_.load(std::memory_order_relaxed) != window) StartWindow(window);
  }
  void StartWindow(uint64_t window);
  void Emit(const OpenScope& scope, uint32_t depth, uint64_t end_tick);

  // initial-exec: a plain %fs-relative load, no __tls_get_addr call per scope.
  static thread_local ThreadRecorder* current_ __attribute__((tls_model("initial-exec")));

  // Owner-only state.
  OpenScope stack_[kMaxDepth];
  uint32_t depth_ = 0;
  uint64_t next_serial_ = 0;
  NameCache names_;

  // Shared with the collector.
  std::atomic<uint64_t> window_{0};
  RecorderCounters counters_;
  EventBuffer buffer_;
  std::atomic<bool> retired_{false};

  const int index_;
  int os_tid_;
  std::string thread_name_;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_THREAD_RECORDER_H_
