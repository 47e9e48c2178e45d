#include "paddle_prof/record_event.h"

#include "clock.h"
#include "thread_recorder.h"

namespace paddle_prof {

using internal::ThreadRecorder;

RecordEvent::RecordEvent(const std::string& name) {
  if (!IsProfilerEnabled()) return;
  ThreadRecorder* r = ThreadRecorder::Current();
  if (r != nullptr) Begin(r->Intern(name), nullptr);
}

RecordEvent::RecordEvent(const char* name, const std::string& tag) {
  if (!IsProfilerEnabled()) return;
  ThreadRecorder* r = ThreadRecorder::Current();
  if (r != nullptr) Begin(name, r->Intern(tag));
}

RecordEvent::RecordEvent(const std::string& name, const std::string& tag) {
  if (!IsProfilerEnabled()) return;
  ThreadRecorder* r = ThreadRecorder::Current();
  if (r != nullptr) Begin(r->Intern(name), r->Intern(tag));
}

void RecordEvent::Begin(const char* name, const char* tag) {
  ThreadRecorder* r = ThreadRecorder::Current();
  if (r == nullptr) return;  // the thread is exiting
  const uint64_t window = internal::g_window.load(std::memory_order_acquire);
  if (window == 0) return;
  if (r->Begin(this, name, tag, window, &depth_)) recorder_ = r;
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
