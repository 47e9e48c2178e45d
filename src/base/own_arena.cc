#include "own_arena.h"

#include <sys/mman.h>

#include <atomic>

#include "native_guard.h"

namespace paddle_prof::internal {

namespace {

constexpr size_t kPage = 4096;
std::atomic<int64_t> g_mapped{0};

// Under the guard: the preload library must not count these mappings as the program's.
void* Map(size_t bytes) {
  NativeGuard own_memory;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  g_mapped.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  return p;
}

void Unmap(void* p, size_t bytes) {
  NativeGuard own_memory;
  munmap(p, bytes);
  g_mapped.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

size_t PageRounded(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

}  // namespace

int64_t OwnArena::AllMappedBytes() { return g_mapped.load(std::memory_order_relaxed); }

size_t OwnArena::ClassOf(size_t bytes) {
  size_t k = 0;
  while ((size_t{16} << k) < bytes) ++k;
  return k;
}

void* OwnArena::Allocate(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes > kLargest) {
    const size_t mapped = PageRounded(bytes);
    void* p = Map(mapped);
    mapped_ += static_cast<int64_t>(mapped);
    return p;
  }
  const size_t k = ClassOf(bytes);
  if (FreeBlock* block = free_[k]) {
    free_[k] = block->next;
    return block;
  }
  const size_t size = size_t{16} << k;
  if (static_cast<size_t>(bump_end_ - bump_) < size) {
    // A new chunk; the old one's rest is left unused (under 4 KiB).
    auto* chunk = static_cast<Chunk*>(Map(kChunkBytes));
    mapped_ += static_cast<int64_t>(kChunkBytes);
    chunk->next = chunks_;
    chunks_ = chunk;
    bump_ = reinterpret_cast<char*>(chunk) + 16;  // the header, kept 16-aligned
    bump_end_ = reinterpret_cast<char*>(chunk) + kChunkBytes;
  }
  void* p = bump_;
  bump_ += size;
  return p;
}

void OwnArena::Free(void* block, size_t bytes) {
  if (block == nullptr) return;
  if (bytes == 0) bytes = 1;
  if (bytes > kLargest) {
    const size_t mapped = PageRounded(bytes);
    Unmap(block, mapped);
    mapped_ -= static_cast<int64_t>(mapped);
    return;
  }
  const size_t k = ClassOf(bytes);
  auto* free_block = static_cast<FreeBlock*>(block);
  free_block->next = free_[k];
  free_[k] = free_block;
}

OwnArena::~OwnArena() {
  while (chunks_ != nullptr) {
    Chunk* next = chunks_->next;
    Unmap(chunks_, kChunkBytes);
    chunks_ = next;
  }
}

}  // namespace paddle_prof::internal
