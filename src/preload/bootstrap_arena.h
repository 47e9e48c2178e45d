// Memory for the malloc calls that come while the preload library looks up the malloc
// it forwards to: dlsym may allocate, and the first call may come from ld.so or another
// library's constructor before this library's own. A static buffer, bump-allocated and
// never reused (so every block is zeroed); the hooks recognise its blocks by their address
// and never hand them to the real allocator.
#ifndef PADDLE_PROF_SRC_PRELOAD_BOOTSTRAP_ARENA_H_
#define PADDLE_PROF_SRC_PRELOAD_BOOTSTRAP_ARENA_H_

#include <cstddef>
#include <cstdint>

namespace paddle_prof::internal {

inline constexpr size_t kBootstrapArenaBytes = 64 << 10;

// Hidden: the free hook tests an address against it without a GOT load.
extern unsigned char g_bootstrap_arena[kBootstrapArenaBytes] __attribute__((visibility("hidden")));

inline bool InBootstrapArena(const void* ptr) {
  return reinterpret_cast<uintptr_t>(ptr) - reinterpret_cast<uintptr_t>(g_bootstrap_arena) <
         kBootstrapArenaBytes;
}

// A zeroed block of `size` bytes aligned to `alignment` (a power of two), or nullptr with
// errno ENOMEM once the arena is spent. Safe on any thread.
void* BootstrapAllocate(size_t size, size_t alignment);

// The size a block of the arena was asked for.
size_t BootstrapBlockSize(const void* ptr);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PRELOAD_BOOTSTRAP_ARENA_H_
