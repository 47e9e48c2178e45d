#include "capture_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "capture_files.h"
#include "event_record.h"
#include "gpu_correlation.h"
#include "memory_tracker.h"
#include "place_shares.h"
#include "profile_files.h"
#include "record_scan.h"
#include "report_builder.h"

namespace paddle_prof::internal {

namespace {

// Buffers of recoveries that ended, emptied: an EventBuffer keeps its chunks for as long
// as the process lives (a recorder's does), so a process that recovers again and again
// reuses them rather than growing.
std::mutex g_spare_buffers_mu;
std::vector<std::unique_ptr<EventBuffer>>& SpareBuffers() {
  static auto* spare = new std::vector<std::unique_ptr<EventBuffer>>;
  return *spare;
}

std::unique_ptr<EventBuffer> TakeBuffer() {
  std::lock_guard<std::mutex> lock(g_spare_buffers_mu);
  std::vector<std::unique_ptr<EventBuffer>>& spare = SpareBuffers();
  if (spare.empty()) return std::make_unique<EventBuffer>();
  std::unique_ptr<EventBuffer> buffer = std::move(spare.back());
  spare.pop_back();
  return buffer;
}

bool ReadFile(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream out;
  out << in.rdbuf();
  *bytes = out.str();
  return true;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A descriptor of the regular file at `path`, or -1: a mapping's path may name anything
// by now, and opening a FIFO would wait for a writer that never comes.
int OpenRegularFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    return -1;
  }
  return fd;
}

// One mapping of the dead process, from its /proc/self/maps.
struct Mapping {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t offset = 0;
  std::string path;
};

std::vector<Mapping> ParseMaps(const std::string& text) {
  std::vector<Mapping> maps;
  for (const std::string& line : Lines(text)) {
    Mapping m;
    char perms[8] = "";
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %n", &m.begin, &m.end, perms, &m.offset,
                    &path_at) < 4 ||
        path_at <= 0 || static_cast<size_t>(path_at) >= line.size() || line[path_at] != '/') {
      continue;  // anonymous: nothing left to read
    }
    m.path = line.substr(static_cast<size_t>(path_at));
    maps.push_back(std::move(m));
  }
  std::sort(maps.begin(), maps.end(),
            [](const Mapping& a, const Mapping& b) { return a.begin < b.begin; });
  return maps;
}

// Places registered after the meta was last written, named from the places log; a
// torn or foreign line is skipped, and its place goes by its index.
void NamePlacesMadeLater(const std::string& dir, std::vector<PlaceSummary>* places) {
  std::string log;
  if (!ReadFile(CaptureFile(dir, "places"), &log)) return;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.find(' ');
    if (space == 0 || space == std::string::npos || space > 2 || lines.eof()) continue;
    const int index = std::atoi(line.c_str());
    if (line.find_first_not_of("0123456789") != space || index >= kMaxPlaces) continue;
    if (places->size() <= static_cast<size_t>(index)) places->resize(index + 1);
    PlaceSummary& place = (*places)[index];
    if (place.place.empty()) place.place = line.substr(space + 1);
  }
  for (size_t p = 0; p < places->size(); ++p) {
    if ((*places)[p].place.empty()) (*places)[p].place = "[place " + std::to_string(p) + "]";
  }
}

// Turns the dead process's name pointers into strings this process owns.
class NameResolver {
 public:
  NameResolver(const std::string& dir, std::deque<std::string>* names) : names_(names) {
    std::string maps;
    if (ReadFile(CaptureFile(dir, "maps"), &maps)) maps_ = ParseMaps(maps);
    std::string log;
    ReadFile(CaptureFile(dir, "names"), &log);
    // Entries: pointer (8 bytes), length (4), bytes; a torn last one is dropped.
    for (size_t at = 0; at + 12 <= log.size();) {
      uint64_t pointer;
      uint32_t length;
      std::memcpy(&pointer, log.data() + at, 8);
      std::memcpy(&length, log.data() + at + 8, 4);
      if (at + 12 + length > log.size()) break;
      interned_[pointer] = Own(log.substr(at + 12, length));
      at += 12 + length;
    }
  }
  ~NameResolver() {
    for (const auto& [path, fd] : files_) {
      if (fd >= 0) close(fd);
    }
  }

  const char* Resolve(const char* pointer) {
    if (pointer == nullptr) return nullptr;
    const uint64_t p = reinterpret_cast<uintptr_t>(pointer);
    if (const auto it = interned_.find(p); it != interned_.end()) return it->second;
    if (const auto it = literals_.find(p); it != literals_.end()) return it->second;
    return literals_[p] = Own(ReadLiteral(p));
  }

 private:
  const char* Own(std::string s) { return names_->emplace_back(std::move(s)).c_str(); }

  // The NUL-terminated string at `p` in the file mapped there.
  std::string ReadLiteral(uint64_t p) {
    auto m = std::upper_bound(maps_.begin(), maps_.end(), p,
                              [](uint64_t v, const Mapping& m) { return v < m.begin; });
    char unknown[48];
    std::snprintf(unknown, sizeof(unknown), "[unknown name %#lx]", static_cast<unsigned long>(p));
    if (m == maps_.begin() || p >= (--m)->end) return unknown;
    auto [file, inserted] = files_.try_emplace(m->path, -1);
    if (inserted) file->second = OpenRegularFile(m->path);
    if (file->second < 0) return unknown;
    std::string s;
    off_t at = static_cast<off_t>(m->offset + (p - m->begin));
    char buffer[256];
    while (s.size() < (1 << 20)) {
      const ssize_t n = pread(file->second, buffer, sizeof(buffer), at);
      if (n <= 0) return unknown;
      const char* nul = static_cast<const char*>(std::memchr(buffer, '\0', static_cast<size_t>(n)));
      if (nul != nullptr) return s.append(buffer, static_cast<size_t>(nul - buffer));
      s.append(buffer, static_cast<size_t>(n));
      at += n;
    }
    return unknown;
  }

  std::deque<std::string>* names_;
  std::vector<Mapping> maps_;
  std::unordered_map<uint64_t, const char*> interned_;
  std::unordered_map<uint64_t, const char*> literals_;
  std::map<std::string, int> files_;
};

// No window moves 4 EiB: byte figures are bounded one by one and all together, so that
// the report's sums of them cannot overflow.
constexpr uint64_t kMaxBytes = uint64_t{1} << 62;

struct Meta {
  uint64_t window = 0;
  ProcessInfo process;  // pid, host and rank; the role is the main one's
  int64_t unix_ns = 0;
  ProfilerState state = ProfilerState::kCPU;
  uint64_t start_tick = 0;
  double ns_per_tick = 1.0;
  bool memory_timeline = true;  // captures of before the line was written had it
  std::vector<PlaceSummary> places;
};

Meta ReadMeta(const std::string& dir) {
  std::string text;
  const std::string path = CaptureFile(dir, "meta");
  if (!ReadFile(path, &text) || text.rfind(kCaptureMetaMagic, 0) != 0) {
    throw std::runtime_error(
        "paddle_prof: no capture in '" + dir + "' (" + path +
        (text.empty() ? ": " + std::string(std::strerror(errno)) : ": not a capture") + ")");
  }
  Meta meta;
  for (const std::string& line : Lines(text)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "window") {
      in >> meta.window;
    } else if (key == "pid") {
      in >> meta.process.pid;
    } else if (key == "host") {
      in >> meta.process.host;
    } else if (key == "rank") {
      int rank = 0, world_size = 0;
      if (in >> rank >> world_size) {
        meta.process.rank = rank;
        meta.process.world_size = world_size;
      }
    } else if (key == "unix_ns") {
      in >> meta.unix_ns;
    } else if (key == "state") {
      std::string state;
      in >> state;
      try {
        meta.state = ParseProfilerState(state);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error("paddle_prof: " + path + ": " + e.what());
      }
    } else if (key == "start_tick") {
      in >> meta.start_tick;
    } else if (key == "ns_per_tick") {
      std::string rate;
      in >> rate;
      std::istringstream(rate) >> meta.ns_per_tick;
      if (!(meta.ns_per_tick > 0 && meta.ns_per_tick < 1e9)) {  // NaN and failed reads too
        throw std::runtime_error("paddle_prof: " + path + ": ns_per_tick '" + rate +
                                 "' is not a clock rate");
      }
    } else if (key == "timeline") {
      in >> meta.memory_timeline;
    } else if (key == "place") {
      PlaceSummary p;
      in >> p.start_bytes >> p.peak_bytes >> p.end_bytes >> p.untracked_frees;
      in.get();
      std::getline(in, p.place);
      for (const int64_t figure : {p.start_bytes, p.peak_bytes, p.end_bytes, p.untracked_frees}) {
        if (figure < 0 || static_cast<uint64_t>(figure) >= kMaxBytes) {
          throw std::runtime_error("paddle_prof: " + path + ": place '" + p.place +
                                   "' has a figure out of range (" + std::to_string(figure) + ")");
        }
      }
      meta.places.push_back(std::move(p));
    }
  }
  return meta;
}

// Whether `tick` is at most 2^62 ns (146 years) after the window's start, as every
// tick of a real window is: times in ns since the start then fit any integer type.
bool InWindow(const Meta& meta, uint64_t tick) {
  return tick <= meta.start_tick ||
         static_cast<double>(tick - meta.start_tick) * meta.ns_per_tick < 0x1p62;
}
constexpr char kTickTooLate[] = "a tick past 146 years after the window's start";
constexpr char kTooMany[] = "past 4 EiB (2^62 bytes) of memory figures in all";

std::vector<StepMark> ReadSteps(const std::string& dir, const Meta& meta,
                                std::vector<std::string>* warnings) {
  std::string text;
  const std::string path = CaptureFile(dir, "steps");
  ReadFile(path, &text);
  std::vector<StepMark> steps;
  if (!text.empty() && text.back() != '\n') text.erase(text.rfind('\n') + 1);  // a torn line
  for (const std::string& line : Lines(text)) {
    std::istringstream in(line);
    StepMark& step = steps.emplace_back();
    in >> step.tick;
    if (!InWindow(meta, step.tick)) {
      steps.pop_back();
      warnings->push_back(path + ": step " + std::to_string(steps.size()) + " has " + kTickTooLate +
                          "; it and the steps after it are left out.");
      break;
    }
    for (std::string field; std::getline(in, field, '\t');) {
      std::istringstream f(field);
      std::string tag, name;
      int64_t value = 0;
      if (!(f >> tag >> value)) continue;
      f.get();
      std::getline(f, name);
      (tag == "peak"  ? step.peak_bytes
       : tag == "end" ? step.end_bytes
                      : step.process)[name] = value;
    }
  }
  return steps;
}

// Why `r` is no record a recorder writes, or nullptr. The last record of a process
// killed mid-write may be torn (part of it still zero). `bytes_read` sums the byte
// figures so far.
const char* Malformed(const EventRecord& r, const Meta& meta, uint64_t* bytes_read) {
  const RecordKind kind = r.kind();
  const bool memory = kind == RecordKind::kAlloc || kind == RecordKind::kFree;
  // Every three bits name a kind; only calls, allocations, frees and an op's inputs
  // (kOpDetail) name a string.
  if (r.name != nullptr && !memory && kind != RecordKind::kCall && kind != RecordKind::kOpDetail) {
    return "of no kind paddle_prof writes";
  }
  if (r.name == nullptr && (memory || kind == RecordKind::kCall)) {
    return "a call or memory event without a name";
  }
  if ((memory || kind == RecordKind::kCall) && !InWindow(meta, r.start)) return kTickTooLate;
  if (kind == RecordKind::kCall && !InWindow(meta, r.end)) return kTickTooLate;
  if (memory || kind == RecordKind::kScopeMemory) {
    // An allocation's bytes are in `end`; a scope's figures in both.
    if (memory && r.end > kLargestBlock) return "a block over 64 PiB (2^56 bytes)";
    const uint64_t start = kind == RecordKind::kScopeMemory ? r.start : 0;
    if (start >= kMaxBytes || r.end >= kMaxBytes) return kTooMany;
    *bytes_read += start + r.end;
    if (*bytes_read >= kMaxBytes) return kTooMany;
  }
  return nullptr;
}

// Records of one recorder's chunk files, up to the first never written. A malformed
// record ends them, with a warning that says what was left out.
void ReadThread(const std::string& dir, const Meta& meta, int index, NameResolver* names,
                EventBuffer* buffer, Collection* c, uint64_t* bytes_read) {
  const std::string prefix = CaptureChunkPrefix(dir, meta.window, index);
  const EventRecord zero{};
  for (size_t chunk = 0;; ++chunk) {
    std::string bytes;
    const std::string path = prefix + std::to_string(chunk);
    if (!ReadFile(path, &bytes)) return;
    const size_t count = bytes.size() / sizeof(EventRecord);
    for (size_t i = 0; i < count; ++i) {
      EventRecord r;
      std::memcpy(&r, bytes.data() + i * sizeof(EventRecord), sizeof(r));
      if (std::memcmp(&r, &zero, sizeof(r)) == 0) return;  // not written: the end
      if (const char* why = Malformed(r, meta, bytes_read)) {
        c->warnings.push_back(path + ": record " + std::to_string(i) + " is " + why +
                              " (torn as the process ended, or not written by paddle_prof); "
                              "the thread's records from there on are left out.");
        return;
      }
      const RecordKind kind = r.kind();
      if (kind == RecordKind::kAlloc || kind == RecordKind::kFree ||
          kind == RecordKind::kScopeMemory) {
        // A place made after the meta was last written (at the window's open or a step
        // mark) has no line there: it goes by its index.
        for (size_t p = c->places.size(); p <= static_cast<size_t>(r.place()); ++p) {
          c->places.emplace_back().place = "[place " + std::to_string(p) + "]";
        }
      }
      if (kind == RecordKind::kStack) continue;  // ids of the dead process's stack table
      if (kind == RecordKind::kOpDetail) {
        c->autograd_ops += r.start != 0;
        if (r.name != nullptr) r.name = names->Resolve(r.name);
      }
      if (kind == RecordKind::kCall || kind == RecordKind::kAlloc || kind == RecordKind::kFree) {
        r.name = names->Resolve(r.name);
        const uint64_t tag = reinterpret_cast<uintptr_t>(names->Resolve(r.tag()));
        r.tag_bits = (r.tag_bits & ~EventRecord::kPointerMask) | (tag & EventRecord::kPointerMask);
        c->end_tick = std::max(c->end_tick, kind == RecordKind::kCall ? r.end : r.start);
      }
      if (!buffer->Append(r)) {
        ++(kind == RecordKind::kCall ? c->dropped : c->dropped_memory);
      }
    }
    if (count < EventBuffer::kRecordsPerChunk) return;
  }
}

}  // namespace

RecoveredCapture::~RecoveredCapture() {
  std::lock_guard<std::mutex> lock(g_spare_buffers_mu);
  for (std::unique_ptr<EventBuffer>& buffer : buffers) {
    buffer->Clear();
    SpareBuffers().push_back(std::move(buffer));
  }
}

std::unique_ptr<RecoveredCapture> ReadCapture(const std::string& dir) {
  const Meta meta = ReadMeta(dir);
  auto recovered = std::make_unique<RecoveredCapture>();
  Collection& c = recovered->collection;
  c.state = meta.state;
  c.gpu_traced = meta.state != ProfilerState::kCPU;
  c.process = meta.process;
  c.clock.unix_ns = meta.unix_ns;
  c.start_tick = meta.start_tick;
  c.end_tick = meta.start_tick;
  c.ns_per_tick = meta.ns_per_tick;
  c.places = meta.places;
  NamePlacesMadeLater(dir, &c.places);
  c.memory_timeline = meta.memory_timeline;
  c.warnings.push_back("the process (pid " + std::to_string(meta.process.pid) +
                       ") ended without stopping its profiler: this report was recovered "
                       "from its capture in '" +
                       dir +
                       "'; calls still open then are left out, live bytes per event are not "
                       "known (Live Mem. reads 0) and each place's end bytes are those of "
                       "the last step mark (or of the window's open).");
  if (c.gpu_traced)
    c.warnings.push_back("GPU work is not captured: the recovered report has none.");
  c.steps = ReadSteps(dir, meta, &c.warnings);
  for (const StepMark& step : c.steps) c.end_tick = std::max(c.end_tick, step.tick);
  NameResolver names(dir, &recovered->names);
  // The recorders that started the window: each wrote its thread's file.
  const std::string window = "w" + std::to_string(meta.window) + ".t";
  std::vector<int> indexes;
  if (DIR* d = opendir(dir.c_str())) {
    const std::string start = kCapturePrefix + window;
    while (const dirent* entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (name.rfind(start, 0) == 0 && name.size() > 5 &&
          name.compare(name.size() - 5, 5, ".info") == 0) {
        indexes.push_back(std::atoi(name.c_str() + start.size()));
      }
    }
    closedir(d);
  }
  std::sort(indexes.begin(), indexes.end());
  uint64_t bytes_read = 0;
  for (const int index : indexes) {
    std::string info;
    ReadFile(CaptureThreadFile(dir, meta.window, index), &info);
    const std::vector<std::string> lines = Lines(info);
    auto& buffer = recovered->buffers.emplace_back(TakeBuffer());
    ReadThread(dir, meta, index, &names, buffer.get(), &c, &bytes_read);
    c.threads.push_back({index, lines.empty() ? 0 : std::atoi(lines[0].c_str()),
                         lines.size() > 1 ? lines[1] : "", buffer.get(), 0, buffer->Size(), 0, {}});
  }
  c.buffer_chunks = EventBuffer::ChunksInUse();
  c.buffer_bound_mb = EventBuffer::BoundMb();
  c.gpu_correlation = CorrelateGpu(c);
  return recovered;
}

Report RecoverCapture(const std::string& dir, const ReportOptions& options,
                      const CaptureEnding& ending) {
  const std::unique_ptr<RecoveredCapture> recovered = ReadCapture(dir);
  Collection& c = recovered->collection;
  if (!ending.how.empty()) c.warnings.push_back(ending.how);
  if (ending.unix_ns > c.clock.unix_ns && c.ns_per_tick > 0) {
    const double ticks = static_cast<double>(ending.unix_ns - c.clock.unix_ns) / c.ns_per_tick;
    if (ticks < 0x1p62) c.end_tick = std::max(c.end_tick, c.start_tick + static_cast<uint64_t>(ticks));
  }
  ScanRecords(&c, /*calls=*/options.profile_path.empty());  // or beside the trace (record_scan.h)
  std::optional<TraceWriting> trace;
  if (!options.profile_path.empty()) trace.emplace(c, options.profile_path);
  Report report = BuildReport(c, options);
  if (trace) WriteProfileFiles(&*trace, &report);
  return report;
}

}  // namespace paddle_prof::internal
