#include "chrome_trace.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "atomic_file.h"
#include "autograd_links.h"
#include "call_stacks.h"
#include "json_writer.h"
#include "memory_categories.h"
#include "memory_timeline.h"
#include "model_modules.h"
#include "op_inputs.h"
#include "record_cursor.h"

namespace paddle_prof::internal {

namespace {

constexpr int kStepsTid = 0;             // no real thread has id 0
constexpr size_t kFlushBytes = size_t{1} << 20;
constexpr size_t kNumberBytes = 24;  // the longest integer, or microseconds with decimals

// The trace's text. It goes to the file in pieces of about kFlushBytes: a long window's
// would not fit in memory at once. A window has as many events as calls, so each is
// written straight into the buffer, its numbers by hand.
class TraceText {
 public:
  explicit TraceText(AtomicFile* file) : file_(file) { buffer_.resize(kFlushBytes + 4096); }

  // Room for `n` more bytes at the returned pointer; Advance() to where they end.
  char* Room(size_t n) {
    if (buffer_.size() - used_ < n) buffer_.resize(used_ + n);
    return buffer_.data() + used_;
  }
  // After each event: a full buffer goes to the file.
  void Advance(char* end) {
    used_ = static_cast<size_t>(end - buffer_.data());
    if (used_ >= kFlushBytes) Flush();
  }
  void Append(std::string_view s) { Advance(Copy(Room(s.size()), s)); }
  void Flush() {
    file_->Write(std::string_view(buffer_.data(), used_));
    used_ = 0;
  }

  static char* Copy(char* p, std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    return p + s.size();
  }
  static char* Int(char* p, int64_t v) { return std::to_chars(p, p + kNumberBytes, v).ptr; }
  // Nanoseconds as microseconds with exactly three decimals: 1234567 is 1234.567.
  static char* Us(char* p, uint64_t ns) {
    p = std::to_chars(p, p + kNumberBytes, ns / 1000).ptr;
    const auto frac = static_cast<unsigned>(ns % 1000);
    p[0] = '.';
    p[1] = static_cast<char>('0' + frac / 100);
    p[2] = static_cast<char>('0' + frac / 10 % 10);
    p[3] = static_cast<char>('0' + frac % 10);
    return p + 4;
  }

 private:
  AtomicFile* file_;
  std::string buffer_;
  size_t used_ = 0;
};

// A tick as whole nanoseconds since the window's start, rounded down: no event ends
// past the window, and an event's end less its start is its duration as drawn.
uint64_t Ns(const Collection& c, uint64_t tick) {
  if (tick <= c.start_tick) return 0;
  return static_cast<uint64_t>(static_cast<double>(tick - c.start_tick) * c.ns_per_tick);
}

// Events few enough to go through the JSON writer: `write` adds array elements, each
// after its comma.
template <typename Write>
void AppendEvents(TraceText* text, Write write) {
  std::string s;
  JsonWriter w(&s);
  w.ResumeArray();
  write(&w);
  text->Append(s);
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

// `,"pid":<pid>,"tid":<tid>,"ts":`: where a thread's (or a stream's) events go.
std::string Track(int pid, int tid) {
  return ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
}

// What Kineto writes of an op autograd recorded: an id of its own, its sequence
// number and, for a backward node, the id torch gave its forward op's thread.
struct AutogradArgs {
  int64_t external_id;
  int64_t sequence;
  uint64_t forward_thread;
};

// A complete event up to its track: `,{"name":<name>,"cat":<cat>,"ph":"X"`, its tag,
// for a top-level call with record_stacks its stack's frames (innermost first), an
// op's `inputs` (op_inputs.h) and the `autograd` fields of an op that has them.
std::string CompleteHead(const char* name, const char* cat, const char* tag, uint32_t stack = 0,
                         const char* inputs = nullptr, const AutogradArgs* autograd = nullptr) {
  std::string s;
  JsonWriter w(&s);
  w.ResumeArray();
  w.BeginObject();
  w.StringField("name", name);
  w.StringField("cat", cat);
  w.StringField("ph", "X");
  const CallStack* frames = CallStackOf(stack);
  if (tag != nullptr || frames != nullptr || inputs != nullptr || autograd != nullptr) {
    w.Key("args");
    w.BeginObject();
    if (inputs != nullptr) WriteOpInputs(inputs, &w);
    if (autograd != nullptr) {
      w.IntField("External id", autograd->external_id);
      w.IntField("Sequence number", autograd->sequence);
      w.IntField("Fwd thread id", static_cast<int64_t>(autograd->forward_thread));
    }
    if (tag != nullptr) w.StringField("tag", tag);
    if (frames != nullptr) {
      w.Key("stack");
      w.BeginArray();
      for (const std::string& frame : frames->frames) w.String(frame);
      w.EndArray();
    }
    w.EndObject();
  }
  return s;
}

// Whether `name` is an op's though IsOpName() does not say so: an op of another
// namespace than aten (`c10d::allreduce_`, `torchvision::nms`), or an autograd node's
// own scope (`MulBackward0`, inside autograd's `evaluate_function: MulBackward0`).
bool IsOtherOpName(std::string_view name) {
  const auto word = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == ':';
  };
  if (name.empty() || !std::all_of(name.begin(), name.end(), word)) return false;
  if (name.find("::") != std::string_view::npos) return true;
  const size_t backward = name.rfind("Backward");
  return backward != std::string_view::npos && backward > 0 &&
         std::all_of(name.begin() + backward + 8, name.end(),
                     [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
}

// A call's category as Kineto names them, which Perfetto, Holistic Trace Analysis and
// torch.profiler's readers group by: a framework's op, a module's or layer's event, or
// any other scope (record_event, record_function).
const char* CallCategory(const char* name, bool plain_op_names) {
  std::string_view module;
  if (ModuleEventPath(name, &module)) return "python_function";
  return IsOpName(name, plain_op_names) || IsOtherOpName(name) ? "cpu_op" : "user_annotation";
}

// CompleteHead() once per distinct name, category, tag, stack and inputs. Names, tags and
// inputs are pointers
// that live as long as the window's records and repeat call after call, so they are
// told apart by address (two copies of one text are two entries, which is harmless).
// A call's category (`cat` null) is found once, with its head.
class HeadCache {
 public:
  explicit HeadCache(bool plain_op_names) : plain_op_names_(plain_op_names) {}

  const std::string& Get(const char* name, const char* cat, const char* tag, uint32_t stack = 0,
                         const char* inputs = nullptr) {
    if (2 * (heads_.size() + 1) > slots_.size()) Grow();
    for (size_t i = Hash(name, cat, tag, stack, inputs);; ++i) {
      Slot& slot = slots_[i & (slots_.size() - 1)];
      if (slot.head == kEmpty) {
        slot = {name, cat, tag, inputs, stack, heads_.size()};
        heads_.push_back(CompleteHead(name,
                                      cat != nullptr ? cat : CallCategory(name, plain_op_names_),
                                      tag, stack, inputs));
        return heads_.back();
      }
      if (slot.name == name && slot.cat == cat && slot.tag == tag && slot.inputs == inputs &&
          slot.stack == stack) {
        return heads_[slot.head];
      }
    }
  }

 private:
  static constexpr size_t kEmpty = ~size_t{0};
  struct Slot {
    const char* name = nullptr;
    const char* cat = nullptr;
    const char* tag = nullptr;
    const char* inputs = nullptr;
    uint32_t stack = 0;
    size_t head = kEmpty;
  };

  static size_t Hash(const char* name, const char* cat, const char* tag, uint32_t stack,
                     const char* inputs) {
    uint64_t h = (reinterpret_cast<uintptr_t>(name) + stack) * 0x9e3779b97f4a7c15u;
    h ^= (reinterpret_cast<uintptr_t>(tag) + reinterpret_cast<uintptr_t>(inputs)) *
         0xc2b2ae3d27d4eb4fu;
    h ^= reinterpret_cast<uintptr_t>(cat);
    return static_cast<size_t>(h ^ (h >> 29));
  }
  void Grow() {
    std::vector<Slot> old =
        std::exchange(slots_, std::vector<Slot>(slots_.empty() ? 64 : 2 * slots_.size()));
    for (const Slot& s : old) {
      if (s.head == kEmpty) continue;
      size_t i = Hash(s.name, s.cat, s.tag, s.stack, s.inputs);
      while (slots_[i & (slots_.size() - 1)].head != kEmpty) ++i;
      slots_[i & (slots_.size() - 1)] = s;
    }
  }

  bool plain_op_names_;
  std::vector<Slot> slots_;  // open addressing, a power of two of them, at most half used
  std::vector<std::string> heads_;
};

// One complete event ("ph":"X"): the head, the track, start and duration.
void WriteComplete(TraceText* text, std::string_view head, std::string_view track,
                   uint64_t start_ns, uint64_t end_ns) {
  constexpr std::string_view kDur = ",\"dur\":";
  char* p = text->Room(head.size() + track.size() + kDur.size() + 2 * kNumberBytes + 1);
  p = TraceText::Copy(p, head);
  p = TraceText::Copy(p, track);
  p = TraceText::Us(p, start_ns);
  p = TraceText::Copy(p, kDur);
  p = TraceText::Us(p, end_ns > start_ns ? end_ns - start_ns : 0);
  *p++ = '}';
  text->Advance(p);
}

// A counter track per place: Perfetto draws live bytes over time under the timeline.
void WriteMemoryCounters(TraceText* text, const Collection& c, int pid) {
  constexpr std::string_view kArgs = ",\"args\":{\"bytes\":";
  // FLAGS_paddle_prof_trace_counter_points: 0 for none, else at least 4 (one bucket's
  // low and high, the start and the last point).
  const int64_t bound =
      c.trace_counter_points > 0 ? std::max<int64_t>(c.trace_counter_points, 4) : 0;
  for (size_t place = 0; place < c.places.size(); ++place) {
    std::string head;
    JsonWriter w(&head);
    w.ResumeArray();
    w.BeginObject();
    w.StringField("name", "Memory " + c.places[place].place);
    w.StringField("ph", "C");
    w.IntField("pid", pid);
    w.Key("ts");
    ForEachLivePoint(c, static_cast<int>(place), bound, BucketKeeps::kLowAndHigh,
                     [&](const LivePoint& point) {
                       char* p = text->Room(head.size() + kArgs.size() + 2 * kNumberBytes + 2);
                       p = TraceText::Copy(p, head);
                       p = TraceText::Us(p, Ns(c, point.tick));
                       p = TraceText::Copy(p, kArgs);
                       p = TraceText::Int(p, point.bytes);
                       *p++ = '}';
                       *p++ = '}';
                       text->Advance(p);
                     });
  }
}

// Arrows, each drawn from its start ("s") to its end ("f"), bound to the events there:
// from a call to the GPU work it launched, and from a forward op to its backward node.
enum class Flow { kLaunch, kForwardBackward };

// One end of an arrow.
void WriteFlow(TraceText* text, Flow flow, bool start, std::string_view track, uint64_t ns,
               size_t id) {
  if (flow == Flow::kLaunch) {
    text->Append(start ? R"(,{"name":"launch","cat":"launch","ph":"s")"
                       : R"(,{"name":"launch","cat":"launch","ph":"f","bp":"e")");
  } else {
    text->Append(start ? R"(,{"name":"fwdbwd","cat":"fwdbwd","ph":"s")"
                       : R"(,{"name":"fwdbwd","cat":"fwdbwd","ph":"f","bp":"e")");
  }
  char* p = text->Room(track.size() + 2 * kNumberBytes + 8);
  p = TraceText::Copy(p, track);
  p = TraceText::Us(p, ns);
  p = TraceText::Copy(p, ",\"id\":");
  p = TraceText::Int(p, static_cast<int64_t>(id));
  *p++ = '}';
  text->Advance(p);
}

// As PyTorch writes it, a space after each colon: Holistic Trace Analysis finds a trace's
// rank by matching `"rank":\s+(\d+)`, and without the space reads every rank as rank 0.
std::string DistributedInfo(const ProcessInfo& process) {
  std::string backend;
  JsonWriter(&backend).String(process.backend);
  return "{" + (process.backend.empty() ? "" : "\"backend\": " + backend + ", ") +
         "\"rank\": " + std::to_string(*process.rank) +
         ", \"world_size\": " + std::to_string(process.world_size.value_or(0)) + "}";
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
void WriteGpu(TraceText* text, const Collection& c, const std::vector<std::string>& thread_tracks,
              HeadCache* heads) {
  std::set<int> devices;
  std::map<std::pair<int, uint32_t>, std::string> streams;  // their tracks
  AppendEvents(text, [&](JsonWriter* w) {
    for (const GpuActivity& a : c.gpu.activities) {
      if (devices.insert(a.device).second) {
        WriteProcessName(w, kGpuPidBase + a.device, "GPU " + std::to_string(a.device));
      }
      const int stream = static_cast<int>(a.stream);
      if (streams.emplace(std::pair(a.device, a.stream), Track(kGpuPidBase + a.device, stream))
              .second) {
        WriteThreadName(w, kGpuPidBase + a.device, stream, "stream " + std::to_string(a.stream),
                        stream);
      }
    }
  });
  for (size_t i = 0; i < c.gpu.activities.size(); ++i) {
    const GpuActivity& a = c.gpu.activities[i];
    if (a.start < c.start_tick || a.end > c.end_tick || a.end < a.start) continue;
    const std::string& stream = streams[{a.device, a.stream}];
    WriteComplete(text, heads->Get(a.name, ActivityCategory(a.kind), nullptr), stream,
                  Ns(c, a.start), Ns(c, a.end));
    const GpuLaunch& launch =
        i < c.gpu_correlation.launch.size() ? c.gpu_correlation.launch[i] : GpuLaunch{};
    if (launch.thread < 0) continue;
    WriteFlow(text, Flow::kLaunch, true, thread_tracks[launch.thread], Ns(c, launch.call_start), i);
    WriteFlow(text, Flow::kLaunch, false, stream, Ns(c, a.start), i);
  }
}

}  // namespace

bool WriteChromeTrace(const Collection& c, const std::string& path, std::string* error) {
  AtomicFile file(path);
  TraceText text(&file);
  const int pid = static_cast<int>(getpid());
  {
    std::string start;
    JsonWriter w(&start);
    w.BeginObject();
    w.StringField("displayTimeUnit", "ms");
    w.IntField("baseTimeNanoseconds", c.clock.unix_ns);  // ts 0 on CLOCK_REALTIME, as Kineto
    if (c.process.rank) {
      w.Key("distributedInfo");
      w.Raw(DistributedInfo(c.process));
    }
    w.Key("traceEvents");
    w.BeginArray();
    WriteProcessName(&w, pid, "paddle_prof");  // the first event: all others follow a comma
    text.Append(start);
  }
  WriteMemoryCounters(&text, c, pid);

  if (!c.steps.empty()) {
    AppendEvents(&text, [&](JsonWriter* w) { WriteThreadName(w, pid, kStepsTid, "steps", -1); });
    const std::string track = Track(pid, kStepsTid);
    uint64_t step_start = c.start_tick;
    for (size_t i = 0; i < c.steps.size(); ++i) {
      // Kineto's name for a step, which Holistic Trace Analysis numbers iterations by.
      const std::string name =
          "ProfilerStep#" + std::to_string(c.steps_dropped + static_cast<int64_t>(i));
      WriteComplete(&text, CompleteHead(name.c_str(), "step", nullptr), track, Ns(c, step_start),
                    Ns(c, c.steps[i].tick));
      step_start = c.steps[i].tick;
    }
  }
  HeadCache heads(c.plain_op_names);
  const AutogradLinks links = LinkForwardToBackward(c);
  int64_t external_id = 0;                 // of the ops autograd recorded
  std::vector<std::string> thread_tracks;  // by position in c.threads
  for (size_t position = 0; position < c.threads.size(); ++position) {
    const ThreadSnapshot& t = c.threads[position];
    std::string name = "thread" + std::to_string(t.index);
    if (!t.name.empty()) name += " (" + t.name + ")";
    AppendEvents(&text, [&](JsonWriter* w) { WriteThreadName(w, pid, t.os_tid, name, t.index); });
    thread_tracks.push_back(Track(pid, t.os_tid));
    // Allocations and frees are drawn as counters, from the memory timeline.
    for (RecordCursor records(t); records.NextCall();) {
      if (!Kept(c, records.call())) continue;
      const RecordedCall& call = records.call();
      if (call.sequence < 0) {
        WriteComplete(&text, heads.Get(call.name, nullptr, call.tag, call.stack, call.inputs),
                      thread_tracks.back(), Ns(c, call.start), Ns(c, call.end));
        continue;
      }
      const AutogradArgs autograd{++external_id, call.sequence, call.forward_thread};
      WriteComplete(&text,
                    CompleteHead(call.name, CallCategory(call.name, c.plain_op_names), call.tag,
                                 call.stack, call.inputs, &autograd),
                    thread_tracks.back(), Ns(c, call.start), Ns(c, call.end));
      if (const auto link = links.find(CallKey(position, call.index)); link != links.end()) {
        // Past the launches' ids (their GPU work's index), so that no reader pairs the two.
        WriteFlow(&text, Flow::kForwardBackward, link->second.forward, thread_tracks.back(),
                  Ns(c, call.start), c.gpu.activities.size() + link->second.id);
      }
    }
  }
  WriteGpu(&text, c, thread_tracks, &heads);
  text.Append("]}\n");
  text.Flush();
  return file.Commit(error);
}

}  // namespace paddle_prof::internal
