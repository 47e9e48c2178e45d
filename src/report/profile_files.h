// The files a stopped window writes at its profile path: the Chrome trace, the summary
// JSON beside it (<path>.summary.json) and the HTML report (<path>.html; not for a
// followed child, whose files only its parent reads), each whole or not at all.
#ifndef PADDLE_PROF_SRC_PROFILE_FILES_H_
#define PADDLE_PROF_SRC_PROFILE_FILES_H_

#include <string>

#include "collection.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// A file that cannot be written is a warning of `report` (the summary carries the
// trace's, the page the trace's and the summary's), and a line on stderr.
void WriteProfileFiles(const Collection& c, const std::string& path, Report* report);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PROFILE_FILES_H_
