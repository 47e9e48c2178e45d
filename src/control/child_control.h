// The children a window follows (child_profiles.h): whether processes started in the
// window profile themselves and where they write, a child's own quiet profile, and the
// window control's steps for them (child_control.cc).
#ifndef PADDLE_PROF_SRC_CHILD_CONTROL_H_
#define PADDLE_PROF_SRC_CHILD_CONTROL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "child_profiles.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

struct Control;

// The window control's part (window_control.h). Settled once per EnableProfiler(),
// when first needed, so that every fork and the stop agree. Children started since
// EnableProfiler() are merged, resets or not: a reset cannot reach them. In such a
// child, own_path is where its own window's files go, and nowhere else.
struct FollowedChildren {
  bool follow = true;
  std::string dir;
  std::string own_path;
  int marker = -1;                // holds the child's marker locked while it profiles
  std::vector<int64_t> launched;  // spawned since EnableProfiler() (NoteChildLaunched)
};

// The open window's children directory, beside the profile path known by now.
const std::string& ChildrenDirLocked(Control& control);
// Makes the window about to open the quiet profile of a child of `parent`.
void BecomeChildLocked(Control& control, const ParentWindow& parent);
// The children of the window that have written their profiles, merged into `report`;
// those that have not are named in its warnings.
void MergeArrivedChildren(const std::string& children_dir, int64_t start_unix_ns,
                          const std::vector<int64_t>& launched, bool per_process, Report* report);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CHILD_CONTROL_H_
