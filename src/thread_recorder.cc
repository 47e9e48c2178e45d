#include "thread_recorder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "paddle_prof/profiler.h"
#include "recorder_registry.h"

namespace paddle_prof::internal {

thread_local ThreadRecorder* ThreadRecorder::current_ = nullptr;

namespace {

thread_local bool t_exiting = false;

// Counters have a single writer: a plain load and store, no locked instruction.
void Bump(std::atomic<int64_t>& counter, int64_t delta = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

}  // namespace

// Retires the thread's recorder when the thread exits; its records stay readable.
struct ThreadRecorder::ExitNotifier {
  ThreadRecorder* recorder = nullptr;
  ~ExitNotifier() {
    t_exiting = true;
    current_ = nullptr;
    recorder->Retire();
  }
};

ThreadRecorder* ThreadRecorder::RegisterCurrentThread() {
  if (t_exiting) return nullptr;
  char name[16] = "";
  pthread_getname_np(pthread_self(), name, sizeof(name));
  ThreadRecorder* r =
      RecorderRegistry::Get().Register(static_cast<int>(syscall(SYS_gettid)), name);
  r->buffer_.Reserve();  // fault the first chunk in now, not inside a timed scope
  thread_local ExitNotifier notifier;
  notifier.recorder = r;
  current_ = r;
  return r;
}

ThreadRecorder::ThreadRecorder(int index, int os_tid, std::string thread_name)
    : index_(index), os_tid_(os_tid), thread_name_(std::move(thread_name)) {}

void ThreadRecorder::Adopt(int os_tid, std::string thread_name) {
  os_tid_ = os_tid;
  thread_name_ = std::move(thread_name);
  depth_ = 0;  // scopes the old thread left open can never end
  retired_.store(false, std::memory_order_release);
}

void ThreadRecorder::StartWindow(uint64_t window) {
  buffer_.Clear();
  counters_.Clear();
  // Release: a collector that sees the new window id also sees the emptied buffer.
  window_.store(window, std::memory_order_release);
}

bool ThreadRecorder::Begin(const char* name, const char* tag, uint64_t window, uint32_t* depth,
                           uint64_t* serial) {
  SyncWindow(window);
  if (depth_ == kMaxDepth) {
    Bump(counters_.dropped);
    return false;
  }
  OpenScope& scope = stack_[depth_];
  scope.name = name;
  scope.tag = tag;
  scope.window = window;
  scope.serial = ++next_serial_;
  *depth = depth_++;
  *serial = scope.serial;
  Bump(counters_.open);
  scope.start = Clock::Now();  // last, so that the bookkeeping is not timed
  return true;
}

void ThreadRecorder::End(uint32_t depth, uint64_t serial, uint64_t end_tick) {
  if (depth >= depth_ || stack_[depth].serial != serial) return;  // an outer end closed it
  const bool forced = depth + 1 < depth_;
  while (depth_ > depth) {
    --depth_;
    Emit(stack_[depth_], depth_, end_tick);
  }
  if (forced) {
    const uint64_t window = g_window.load(std::memory_order_acquire);
    if (window == 0) return;
    SyncWindow(window);
    Bump(counters_.forced_closes);
  }
}

void ThreadRecorder::CountForeignEnd() {
  const uint64_t window = g_window.load(std::memory_order_acquire);
  if (window == 0) return;
  SyncWindow(window);
  Bump(counters_.foreign_ends);
}

void ThreadRecorder::Emit(const OpenScope& scope, uint32_t depth, uint64_t end_tick) {
  // Acquire pairs with the release that opened the window: the collector of the
  // previous window is done with this memory before it is written again.
  const uint64_t window = g_window.load(std::memory_order_acquire);
  if (window == 0) return;  // profiling is off: the collector counted the scope as open
  if (scope.window == window_.load(std::memory_order_relaxed)) Bump(counters_.open, -1);
  SyncWindow(window);
  // A scope begun in an earlier window is cut: its record only tells the report where
  // its children's time belongs.
  const bool cut = scope.window != window;
  const EventRecord record{scope.name, EventRecord::PackTag(scope.tag, depth, cut), scope.start,
                           end_tick};
  if (!buffer_.Append(record) && !cut) Bump(counters_.dropped);
}

}  // namespace paddle_prof::internal
