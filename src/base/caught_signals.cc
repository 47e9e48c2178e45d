#include "caught_signals.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

namespace paddle_prof::internal {

namespace {

constexpr int kMaxSignals = 8;

struct Caught {
  int signal;
  struct sigaction previous;  // the disposition found at install
};

// Written under g_install_mu before each handler is installed, read-only after.
Caught g_caught[kMaxSignals];
std::atomic<int> g_caught_count{0};
pid_t g_owner = 0;  // the process whose watcher reads the pipe
int g_wake_read = -1;
int g_wake_write = -1;
// Atomics: the watcher may already run when a later install sets one.
std::atomic<void (*)()> g_report{nullptr};
std::atomic<int> g_snapshot_signal{0};
std::atomic<void (*)()> g_snapshot{nullptr};

std::mutex g_install_mu;
bool g_watching = false;  // under g_install_mu
bool g_termination_installed = false;
std::atomic<bool> g_ending{false};  // a signal that ends the program was caught

void OnSignal(int signal);

bool IsOurs(int signal) {
  struct sigaction now;
  return sigaction(signal, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) == 0 &&
         now.sa_handler == OnSignal;
}

// Async-signal-safe: sigaction only. A disposition the program set since is kept.
void PutBack(int signal) {
  const int count = g_caught_count.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    if (g_caught[i].signal == signal && IsOurs(signal)) {
      sigaction(signal, &g_caught[i].previous, nullptr);
    }
  }
}

void PutBackAll() {
  const int count = g_caught_count.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) PutBack(g_caught[i].signal);
}

void Wake(int signal) {
  const auto byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] const ssize_t written = write(g_wake_write, &byte, 1);
}

// Only async-signal-safe calls. A signal raised here is blocked until the handler
// returns (the handler's mask holds every signal that ends the program), then acts as
// disposed.
void OnSignal(int signal) {
  const int saved_errno = errno;
  if (getpid() != g_owner) {  // a child that has not put the dispositions back yet
    PutBack(signal);
    raise(signal);
  } else if (signal == g_snapshot_signal.load(std::memory_order_relaxed)) {
    Wake(signal);  // a full pipe drops it: snapshots already wait to be written
  } else if (g_ending.exchange(true)) {  // a second signal while reporting: end now
    struct sigaction default_action = {};
    default_action.sa_handler = SIG_DFL;
    sigaction(signal, &default_action, nullptr);
    raise(signal);
  } else {
    Wake(signal);
  }
  errno = saved_errno;
}

void Watch() {
  pthread_setname_np(pthread_self(), "paddle_prof_sig");
  for (;;) {
    unsigned char signal = 0;
    if (read(g_wake_read, &signal, 1) != 1) {
      if (errno == EINTR) continue;
      PutBackAll();  // nobody would hear the handler: the signals act as before
      return;
    }
    if (signal == g_snapshot_signal.load(std::memory_order_acquire)) {
      g_snapshot.load(std::memory_order_acquire)();
      continue;
    }
    g_report.load(std::memory_order_acquire)();
    PutBackAll();
    // To the process: a thread that does not block it takes it, as it would have.
    kill(getpid(), signal);
    return;
  }
}

// The pipe and the watcher, once per process. Caller holds g_install_mu.
bool StartWatcher(const char* what) {
  if (g_watching) return true;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0 || fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) {
    LOG(ERROR) << "paddle_prof: cannot catch " << what << " (pipe: " << std::strerror(errno) << ")";
    return false;
  }
  g_wake_read = fds[0];
  g_wake_write = fds[1];
  g_owner = getpid();
  // The watcher blocks the signals that end the program, which it raises again.
  sigset_t ending;
  sigemptyset(&ending);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&ending, signal);
  sigset_t before;
  pthread_sigmask(SIG_BLOCK, &ending, &before);  // the watcher inherits the mask
  try {
    std::thread(Watch).detach();
  } catch (const std::system_error& e) {
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    LOG(ERROR) << "paddle_prof: cannot catch " << what << " (no thread: " << e.what() << ")";
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  g_watching = true;
  return true;
}

// Caller holds g_install_mu.
void Install(int signal, const sigset_t& mask) {
  const int count = g_caught_count.load(std::memory_order_relaxed);
  if (count == kMaxSignals) return;
  struct sigaction previous;
  if (sigaction(signal, nullptr, &previous) != 0) return;
  if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler == SIG_IGN) return;
  g_caught[count] = {signal, previous};
  g_caught_count.store(count + 1, std::memory_order_release);
  struct sigaction ours = {};
  ours.sa_handler = OnSignal;
  ours.sa_mask = mask;
  ours.sa_flags = SA_RESTART;  // the program's system calls go on as if nothing came
  sigaction(signal, &ours, nullptr);
}

}  // namespace

bool CatchTerminationSignals(std::initializer_list<int> signals, void (*report)()) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_termination_installed) return true;
  g_termination_installed = true;
  if (!StartWatcher("the signals that end the program: they will end the profile without "
                    "a report")) {
    return false;
  }
  g_report.store(report, std::memory_order_release);
  sigset_t mask;
  sigemptyset(&mask);
  for (int signal : signals) sigaddset(&mask, signal);
  for (int signal : signals) Install(signal, mask);
  return true;
}

bool CatchSnapshotSignal(int signal, void (*snapshot)()) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_snapshot_signal.load(std::memory_order_relaxed) != 0) return true;
  if (!StartWatcher("the snapshot signal: it will act as it did")) return false;
  g_snapshot.store(snapshot, std::memory_order_release);
  g_snapshot_signal.store(signal, std::memory_order_release);
  sigset_t mask;
  sigemptyset(&mask);
  Install(signal, mask);
  return true;
}

int SignalNamed(const std::string& name) {
  std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  if (n == "USR1") return SIGUSR1;
  if (n == "USR2") return SIGUSR2;
  char* end = nullptr;
  const long number = std::strtol(n.c_str(), &end, 10);
  if (!n.empty() && *end == '\0' && number > 0 && number < NSIG) return static_cast<int>(number);
  return 0;
}

void ReleaseCaughtSignalsInChild() {
  if (g_wake_read < 0) return;
  PutBackAll();
  close(g_wake_read);
  close(g_wake_write);
  g_wake_read = g_wake_write = -1;
  // Nothing is caught in the child now: a profiler it opens installs anew.
  g_caught_count.store(0, std::memory_order_release);
  g_snapshot_signal.store(0, std::memory_order_release);
  g_watching = false;
  g_termination_installed = false;
  g_ending.store(false);
}

void LockCaughtSignalsForFork() { g_install_mu.lock(); }
void UnlockCaughtSignalsAfterFork() { g_install_mu.unlock(); }

}  // namespace paddle_prof::internal
