#include "termination_signals.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <system_error>
#include <thread>

namespace paddle_prof::internal {

namespace {

constexpr int kMaxSignals = 8;

struct Caught {
  int signal;
  struct sigaction previous;  // the disposition found at install
};

// Written before the handler is installed, read-only after.
Caught g_caught[kMaxSignals];
int g_caught_count = 0;
pid_t g_owner = 0;  // the process whose watcher reads the pipe
int g_wake_read = -1;
int g_wake_write = -1;
void (*g_report)() = nullptr;

std::atomic<bool> g_installed{false};
std::atomic<bool> g_ending{false};  // a signal was caught: the watcher reports

void OnSignal(int signal);

bool IsOurs(int signal) {
  struct sigaction now;
  return sigaction(signal, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) == 0 &&
         now.sa_handler == OnSignal;
}

// Async-signal-safe: sigaction only. A disposition the program set since is kept.
void PutBack(int signal) {
  for (int i = 0; i < g_caught_count; ++i) {
    if (g_caught[i].signal == signal && IsOurs(signal)) {
      sigaction(signal, &g_caught[i].previous, nullptr);
    }
  }
}

void PutBackAll() {
  for (int i = 0; i < g_caught_count; ++i) PutBack(g_caught[i].signal);
}

// Only async-signal-safe calls. A signal raised here is blocked until the handler
// returns (the handler's mask holds every caught signal), then acts as disposed.
void OnSignal(int signal) {
  const int saved_errno = errno;
  if (getpid() != g_owner) {  // a child that has not put the dispositions back yet
    PutBack(signal);
    raise(signal);
  } else if (g_ending.exchange(true)) {  // a second signal while reporting: end now
    struct sigaction default_action = {};
    default_action.sa_handler = SIG_DFL;
    sigaction(signal, &default_action, nullptr);
    raise(signal);
  } else {
    const auto byte = static_cast<unsigned char>(signal);
    [[maybe_unused]] const ssize_t written = write(g_wake_write, &byte, 1);
  }
  errno = saved_errno;
}

void Watch() {
  pthread_setname_np(pthread_self(), "paddle_prof_sig");
  unsigned char signal = 0;
  while (read(g_wake_read, &signal, 1) != 1) {
    if (errno != EINTR) {
      PutBackAll();  // nobody would hear the handler: the signals act as before
      return;
    }
  }
  g_report();
  PutBackAll();
  // To the process: a thread that does not block it takes it, as it would have.
  kill(getpid(), signal);
}

}  // namespace

bool CatchTerminationSignals(std::initializer_list<int> signals, void (*report)()) {
  if (g_installed.exchange(true)) return true;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0 || fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) {
    LOG(ERROR) << "paddle_prof: cannot catch the signals that end the program (pipe: "
               << std::strerror(errno) << "): they will end the profile without a report";
    return false;
  }
  g_wake_read = fds[0];
  g_wake_write = fds[1];
  g_owner = getpid();
  g_report = report;

  sigset_t caught;
  sigemptyset(&caught);
  for (int signal : signals) sigaddset(&caught, signal);
  sigset_t before;
  pthread_sigmask(SIG_BLOCK, &caught, &before);  // the watcher inherits the mask
  try {
    std::thread(Watch).detach();
  } catch (const std::system_error& e) {
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    LOG(ERROR) << "paddle_prof: cannot catch the signals that end the program (no thread: "
               << e.what() << "): they will end the profile without a report";
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);

  for (int signal : signals) {
    if (g_caught_count == kMaxSignals) break;
    struct sigaction previous;
    if (sigaction(signal, nullptr, &previous) != 0) continue;
    if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler == SIG_IGN) continue;
    g_caught[g_caught_count++] = {signal, previous};
    struct sigaction ours = {};
    ours.sa_handler = OnSignal;
    ours.sa_mask = caught;
    ours.sa_flags = SA_RESTART;  // the program's system calls go on as if nothing came
    sigaction(signal, &ours, nullptr);
  }
  return true;
}

void ReleaseTerminationSignalsInChild() {
  if (g_wake_read < 0) return;
  PutBackAll();
  close(g_wake_read);
  close(g_wake_write);
  g_wake_read = g_wake_write = -1;
}

}  // namespace paddle_prof::internal
