// paddle_prof._core: the C++ profiler as the Python package sees it. The friendly API
// (context managers, Report objects, the CLI) lives in the package; this module only
// crosses the language boundary, releasing the GIL wherever C++ does real work.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
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
  size_t bytes = static_cast<size_t>(dtype.itemsize());
  for (const py::ssize_t extent : shape) {
    if (extent < 0) throw std::invalid_argument("empty(): negative dimension in shape");
    if (__builtin_mul_overflow(bytes, static_cast<size_t>(extent), &bytes)) {
      throw std::length_error("empty(): the array would hold more bytes than memory can");
    }
  }
  void* data = NumpyAllocator().Allocate(bytes);
  if (data == nullptr) throw std::bad_alloc();
  py::capsule owner(data, [](void* p) { NumpyAllocator().Free(p); });
  return py::array(dtype, shape, data, owner);
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
               const std::string& profile_path, bool per_thread) {
  const internal::ReportOptions options = Options(sorted_key, profile_path, per_thread);
  py::gil_scoped_release release;
  try {
    return internal::RecoverCapture(directory, options);
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

Report Merge(const std::vector<Report>& inputs, const std::string& sorted_key) {
  const EventSortingKey key = ParseSortingKey(sorted_key);
  py::gil_scoped_release release;
  return internal::MergeReports(inputs, key);
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
      .def("table", &Report::Table, py::arg("detailed"), py::arg("row_limit"))
      .def("to_html", &internal::HtmlReport)
      // A merge written by the CLI names its summary file, and says what it left out.
      .def_readwrite("summary_path", &Report::summary_path)
      .def(
          "add_warning", [](Report& r, const std::string& w) { r.warnings.push_back(w); },
          py::arg("warning"));

  py::class_<Scope>(m, "Scope")
      .def(py::init<const std::string&, const std::optional<std::string>&>(), py::arg("name"),
           py::arg("tag") = py::none())
      .def("end", &Scope::End);

  // The core validates states and keys; the package asks it, with these names.
  m.attr("STATES") = internal::ProfilerStateNames();
  m.attr("ROW_LIMIT") = FLAGS_paddle_prof_row_limit;  // as the environment set it
  m.attr("SORTED_KEYS") = internal::SortingKeyNames();
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
  m.def("set_distributed", &internal::SetDistributedInfo, py::arg("rank"), py::arg("world_size"),
        py::arg("backend"), py::arg("offset_ns"), py::arg("warning"));
  m.def("set_snapshot_path", &internal::SetSnapshotPath, py::arg("profile_path"));
  m.def("set_keep_last_steps", &internal::SetKeepLastSteps, py::arg("steps"));
  m.def("set_oom_path", &internal::SetOutOfMemoryPath, py::arg("path"));
  m.def("set_capture_dir", &internal::SetCaptureDir, py::arg("directory"),
        py::arg("every_window") = false);
  m.def("recover", &Recover, py::arg("directory"), py::arg("sorted_key"), py::arg("profile_path"),
        py::arg("per_thread"));
  m.def("load_summary", &LoadSummary, py::arg("path"));
  m.def("merge", &Merge, py::arg("reports"), py::arg("sorted_key"));
  m.def("html_page", &internal::HtmlPage, py::arg("summary_json"));
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
  m.def("catch_snapshot_signal", &internal::CatchSnapshotSignalNamed, py::arg("name"));
  m.def("reset_profiler", [] {
    py::gil_scoped_release release;
    ResetProfiler();
  });
  m.def("mark_step", [] {
    py::gil_scoped_release release;
    MarkStep();
  });
  m.def("is_enabled", &IsProfilerEnabled);
  python_stacks::Define(m);
  m.def("empty", &Empty, py::arg("shape"), py::arg("dtype"), py::arg("place"));
}
