#include "preload/mapped_regions.h"

#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <vector>

#include "native_guard.h"

namespace paddle_prof::internal {
namespace {

// mmap and munmap are system calls of microseconds: a lock here costs nothing to speak of.
struct Mappings {
  std::mutex mu;
  std::map<uintptr_t, size_t> regions;  // start → length, page-aligned, not overlapping
};

Mappings& GetMappings() {
  static auto* mappings = new Mappings;  // leaked: the program may unmap during exit
  return *mappings;
}

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Removes [start, start + length) from the tracked regions, splitting those it cuts.
void Forget(std::map<uintptr_t, size_t>* regions, uintptr_t start, size_t length) {
  const uintptr_t end = start + length;
  auto it = regions->upper_bound(start);
  if (it != regions->begin()) --it;
  while (it != regions->end() && it->first < end) {
    const uintptr_t r_start = it->first, r_end = it->first + it->second;
    if (r_end <= start) {
      ++it;
      continue;
    }
    it = regions->erase(it);
    if (r_start < start) regions->emplace(r_start, start - r_start);
    if (r_end > end) it = regions->emplace(end, r_end - end).first;
  }
}

}  // namespace

void ReadMappings(int64_t* reserved, int64_t* resident) {
  NativeGuard profiler_memory;
  Mappings& m = GetMappings();
  std::lock_guard<std::mutex> lock(m.mu);
  const size_t page = PageSize();
  std::vector<unsigned char> pages;
  for (const auto& [start, length] : m.regions) {
    *reserved += static_cast<int64_t>(length);
    pages.resize((length + page - 1) / page);
    if (mincore(reinterpret_cast<void*>(start), length, pages.data()) != 0) continue;
    for (const unsigned char p : pages) *resident += (p & 1) ? static_cast<int64_t>(page) : 0;
  }
}

size_t PageRounded(size_t length) { return (length + PageSize() - 1) & ~(PageSize() - 1); }

void NoteMapping(uintptr_t start, size_t length, bool mapped) {
  NativeGuard profiler_memory;
  Mappings& m = GetMappings();
  const size_t rounded = PageRounded(length);
  std::lock_guard<std::mutex> lock(m.mu);
  Forget(&m.regions, start, rounded);
  if (mapped) m.regions.emplace(start, rounded);
}

void LockMappingsForFork() { GetMappings().mu.lock(); }
void UnlockMappingsAfterFork() { GetMappings().mu.unlock(); }

}  // namespace paddle_prof::internal
