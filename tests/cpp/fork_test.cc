// fork() in a multi-threaded program: the child must not inherit a library lock that
// another thread held at the fork, and keeps recording, tracking and reporting.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::Row;

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
}

}  // namespace
}  // namespace paddle_prof
