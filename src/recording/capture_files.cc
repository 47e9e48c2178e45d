#include "capture_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "event_record.h"

namespace paddle_prof::internal {

namespace {

std::mutex g_names_mu;
std::atomic<int> g_names_fd{-1};
int g_places_fd = -1;  // under g_names_mu

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string CaptureFile(const std::string& dir, std::string_view name) {
  std::string path = dir;
  if (!path.empty() && path.back() != '/') path += '/';
  path += kCapturePrefix;
  path += name;
  return path;
}

std::string CaptureChunkPrefix(const std::string& dir, uint64_t window, int index) {
  return CaptureFile(dir, "w" + std::to_string(window) + ".t" + std::to_string(index) + ".c");
}

std::string CaptureThreadFile(const std::string& dir, uint64_t window, int index) {
  return CaptureFile(dir, "w" + std::to_string(window) + ".t" + std::to_string(index) + ".info");
}

EventRecord* MapCaptureChunk(const std::string& path, size_t bytes) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  void* p = MAP_FAILED;
  if (posix_fallocate(fd, 0, static_cast<off_t>(bytes)) == 0) {
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);
  if (p == MAP_FAILED) {
    unlink(path.c_str());
    return nullptr;
  }
  // Faulted in now, not inside a timed scope.
  auto* chunk = static_cast<char*>(p);
  for (size_t off = 0; off < bytes; off += 4096) {
    reinterpret_cast<volatile char*>(chunk)[off] = 0;
  }
  return reinterpret_cast<EventRecord*>(chunk);
}

bool WriteCaptureThread(const std::string& dir, uint64_t window, int index, int os_tid,
                        const std::string& name) {
  const std::string path = CaptureThreadFile(dir, window, index);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string text = std::to_string(os_tid) + "\n" + name + "\n";
  const bool ok = WriteAll(fd, text.data(), text.size());
  close(fd);
  return ok;
}

namespace {

int OpenLog(const std::string& dir, const char* name, std::string* error) {
  const std::string path = CaptureFile(dir, name);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) *error = path + ": " + std::strerror(errno);
  return fd;
}

// Under g_names_mu.
void CloseLogs() {
  const int old = g_names_fd.exchange(-1, std::memory_order_relaxed);
  if (old >= 0) close(old);
  if (g_places_fd >= 0) close(g_places_fd);
  g_places_fd = -1;
}

}  // namespace

bool OpenCaptureNames(const std::string& dir, std::string* error) {
  std::lock_guard<std::mutex> lock(g_names_mu);
  CloseLogs();
  const int names = OpenLog(dir, "names", error);
  if (names < 0) return false;
  const int places = OpenLog(dir, "places", error);
  if (places < 0) {
    close(names);
    return false;
  }
  g_names_fd.store(names, std::memory_order_relaxed);
  g_places_fd = places;
  return true;
}

void CloseCaptureNames() {
  std::lock_guard<std::mutex> lock(g_names_mu);
  CloseLogs();
}

void LogCapturedName(const char* interned) {
  if (g_names_fd.load(std::memory_order_relaxed) < 0) return;
  const uint64_t pointer = reinterpret_cast<uintptr_t>(interned);
  const uint32_t length = static_cast<uint32_t>(std::strlen(interned));
  // One write per name: a process killed mid-log leaves whole entries, then at most
  // a torn last one, which recovery drops.
  std::string entry(sizeof(pointer) + sizeof(length), '\0');
  std::memcpy(entry.data(), &pointer, sizeof(pointer));
  std::memcpy(entry.data() + sizeof(pointer), &length, sizeof(length));
  entry.append(interned, length);
  std::lock_guard<std::mutex> lock(g_names_mu);
  const int fd = g_names_fd.load(std::memory_order_relaxed);
  if (fd >= 0) WriteAll(fd, entry.data(), entry.size());
}

void LogCapturedPlace(int index, const std::string& name) {
  if (g_names_fd.load(std::memory_order_relaxed) < 0) return;
  const std::string line = std::to_string(index) + " " + name + "\n";  // one write: whole lines
  std::lock_guard<std::mutex> lock(g_names_mu);
  if (g_places_fd >= 0) WriteAll(g_places_fd, line.data(), line.size());
}

void LockCaptureNamesForFork() { g_names_mu.lock(); }
void UnlockCaptureNamesAfterFork() { g_names_mu.unlock(); }

void RemoveCaptureFiles(const std::string& dir, bool keep_chunks) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const size_t prefix = std::strlen(kCapturePrefix);
  while (const dirent* entry = readdir(d)) {
    if (std::strncmp(entry->d_name, kCapturePrefix, prefix) != 0) continue;
    if (keep_chunks) {
      const char* chunk = std::strrchr(entry->d_name, '.');
      if (chunk != nullptr && chunk[1] == 'c' && chunk[2] >= '0' && chunk[2] <= '9') continue;
    }
    unlinkat(dirfd(d), entry->d_name, 0);
  }
  closedir(d);
}

}  // namespace paddle_prof::internal
