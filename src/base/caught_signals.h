// The signals the profiler acts on, caught without doing anything unsafe in a handler:
// the handler only writes the signal's number to a pipe, and one watcher thread per
// process reads it and does the work.
//   - The signals that end a program (SIGTERM, SIGINT, SIGHUP), so that a profile can
//     still be reported before they end it: the watcher reports, puts back the
//     dispositions found at install and raises the signal again, which then ends the
//     program as it would have (or reaches the handler the program had installed). A
//     second one while the report is written ends the program at once.
//   - The snapshot signal (FLAGS_paddle_prof_snapshot_signal, e.g. SIGUSR1): the watcher
//     writes a snapshot each time it comes, and the program goes on.
// A signal ignored at install stays ignored.
#ifndef PADDLE_PROF_SRC_CAUGHT_SIGNALS_H_
#define PADDLE_PROF_SRC_CAUGHT_SIGNALS_H_

#include <initializer_list>
#include <string>

namespace paddle_prof::internal {

// Installs the handler for `signals`, which calls `report` on the watcher on the first
// of them. Once per process: later calls do nothing. False, with an error logged, when
// the watcher could not be started (the signals are then left alone).
bool CatchTerminationSignals(std::initializer_list<int> signals, void (*report)());

// Installs the handler for `signal`, which calls `snapshot` on the watcher each time.
// Once per process, likewise.
bool CatchSnapshotSignal(int signal, void (*snapshot)());

// The signal that `name` names: "USR1", "SIGUSR1" or its number; 0 for none.
int SignalNamed(const std::string& name);

// In a forked child, which has no watcher: the dispositions found at install come
// back, so that the child's signals act on the child as they would have, and the child
// may install again.
void ReleaseCaughtSignalsInChild();
// The install lock, held across fork() (before the profiler's), so the child finds it free.
void LockCaughtSignalsForFork();
void UnlockCaughtSignalsAfterFork();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CAUGHT_SIGNALS_H_
