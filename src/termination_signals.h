// The signals that end a program (SIGTERM, SIGINT, SIGHUP), caught so that a profile
// can still be reported before they end it. The handler only writes the signal's number
// to a pipe; a watcher thread, with the signals blocked in it, reads it and does the
// work: it reports, puts back the dispositions found at install and raises the signal
// again, which then ends the program as it would have (or reaches the handler the
// program had installed). A signal ignored at install stays ignored; a second signal
// while the report is written ends the program at once.
#ifndef PADDLE_PROF_SRC_TERMINATION_SIGNALS_H_
#define PADDLE_PROF_SRC_TERMINATION_SIGNALS_H_

#include <initializer_list>

namespace paddle_prof::internal {

// Installs the handler for `signals` and starts the watcher, which calls `report` on
// the first of them. Once per process: later calls do nothing. False, with an error
// logged, when the watcher could not be started (the signals are then left alone).
bool CatchTerminationSignals(std::initializer_list<int> signals, void (*report)());

// In a forked child, which has no watcher: the dispositions found at install come
// back, so that the child's signals act on the child as they would have.
void ReleaseTerminationSignalsInChild();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_TERMINATION_SIGNALS_H_
