// fork() in a multi-threaded program: the child must not inherit a library lock that
// another thread held at the fork, and keeps recording, tracking and reporting. A child
// forked in a window that follows children writes its own profile, which the parent's
// stop merges.
#include <glob.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "child_profiles.h"
#include "flags.h"
#include "paddle_prof/paddle_prof.h"
#include "process_identity.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::HasWarning;
using testing::ReadJson;
using testing::Row;
using testing::TempPath;

constexpr int kForks = 300;
constexpr int64_t kChildBytes = 4096;

// Child exit statuses: the child's report did not hold what it recorded.
constexpr int kWrongReport = 3;

// In the child, on the thread that forked (which never recorded nor allocated before,
// so each of these registers it anew): a window of its own with one scope that
// allocates and frees, a step, and a place the registry has no room for.
int ChildWork(TrackingAllocator& cpu) {
  if (IsProfilerEnabled()) StopProfiler(EventSortingKey::kTotal, "");  // inherited window
  EnableProfiler(ProfilerState::kCPU);
  {
    PADDLE_PROF_RECORD_EVENT("child_op");
    cpu.Free(cpu.Allocate(kChildBytes));
    RecordAlloc(CUDAPlace(100000), nullptr, 0);
  }
  MarkStep();
  const Report report = StopProfiler(EventSortingKey::kTotal, "");
  const EventRow& row = Row(report, "child_op");
  const MemoryStats& memory = testing::MemoryOn(row, "CPU");
  const bool right = row.calls == 1 && memory.alloc_bytes == kChildBytes &&
                     memory.alloc_count == 1 && memory.free_bytes == kChildBytes &&
                     memory.free_count == 1;
  return right ? 0 : kWrongReport;
}

// Waits for `pid` for up to `limit`; kills it (and says so) if it is still running.
bool WaitOrKill(pid_t pid, std::chrono::seconds limit, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  kill(pid, SIGKILL);
  waitpid(pid, status, 0);
  return false;
}

TEST(ForkTest, ChildKeepsWorkingWhileOtherThreadsHeldTheLibrarysLocks) {
  PADDLE_PROF_SKIP_IF_ALLOCATOR_NOT_FORK_SAFE();
  TrackingAllocator cpu(CPUAllocator(), CPUPlace());
  // Fill the place registry, so that asking for one more place takes its lock each time.
  for (int device = 0; device < 16; ++device) {
    RecordAlloc(CUDAPlace(device), nullptr, 0);
  }

  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  // Windows open and close: the profiler's lock, and the collector's hold on the
  // recorder registry while it builds the report.
  threads.emplace_back([&stop] {
    while (!stop.load()) {
      EnableProfiler(ProfilerState::kCPU);
      MarkStep();
      StopProfiler(EventSortingKey::kTotal, "");
    }
  });
  // Threads come and go: each registers a recorder and live-block tables, interns a
  // name never seen before and allocates.
  threads.emplace_back([&stop, &cpu] {
    for (int i = 0; !stop.load(); ++i) {
      std::thread([i, &cpu] {
        RecordEvent op("thread_op_" + std::to_string(i));
        cpu.Free(cpu.Allocate(64));
      }).join();
    }
  });
  // Places the full registry has no room for: its lock, over and over.
  threads.emplace_back([&stop] {
    for (int device = 1000; !stop.load(); ++device) {
      RecordAlloc(CUDAPlace(device), nullptr, 0);
    }
  });

  int hung = 0;
  int wrong = 0;
  for (int i = 0; i < kForks && hung == 0; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(ChildWork(cpu));
    int status = 0;
    if (!WaitOrKill(pid, std::chrono::seconds(30), &status)) {
      ++hung;  // one is enough to fail: stop forking
      ADD_FAILURE() << "child " << i << " of " << kForks << " hung";
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++wrong;
      ADD_FAILURE() << "child " << i << " ended with status " << status;
    }
  }
  stop.store(true);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(hung, 0);
  EXPECT_EQ(wrong, 0);
  if (IsProfilerEnabled()) StopProfiler(EventSortingKey::kTotal, "");
  // The children followed the windows they were forked in: their profiles go.
  glob_t dirs{};
  const std::string pattern = internal::ChildrenDir("", internal::ThisProcess(), 0);
  glob((pattern.substr(0, pattern.rfind(".0.children")) + ".*.children").c_str(), 0, nullptr,
       &dirs);
  for (size_t i = 0; i < dirs.gl_pathc; ++i) std::filesystem::remove_all(dirs.gl_pathv[i]);
  globfree(&dirs);
}

// Where the children of the window `report` is of write (an explicit C++ window names no
// profile path before it stops: the temporary directory's).
std::string ChildrenDirOf(const Report& report) {
  return internal::ChildrenDir("", report.process, report.clock.unix_ns);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

void RemoveChildren(const std::string& dir, pid_t child) {
  testing::RemoveProfileFiles(internal::ChildProfilePath(dir, child));
  rmdir(dir.c_str());
}

// Forks a child that records `child_op` 3 times, then ends by exit(), which runs the exit
// handlers. With pipes: it first writes a byte to `ready` (its marker is written by then)
// and waits for one from `go`.
pid_t ForkRecordingChild(int ready = -1, int go = -1) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  char byte = 0;
  if (ready >= 0 && write(ready, "r", 1) != 1) _exit(kWrongReport);
  if (go >= 0 && read(go, &byte, 1) != 1) _exit(kWrongReport);
  for (int i = 0; i < 3; ++i) {
    PADDLE_PROF_RECORD_EVENT("child_op");
  }
  std::exit(0);
}

TEST(ForkTest, AFollowedChildWritesItsProfileAtExitAndTheParentsStopMergesIt) {
  PADDLE_PROF_SKIP_IF_ALLOCATOR_NOT_FORK_SAFE();
  EnableProfiler(ProfilerState::kCPU);
  { PADDLE_PROF_RECORD_EVENT("parent_op"); }
  const pid_t child = ForkRecordingChild();
  ASSERT_GE(child, 0);
  int status = 0;
  ASSERT_TRUE(WaitOrKill(child, std::chrono::seconds(30), &status));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  const std::string path = TempPath("followed");
  const Report report = StopProfiler(EventSortingKey::kTotal, path);
  const std::string dir = ChildrenDirOf(report);
  EXPECT_EQ(Row(report, "child_op").calls, 3);
  EXPECT_EQ(Row(report, "parent_op").calls, 1);  // the child's window began at the fork
  ASSERT_EQ(report.processes.size(), 1u);
  const ChildProcess& merged = report.processes[0];
  EXPECT_EQ(merged.pid, child);
  EXPECT_EQ(merged.role, "child");
  EXPECT_EQ(merged.calls, 3);
  EXPECT_EQ(merged.summary_path, internal::ChildProfilePath(dir, child) + ".summary.json");
  const nlohmann::json summary = ReadJson(merged.summary_path);
  EXPECT_EQ(summary.at("process").at("pid"), child);
  EXPECT_EQ(summary.at("process").at("parent_pid"), getpid());
  EXPECT_FALSE(Exists(internal::ChildProfilePath(dir, child) + ".running"));
  // The parent's files are the parent's, with the child merged.
  const nlohmann::json own = ReadJson(path + ".summary.json");
  EXPECT_EQ(own.at("process").at("pid"), getpid());
  EXPECT_EQ(own.at("processes").size(), 1u);
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
  testing::RemoveProfileFiles(path);
  RemoveChildren(dir, child);
}

TEST(ForkTest, AChildStillRunningAtTheStopIsNamedWithWhereItsProfileWillBe) {
  PADDLE_PROF_SKIP_IF_ALLOCATOR_NOT_FORK_SAFE();
  int ready[2];
  int go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  EnableProfiler(ProfilerState::kCPU);
  const pid_t child = ForkRecordingChild(ready[1], go[0]);
  ASSERT_GE(child, 0);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  const Report report = StopProfiler(EventSortingKey::kTotal, "");
  const std::string profile = internal::ChildProfilePath(ChildrenDirOf(report), child);
  EXPECT_TRUE(HasWarning(report, "child " + std::to_string(child) +
                                     " is still running; its profile will be written to " +
                                     profile))
      << (report.warnings.empty() ? "no warning" : report.warnings[0]);
  EXPECT_TRUE(report.processes.empty());
  ASSERT_EQ(write(go[1], "x", 1), 1);
  int status = 0;
  ASSERT_TRUE(WaitOrKill(child, std::chrono::seconds(30), &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_TRUE(Exists(profile + ".summary.json"));  // where the warning said
  for (int fd : {ready[0], ready[1], go[0], go[1]}) close(fd);
  RemoveChildren(ChildrenDirOf(report), child);
}

TEST(ForkTest, AChildThatEndedWithoutItsProfileIsNamedAndItsMarkerGoes) {
  PADDLE_PROF_SKIP_IF_ALLOCATOR_NOT_FORK_SAFE();
  EnableProfiler(ProfilerState::kCPU);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);  // past the exit handlers, which would write its profile
  int status = 0;
  ASSERT_TRUE(WaitOrKill(child, std::chrono::seconds(30), &status));
  const Report report = StopProfiler(EventSortingKey::kTotal, "");
  EXPECT_TRUE(
      HasWarning(report, "child " + std::to_string(child) + " ended without writing its profile"))
      << (report.warnings.empty() ? "no warning" : report.warnings[0]);
  EXPECT_FALSE(Exists(ChildrenDirOf(report)));  // nothing left in it
}

// A child that runs another program is not profiled any more (programs started are
// not): the parent says nothing of it, and its marker goes.
TEST(ForkTest, AChildThatRanAnotherProgramIsLeftOut) {
  PADDLE_PROF_SKIP_IF_ALLOCATOR_NOT_FORK_SAFE();
  int input[2];
  ASSERT_EQ(pipe(input), 0);
  EnableProfiler(ProfilerState::kCPU);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    dup2(input[0], STDIN_FILENO);
    close(input[1]);
    execl("/bin/cat", "cat", static_cast<char*>(nullptr));  // until its input ends
    _exit(127);
  }
  close(input[0]);
  const std::string comm = "/proc/" + std::to_string(child) + "/comm";
  for (int i = 0; i < 3000; ++i) {  // at most 30 s for the exec
    std::string name;
    std::getline(std::ifstream(comm) >> std::ws, name);
    if (name == "cat") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const Report report = StopProfiler(EventSortingKey::kTotal, "");
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
  EXPECT_FALSE(Exists(ChildrenDirOf(report)));
  close(input[1]);
  int status = 0;
  ASSERT_TRUE(WaitOrKill(child, std::chrono::seconds(30), &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(ForkTest, WithoutFollowChildrenAChildWritesNothing) {
  PADDLE_PROF_SKIP_IF_ALLOCATOR_NOT_FORK_SAFE();
  FLAGS_paddle_prof_follow_children = false;
  EnableProfiler(ProfilerState::kCPU);
  const pid_t child = ForkRecordingChild();
  ASSERT_GE(child, 0);
  int status = 0;
  ASSERT_TRUE(WaitOrKill(child, std::chrono::seconds(30), &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  const Report report = StopProfiler(EventSortingKey::kTotal, "");
  EXPECT_TRUE(report.processes.empty());
  EXPECT_TRUE(report.events.empty());
  EXPECT_FALSE(Exists(ChildrenDirOf(report)));
  FLAGS_paddle_prof_follow_children = true;
}

}  // namespace
}  // namespace paddle_prof
