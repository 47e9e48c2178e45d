// paddle_prof: RecordEvent, the RAII scope a framework puts around an operator.
//
//   void Conv2D(...) {
//     PADDLE_PROF_RECORD_EVENT("conv2d");           // literal name: stored as a pointer
//     ...
//   }
//   paddle_prof::RecordEvent e(op_type);           // std::string name: interned once
//   paddle_prof::RecordEvent e("conv2d", "[32,3,224,224]");  // tag: a row per input shape
//
// While profiling is off a scope costs one relaxed atomic load and a branch. While it
// is on, a scope takes two timestamps and appends one fixed-size record to its
// thread's buffer: no lock, no heap allocation, no string copy (a dynamic name or tag
// is looked up in a per-thread cache of interned strings).
//
// Scopes must begin and end on the same thread. A scope that ends while scopes opened
// after it are still open closes them first; the report counts this in a warning.
#ifndef PADDLE_PROF_RECORD_EVENT_H_
#define PADDLE_PROF_RECORD_EVENT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "paddle_prof/profiler_enabled.h"

namespace paddle_prof {

namespace internal {
class ThreadRecorder;
}  // namespace internal

class RecordEvent {
 public:
  // `name` must outlive the profiling window (a literal, or a name the framework keeps).
  explicit RecordEvent(const char* name) {
    if (IsProfilerEnabled()) Begin(name, nullptr);
  }
  // A name built at run time: interned, so it may be freed as soon as this returns.
  explicit RecordEvent(const std::string& name);
  // `tag` (e.g. the input shapes) splits the op's rows: one row per (name, tag).
  RecordEvent(const char* name, const std::string& tag);
  // Both built at run time (bindings, user scopes): both interned.
  RecordEvent(const std::string& name, const std::string& tag);
  // A name in the caller's buffer (a C string torch hands over, a Python str's bytes):
  // interned like a std::string, without making one (no copy, no allocation).
  explicit RecordEvent(std::string_view name);
  RecordEvent(std::string_view name, const std::string& tag);
  ~RecordEvent() {
    if (recorder_ != nullptr) End();
  }

  RecordEvent(const RecordEvent&) = delete;
  RecordEvent& operator=(const RecordEvent&) = delete;

 private:
  void Begin(const char* name, const char* tag);
  void Begin(internal::ThreadRecorder* recorder, uint64_t window, const char* name,
             const char* tag);
  void End();

  internal::ThreadRecorder* recorder_ = nullptr;  // null: nothing to end
  uint32_t depth_;                                // set when recorder_ is
};

}  // namespace paddle_prof

#define PADDLE_PROF_CONCAT_INNER_(a, b) a##b
#define PADDLE_PROF_CONCAT_(a, b) PADDLE_PROF_CONCAT_INNER_(a, b)
// A RecordEvent that lives until the end of the enclosing block.
#define PADDLE_PROF_RECORD_EVENT(name) \
  ::paddle_prof::RecordEvent PADDLE_PROF_CONCAT_(paddle_prof_record_event_, __LINE__)(name)

#endif  // PADDLE_PROF_RECORD_EVENT_H_
