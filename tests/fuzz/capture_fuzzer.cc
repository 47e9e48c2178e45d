// `recover` of a capture directory (capture_reader.h) left by a process that died
// mid-write: the input is the capture's files (fuzz_files.h), in the order of kFiles.
// A recovery either reports, writing its trace and a summary that reads back, or fails
// with an error that names the directory.
#include <stdexcept>

#include "capture_files.h"
#include "capture_reader.h"
#include "fuzz_files.h"
#include "summary_reader.h"

namespace {

using namespace paddle_prof;

// Window 1, recorders 0 and 1 (make_seeds writes its capture so).
constexpr const char* kFiles[] = {"meta",       "steps",    "maps",       "names",
                                  "w1.t0.info", "w1.t0.c0", "w1.t1.info", "w1.t1.c0"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = fuzz::ScratchDir();
  const std::vector<std::string_view> files = fuzz::SplitFiles(data, size);
  for (size_t i = 0; i < files.size() && i < std::size(kFiles); ++i) {
    fuzz::WriteFile(internal::CaptureFile(dir, kFiles[i]), files[i]);
  }
  internal::ReportOptions options;
  options.profile_path = dir + "/recovered.json";
  try {
    const Report report = internal::RecoverCapture(dir, options);
    report.Table(true);
    internal::LoadSummary(options.profile_path + ".summary.json");
  } catch (const std::runtime_error& e) {
    fuzz::ExpectNamed(e.what(), dir);
  } catch (const std::invalid_argument& e) {
    fuzz::ExpectNamed(e.what(), dir);
  }
  fuzz::EmptyDir(dir);
  return 0;
}
