#include "process_memory.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "event_buffer.h"

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

std::map<std::string, int64_t> ReadProcessMemory() {
  std::map<std::string, int64_t> figures;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    long long size_pages = 0, resident_pages = 0;
    if (std::fscanf(statm, "%lld %lld", &size_pages, &resident_pages) == 2) {
      // The profiler's event buffers are resident (pre-faulted) but not the program's.
      const auto buffers =
          static_cast<long long>(EventBuffer::ChunksInUse() * EventBuffer::kChunkBytes);
      figures["rss_bytes"] = resident_pages * sysconf(_SC_PAGESIZE) - buffers;
    }
    std::fclose(statm);
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  // All zeros: malloc is not glibc's (a sanitizer's, say), and has nothing to tell.
  if (info.arena != 0 || info.hblkhd != 0) {
    figures["heap_in_use_bytes"] = static_cast<int64_t>(info.uordblks);
    figures["heap_free_bytes"] = static_cast<int64_t>(info.fordblks);
    figures["malloc_mmap_bytes"] = static_cast<int64_t>(info.hblkhd);
  }
#endif
  if (const MappingReader* reader = g_mapping_reader.load(std::memory_order_acquire)) {
    int64_t reserved = 0, resident = 0;
    reader->read(&reserved, &resident);
    figures["mmap_reserved_bytes"] = reserved;
    figures["mmap_resident_bytes"] = resident;
  }
  return figures;
}

}  // namespace paddle_prof::internal
