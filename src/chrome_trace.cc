#include "chrome_trace.h"

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <set>
#include <utility>

#include "atomic_file.h"
#include "json_writer.h"
#include "record_cursor.h"

namespace paddle_prof::internal {

namespace {

constexpr int kStepsTid = 0;             // no real thread has id 0
constexpr int kGpuPidBase = 0x7fff0000;  // GPU n is drawn as process kGpuPidBase + n
constexpr size_t kFlushBytes = size_t{1} << 20;

void WriteThreadName(JsonWriter* w, int pid, int tid, const std::string& name, int sort_index) {
  w->BeginObject();
  w->StringField("name", "thread_name");
  w->StringField("ph", "M");
  w->IntField("pid", pid);
  w->IntField("tid", tid);
  w->Key("args");
  w->BeginObject();
  w->StringField("name", name);
  w->EndObject();
  w->EndObject();
  w->BeginObject();
  w->StringField("name", "thread_sort_index");
  w->StringField("ph", "M");
  w->IntField("pid", pid);
  w->IntField("tid", tid);
  w->Key("args");
  w->BeginObject();
  w->IntField("sort_index", sort_index);
  w->EndObject();
  w->EndObject();
}

void WriteComplete(JsonWriter* w, const Collection& c, int pid, int tid, const char* name,
                   const char* category, const char* tag, uint64_t start, uint64_t end) {
  w->BeginObject();
  w->StringField("name", name);
  w->StringField("cat", category);
  w->StringField("ph", "X");
  w->IntField("pid", pid);
  w->IntField("tid", tid);
  w->DoubleField("ts", c.TicksToUs(start - c.start_tick));
  w->DoubleField("dur", c.TicksToUs(end - start));
  if (tag != nullptr) {
    w->Key("args");
    w->BeginObject();
    w->StringField("tag", tag);
    w->EndObject();
  }
  w->EndObject();
}

// A counter track per place: Perfetto draws live bytes over time under the timeline.
void WriteCounter(JsonWriter* w, int pid, const std::string& name, double ts, int64_t bytes) {
  w->BeginObject();
  w->StringField("name", name);
  w->StringField("ph", "C");
  w->IntField("pid", pid);
  w->DoubleField("ts", ts);
  w->Key("args");
  w->BeginObject();
  w->IntField("bytes", bytes);
  w->EndObject();
  w->EndObject();
}

void WriteProcessName(JsonWriter* w, int pid, const std::string& name) {
  w->BeginObject();
  w->StringField("name", "process_name");
  w->StringField("ph", "M");
  w->IntField("pid", pid);
  w->Key("args");
  w->BeginObject();
  w->StringField("name", name);
  w->EndObject();
  w->EndObject();
}

// One end of the arrow from a call to the GPU work it launched.
void WriteFlow(JsonWriter* w, const char* phase, int pid, int tid, double ts, size_t id) {
  w->BeginObject();
  w->StringField("name", "launch");
  w->StringField("cat", "launch");
  w->StringField("ph", phase);
  w->IntField("pid", pid);
  w->IntField("tid", tid);
  w->DoubleField("ts", ts);
  w->IntField("id", static_cast<int64_t>(id));
  if (phase[0] == 'f') w->StringField("bp", "e");  // binds to the kernel's slice
  w->EndObject();
}

const char* ActivityCategory(GpuActivity::Kind kind) {
  switch (kind) {
    case GpuActivity::Kind::kMemcpy:
      return "gpu_memcpy";
    case GpuActivity::Kind::kMemset:
      return "gpu_memset";
    case GpuActivity::Kind::kKernel:
      break;
  }
  return "kernel";
}

// A process per device, a track per stream; an arrow from each call to what it launched.
void WriteGpu(JsonWriter* w, const Collection& c, int pid,
              const std::function<void()>& flush_if_large) {
  std::set<int> devices;
  std::set<std::pair<int, uint32_t>> streams;
  for (const GpuActivity& a : c.gpu.activities) {
    if (devices.insert(a.device).second) {
      WriteProcessName(w, kGpuPidBase + a.device, "GPU " + std::to_string(a.device));
    }
    if (streams.emplace(a.device, a.stream).second) {
      WriteThreadName(w, kGpuPidBase + a.device, static_cast<int>(a.stream),
                      "stream " + std::to_string(a.stream), static_cast<int>(a.stream));
    }
  }
  for (size_t i = 0; i < c.gpu.activities.size(); ++i) {
    const GpuActivity& a = c.gpu.activities[i];
    if (a.start < c.start_tick || a.end > c.end_tick || a.end < a.start) continue;
    const int gpu_pid = kGpuPidBase + a.device;
    const int stream = static_cast<int>(a.stream);
    WriteComplete(w, c, gpu_pid, stream, a.name, ActivityCategory(a.kind), nullptr, a.start, a.end);
    const GpuLaunch& launch =
        i < c.gpu_correlation.launch.size() ? c.gpu_correlation.launch[i] : GpuLaunch{};
    if (launch.thread < 0) continue;
    const int tid = c.threads[launch.thread].os_tid;
    WriteFlow(w, "s", pid, tid, c.TicksToUs(launch.call_start - c.start_tick), i);
    WriteFlow(w, "f", gpu_pid, stream, c.TicksToUs(a.start - c.start_tick), i);
    flush_if_large();
  }
}

}  // namespace

bool WriteChromeTrace(const Collection& c, const std::string& path, std::string* error) {
  AtomicFile file(path);
  std::string out;
  auto flush = [&] {
    file.Write(out);
    out.clear();
  };
  // The trace goes out in pieces: a long window's would not fit in memory at once.
  auto flush_if_large = [&] {
    if (out.size() > kFlushBytes) flush();
  };
  const int pid = static_cast<int>(getpid());
  JsonWriter w(&out);
  w.BeginObject();
  w.StringField("displayTimeUnit", "ms");
  w.Key("traceEvents");
  w.BeginArray();
  WriteProcessName(&w, pid, "paddle_prof");

  for (size_t place = 0; place < c.places.size(); ++place) {
    const std::string track = "Memory " + c.places[place].place;
    int64_t live = c.places[place].start_bytes;
    WriteCounter(&w, pid, track, 0, live);
    for (const MemoryEvent& e : c.memory_events) {
      if (e.place != static_cast<int>(place)) continue;
      live += e.delta;
      WriteCounter(&w, pid, track, c.TicksToUs(e.tick - c.start_tick), live);
      flush_if_large();
    }
  }

  if (!c.steps.empty()) {
    WriteThreadName(&w, pid, kStepsTid, "steps", -1);
    uint64_t step_start = c.start_tick;
    for (size_t i = 0; i < c.steps.size(); ++i) {
      const std::string name = "step " + std::to_string(i);
      WriteComplete(&w, c, pid, kStepsTid, name.c_str(), "step", nullptr, step_start,
                    c.steps[i].tick);
      step_start = c.steps[i].tick;
    }
  }
  for (const ThreadSnapshot& t : c.threads) {
    std::string name = "thread" + std::to_string(t.index);
    if (!t.name.empty()) name += " (" + t.name + ")";
    WriteThreadName(&w, pid, t.os_tid, name, t.index);
    for (RecordCursor records(t); records.Next();) {
      // Allocations and frees are drawn as counters, from the memory timeline.
      if (!records.at_call() || !Kept(c, records.call())) continue;
      const RecordedCall& call = records.call();
      WriteComplete(&w, c, pid, t.os_tid, call.name, "op", call.tag, call.start, call.end);
      flush_if_large();
    }
  }
  WriteGpu(&w, c, pid, flush_if_large);
  w.EndArray();
  w.EndObject();
  out.push_back('\n');
  flush();
  return file.Commit(error);
}

}  // namespace paddle_prof::internal
