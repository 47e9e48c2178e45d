// Memory the profiler keeps while a window runs (interned names, step marks), taken
// from mmap rather than malloc. Small blocks the profiler keeps would otherwise land in
// the holes the program's freed blocks leave in malloc's heap and pin them there: the
// program's heap would grow, and its "freed but kept" memory with it, because it was
// profiled. Here they never touch malloc's heap, nor its figures.
//
// Not thread-safe: each arena has one owner at a time (a thread's name cache, the
// profiler's control under its lock).
#ifndef PADDLE_PROF_SRC_OWN_ARENA_H_
#define PADDLE_PROF_SRC_OWN_ARENA_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>

namespace paddle_prof::internal {

class OwnArena {
 public:
  OwnArena() = default;
  OwnArena(const OwnArena&) = delete;
  OwnArena& operator=(const OwnArena&) = delete;
  ~OwnArena();  // unmaps everything: its blocks must be gone by then

  // At least `bytes`, aligned to 16; std::bad_alloc when mmap fails.
  void* Allocate(size_t bytes);
  // A block Allocate(bytes) gave, with the same `bytes`.
  void Free(void* block, size_t bytes);

  // Bytes mapped for it, in chunks and whole mappings: for tests and benchmarks.
  int64_t MappedBytes() const { return mapped_; }
  // Bytes mapped for all arenas: the profiler's, not the program's resident memory.
  static int64_t AllMappedBytes();

 private:
  // Size classes of 16 << k bytes up to kLargest; larger blocks get a mapping each.
  static constexpr size_t kClasses = 9;
  static constexpr size_t kLargest = size_t{16} << (kClasses - 1);  // 4 KiB
  static constexpr size_t kChunkBytes = size_t{256} << 10;
  struct FreeBlock {
    FreeBlock* next;
  };
  struct Chunk {
    Chunk* next;
  };
  static size_t ClassOf(size_t bytes);

  std::array<FreeBlock*, kClasses> free_{};
  Chunk* chunks_ = nullptr;
  char* bump_ = nullptr;  // the rest of the newest chunk
  char* bump_end_ = nullptr;
  int64_t mapped_ = 0;
};

// A standard allocator over an OwnArena, for the containers the profiler keeps.
template <class T>
class ArenaAllocator {
 public:
  using value_type = T;
  explicit ArenaAllocator(OwnArena* arena) noexcept : arena_(arena) {}
  template <class U>
  ArenaAllocator(const ArenaAllocator<U>& other) noexcept : arena_(other.arena()) {}
  T* allocate(size_t n) { return static_cast<T*>(arena_->Allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { arena_->Free(p, n * sizeof(T)); }
  OwnArena* arena() const noexcept { return arena_; }
  template <class U>
  bool operator==(const ArenaAllocator<U>& other) const noexcept {
    return arena_ == other.arena();
  }
  template <class U>
  bool operator!=(const ArenaAllocator<U>& other) const noexcept {
    return arena_ != other.arena();
  }

 private:
  OwnArena* arena_;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_OWN_ARENA_H_
