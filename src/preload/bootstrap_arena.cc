#include "bootstrap_arena.h"

#include <errno.h>

#include <atomic>
#include <cstring>

namespace paddle_prof::internal {

alignas(64) unsigned char g_bootstrap_arena[kBootstrapArenaBytes];

namespace {

// Each block's size sits just before it, in a header that keeps blocks max-aligned.
constexpr size_t kHeaderBytes = alignof(std::max_align_t);

std::atomic<size_t> g_used{0};

}  // namespace

void* BootstrapAllocate(size_t size, size_t alignment) {
  if (alignment < kHeaderBytes) alignment = kHeaderBytes;
  const uintptr_t base = reinterpret_cast<uintptr_t>(g_bootstrap_arena);
  size_t used = g_used.load(std::memory_order_relaxed);
  while (size <= kBootstrapArenaBytes && alignment <= kBootstrapArenaBytes) {
    const uintptr_t data = (base + used + kHeaderBytes + alignment - 1) & ~(alignment - 1);
    if (data - base > kBootstrapArenaBytes - size) break;
    if (g_used.compare_exchange_weak(used, data - base + size, std::memory_order_relaxed)) {
      std::memcpy(reinterpret_cast<void*>(data - sizeof(size_t)), &size, sizeof(size_t));
      return reinterpret_cast<void*>(data);
    }
  }
  errno = ENOMEM;
  return nullptr;
}

size_t BootstrapBlockSize(const void* ptr) {
  size_t size;
  std::memcpy(&size, static_cast<const unsigned char*>(ptr) - sizeof(size_t), sizeof(size_t));
  return size;
}

}  // namespace paddle_prof::internal
