#include "python_stacks.h"

#include <Python.h>
#include <frameobject.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bindings_api.h"
#include "paddle_prof/profiler.h"

namespace py = pybind11;

namespace paddle_prof::python_stacks {
namespace {

using internal::CallStack;

// A frame as the cache keys it: its code object and where in it the frame is.
struct FrameKey {
  PyObject* code;
  int position;  // the last instruction's offset (the line before Python 3.11)
  bool operator==(const FrameKey& o) const { return code == o.code && position == o.position; }
};

// A thread's stacks seen before, by their frames' keys: a stack seen again costs a walk
// over its frames and a lookup, no string. The code objects are kept alive (one
// reference each) so that an address in a key always names the same code.
struct Cache {
  static constexpr size_t kMaxEntries = 4096;
  struct Entry {
    std::vector<FrameKey> frames;
    uint32_t id;
  };
  std::unordered_multimap<uint64_t, Entry> entries;

  void Clear() {  // under the GIL
    for (auto& [hash, entry] : entries) {
      for (const FrameKey& f : entry.frames) Py_DECREF(f.code);
    }
    entries.clear();
  }
};

// Files under these directories (paddle_prof's, torch's) are never a call's source.
std::vector<std::string> g_excluded;  // written and read under the GIL

bool Excluded(const std::string& file) {
  for (const std::string& prefix : g_excluded) {
    if (file.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

std::string Text(PyObject* unicode) {
  const char* utf8 = unicode != nullptr ? PyUnicode_AsUTF8(unicode) : nullptr;
  if (utf8 == nullptr) {
    PyErr_Clear();
    return "?";
  }
  return utf8;
}

// "train.py:42 in forward".
std::string FrameText(const FrameKey& f) {
  auto* code = reinterpret_cast<PyCodeObject*>(f.code);
#if PY_VERSION_HEX >= 0x030B0000
  const int line = PyCode_Addr2Line(code, f.position);
#else
  const int line = f.position;
#endif
  return Text(code->co_filename) + ":" + std::to_string(line) + " in " + Text(code->co_name);
}

uint32_t Intern(const FrameKey* frames, int count) {
  CallStack stack;
  for (int i = 0; i < count; ++i) {
    stack.frames.push_back(FrameText(frames[i]));
    if (stack.source < 0 && !Excluded(Text(reinterpret_cast<PyCodeObject*>(frames[i].code)->co_filename))) {
      stack.source = i;
    }
  }
  return internal::InternCallStack(std::move(stack));
}

// Under the GIL: the calling thread's innermost frames, as an interned stack.
uint32_t CaptureHoldingGil(PyThreadState* thread) {
#if PY_VERSION_HEX < 0x03090000
  return 0;  // no public API to walk another frame's parents before Python 3.9
#else
  FrameKey frames[CallStack::kMaxFrames];
  int count = 0;
  uint64_t hash = 1469598103934665603ull;
  PyFrameObject* frame = PyThreadState_GetFrame(thread);  // a new reference, or null
  while (frame != nullptr && count < CallStack::kMaxFrames) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // a new reference
#if PY_VERSION_HEX >= 0x030B0000
    const int position = PyFrame_GetLasti(frame);
#else
    const int position = PyFrame_GetLineNumber(frame);
#endif
    frames[count++] = {reinterpret_cast<PyObject*>(code), position};
    hash = (hash ^ reinterpret_cast<uintptr_t>(code)) * 1099511628211ull;
    hash = (hash ^ static_cast<uint32_t>(position)) * 1099511628211ull;
    Py_DECREF(code);  // the frame holds it while we look
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  if (count == 0) return 0;
  // Leaked with its thread: its code references may only be dropped under the GIL.
  static thread_local Cache* cache = nullptr;
  if (cache == nullptr) {
    internal::NativeGuard profiler_memory;
    cache = new Cache;
  }
  const auto range = cache->entries.equal_range(hash);
  for (auto it = range.first; it != range.second; ++it) {
    const std::vector<FrameKey>& seen = it->second.frames;
    if (static_cast<int>(seen.size()) == count && std::equal(seen.begin(), seen.end(), frames)) {
      return it->second.id;
    }
  }
  internal::NativeGuard profiler_memory;  // a stack never seen: the profiler's own memory
  if (cache->entries.size() >= Cache::kMaxEntries) cache->Clear();
  const uint32_t id = Intern(frames, count);
  for (int i = 0; i < count; ++i) Py_INCREF(frames[i].code);
  cache->entries.emplace(hash, Cache::Entry{std::vector<FrameKey>(frames, frames + count), id});
  return id;
#endif
}

bool Finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// Set as the interpreter starts to exit (atexit): from then on no thread takes the GIL
// for a stack, so none can be caught by the interpreter's finalization inside a call.
std::atomic<bool> g_exiting{false};

uint32_t Capture() {
  // Frame objects the walk creates may run a finalizer that begins a call of its own.
  static thread_local bool capturing = false;
  if (capturing || g_exiting.load(std::memory_order_relaxed) || !Py_IsInitialized() ||
      Finalizing()) {
    return 0;
  }
  PyThreadState* thread = PyGILState_GetThisThreadState();
  if (thread == nullptr) return 0;  // a thread Python never ran on: no Python stack
  capturing = true;
  // The ops of the torch bridge run with the GIL released.
  const PyGILState_STATE gil = PyGILState_Ensure();
  const uint32_t id = CaptureHoldingGil(thread);
  PyGILState_Release(gil);
  capturing = false;
  return id;
}

}  // namespace

void Define(py::module_& m) {
  internal::RegisterStackCapture(&Capture);
  m.def(
      "set_source_exclusions",
      [](std::vector<std::string> directories) { g_excluded = std::move(directories); },
      py::arg("directories"));
  m.def(
      "set_record_stacks",
      [](bool on, bool every_window) {
        if (every_window) FLAGS_paddle_prof_record_stacks = on;  // the script's own profilers too
        internal::RecordStacks(on);
      },
      py::arg("on"), py::arg("every_window") = false);
  m.def("record_stacks_on", &internal::RecordingStacks);
  m.def("stop_stack_capture_at_exit", [] { g_exiting.store(true, std::memory_order_relaxed); });
  // A window opened from FLAGS_paddle_prof_state before this module loaded.
  if (FLAGS_paddle_prof_record_stacks && IsProfilerEnabled()) internal::RecordStacks(true);
}

}  // namespace paddle_prof::python_stacks
