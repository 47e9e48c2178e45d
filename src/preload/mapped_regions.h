// The program's own anonymous mappings, for the preload library: which regions are mapped,
// so that each step can say how much they reserve and how much of that is resident (JIT
// code buffers, say). glibc's malloc maps through an internal entry point, so its mappings
// never pass here; mallinfo2 counts those (process_memory.h).
//
// The mmap, mmap64 and munmap hooks that report the regions live in malloc_hooks.cc, with
// every other function the library interposes: they share its switch (nothing is tracked
// before the library is initialised, under a NativeGuard, or in a forked child), and its
// constructor registers this file's fork handlers in the order its comment argues.
#ifndef PADDLE_PROF_SRC_PRELOAD_MAPPED_REGIONS_H_
#define PADDLE_PROF_SRC_PRELOAD_MAPPED_REGIONS_H_

#include <cstddef>
#include <cstdint>

namespace paddle_prof::internal {

// `length` rounded up to whole pages: what a mapping (or a pvalloc block) takes.
size_t PageRounded(size_t length);

// [start, start + length) was unmapped, or (`mapped`) newly mapped, perhaps over an old
// mapping (MAP_FIXED). Takes the mappings lock, then may allocate under it.
void NoteMapping(uintptr_t start, size_t length, bool mapped);

// Adds what the regions reserve, and what of that is resident, to the two figures: the
// library's MappingReader (process_memory.h).
void ReadMappings(int64_t* reserved, int64_t* resident);

// Held across fork, so that the child's copy is never locked by a thread that is not there.
void LockMappingsForFork();
void UnlockMappingsAfterFork();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PRELOAD_MAPPED_REGIONS_H_
