#include "child_profiles.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "process_identity.h"
#include "profile_files.h"
#include "summary_reader.h"

namespace paddle_prof::internal {

namespace {

constexpr std::string_view kChildProfileSuffix = ".json";  // a child's profile path: <pid>.json
constexpr char kMarkerSuffix[] = ".json.running";

// `dir` and the directories above it, as mkdir -p.
bool MakeDirs(const std::string& dir, std::string* error) {
  for (size_t at = dir.find('/', 1);; at = dir.find('/', at + 1)) {
    const std::string part = dir.substr(0, at);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = part + ": " + std::strerror(errno);
      return false;
    }
    if (at == std::string::npos) return true;
  }
}

// The pid that a name of the children directory ending in `suffix` starts with; 0 for
// any other name.
int64_t PidNamed(const std::string& name, std::string_view suffix) {
  const size_t n = suffix.size();
  if (name.size() <= n || name.size() > n + 18 || name.compare(name.size() - n, n, suffix) != 0) {
    return 0;
  }
  const std::string digits = name.substr(0, name.size() - n);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoll(digits);
}

struct Marker {
  int64_t parent_pid = 0;
  int64_t parent_start_unix_ns = 0;
};

std::optional<Marker> ReadMarker(const std::string& path) {
  std::ifstream in(path);
  Marker m;
  std::string pid_key, start_key;
  if (!(in >> pid_key >> m.parent_pid >> start_key >> m.parent_start_unix_ns) ||
      pid_key != "parent_pid" || start_key != "parent_start_unix_ns") {
    return std::nullopt;
  }
  return m;
}

// Whether process `pid` exists and has not ended (a zombie has).
bool StillRunning(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t name_end = stat.rfind(')');  // the command's name may hold anything
  if (name_end == std::string::npos || name_end + 2 >= stat.size()) return false;
  const char state = stat[name_end + 2];
  return state != 'Z' && state != 'X';
}

// Whether the child that made the marker at `path` still holds it: it profiles itself.
bool StillProfiling(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);
  return held;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string ChildrenDir(const std::string& profile_path, const ProcessInfo& process,
                        int64_t start_unix_ns) {
  if (!profile_path.empty()) return ExpandPathFields(profile_path, process) + ".children";
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  return base + "/paddle_prof." + std::to_string(process.pid) + "." +
         std::to_string(start_unix_ns) + ".children";
}

std::string ChildProfilePath(const std::string& children_dir, int64_t pid) {
  return children_dir + "/" + std::to_string(pid) + std::string(kChildProfileSuffix);
}

int WriteChildMarker(const ParentWindow& parent, int64_t pid, std::string* error) {
  if (!MakeDirs(parent.children_dir, error)) return -1;
  const std::string path = ChildProfilePath(parent.children_dir, pid) + ".running";
  const std::string temp = path + ".tmp";
  const std::string text = "parent_pid " + std::to_string(parent.pid) + "\nparent_start_unix_ns " +
                           std::to_string(parent.start_unix_ns) + "\n";
  // Locked before it is in place: the parent never finds it unlocked while this profiles.
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || flock(fd, LOCK_EX) != 0 ||
      write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      rename(temp.c_str(), path.c_str()) != 0) {
    *error = path + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    unlink(temp.c_str());
    return -1;
  }
  return fd;
}

void RemoveChildMarker(const std::string& profile_path, int marker) {
  unlink((profile_path + ".running").c_str());
  if (marker >= 0) close(marker);
}

ArrivedChildren CollectArrivedChildren(const std::string& children_dir, int64_t parent_pid,
                                       int64_t start_unix_ns,
                                       const std::vector<int64_t>& launched) {
  ArrivedChildren arrived;
  std::vector<std::string> names;
  if (DIR* dir = opendir(children_dir.c_str())) {
    while (const dirent* entry = readdir(dir)) names.emplace_back(entry->d_name);
    closedir(dir);
  }
  std::set<int64_t> written;  // children whose summary was read
  // Summaries of other processes' windows may share the directory: only this window's
  // children count.
  auto load = [&](int64_t pid, const std::string& path) {
    try {
      Report report = LoadSummary(path);
      if (report.process.parent_pid != parent_pid || report.clock.unix_ns < start_unix_ns) return;
      written.insert(pid);
      arrived.reports.push_back(std::move(report));
    } catch (const std::exception& e) {
      written.insert(pid);
      arrived.warnings.push_back(std::string("a child's profile was left out: ") + e.what());
    }
  };
  const std::string summary_suffix = std::string(kChildProfileSuffix) + kSummarySuffix;
  for (const std::string& name : names) {
    if (const int64_t pid = PidNamed(name, summary_suffix); pid != 0) {
      load(pid, children_dir + "/" + name);
    }
  }
  std::vector<int64_t> running, ended;
  std::set<int64_t> marked;  // children that told of themselves
  for (const std::string& name : names) {
    const int64_t pid = PidNamed(name, kMarkerSuffix);
    if (pid == 0 || written.count(pid) != 0) continue;
    marked.insert(pid);
    const std::string marker_path = children_dir + "/" + name;
    const std::string summary = ChildProfilePath(children_dir, pid) + kSummarySuffix;
    const std::optional<Marker> marker = ReadMarker(marker_path);
    if (!marker || Exists(summary)) {  // perhaps written since the directory was listed
      if (Exists(summary)) load(pid, summary);
    } else if (marker->parent_pid != parent_pid || marker->parent_start_unix_ns < start_unix_ns) {
      continue;  // another process's child, or an earlier window's
    } else if (!StillRunning(pid)) {
      ended.push_back(pid);
      unlink(marker_path.c_str());  // it has told all it could
    } else if (StillProfiling(marker_path)) {
      running.push_back(pid);
    } else {  // it runs another program (exec): unprofiled, as programs started are
      unlink(marker_path.c_str());
    }
  }
  for (const int64_t pid : launched) {  // started, but not yet (or never) running
    if (written.count(pid) != 0 || marked.count(pid) != 0) continue;
    const std::string summary = ChildProfilePath(children_dir, pid) + kSummarySuffix;
    if (Exists(summary)) {
      load(pid, summary);
    } else {
      (StillRunning(pid) ? running : ended).push_back(pid);
    }
  }
  std::sort(running.begin(), running.end());
  std::sort(ended.begin(), ended.end());
  constexpr size_t kNamed = 10;  // a program that forks thousands of children
  for (size_t i = 0; i < running.size() && i < kNamed; ++i) {
    arrived.warnings.push_back("child " + std::to_string(running[i]) +
                               " is still running; its profile will be written to " +
                               ChildProfilePath(children_dir, running[i]));
  }
  if (running.size() > kNamed) {
    arrived.warnings.push_back(std::to_string(running.size() - kNamed) +
                               " more children are still running; their profiles will be "
                               "written to " +
                               children_dir);
  }
  for (size_t i = 0; i < ended.size() && i < kNamed; ++i) {
    arrived.warnings.push_back("child " + std::to_string(ended[i]) +
                               " ended without writing its profile");
  }
  if (ended.size() > kNamed) {
    arrived.warnings.push_back(std::to_string(ended.size() - kNamed) +
                               " more children ended without writing their profiles");
  }
  rmdir(children_dir.c_str());  // only if empty: nothing came, or all that came went
  std::sort(arrived.reports.begin(), arrived.reports.end(),
            [](const Report& a, const Report& b) { return a.process.pid < b.process.pid; });
  return arrived;
}

}  // namespace paddle_prof::internal
