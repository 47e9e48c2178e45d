// The profiles of a window's child processes (follow_children): where they are written,
// the marker a child leaves while it runs, and what the parent reads back when its
// window stops. A child learns the directory from its parent (inherited state after
// fork, the pickled process object under spawn), never from a file they share.
#ifndef PADDLE_PROF_SRC_CHILD_PROFILES_H_
#define PADDLE_PROF_SRC_CHILD_PROFILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// The window a child process reports to.
struct ParentWindow {
  int64_t pid = 0;
  int64_t start_unix_ns = 0;  // when the parent's EnableProfiler() opened it (CLOCK_REALTIME)
  std::string children_dir;   // where the parent collects
};

// The children directory of a window: <profile path, fields filled>.children when its
// profile path is known, else <$TMPDIR or /tmp>/paddle_prof.<pid>.<start unix ns>.children
// (`start_unix_ns`: as in ParentWindow).
std::string ChildrenDir(const std::string& profile_path, const ProcessInfo& process,
                        int64_t start_unix_ns);
// Where child `pid` writes its profile (the trace; the summary beside it).
std::string ChildProfilePath(const std::string& children_dir, int64_t pid);

// Makes the directory and the marker <dir>/<pid>.json.running, which names the parent
// and its window, and returns a descriptor that holds it locked (flock) while this
// process profiles itself: the parent tells a child still profiling from one that ended
// without its profile, or that runs another program (the descriptor closes on exec).
// -1, with the reason in `error`, when either cannot be made.
int WriteChildMarker(const ParentWindow& parent, int64_t pid, std::string* error);
// Removes the marker of the child whose profile path is `profile_path`, and closes its
// descriptor (-1: none).
void RemoveChildMarker(const std::string& profile_path, int marker);

struct ArrivedChildren {
  std::vector<Report> reports;  // by pid
  std::vector<std::string> warnings;
};

// The summaries children of process `parent_pid` wrote in `children_dir` for a window
// that started at `start_unix_ns` or later; a file that cannot be read, and each child
// that has not written its profile (still running, or ended without it), is a warning
// (past 10 of a kind, one more says how many others). The markers of children that
// ended without their profile, or run another program, go, and the directory with them
// if nothing is left there.
// `launched`: children the parent started as fresh programs (spawn, forkserver), which
// write their marker only once they run: one with neither marker nor summary is named
// too.
ArrivedChildren CollectArrivedChildren(const std::string& children_dir, int64_t parent_pid,
                                       int64_t start_unix_ns,
                                       const std::vector<int64_t>& launched = {});

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CHILD_PROFILES_H_
