#include "process_memory.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "event_buffer.h"
#include "own_arena.h"

namespace paddle_prof::internal {

namespace {
std::atomic<const MappingReader*> g_mapping_reader{nullptr};
MappingReader g_reader_set;  // written once, before g_mapping_reader publishes it
}  // namespace

void SetMappingReader(MappingReader reader) {
  g_reader_set = reader;
  g_mapping_reader.store(&g_reader_set, std::memory_order_release);
}

int64_t MappingsNotFollowedByPreload() {
  const MappingReader* reader = g_mapping_reader.load(std::memory_order_acquire);
  return reader != nullptr ? reader->not_followed() : 0;
}

const std::array<const char*, ProcessFigures::kCount> ProcessFigures::kNames = {
    "rss_bytes",         "heap_in_use_bytes",   "heap_free_bytes",
    "malloc_mmap_bytes", "mmap_reserved_bytes", "mmap_resident_bytes"};

std::map<std::string, int64_t> ProcessFigures::ByName() const {
  std::map<std::string, int64_t> by_name;
  for (size_t i = 0; i < kCount; ++i) {
    if (known[i]) by_name[kNames[i]] = value[i];
  }
  return by_name;
}

ProcessFigures ReadProcessMemory() {
  ProcessFigures figures;
  const auto set = [&figures](size_t i, int64_t value) {
    figures.value[i] = value;
    figures.known[i] = true;
  };
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    long long size_pages = 0, resident_pages = 0;
    if (std::fscanf(statm, "%lld %lld", &size_pages, &resident_pages) == 2) {
      // The profiler's event buffers are resident (pre-faulted) but not the program's;
      // nor are its arenas.
      const auto buffers =
          static_cast<long long>(EventBuffer::ChunksInUse() * EventBuffer::kChunkBytes);
      set(0, resident_pages * sysconf(_SC_PAGESIZE) - buffers - OwnArena::AllMappedBytes());
    }
    std::fclose(statm);
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  // All zeros: malloc is not glibc's (a sanitizer's, say), and has nothing to tell.
  if (info.arena != 0 || info.hblkhd != 0) {
    set(1, static_cast<int64_t>(info.uordblks));
    set(2, static_cast<int64_t>(info.fordblks));
    set(3, static_cast<int64_t>(info.hblkhd));
  }
#endif
  if (const MappingReader* reader = g_mapping_reader.load(std::memory_order_acquire)) {
    int64_t reserved = 0, resident = 0;
    reader->read(&reserved, &resident);
    set(4, reserved);
    set(5, resident);
  }
  return figures;
}

}  // namespace paddle_prof::internal
