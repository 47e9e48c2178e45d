// paddle_prof._core: the C++ profiler as the Python package sees it. The friendly API
// (context managers, Report objects, the CLI) lives in the package; this module only
// crosses the language boundary, releasing the GIL wherever C++ does real work.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <structmember.h>

#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindings_api.h"
#include "paddle_prof/paddle_prof.h"
#include "python_stacks.h"

namespace py = pybind11;

namespace paddle_prof {
namespace {

// A RecordEvent a Python object owns: begun when made, ended by end() or when collected.
class Scope {
 public:
  Scope(const std::string& name, const std::optional<std::string>& tag) {
    if (tag) {
      event_.emplace(name, *tag);
    } else {
      event_.emplace(name);
    }
  }
  void End() { event_.reset(); }

 private:
  std::optional<RecordEvent> event_;  // neither copyable nor movable: held in place
};

// paddle_prof.record_event's base, written against Python's C API: a with-block makes
// the object and calls __enter__ and __exit__, and each call through pybind11 would cost
// more than the scope it records.
//
// One object may be entered again, recursively or from several threads: each entry is
// its own call, on the thread that runs it. A thread keeps its open entries on a stack
// of its own; __exit__ ends the innermost one the object made on that thread.
struct RecordEventObject {
  PyObject_HEAD
  PyObject* name;  // str
  PyObject* tag;   // str or None
};

class EntryStack {
 public:
  struct Entry {
    // Identity only, no reference: the stack outlives the thread's Python state.
    const PyObject* owner;
    std::optional<RecordEvent> event;
  };

  Entry& Push(const PyObject* owner) {
    if (depth_ == chunks_.size() * kChunk) {
      internal::NativeGuard profiler_memory;
      chunks_.push_back(std::make_unique<Entry[]>(kChunk));
    }
    Entry& e = At(depth_++);
    e.owner = owner;
    return e;
  }
  // The innermost open entry of `owner`, or null (it entered on another thread, or not).
  Entry* Find(const PyObject* owner) {
    for (size_t d = depth_; d-- > 0;) {
      if (At(d).owner == owner) return &At(d);
    }
    return nullptr;
  }
  // An entry may end below the top (a generator suspended inside its with-block): it
  // leaves a hole until those above it end.
  void End(Entry& e) {
    e.event.reset();
    e.owner = nullptr;
    while (depth_ > 0 && At(depth_ - 1).owner == nullptr) --depth_;
  }

 private:
  // Chunks: an entry never moves (RecordEvent cannot), and only a depth never reached
  // before allocates (the profiler's memory, untracked).
  static constexpr size_t kChunk = 64;
  Entry& At(size_t d) { return chunks_[d / kChunk][d % kChunk]; }

  std::vector<std::unique_ptr<Entry[]>> chunks_;
  size_t depth_ = 0;
};

// The TypeError record_event's arguments get: "record_event name must be a str, got int".
int ArgumentError(const char* what, PyObject* got) {
  PyObject* type_name = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(got)),
                                               "__name__");
  if (type_name != nullptr) {
    PyErr_Format(PyExc_TypeError, "record_event %s, got %U", what, type_name);
    Py_DECREF(type_name);
  }
  return -1;
}

// The UTF-8 bytes of a name or tag, in `bytes` (kept alive by `holder` where encoded
// afresh). A str UTF-8 cannot encode is still a name: surrogateescape gives back the
// bytes os.fsdecode() read (a file name that is not UTF-8), backslashreplace escapes any
// other lone surrogate. False, with the Python error set, only when memory runs out.
bool NameBytes(PyObject* text, std::string_view* bytes, py::object* holder) {
  Py_ssize_t size;
  if (const char* utf8 = PyUnicode_AsUTF8AndSize(text, &size)) {
    *bytes = std::string_view(utf8, static_cast<size_t>(size));
    return true;
  }
  for (const char* errors : {"surrogateescape", "backslashreplace"}) {
    PyErr_Clear();
    if (PyObject* encoded = PyUnicode_AsEncodedString(text, "utf-8", errors)) {
      *holder = py::reinterpret_steal<py::object>(encoded);
      *bytes = std::string_view(PyBytes_AS_STRING(encoded),
                                static_cast<size_t>(PyBytes_GET_SIZE(encoded)));
      return true;
    }
  }
  return false;
}

int RecordEventInit(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"name", "tag", nullptr};
  PyObject* name;
  PyObject* tag = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:record_event",
                                   const_cast<char**>(keywords), &name, &tag)) {
    return -1;
  }
  if (!PyUnicode_Check(name)) return ArgumentError("name must be a str", name);
  if (tag != Py_None && !PyUnicode_Check(tag)) {
    return ArgumentError("tag must be a str or None", tag);
  }
  auto* event = reinterpret_cast<RecordEventObject*>(self);
  Py_INCREF(name);
  Py_XSETREF(event->name, name);
  Py_INCREF(tag);
  Py_XSETREF(event->tag, tag);
  return 0;
}

void RecordEventDealloc(PyObject* self) {
  auto* event = reinterpret_cast<RecordEventObject*>(self);
  Py_CLEAR(event->name);
  Py_CLEAR(event->tag);
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);  // a heap type: each instance holds a reference to it
}

PyObject* RecordEventEnter(PyObject* self, PyObject* /*unused*/) {
  const auto* event = reinterpret_cast<RecordEventObject*>(self);
  if (event->name == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "record_event was not initialized");
    return nullptr;
  }
  std::string_view name, tag;
  py::object name_bytes, tag_bytes;
  if (!NameBytes(event->name, &name, &name_bytes)) return nullptr;
  const bool tagged = event->tag != Py_None;
  if (tagged && !NameBytes(event->tag, &tag, &tag_bytes)) return nullptr;
  EntryStack* entries = internal::ThreadOwned<EntryStack>();
  EntryStack::Entry* entry = nullptr;
  try {  // no C++ exception may cross into Python's C frames
    if (entries == nullptr) throw std::bad_alloc();
    entry = &entries->Push(self);
    if (tagged) {
      entry->event.emplace(name, std::string(tag));
    } else {
      entry->event.emplace(name);
    }
  } catch (const std::bad_alloc&) {  // a new name could not be interned, say
    if (entry != nullptr) entries->End(*entry);
    return PyErr_NoMemory();
  }
  Py_INCREF(self);
  return self;
}

PyObject* RecordEventExit(PyObject* self, PyObject* const* /*args*/, Py_ssize_t /*nargs*/) {
  EntryStack* entries = internal::ThreadOwned<EntryStack>(/*make=*/false);
  if (entries == nullptr) Py_RETURN_FALSE;  // this thread never entered one
  if (EntryStack::Entry* entry = entries->Find(self)) entries->End(*entry);
  Py_RETURN_FALSE;
}

PyObject* MakeRecordEventType() {
  static PyMethodDef methods[] = {
      {"__enter__", RecordEventEnter, METH_NOARGS, "Begins a call of the event."},
      {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(RecordEventExit)),
       METH_FASTCALL, "Ends this thread's innermost open call of the event."},
      {nullptr, nullptr, 0, nullptr}};
  static PyMemberDef members[] = {
      {"name", T_OBJECT, offsetof(RecordEventObject, name), READONLY, "The event's name."},
      {"tag", T_OBJECT, offsetof(RecordEventObject, tag), READONLY, "Its tag, or None."},
      {nullptr, 0, 0, 0, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_doc, const_cast<char*>("record_event(name, tag=None): the base of "
                                    "paddle_prof.record_event.")},
      {Py_tp_new, reinterpret_cast<void*>(PyType_GenericNew)},
      {Py_tp_init, reinterpret_cast<void*>(RecordEventInit)},
      {Py_tp_dealloc, reinterpret_cast<void*>(RecordEventDealloc)},
      {Py_tp_methods, methods},
      {Py_tp_members, members},
      {0, nullptr}};
  static PyType_Spec spec = {"paddle_prof._core.RecordEventBase", sizeof(RecordEventObject), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  return PyType_FromSpec(&spec);
}

TrackingAllocator& NumpyAllocator() {
  // Leaked: arrays may be collected during interpreter shutdown.
  static auto* allocator = new TrackingAllocator(CPUAllocator(), CPUPlace());
  return *allocator;
}

py::array Empty(const std::vector<py::ssize_t>& shape, const py::dtype& dtype,
                const std::string& place) {
  if (place != "CPU") {
    throw std::invalid_argument("empty(): place must be 'CPU' (got '" + place + "')");
  }
  // A raw buffer holds no valid object pointers: numpy would read garbage as objects.
  if (dtype.attr("hasobject").cast<bool>()) {
    throw py::type_error("empty(): dtype " + py::str(py::handle(dtype)).cast<std::string>() +
                         " holds Python objects, which a raw buffer cannot hold safely; use "
                         "numpy.empty for object arrays");
  }
  // From Python, not py::dtype::itemsize(): a pybind11 older than 2.12 reads numpy 1.x's
  // descriptor layout, which numpy 2 changed (it read 0, and the strides made from it).
  const auto itemsize = dtype.attr("itemsize").cast<py::ssize_t>();
  size_t bytes = static_cast<size_t>(itemsize);
  for (const py::ssize_t extent : shape) {
    if (extent < 0) throw std::invalid_argument("empty(): negative dimension in shape");
    if (__builtin_mul_overflow(bytes, static_cast<size_t>(extent), &bytes)) {
      throw std::length_error("empty(): the array would hold more bytes than memory can");
    }
  }
  std::vector<py::ssize_t> strides(shape.size());  // C order
  py::ssize_t stride = itemsize;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  void* data = NumpyAllocator().Allocate(bytes);
  if (data == nullptr) throw std::bad_alloc();
  py::capsule owner(data, [](void* p) { NumpyAllocator().Free(p); });
  return py::array(dtype, shape, strides, data, owner);
}

internal::ReportOptions Options(const std::string& sorted_key, const std::string& profile_path,
                                bool per_thread, std::optional<int> cycle = std::nullopt,
                                bool per_process = false) {
  internal::ReportOptions options;
  options.key = ParseSortingKey(sorted_key);
  options.per_thread = per_thread;
  options.per_process = per_process;
  options.profile_path = profile_path;
  options.cycle = cycle;
  options.row_limit = FLAGS_paddle_prof_row_limit;  // of what the launcher prints on a signal
  return options;
}

Report Stop(const std::string& sorted_key, const std::string& profile_path, bool per_thread,
            std::optional<int> cycle, bool per_process) {
  const internal::ReportOptions options =
      Options(sorted_key, profile_path, per_thread, cycle, per_process);
  py::gil_scoped_release release;
  return internal::StopProfiler(options);
}

Report Recover(const std::string& directory, const std::string& sorted_key,
               const std::string& profile_path, bool per_thread, const std::string& ending,
               int64_t ended_unix_ns) {
  const internal::ReportOptions options = Options(sorted_key, profile_path, per_thread);
  py::gil_scoped_release release;
  try {
    return internal::RecoverCapture(directory, options, {ending, ended_unix_ns});
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(e.what());  // ValueError: the directory holds no capture
  }
}

Report Snapshot(const std::string& sorted_key, const std::string& profile_path, bool per_thread) {
  const internal::ReportOptions options = Options(sorted_key, profile_path, per_thread);
  py::gil_scoped_release release;
  return internal::SnapshotProfiler(options);
}

Report LoadSummary(const std::string& path) {
  py::gil_scoped_release release;
  return internal::LoadSummary(path);  // std::invalid_argument: ValueError naming the file
}

// The Reports stay alive in the caller's list while the GIL is released: each is copied
// in turn as the merge folds it, never all at once.
Report Merge(const std::vector<const Report*>& inputs, const std::string& sorted_key) {
  const EventSortingKey key = ParseSortingKey(sorted_key);
  py::gil_scoped_release release;
  internal::ReportMerger merger;
  for (const Report* input : inputs) merger.Add(*input);
  return merger.Finish(key);
}

Report MergeFiles(const std::vector<std::string>& paths, const std::string& sorted_key) {
  const EventSortingKey key = ParseSortingKey(sorted_key);
  py::gil_scoped_release release;
  return internal::MergeSummaryFiles(paths, key);
}

// What changed from `base` to `next`; the Reports stay alive in the caller's hands.
internal::ReportDiff Diff(const Report& base, const Report& next, double time_threshold,
                          double memory_threshold) {
  py::gil_scoped_release release;
  return internal::DiffReports(base, next, time_threshold, memory_threshold);
}

// The open window as a child started as a fresh program needs it (paddle_prof/children.py):
// (state, children directory, parent pid, window start unix ns), or None.
py::object FollowedWindow() {
  const std::optional<internal::FollowedWindow> followed = internal::FollowedWindowNow();
  if (!followed) return py::none();
  const internal::ParentWindow& w = followed->window;
  return py::make_tuple(ProfilerStateName(followed->state), w.children_dir, w.pid, w.start_unix_ns);
}

bool StartChildProfile(const std::string& state, const std::string& children_dir,
                       int64_t parent_pid, int64_t parent_start_unix_ns) {
  const ProfilerState parsed = ParseProfilerState(state);
  py::gil_scoped_release release;
  return internal::StartChildProfile(parsed, {parent_pid, parent_start_unix_ns, children_dir});
}

}  // namespace
}  // namespace paddle_prof

PYBIND11_MODULE(_core, m) {
  using namespace paddle_prof;
  m.doc() = "paddle_prof's C++ core; use the paddle_prof package instead.";

  py::class_<Report>(m, "NativeReport")
      .def("to_json", &Report::ToJson)
      .def("table", &Report::Table, py::arg("detailed"), py::arg("row_limit"), py::arg("width"))
      .def("module_table", &Report::ModuleTable)
      .def("phase_table", &Report::PhaseTable)
      .def("to_html", &internal::HtmlReport)
      // A merge written by the CLI names its summary file, and says what it left out.
      .def_readwrite("summary_path", &Report::summary_path)
      // Whether a report is printed, without reading its summary.
      .def_property_readonly("role", [](const Report& r) { return r.process.role; })
      .def(
          "add_warning", [](Report& r, const std::string& w) { r.warnings.push_back(w); },
          py::arg("warning"));

  py::class_<internal::ReportDiff>(m, "NativeDiff")
      .def("to_json", &internal::DiffJson)
      .def("table", &internal::DiffTable)
      .def("to_html", &internal::DiffPage, py::arg("base"), py::arg("new"));

  py::class_<Scope>(m, "Scope")
      .def(py::init<const std::string&, const std::optional<std::string>&>(), py::arg("name"),
           py::arg("tag") = py::none())
      .def("end", &Scope::End);

  PyObject* record_event_type = MakeRecordEventType();
  if (record_event_type == nullptr) throw py::error_already_set();
  m.add_object("RecordEventBase", py::reinterpret_steal<py::object>(record_event_type));

  // The core validates states and keys; the package asks it, with these names.
  m.attr("STATES") = internal::ProfilerStateNames();
  m.attr("ROW_LIMIT") = FLAGS_paddle_prof_row_limit;  // as the environment set it
  m.attr("TABLE_WIDTH") = Report::kDefaultWidth;
  m.attr("SORTED_KEYS") = internal::SortingKeyNames();
  m.attr("SUMMARY_SUFFIX") = internal::kSummarySuffix;
  m.attr("GPU_PID_BASE") = internal::kGpuPidBase;
  m.attr("SPREAD_CALLS") = internal::kSpreadCalls;
  m.def("format_bytes", &internal::FormatBytes, py::arg("bytes"));
  m.def("check_state", [](const std::string& state) { ParseProfilerState(state); });
  m.def("check_sorted_key", [](const std::string& key) { internal::SortingKeyNamed(key); });
  m.def("enable_profiler",
        [](const std::string& state) { EnableProfiler(ParseProfilerState(state)); });
  m.def(
      "enable_implicit_profiler",
      [](const std::string& state, const std::string& sorted_key, const std::string& profile_path,
         bool per_thread) {
        return internal::EnableImplicitProfiler(ParseProfilerState(state),
                                                Options(sorted_key, profile_path, per_thread));
      },
      py::arg("state"), py::arg("sorted_key"), py::arg("profile_path"), py::arg("per_thread"));
  m.def("implicit_profiler_running", &internal::ImplicitProfilerRunning);
  m.def("stop_profiler", &Stop, py::arg("sorted_key"), py::arg("profile_path"),
        py::arg("per_thread"), py::arg("cycle") = py::none(), py::arg("per_process") = false);
  m.def("snapshot_profiler", &Snapshot, py::arg("sorted_key"), py::arg("profile_path"),
        py::arg("per_thread"));
  m.def("environment_rank", [] {
    const ProcessInfo p = internal::ThisProcess();
    return std::make_pair(p.rank, p.world_size);
  });
  m.def("set_distributed", &internal::SetDistributedInfo, py::arg("rank"), py::arg("world_size"),
        py::arg("backend"), py::arg("offset_ns"), py::arg("warning"));
  m.def("set_snapshot_path", &internal::SetSnapshotPath, py::arg("profile_path"));
  m.def("set_keep_last_steps", &internal::SetKeepLastSteps, py::arg("steps"));
  m.def("set_oom_path", &internal::SetOutOfMemoryPath, py::arg("path"));
  m.def("set_capture_dir", &internal::SetCaptureDir, py::arg("directory"),
        py::arg("every_window") = false);
  m.def("recover", &Recover, py::arg("directory"), py::arg("sorted_key"), py::arg("profile_path"),
        py::arg("per_thread"), py::arg("ending") = "", py::arg("ended_unix_ns") = 0);
  m.def("load_summary", &LoadSummary, py::arg("path"));
  m.def("merge", &Merge, py::arg("reports"), py::arg("sorted_key"));
  m.def("merge_files", &MergeFiles, py::arg("paths"), py::arg("sorted_key"));
  m.def("html_page", &internal::HtmlPage, py::arg("summary_json"));
  m.def("diff", &Diff, py::arg("base"), py::arg("new"), py::arg("time_threshold"),
        py::arg("memory_threshold"));
  m.def("set_follow_children", &internal::SetFollowChildren, py::arg("follow"));
  m.def("followed_window", &FollowedWindow);
  m.def("resume_native_tracking", &internal::ResumeNativeTracking);
  m.def("note_child_launched", &internal::NoteChildLaunched, py::arg("pid"));
  m.def("start_child_profile", &StartChildProfile, py::arg("state"), py::arg("children_dir"),
        py::arg("parent_pid"), py::arg("parent_start_unix_ns"));
  m.def("child_profile_running", &internal::ChildProfileRunning);
  m.def("set_child_role", &internal::SetChildRole, py::arg("role"), py::arg("worker_id"));
  m.def("finish_child_profile", [] {
    py::gil_scoped_release release;
    internal::FinishChildProfile();
  });
  m.def("start_native_tracking", &internal::StartInProcessNative);
  m.def("stop_native_tracking", &internal::StopInProcessNative);
  m.def("finish_child_profile_on_termination", &internal::FinishChildProfileOnTermination);
  m.def("signal_named", &internal::SignalNamed, py::arg("name"));
  m.def("catch_snapshot_signal", &internal::CatchSnapshotSignalNamed, py::arg("name"));
  m.def("reset_profiler", [] {
    py::gil_scoped_release release;
    ResetProfiler();
  });
  m.def(
      "mark_step",
      [](std::optional<int64_t> num_samples) {
        py::gil_scoped_release release;  // MarkStep(-1)'s std::invalid_argument: ValueError
        num_samples ? MarkStep(*num_samples) : MarkStep();
      },
      py::arg("num_samples") = py::none());
  m.def("note_module", &NoteModule, py::arg("path"), py::arg("type"), py::arg("params"),
        py::arg("param_bytes"));
  // Memory kinds told by a block's address (the PaddlePaddle bridge's tensors, whose
  // data pointer is their allocation's): the kinds of block_kind.h.
  m.attr("PARAMETER") = py::int_(static_cast<int>(internal::kParameterBlock));
  m.attr("GRADIENT") = py::int_(static_cast<int>(internal::kGradientBlock));
  m.attr("OPTIMIZER_STATE") = py::int_(static_cast<int>(internal::kOptimizerStateBlock));
  m.def(
      "set_memory_categories",
      [](bool on, bool plain_op_names) {
        internal::SetMemoryCategories(on, plain_op_names);
      },
      py::arg("on"), py::arg("plain_op_names") = false,
      "Turns the window's memory categories on or off; plain_op_names: the framework "
      "names its ops plainly ('matmul', PaddlePaddle's), not 'aten::'.");
  m.def(
      "mark_blocks",
      [](const std::vector<uintptr_t>& addresses, int kind) {
        int64_t missing = 0;
        for (const uintptr_t address : addresses) {
          missing += !internal::MarkBlock(reinterpret_cast<const void*>(address),
                                          static_cast<uint8_t>(kind));
        }
        return missing;
      },
      py::arg("addresses"), py::arg("kind"),
      "Tells the live tracked block at each address what it is (`kind`); returns how many "
      "had none.");
  m.def("is_enabled", &IsProfilerEnabled);
  python_stacks::Define(m);
  m.def("empty", &Empty, py::arg("shape"), py::arg("dtype"), py::arg("place"));
}
