#include "paddle_prof/record_event.h"

#include "clock.h"
#include "thread_recorder.h"

namespace paddle_prof {

using internal::ThreadRecorder;

// A dynamic name is interned for the window its scope begins in (name_interner.h): the
// window is read once, for both.
RecordEvent::RecordEvent(const std::string& name) {
  if (!IsProfilerEnabled()) return;
  const uint64_t window = internal::g_window.load(std::memory_order_acquire);
  ThreadRecorder* r = ThreadRecorder::Current();
  if (window != 0 && r != nullptr) Begin(r, window, r->Intern(name, window), nullptr);
}

RecordEvent::RecordEvent(const char* name, const std::string& tag) {
  if (!IsProfilerEnabled()) return;
  const uint64_t window = internal::g_window.load(std::memory_order_acquire);
  ThreadRecorder* r = ThreadRecorder::Current();
  if (window != 0 && r != nullptr) Begin(r, window, name, r->Intern(tag, window));
}

RecordEvent::RecordEvent(const std::string& name, const std::string& tag) {
  if (!IsProfilerEnabled()) return;
  const uint64_t window = internal::g_window.load(std::memory_order_acquire);
  ThreadRecorder* r = ThreadRecorder::Current();
  if (window != 0 && r != nullptr) {
    Begin(r, window, r->Intern(name, window), r->Intern(tag, window));
  }
}

RecordEvent::RecordEvent(std::string_view name) {
  if (!IsProfilerEnabled()) return;
  const uint64_t window = internal::g_window.load(std::memory_order_acquire);
  ThreadRecorder* r = ThreadRecorder::Current();
  if (window != 0 && r != nullptr) Begin(r, window, r->Intern(name, window), nullptr);
}

RecordEvent::RecordEvent(std::string_view name, const std::string& tag) {
  if (!IsProfilerEnabled()) return;
  const uint64_t window = internal::g_window.load(std::memory_order_acquire);
  ThreadRecorder* r = ThreadRecorder::Current();
  if (window != 0 && r != nullptr) {
    Begin(r, window, r->Intern(name, window), r->Intern(tag, window));
  }
}

void RecordEvent::Begin(const char* name, const char* tag) {
  ThreadRecorder* r = ThreadRecorder::Current();
  if (r == nullptr) return;  // the thread is exiting
  const uint64_t window = internal::g_window.load(std::memory_order_acquire);
  if (window != 0) Begin(r, window, name, tag);
}

void RecordEvent::Begin(ThreadRecorder* recorder, uint64_t window, const char* name,
                        const char* tag) {
  if (recorder->Begin(this, name, tag, window, &depth_)) recorder_ = recorder;
}

void RecordEvent::End() {
  const uint64_t end_tick = internal::Clock::Now();
  ThreadRecorder* r = ThreadRecorder::Current();
  if (r == recorder_) {
    r->End(this, depth_, end_tick);
  } else if (r != nullptr) {
    r->CountForeignEnd(recorder_, depth_, this);
  }
}

}  // namespace paddle_prof
