// What the harnesses share. A reader of a directory gets several files from one fuzz
// input: the files one after another, kFileSeparator between them (a line no
// paddle_prof file holds), so that libFuzzer's mutations mostly stay inside one file.
#ifndef PADDLE_PROF_TESTS_FUZZ_FUZZ_FILES_H_
#define PADDLE_PROF_TESTS_FUZZ_FUZZ_FILES_H_

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace paddle_prof::fuzz {

inline constexpr std::string_view kFileSeparator = "\n@@@@\n";

inline std::vector<std::string_view> SplitFiles(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> files;
  for (size_t at = 0;;) {
    const size_t end = input.find(kFileSeparator, at);
    files.push_back(input.substr(at, end == std::string_view::npos ? end : end - at));
    if (end == std::string_view::npos) return files;
    at = end + kFileSeparator.size();
  }
}

inline std::string JoinFiles(const std::vector<std::string>& files) {
  std::string joined;
  for (size_t i = 0; i < files.size(); ++i) {
    if (i > 0) joined += kFileSeparator;
    joined += files[i];
  }
  return joined;
}

// A directory of this process's own, made once.
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string d =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/paddle_prof_fuzz_XXXXXX";
    if (mkdtemp(d.data()) == nullptr) std::abort();
    return d;
  }();
  return dir;
}

inline void WriteFile(const std::string& path, std::string_view bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    std::perror(path.c_str());
    std::abort();
  }
  close(fd);
}

// Removes every file in `dir` (the readers write no subdirectories).
inline void EmptyDir(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* entry = readdir(d)) unlinkat(dirfd(d), entry->d_name, 0);
    closedir(d);
  }
}

// A reader's error that does not say which file it is about is a finding too.
inline void ExpectNamed(const char* what, const std::string& name) {
  if (std::string_view(what).find(name) != std::string_view::npos) return;
  std::fprintf(stderr, "error without the name '%s': %s\n", name.c_str(), what);
  std::abort();
}

}  // namespace paddle_prof::fuzz

#endif  // PADDLE_PROF_TESTS_FUZZ_FUZZ_FILES_H_
