// The whole-program profile of FLAGS_paddle_prof_state against the ways a program ends:
// the signals that end it, and forks. Each test runs implicit_lifecycle_main (see
// there for its modes) in a process of its own and reads its stdout and files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

extern char** environ;

namespace paddle_prof {
namespace {

using testing::ReadJson;
using testing::TempPath;

struct Ended {
  pid_t pid = 0;
  std::string out;  // stdout, until every process holding it (a forked child too) ended
  int status = 0;   // as waitpid gives it
};

struct Options {
  std::vector<int> signals;  // sent one after the other once the program says "ready"
  std::vector<std::string> env;
  int ignored = 0;  // a signal the program starts with ignored, as under nohup
};

// Runs the program in `mode` under the implicit profiler, writing to `path`. Bounded:
// a program still running after 60 s is killed and the test fails. The last signal is
// sent once more if the program has not ended 10 s after it: under ThreadSanitizer,
// whose runtime defers signals to the next intercepted call, about one delivery in a
// few hundred never reached the program's handler (never seen without it). A program
// that swallows the signal still fails; one whose report took 10 s would end at once.
Ended RunMain(const std::string& mode, const std::string& path, const Options& options = {}) {
  std::vector<std::string> env = {"FLAGS_paddle_prof_state=CPU",
                                  "FLAGS_paddle_prof_sorted_key=calls",
                                  "FLAGS_paddle_prof_path=" + path};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "FLAGS_paddle_prof_", 18) != 0) env.emplace_back(*e);
  }
  env.insert(env.end(), options.env.begin(), options.env.end());
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string program = IMPLICIT_LIFECYCLE_MAIN;
  std::string mode_arg = mode;
  char* argv[] = {program.data(), mode_arg.data(), nullptr};

  int out[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  Ended ended;
  ended.pid = fork();
  if (ended.pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    // As a shell would leave them to a job of its own (ctest's may ignore SIGINT, say).
    for (int signal : options.signals) std::signal(signal, SIG_DFL);
    if (options.ignored != 0) std::signal(options.ignored, SIG_IGN);
    execve(argv[0], argv, envp.data());
    _exit(127);
  }
  close(out[1]);
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  Clock::time_point resend = Clock::time_point::max();
  size_t sent = 0;
  for (;;) {
    if (Clock::now() >= resend) {
      kill(ended.pid, options.signals.back());
      resend = Clock::time_point::max();
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::min(deadline, resend) - Clock::now());
    pollfd p = {out[0], POLLIN, 0};
    const int polled = left.count() > 0 ? poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (polled < 0 && errno == EINTR) continue;
    if (polled == 0 && Clock::now() < deadline) continue;  // time to send it again
    if (polled <= 0) {
      ADD_FAILURE() << mode << ": still running after 60 s; output so far:\n" << ended.out;
      kill(ended.pid, SIGKILL);
      break;
    }
    char buf[4096];
    const ssize_t n = read(out[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    ended.out.append(buf, static_cast<size_t>(n));
    if (sent < options.signals.size() && ended.out.find("ready\n") != std::string::npos) {
      for (; sent < options.signals.size(); ++sent) {
        // Time for the one before to be ignored or acted on, if it were (never asserted).
        if (sent > 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
        kill(ended.pid, options.signals[sent]);
      }
      resend = Clock::now() + std::chrono::seconds(10);
    }
  }
  close(out[0]);
  waitpid(ended.pid, &ended.status, 0);
  return ended;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Calls per event name in the summary at `path`.summary.json.
std::map<std::string, int64_t> SummaryCalls(const std::string& path) {
  std::map<std::string, int64_t> calls;
  const nlohmann::json summary = ReadJson(path + ".summary.json");
  for (const auto& e : summary.at("events")) {
    calls[e.at("name").get<std::string>()] += e.at("calls").get<int64_t>();
  }
  return calls;
}

// Complete events per name in the trace at `path`, and the pids they are under.
struct TraceCalls {
  std::map<std::string, int> calls;
  std::vector<int> pids;
};

TraceCalls ReadTraceCalls(const std::string& path) {
  TraceCalls t;
  const nlohmann::json trace = ReadJson(path);
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++t.calls[e.at("name").get<std::string>()];
    const int pid = e.at("pid").get<int>();
    if (t.pids.empty() || t.pids.back() != pid) t.pids.push_back(pid);
  }
  return t;
}

const std::map<std::string, int64_t> kMainCalls = {{"outer", 3}, {"leaf", 30}};

// The report of the main program's calls: printed once, sorted by calls, and the same
// in both files, which are the process `pid`'s.
void ExpectMainReport(const Ended& ended, const std::string& path) {
  EXPECT_EQ(Count(ended.out, "Profiling Report"), 1) << ended.out;
  EXPECT_TRUE(std::regex_search(ended.out, std::regex("\nleaf +30 [^\n]*\nouter +3 ")))
      << ended.out;
  EXPECT_EQ(SummaryCalls(path), kMainCalls);
  const TraceCalls trace = ReadTraceCalls(path);
  EXPECT_EQ(trace.calls, (std::map<std::string, int>{{"outer", 3}, {"leaf", 30}}));
  EXPECT_EQ(trace.pids, std::vector<int>{ended.pid});
}

bool KilledBy(const Ended& ended, int signal) {
  return WIFSIGNALED(ended.status) && WTERMSIG(ended.status) == signal;
}

class SignalTest : public ::testing::TestWithParam<int> {};

TEST_P(SignalTest, WritesTheReportThenTheSignalEndsTheProgram) {
  const int signal = GetParam();
  const std::string path = TempPath("signal" + std::to_string(signal));
  const Ended ended = RunMain("wait", path, {{signal}});
  EXPECT_TRUE(KilledBy(ended, signal)) << "status " << ended.status;
  ExpectMainReport(ended, path);
}

INSTANTIATE_TEST_SUITE_P(EndingSignals, SignalTest, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(sigabbrev_np(info.param));
                         });

TEST(ImplicitProfilerTest, AHandlerTheProgramInstalledBeforeStillRunsAfterTheReport) {
  const std::string path = TempPath("program_handler");
  const Ended ended = RunMain("wait", path, {{SIGTERM}, {"PROGRAM_HANDLER=1"}});
  EXPECT_TRUE(KilledBy(ended, SIGTERM)) << "status " << ended.status;
  ExpectMainReport(ended, path);
  EXPECT_EQ(Count(ended.out, "program handler\n"), 1) << ended.out;
  EXPECT_GT(ended.out.find("program handler\n"), ended.out.find("Profiling Report"));
}

TEST(ImplicitProfilerTest, AnIgnoredSignalStaysIgnored) {
  const std::string path = TempPath("ignored");
  const Ended ended = RunMain("wait", path, {{SIGHUP, SIGTERM}, {}, SIGHUP});
  EXPECT_TRUE(KilledBy(ended, SIGTERM)) << "status " << ended.status;
  ExpectMainReport(ended, path);
}

// A forked child ("fork"), and a program it starts, which inherits the flags through the
// environment ("exec"), neither report nor write the parent's files, even exiting last.
class ChildTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ChildTest, NeitherReportsNorWritesTheParentsFiles) {
  const std::string path = TempPath(std::string("child_") + GetParam());
  const Ended ended = RunMain(GetParam(), path);
  EXPECT_TRUE(WIFEXITED(ended.status) && WEXITSTATUS(ended.status) == 0)
      << "status " << ended.status;
  ExpectMainReport(ended, path);
}

INSTANTIATE_TEST_SUITE_P(Children, ChildTest, ::testing::Values("fork", "exec"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST(ImplicitProfilerTest, AForkedChildsSignalsActOnTheChild) {
  const std::string path = TempPath("fork_raise");
  const Ended ended = RunMain("fork-raise", path, {{SIGTERM}});
  EXPECT_NE(ended.out.find("child killed by signal " + std::to_string(SIGTERM) + "\n"),
            std::string::npos)
      << ended.out;
  EXPECT_TRUE(KilledBy(ended, SIGTERM)) << "status " << ended.status;
  ExpectMainReport(ended, path);
}

}  // namespace
}  // namespace paddle_prof
