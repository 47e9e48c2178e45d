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

// Every function here may run inside the allocator, from a hook: none allocates or
// waits on anything but the table's own lock, held for a search and a memmove.

// [start, start + length) was unmapped, or (`mapped`) newly mapped, perhaps over an old
// mapping (MAP_FIXED).
void NoteMapping(uintptr_t start, size_t length, bool mapped);

// mremap moved [old_start, old_start + old_length) to [new_start, new_start + new_length)
// (the same start when it grew or shrank in place; `old_kept` for MREMAP_DONTUNMAP). Followed
// when the old region was one of the program's anonymous mappings.
void NoteRemapping(uintptr_t old_start, size_t old_length, uintptr_t new_start,
                   size_t new_length, bool old_kept);

// Adds what the regions reserve, and what of that is resident, to the two figures: the
// library's MappingReader (process_memory.h).
void ReadMappings(int64_t* reserved, int64_t* resident);

// Mapping calls left out of the account: the table was full (vm.max_map_count raised
// past its 65,536 regions), or a signal handler mapped memory while its thread was
// editing the table.
int64_t MappingsNotFollowed();

// In a forked child, first: a table some other thread was editing at the fork is started
// afresh (its regions counted as not followed). Nothing is held across fork: a lock
// held there would make the fork wait on threads that wait on the allocator.
void CheckMappingsInChild();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PRELOAD_MAPPED_REGIONS_H_
