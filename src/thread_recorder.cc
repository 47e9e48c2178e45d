#include "thread_recorder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "paddle_prof/profiler.h"
#include "recorder_registry.h"

namespace paddle_prof::internal {

namespace {

thread_local bool t_exiting = false;

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
  depth_.store(0, std::memory_order_relaxed);  // the old thread's open scopes never end
  retired_.store(false, std::memory_order_release);
}

void ThreadRecorder::StartWindow(uint64_t window) {
  buffer_.Clear();
  counters_.Clear();
  // Release: a collector that sees the new window id also sees the emptied buffer.
  window_.store(window, std::memory_order_release);
}

uint32_t ThreadRecorder::PopAbandoned(uint32_t depth) {
  while (depth > 0 && stack_[depth - 1].owner.load(std::memory_order_relaxed) == kAbandoned) {
    --depth;
  }
  depth_.store(depth, std::memory_order_relaxed);
  return depth;
}

void ThreadRecorder::EndSlow(const void* owner, uint32_t depth, uint64_t end_tick) {
  const uint32_t top = PopAbandoned(depth_.load(std::memory_order_relaxed));
  if (depth >= top || stack_[depth].owner.load(std::memory_order_relaxed) != owner) {
    return;  // an outer end already closed it
  }
  // Scopes opened after this one end with it, innermost first, as RAII would have.
  bool forced = false;
  for (uint32_t d = top; d > depth;) {
    --d;
    depth_.store(d, std::memory_order_relaxed);
    if (stack_[d].owner.load(std::memory_order_relaxed) == kAbandoned) continue;
    forced = forced || d != depth;
    Emit(stack_[d], d, end_tick);
  }
  const uint64_t window = g_window.load(std::memory_order_acquire);
  if (!forced || window == 0) return;
  SyncWindow(window);
  Bump(counters_.forced_closes);
}

int64_t ThreadRecorder::OpenScopes(uint64_t window) const {
  const uint32_t depth = depth_.load(std::memory_order_relaxed);
  int64_t open = 0;
  for (uint32_t i = 0; i < depth && i < kMaxDepth; ++i) {
    open += stack_[i].window.load(std::memory_order_relaxed) == window &&
            stack_[i].owner.load(std::memory_order_relaxed) != kAbandoned;
  }
  return open;
}

void ThreadRecorder::CountForeignEnd(ThreadRecorder* recorder, uint32_t depth,
                                     const void* owner) {
  // Only if the slot is still this scope's: its thread may have closed it already.
  const void* expected = owner;
  recorder->stack_[depth].owner.compare_exchange_strong(expected, kAbandoned,
                                                        std::memory_order_relaxed);
  const uint64_t window = g_window.load(std::memory_order_acquire);
  if (window == 0) return;
  SyncWindow(window);
  Bump(counters_.foreign_ends);
}

}  // namespace paddle_prof::internal
