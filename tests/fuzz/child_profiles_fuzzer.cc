// A parent reading what its children left in the children directory (child_profiles.h):
// their summaries and markers, here files named by each part's first line (digits and
// dots only; fuzz_files.h splits the input). Whatever they hold, the parent gets the
// children's reports or warnings, never an error, and merges the reports into its own.
#include <sys/stat.h>

#include "child_profiles.h"
#include "fuzz_files.h"
#include "report_merge.h"
#include "summary_reader.h"

using namespace paddle_prof;

namespace {

// The window make_seeds's children report to.
constexpr int64_t kParentPid = 7;
constexpr int64_t kWindowStartNs = 1000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = fuzz::ScratchDir() + "/children";
  mkdir(dir.c_str(), 0755);  // collecting removes it when it is left empty
  for (const std::string_view file : fuzz::SplitFiles(data, size)) {
    const size_t newline = file.find('\n');
    if (newline == std::string_view::npos) continue;
    std::string name(file.substr(0, std::min<size_t>(newline, 40)));
    // Names as the children directory's ("123.json.running"), none that leave it.
    if (name.find_first_not_of("0123456789.abcdefghijklmnopqrstuvwxyz") != std::string::npos ||
        name.find_first_not_of('.') == std::string::npos) {
      continue;
    }
    fuzz::WriteFile(dir + "/" + name, file.substr(newline + 1));
  }
  const internal::ArrivedChildren arrived =
      internal::CollectArrivedChildren(dir, kParentPid, kWindowStartNs);
  Report parent;
  parent.process.pid = kParentPid;
  parent.clock.unix_ns = kWindowStartNs;
  internal::MergeChildren(&parent, arrived.reports, size % 2 == 0);
  parent.Table(true);
  internal::ReportFromJson(parent.ToJson(), "merged parent");
  fuzz::EmptyDir(dir);
  rmdir(dir.c_str());
  return 0;
}
