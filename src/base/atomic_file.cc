#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace paddle_prof::internal {

namespace {

bool IsSpecialFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

// The file a symbolic link leads to, so that the rename replaces the file, not the link.
std::string LinkTarget(std::string path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return path;  // a dangling link: written through, in place
  path = resolved;
  std::free(resolved);
  return path;
}

// A device or FIFO opened for writing, or null. O_NONBLOCK: a FIFO with no reader
// fails (ENXIO) rather than waiting for one; the writes then block as usual.
FILE* OpenSpecialFile(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return nullptr;
  FILE* file = nullptr;
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0) file = fdopen(fd, "w");
  if (file == nullptr) {
    const int error = errno;
    close(fd);
    errno = error;
  }
  return file;
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  // The system reads a path up to its first NUL: it would write another file.
  if (path_.find('\0') != std::string::npos) {
    error_ = kNulInPath;
    return;
  }
  path_ = LinkTarget(std::move(path_));
  if (IsSpecialFile(path_)) {
    file_ = OpenSpecialFile(path_);
  } else {
    temp_ = path_ + ".tmp" + std::to_string(getpid());
    file_ = std::fopen(temp_.c_str(), "w");
  }
  if (file_ == nullptr) Fail();
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!temp_.empty()) std::remove(temp_.c_str());  // no-op after a successful rename
}

void AtomicFile::Fail() {
  if (error_ == 0) error_ = errno != 0 ? errno : EIO;
}

void AtomicFile::Write(std::string_view bytes) {
  if (error_ != 0 || bytes.empty()) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) Fail();
}

bool AtomicFile::Commit(std::string* error) {
  if (file_ != nullptr) {
    // fclose flushes: a disk that fills up on the last buffer fails here.
    if (std::fclose(std::exchange(file_, nullptr)) != 0) Fail();
  }
  if (error_ == 0 && !temp_.empty() && std::rename(temp_.c_str(), path_.c_str()) != 0) Fail();
  if (error_ != 0) {
    *error = error_ == kNulInPath ? "the path holds a NUL byte" : std::strerror(error_);
    return false;
  }
  temp_.clear();  // renamed: nothing to remove
  return true;
}

bool WriteFileAtomically(const std::string& path, std::string_view contents, std::string* error) {
  AtomicFile file(path);
  file.Write(contents);
  return file.Commit(error);
}

}  // namespace paddle_prof::internal
