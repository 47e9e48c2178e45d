// The fuzzers' seeds, from a real window: make_seeds OUT writes OUT/capture (the capture
// of a window still open), OUT/summary (summaries of a window, a merge and a parent),
// OUT/child_profiles (a children directory) and OUT/trace (two ranks' traces with their
// summaries, for fuzz_trace_merge.py).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "capture_files.h"
#include "event_record.h"
#include "flags.h"
#include "fuzz_files.h"
#include "paddle_prof/paddle_prof.h"
#include "report_merge.h"

using namespace paddle_prof;
namespace fs = std::filesystem;

namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  fuzz::WriteFile(dir + "/" + name, bytes);
}

// A little of everything the readers read: literal and made names, a tag, memory on
// CPU, two steps, two threads. Returns the blocks still live.
std::vector<void*> Work(TrackingAllocator& cpu) {
  std::vector<void*> live;
  for (int step = 0; step < 2; ++step) {
    RecordEvent outer("outer");
    for (int i = 0; i < 3; ++i) {
      RecordEvent inner(std::string("made_") + std::to_string(i), "[8, 16]");
      cpu.Free(cpu.Allocate(4096));
    }
    live.push_back(cpu.Allocate(100));
    MarkStep();
  }
  std::thread([] { RecordEvent op("worker_op"); }).join();
  return live;
}

// Recorder files of the open window, as window 1 with recorders 0 and 1, chunks cut
// after their last record.
std::string CaptureSeed(const std::string& dir) {
  std::string meta = Read(internal::CaptureFile(dir, "meta"));
  const size_t window_at = meta.find("window ") + 7;
  const size_t window_end = meta.find('\n', window_at);
  const std::string window = meta.substr(window_at, window_end - window_at);
  meta.replace(window_at, window_end - window_at, "1");
  std::vector<int> indexes;
  const std::string prefix = std::string(internal::kCapturePrefix) + "w" + window + ".t";
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename();
    if (name.rfind(prefix, 0) == 0 && name.size() > 5 && name.substr(name.size() - 5) == ".info") {
      indexes.push_back(std::stoi(name.substr(prefix.size())));
    }
  }
  std::sort(indexes.begin(), indexes.end());
  std::string maps;  // the file-backed mappings: the literal names are there
  std::istringstream lines(Read(internal::CaptureFile(dir, "maps")));
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" /") != std::string::npos) maps += line + "\n";
  }
  std::vector<std::string> files = {meta, Read(internal::CaptureFile(dir, "steps")), maps,
                                    Read(internal::CaptureFile(dir, "names"))};
  for (size_t i = 0; i < 2 && i < indexes.size(); ++i) {
    const uint64_t w = std::stoull(window);
    files.push_back(Read(internal::CaptureThreadFile(dir, w, indexes[i])));
    std::string chunk = Read(internal::CaptureChunkPrefix(dir, w, indexes[i]) + "0");
    const size_t last = chunk.find_last_not_of('\0');
    chunk.resize(last == std::string::npos ? 0 : (last / 32 + 1) * 32);
    files.push_back(chunk);
  }
  return fuzz::JoinFiles(files);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds OUT\n");
    return 2;
  }
  const std::string out = argv[1];
  const std::string scratch = fuzz::ScratchDir();

  FLAGS_paddle_prof_capture_dir = scratch + "/capture";
  EnableProfiler(ProfilerState::kCPU);
  TrackingAllocator cpu(CPUAllocator(), CPUPlace());
  const std::vector<void*> live = Work(cpu);
  Write(out + "/capture", "window", CaptureSeed(FLAGS_paddle_prof_capture_dir));
  const std::string trace = scratch + "/rank0.json";
  Report window = StopProfiler(EventSortingKey::kTotal, trace);
  FLAGS_paddle_prof_capture_dir = "";
  for (void* block : live) cpu.Free(block);

  Write(out + "/summary", "window.json", window.ToJson());
  Report rank1 = window;
  rank1.summary_path = scratch + "/rank1.json.summary.json";  // another file: no input twice
  rank1.process.pid += 1;
  rank1.process.rank = 1;
  window.process.rank = 0;
  const Report merged = internal::MergeReports({window, rank1}, EventSortingKey::kTotal);
  Write(out + "/summary", "merged.json", merged.ToJson());
  Report child = window;
  child.process.parent_pid = 7;  // child_profiles_fuzzer's parent, in its window
  child.process.role = "child";
  child.clock.unix_ns = 2000;
  Report parent = window;
  internal::MergeChildren(&parent, {child}, true);
  Write(out + "/summary", "parent.json", parent.ToJson());

  Write(
      out + "/child_profiles", "children",
      fuzz::JoinFiles({std::to_string(child.process.pid) + ".json.summary.json\n" + child.ToJson(),
                       "1.json.running\nparent_pid 7\nparent_start_unix_ns 1000\n"}));

  Write(out + "/trace", "rank0.json", Read(trace));
  Write(out + "/trace", "rank0.json.summary.json", window.ToJson());
  Write(out + "/trace", "rank1.json", Read(trace));
  Write(out + "/trace", "rank1.json.summary.json", rank1.ToJson());
  fs::remove_all(scratch);
  return 0;
}
