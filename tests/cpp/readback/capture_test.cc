// Captures (capture_dir): a program killed by SIGKILL mid-window is recovered with
// every call it ended; a window that stops normally leaves no capture; a directory that
// cannot hold one leaves the window recorded in memory.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "capture_files.h"
#include "capture_reader.h"
#include "event_record.h"
#include "flags.h"
#include "paddle_prof/paddle_prof.h"
#include "process_identity.h"
#include "record_scan.h"
#include "report_builder.h"
#include "test_util.h"

extern char** environ;

namespace paddle_prof {
namespace {

using testing::Row;

std::string NewDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/" + name + "_XXXXXX";
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  return dir;
}

int CaptureFiles(const std::string& dir) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    n += entry.path().filename().string().rfind(internal::kCapturePrefix, 0) == 0;
  }
  return n;
}

bool HasWarning(const Report& report, const std::string& part) {
  for (const std::string& w : report.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

// The running window's capture in `dir`, read as recovery would.
Report LiveCapture(const std::string& dir) {
  const auto recovered = internal::ReadCapture(dir);
  internal::ScanRecords(&recovered->collection, /*calls=*/true);
  return internal::BuildReport(recovered->collection, {});
}

// `report` holds `calls` calls of `name`, and no other row.
void ExpectOnly(const Report& report, const std::string& name, int64_t calls) {
  EXPECT_EQ(Row(report, name).calls, calls);
  EXPECT_EQ(report.events.size(), 1u);
}

// Stops the window, which reports `calls` calls of `name` and leaves no capture in `dir`.
Report StopLeavingNoCapture(const std::string& dir, const std::string& name, int64_t calls) {
  Report report = StopProfiler();
  FLAGS_paddle_prof_capture_dir = "";
  EXPECT_EQ(Row(report, name).calls, calls);
  EXPECT_EQ(CaptureFiles(dir), 0);
  return report;
}

// Runs capture_main with its capture in `dir`, reads its stdout until MARKER (at most
// 60 s), kills it with SIGKILL and waits for it.
void RunAndKill(const std::string& dir, pid_t* killed = nullptr) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> env_strings = {"FLAGS_paddle_prof_capture_dir=" + dir};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("FLAGS_paddle_prof_", 0) != 0) env_strings.push_back(*e);
  }
  std::vector<char*> env;
  for (std::string& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  char program[] = CAPTURE_MAIN;
  char* args[] = {program, nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, program, &actions, nullptr, args, env.data()), 0);
  if (killed != nullptr) *killed = pid;
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen.find("MARKER\n") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char buffer[256];
    const ssize_t n = read(out[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    seen.append(buffer, static_cast<size_t>(n));
  }
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  close(out[0]);
  ASSERT_NE(seen.find("MARKER\n"), std::string::npos) << "capture_main printed: " << seen;
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(Capture, KilledProgramIsRecoveredWithEveryCallItEnded) {
  const std::string dir = NewDir("capture_killed");
  const int64_t before = internal::RealtimeNs();
  pid_t killed = 0;
  RunAndKill(dir, &killed);
  const std::string profile = dir + "/recovered.json";
  internal::ReportOptions options;
  options.profile_path = profile;
  const Report report = internal::RecoverCapture(dir, options);
  EXPECT_EQ(Row(report, "op").calls, 1000);
  EXPECT_EQ(Row(report, "dynamic_7", std::string("tag_x")).calls, 10);
  EXPECT_EQ(Row(report, "worker_op").calls, 50);
  const EventRow& alloc = Row(report, "alloc");
  EXPECT_EQ(alloc.calls, 1);
  EXPECT_EQ(testing::Cpu(alloc).peak_bytes, 1500);
  EXPECT_EQ(testing::Cpu(alloc).alloc_bytes, 1500);
  EXPECT_EQ(testing::Cpu(alloc).free_bytes, 1000);
  EXPECT_EQ(Row(report, "aten::mm", std::string("[[2, 3], [3, 4]]")).calls, 1);
  testing::PlaceOf(report, "CPU");
  EXPECT_EQ(report.events.size(), 5u);  // the call open at the kill is left out
  EXPECT_EQ(report.steps.size(), 2u);
  // The process it was, and when its window opened.
  EXPECT_EQ(report.process.pid, killed);
  EXPECT_FALSE(report.process.host.empty());
  EXPECT_GT(report.clock.unix_ns, before);
  EXPECT_LT(report.clock.unix_ns, internal::RealtimeNs());
  EXPECT_TRUE(HasWarning(report, "ended without stopping its profiler")) << report.Table();
  EXPECT_NE(report.Table().find("op"), std::string::npos);
  const nlohmann::json summary = testing::ReadJson(profile + ".summary.json");
  EXPECT_EQ(summary["events"].size(), 5u);
  // The op's details come back from the dead process's names: its inputs and number.
  const nlohmann::json trace = testing::ReadJson(profile);
  int ops = 0;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e.value("name", "") != "aten::mm") continue;
    ++ops;
    EXPECT_EQ(e.at("args").at("Input Dims"), nlohmann::json::parse("[[2, 3], [3, 4]]"));
    EXPECT_EQ(e.at("args").at("Input type"), nlohmann::json::parse(R"(["float", "float"])"));
    EXPECT_EQ(e.at("args").at("Sequence number"), 5);
  }
  EXPECT_EQ(ops, 1);
}

TEST(Capture, NoCaptureIsAClearError) {
  const std::string dir = NewDir("capture_none");
  try {
    internal::RecoverCapture(dir, {});
    ADD_FAILURE() << "recovered a capture from an empty directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no capture in"), std::string::npos) << e.what();
  }
}

// A capture made by hand, of window 1 started at tick 100 with one recorder: the meta
// with `meta_lines` in place of the usual state, clock and place lines, the records of
// `records` in its chunk, `steps` as its steps file, and the name "op" at 0x1000.
std::string HandMadeCapture(
    const std::string& name, const std::vector<internal::EventRecord>& records,
    const std::string& meta_lines = "state CPU\nns_per_tick 1\nplace 0 0 0 0 CPU\n",
    const std::string& steps = "110\n") {
  const std::string dir = NewDir(name);
  const auto write = [&dir](const char* file, const void* bytes, size_t size) {
    std::ofstream(internal::CaptureFile(dir, file), std::ios::binary)
        .write(static_cast<const char*>(bytes), static_cast<std::streamsize>(size));
  };
  const std::string meta =
      "paddle_prof capture 1\nwindow 1\npid 42\nstart_tick 100\nhost h\n" + meta_lines;
  write("meta", meta.data(), meta.size());
  write("steps", steps.data(), steps.size());
  const char names[] = "\x00\x10\0\0\0\0\0\0\x02\0\0\0op";
  write("names", names, sizeof(names) - 1);
  write("w1.t0.info", "1\nmain\n", 7);
  write("w1.t0.c0", records.data(), records.size() * sizeof(internal::EventRecord));
  return dir;
}

const char* const kOp = reinterpret_cast<const char*>(0x1000);

// The recovery's error, or "" when it recovered.
std::string RecoveryError(const std::string& dir) {
  try {
    internal::RecoverCapture(dir, {});
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// A record that no recorder writes (the last one torn as the process ended, or a file
// that is no capture) ends its thread's records, with a warning naming its file. Here
// the last record is that one.
TEST(Capture, AMalformedRecordEndsItsThreadWithAWarningNamingTheFile) {
  using internal::EventRecord;
  using internal::RecordKind;
  const auto warned = [](const std::vector<EventRecord>& records, const std::string& why) {
    const std::string dir = HandMadeCapture("capture_malformed", records);
    const Report report = internal::RecoverCapture(dir, {});
    EXPECT_EQ(Row(report, "op").calls, 1);
    EXPECT_TRUE(HasWarning(report, internal::CaptureFile(dir, "w1.t0.c0") + ": record " +
                                       std::to_string(records.size() - 1) + " is " + why +
                                       " (torn as the process ended"))
        << report.Table();
    std::filesystem::remove_all(dir);
  };
  const EventRecord op = EventRecord::Call(kOp, nullptr, 0, false, 101, 102);
  warned({op, EventRecord::Call(nullptr, nullptr, 0, false, 103, 104)},
         "a call or memory event without a name");
  warned(
      {op, EventRecord::Memory(RecordKind::kAlloc, 0, kOp, nullptr, 103, (int64_t{1} << 56) + 1)},
      "a block over 64 PiB (2^56 bytes)");
  std::vector<EventRecord> four_eib(
      65, EventRecord::Memory(RecordKind::kAlloc, 0, kOp, nullptr, 103, int64_t{1} << 56));
  four_eib[0] = op;
  warned(four_eib, "past 4 EiB (2^62 bytes) of memory figures in all");
  warned({op, EventRecord::Call(kOp, nullptr, 0, false, 103, UINT64_MAX)},
         "a tick past 146 years after the window's start");
  EventRecord no_kind = op;  // a name on a kind that carries none
  no_kind.tag_bits |= static_cast<uint64_t>(RecordKind::kStack) << 60;
  warned({op, no_kind}, "of no kind paddle_prof writes");
}

TEST(Capture, AStepPastAnyRealWindowEndsTheStepsWithAWarning) {
  const std::string dir = HandMadeCapture("capture_late_step", {}, "state CPU\nns_per_tick 1\n",
                                          "110\n18446744073709551615\n120\n");
  const Report report = internal::RecoverCapture(dir, {});
  EXPECT_EQ(report.steps.size(), 1u);
  EXPECT_TRUE(HasWarning(
      report, internal::CaptureFile(dir, "steps") + ": step 1 has a tick past 146 years"))
      << report.Table();
  std::filesystem::remove_all(dir);
}

// A literal name is read from the file mapped where it lay, only if that is a regular
// file: opening the FIFO found there now would wait forever.
TEST(Capture, ALiteralNameInAFileThatIsNoRegularFileIsUnknown) {
  const std::string dir = HandMadeCapture(
      "capture_fifo", {internal::EventRecord::Call(reinterpret_cast<const char*>(0x7000), nullptr,
                                                   0, false, 101, 102)});
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  std::ofstream(internal::CaptureFile(dir, "maps"))
      << "7000-8000 r--p 00000000 00:00 1 " << fifo << "\n";
  EXPECT_EQ(Row(internal::RecoverCapture(dir, {}), "[unknown name 0x7000]").calls, 1);
  std::filesystem::remove_all(dir);
}

// A place made after the meta was last written goes by its index.
TEST(Capture, APlaceTheMetaDoesNotNameGoesByItsIndex) {
  const std::string dir = HandMadeCapture(
      "capture_late_place",
      {internal::EventRecord::Memory(internal::RecordKind::kAlloc, 2, kOp, nullptr, 101, 64)},
      "state CPU\nns_per_tick 1\n");
  const Report report = internal::RecoverCapture(dir, {});
  EXPECT_EQ(testing::PlaceOf(report, "[place 2]").peak_bytes, 64);
  std::filesystem::remove_all(dir);
}

// EventBuffers keep their memory: a process that recovers again and again reuses it.
TEST(Capture, RecoveringAgainTakesNoMoreMemory) {
  const std::string dir = HandMadeCapture(
      "capture_again", {internal::EventRecord::Call(kOp, nullptr, 0, false, 101, 102)});
  internal::RecoverCapture(dir, {});
  const size_t chunks = internal::EventBuffer::ChunksInUse();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Row(internal::RecoverCapture(dir, {}), "op").calls, 1);
  EXPECT_EQ(internal::EventBuffer::ChunksInUse(), chunks);
  std::filesystem::remove_all(dir);
}

TEST(Capture, AMetaThatPaddleProfDidNotWriteIsAClearError) {
  for (const auto& [meta, error] : std::vector<std::pair<std::string, std::string>>{
           {"state TPU\n", ": unknown profiler state 'TPU'"},
           {"ns_per_tick nan\n", ": ns_per_tick 'nan' is not a clock rate"},
           {"place -5 0 0 0 CPU\n", ": place 'CPU' has a figure out of range (-5)"}}) {
    const std::string dir = HandMadeCapture("capture_bad_meta", {}, meta);
    EXPECT_EQ(RecoveryError(dir).find("paddle_prof: " + internal::CaptureFile(dir, "meta") + error),
              0u)
        << RecoveryError(dir);
    std::filesystem::remove_all(dir);
  }
}

TEST(Capture, NormalStopLeavesNoCapture) {
  const std::string dir = NewDir("capture_stopped");
  FLAGS_paddle_prof_capture_dir = dir;
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 3; ++i) RecordEvent a(std::string("before_reset"));
  ResetProfiler();
  for (int i = 0; i < 4; ++i) RecordEvent b("after_reset");
  MarkStep();
  EXPECT_GT(CaptureFiles(dir), 0);
  ExpectOnly(LiveCapture(dir), "after_reset", 4);
  StopLeavingNoCapture(dir, "after_reset", 4);
}

// A reset keeps the recorder's chunk files for the next window: an older window's
// records in them never read as the new one's, even where the new one has filled a
// whole chunk.
TEST(Capture, ResetReusesChunkFilesWithoutTheirOldRecords) {
  const std::string dir = NewDir("capture_reset");
  FLAGS_paddle_prof_capture_dir = dir;
  constexpr int64_t kPerChunk = internal::EventBuffer::kRecordsPerChunk;
  EnableProfiler(ProfilerState::kCPU);
  for (int64_t i = 0; i < 3 * kPerChunk; ++i) RecordEvent a("old");
  ResetProfiler();
  for (int64_t i = 0; i < kPerChunk; ++i) RecordEvent b("new");
  ExpectOnly(LiveCapture(dir), "new", kPerChunk);
  for (int i = 0; i < 5; ++i) RecordEvent b("new");
  ExpectOnly(LiveCapture(dir), "new", kPerChunk + 5);
  StopLeavingNoCapture(dir, "new", kPerChunk + 5);
}

// A forked child's records stay its own: the parent's capture holds only the parent's.
TEST(Capture, ForkedChildWritesNothingIntoTheParentsCapture) {
  const std::string dir = NewDir("capture_fork");
  FLAGS_paddle_prof_capture_dir = dir;
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 3; ++i) RecordEvent a("parent");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (int i = 0; i < 10; ++i) RecordEvent b("child");
    MarkStep();
    const Report report = StopProfiler();
    // Its own profile, from the fork on (follow_children): the child's calls only.
    _exit(report.events.size() == 1 && report.events[0].name == "child" ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_GT(CaptureFiles(dir), 0);  // the child removed none of them
  const Report live = LiveCapture(dir);
  ExpectOnly(live, "parent", 3);
  EXPECT_EQ(live.steps.size(), 0u);  // the child's step mark is its own
  const Report report = StopLeavingNoCapture(dir, "parent", 3);
  ASSERT_EQ(report.processes.size(), 1u);  // the child's profile, merged at the stop
  EXPECT_EQ(report.processes[0].pid, child);
  std::filesystem::remove_all(
      std::filesystem::path(report.processes[0].summary_path).parent_path());
}

TEST(Capture, UnwritableDirectoryRecordsInMemory) {
  FLAGS_paddle_prof_capture_dir = "/proc/self/no/such/dir";
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 5; ++i) RecordEvent a("in_memory");
  const Report report = StopProfiler();
  FLAGS_paddle_prof_capture_dir = "";
  EXPECT_EQ(Row(report, "in_memory").calls, 5);
  EXPECT_TRUE(HasWarning(report, "cannot capture there")) << report.Table();
}

// A disk that fills (here a file size limit below a chunk's) ends the capture: every call is
// still in the report, which says the capture lacks the later ones.
TEST(Capture, ADiskThatFillsEndsTheCaptureWithAWarningAndLosesNoCall) {
  const std::string dir = NewDir("capture_full");
  FLAGS_paddle_prof_capture_dir = dir;
  constexpr int64_t kPerChunk = internal::EventBuffer::kRecordsPerChunk;
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails (EFBIG) instead of killing
  rlimit limit = old_limit;
  limit.rlim_cur = internal::EventBuffer::kChunkBytes - 1;  // no chunk, the small files

  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  EnableProfiler(ProfilerState::kCPU);
  for (int64_t i = 0; i < kPerChunk + 10; ++i) RecordEvent a("op");
  const Report live = LiveCapture(dir);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const Report report = StopProfiler();
  FLAGS_paddle_prof_capture_dir = "";
  signal(SIGXFSZ, SIG_DFL);
  EXPECT_EQ(Row(report, "op").calls, kPerChunk + 10);
  EXPECT_TRUE(live.events.empty());  // the capture has the window's meta, no record
  EXPECT_TRUE(HasWarning(report, "1 thread(s) could not add a record chunk there"))
      << report.Table();
  std::filesystem::remove_all(dir);
}

TEST(Capture, FlightRecorderIsNotCaptured) {
  const std::string dir = NewDir("capture_flight");
  FLAGS_paddle_prof_capture_dir = dir;
  FLAGS_paddle_prof_keep_last_steps = 2;
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 5; ++i) RecordEvent a("kept");
  const Report report = StopProfiler();
  FLAGS_paddle_prof_capture_dir = "";
  FLAGS_paddle_prof_keep_last_steps = 0;
  EXPECT_EQ(Row(report, "kept").calls, 5);
  EXPECT_TRUE(HasWarning(report, "keep_last_steps")) << report.Table();
  EXPECT_EQ(CaptureFiles(dir), 0);
}

}  // namespace
}  // namespace paddle_prof
