// The process's own memory figures, read at each step mark: resident set, and what
// glibc's malloc holds (in use, freed but kept, mapped for large blocks). Next to the
// tracked bytes they tell a cache of live objects from fragmentation.
#ifndef PADDLE_PROF_SRC_PROCESS_MEMORY_H_
#define PADDLE_PROF_SRC_PROCESS_MEMORY_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace paddle_prof::internal {

// "rss_bytes" (without the profiler's own event buffers and arenas), "heap_in_use_bytes",
// "heap_free_bytes" (freed, kept by malloc) and "malloc_mmap_bytes"; under the preload
// library also "mmap_reserved_bytes" and "mmap_resident_bytes" (the program's own
// anonymous mappings, JIT code buffers for one). A figure that cannot be read is left out.
// Read at every step mark, so without a heap allocation kept (own_arena.h says why).
struct ProcessFigures {
  static constexpr size_t kCount = 6;
  static const std::array<const char*, kCount> kNames;
  std::array<int64_t, kCount> value{};
  std::array<bool, kCount> known{};
  // The figures read, by name, for the Collection's StepMark.
  std::map<std::string, int64_t> ByName() const;
};
ProcessFigures ReadProcessMemory();

// Set by the preload library, which sees the program's mmap, munmap and mremap calls:
// `read` adds the mappings' reserved and resident bytes, `not_followed` counts the
// mapping calls its account had to leave out.
struct MappingReader {
  void (*read)(int64_t* reserved_bytes, int64_t* resident_bytes);
  int64_t (*not_followed)();
};
void SetMappingReader(MappingReader reader);

// The count the preload library's `not_followed` gives; 0 without it.
int64_t MappingsNotFollowedByPreload();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PROCESS_MEMORY_H_
