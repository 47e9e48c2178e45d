// A program profiled by FLAGS_paddle_prof_state alone, for implicit_profiler_test, which
// ends it in several ways. Each mode records 3 "outer" calls of 10 "leaf" calls first.
//   wait        prints "ready", then sleeps until a signal ends it
//   fork        forks; the parent returns from main at once, the child once the parent
//               has exited, after recording 5 "child_op" calls
//   fork-raise  forks; the child raises SIGTERM on itself; the parent prints how the
//               child ended, then does as `wait`
//   exec        starts this program again as `exec-child`, with the same environment,
//               and returns from main at once
//   exec-child PID  once PID (its parent) has exited, records 5 "child_op" calls and returns
// With PROGRAM_HANDLER=1 in the environment, a SIGTERM handler is installed before any
// library is initialised (so before the profiler starts); it prints "program handler"
// and ends the program by SIGTERM.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "paddle_prof/record_event.h"

namespace {

void ProgramHandler(int signal) {
  constexpr char kSaid[] = "program handler\n";
  [[maybe_unused]] const ssize_t written = write(STDOUT_FILENO, kSaid, sizeof(kSaid) - 1);
  std::signal(signal, SIG_DFL);
  raise(signal);
}

// Runs before the initialisers of the shared libraries, the profiler's among them.
void InstallProgramHandler(int /*argc*/, char** /*argv*/, char** envp) {
  for (char** e = envp; *e != nullptr; ++e) {
    if (std::strcmp(*e, "PROGRAM_HANDLER=1") == 0) std::signal(SIGTERM, ProgramHandler);
  }
}

using PreinitFunction = void (*)(int, char**, char**);
__attribute__((section(".preinit_array"), used)) const PreinitFunction kInstallProgramHandler =
    InstallProgramHandler;

void Say(const char* line) {
  std::fputs(line, stdout);
  std::fflush(stdout);
}

[[noreturn]] void WaitForSignal() {
  Say("ready\n");
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// A child's work, done last: what it would write at exit would be the last word. Waits
// (at most 30 s) for `parent` to exit, then records 5 "child_op" calls.
int RecordOnceParentExited(pid_t parent) {
  for (int i = 0; i < 3000 && getppid() == parent; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int i = 0; i < 5; ++i) {
    PADDLE_PROF_RECORD_EVENT("child_op");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  for (int i = 0; i < 3; ++i) {
    PADDLE_PROF_RECORD_EVENT("outer");
    for (int j = 0; j < 10; ++j) {
      PADDLE_PROF_RECORD_EVENT("leaf");
    }
  }
  if (mode == "wait") WaitForSignal();
  if (mode == "fork") {
    const pid_t parent = getpid();
    if (fork() != 0) return 0;
    return RecordOnceParentExited(parent);
  }
  if (mode == "fork-raise") {
    const pid_t child = fork();
    if (child == 0) {
      raise(SIGTERM);
      return 0;  // the signal was swallowed
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("child %s %d\n", WIFSIGNALED(status) ? "killed by signal" : "exited with",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    WaitForSignal();
  }
  if (mode == "exec") {
    // The parent's pid goes along: by the time the child runs, the parent may be gone.
    const std::string parent = std::to_string(getpid());
    if (fork() == 0) {
      execl("/proc/self/exe", argv[0], "exec-child", parent.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    return 0;
  }
  if (mode == "exec-child" && argc > 2) return RecordOnceParentExited(std::stoi(argv[2]));
  std::fprintf(stderr, "usage: %s wait|fork|fork-raise|exec|exec-child\n", argv[0]);
  return 2;
}
