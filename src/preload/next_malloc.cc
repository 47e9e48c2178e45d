#include "next_malloc.h"

#include <errno.h>
#include <link.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <type_traits>

#include "bootstrap_arena.h"
#include "object_symbols.h"

namespace paddle_prof::internal {

std::atomic<const MallocFamily*> g_next_malloc{nullptr};

namespace {

enum State { kUnresolved, kResolving, kResolved };
std::atomic<int> g_state{kUnresolved};

MallocFamily g_family;  // written once, before g_next_malloc publishes it
bool g_interposed = false;
const char* g_file = "";

// The allocator's own aligned entry points, each null where it lacks it: what the ones it
// lacks are made from.
struct Aligned {
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
} g_own;

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// 0 where no power of two of size_t is that large.
size_t PowerOfTwoAtLeast(size_t n) {
  size_t p = 1;
  while (p < n && p != 0) p <<= 1;
  return p;
}

// memalign's alignment: rounded up to a power of two, or 0 (and EINVAL) where no power
// of two of size_t is that large.
size_t MemalignAlignment(size_t alignment) {
  alignment = PowerOfTwoAtLeast(alignment);
  if (alignment == 0) errno = EINVAL;
  return alignment;
}

void* MemalignFromOthers(size_t alignment, size_t size) {
  alignment = MemalignAlignment(alignment);
  if (alignment == 0) return nullptr;
  if (g_own.posix_memalign != nullptr) {
    void* ptr = nullptr;
    const int rc =
        g_own.posix_memalign(&ptr, alignment < sizeof(void*) ? sizeof(void*) : alignment, size);
    if (rc != 0) errno = rc;
    return rc == 0 ? ptr : nullptr;
  }
  if (g_own.aligned_alloc != nullptr) {
    const size_t rounded = (size + alignment - 1) & ~(alignment - 1);  // C11's requirement
    if (rounded < size) {
      errno = ENOMEM;
      return nullptr;
    }
    return g_own.aligned_alloc(alignment, rounded);
  }
  errno = ENOMEM;
  return nullptr;
}

int PosixMemalignFromOthers(void** out, size_t alignment, size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* ptr = g_family.memalign(alignment, size);
  if (ptr == nullptr) return ENOMEM;
  *out = ptr;
  return 0;
}

void* AlignedAllocFromOthers(size_t alignment, size_t size) {
  return g_family.memalign(alignment, size);
}

void* VallocFromOthers(size_t size) { return g_family.memalign(PageSize(), size); }

void* PvallocFromOthers(size_t size) {
  const size_t page = PageSize();
  const size_t rounded = (size + page - 1) & ~(page - 1);
  if (rounded < size) {
    errno = ENOMEM;
    return nullptr;
  }
  return g_family.memalign(page, rounded == 0 ? page : rounded);
}

size_t UsableSizeUnknown(void*) { return 0; }

// Served while the lookup runs.
void* ArenaMalloc(size_t size) { return BootstrapAllocate(size, 1); }
void ArenaFree(void*) {}
void* ArenaCalloc(size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return BootstrapAllocate(bytes, 1);  // zeroed already
}
void* ArenaRealloc(void* ptr, size_t size) {
  if (ptr != nullptr && !InBootstrapArena(ptr)) {  // not ours to move: it stays as it is
    errno = ENOMEM;
    return nullptr;
  }
  void* moved = BootstrapAllocate(size, 1);
  if (moved != nullptr && ptr != nullptr) {
    const size_t old_size = BootstrapBlockSize(ptr);
    std::memcpy(moved, ptr, old_size < size ? old_size : size);
  }
  return moved;
}
void* ArenaMemalign(size_t alignment, size_t size) {
  alignment = MemalignAlignment(alignment);
  if (alignment == 0) return nullptr;
  return BootstrapAllocate(size, alignment);
}
int ArenaPosixMemalign(void** out, size_t alignment, size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* ptr = BootstrapAllocate(size, alignment);
  if (ptr == nullptr) return ENOMEM;
  *out = ptr;
  return 0;
}
void* ArenaValloc(size_t size) { return BootstrapAllocate(size, PageSize()); }
void* ArenaPvalloc(size_t size) {
  const size_t page = PageSize();
  const size_t rounded = (size + page - 1) & ~(page - 1);
  if (rounded < size) {  // wrapped: never a smaller block
    errno = ENOMEM;
    return nullptr;
  }
  return BootstrapAllocate(rounded, page);
}
size_t ArenaUsableSize(void* ptr) {
  return ptr != nullptr && InBootstrapArena(ptr) ? BootstrapBlockSize(ptr) : 0;
}

constexpr MallocFamily kBootstrapFamily = {
    ArenaMalloc,   ArenaFree,     ArenaCalloc, ArenaRealloc, ArenaPosixMemalign,
    ArenaMemalign, ArenaMemalign, ArenaValloc, ArenaPvalloc, ArenaUsableSize};

// The first object in load order that defines malloc, the order the dynamic linker binds
// the program's calls in: found after this library, it is the next malloc; found before
// it (earlier in LD_PRELOAD, or the program itself), it is the one in use instead.
int FindAllocator(dl_phdr_info* object, size_t, void* passed_self) {
  if (ObjectContains(*object, reinterpret_cast<void*>(&ResolveNextMalloc))) {
    *static_cast<bool*>(passed_self) = true;
    return 0;
  }
  void* malloc_function = DefinedFunction(*object, "malloc");
  if (malloc_function == nullptr) return 0;
  auto own = [object](const char* name, auto* out) {
    *out = reinterpret_cast<std::remove_pointer_t<decltype(out)>>(DefinedFunction(*object, name));
    return *out != nullptr;
  };
  g_family.malloc = reinterpret_cast<void* (*)(size_t)>(malloc_function);
  if (!own("free", &g_family.free) || !own("calloc", &g_family.calloc) ||
      !own("realloc", &g_family.realloc)) {
    return 0;  // not an allocator: a library with a malloc of its own, say
  }
  g_interposed = *static_cast<bool*>(passed_self);
  if (object->dlpi_name != nullptr) g_file = object->dlpi_name;
  own("posix_memalign", &g_own.posix_memalign);
  own("aligned_alloc", &g_own.aligned_alloc);
  own("memalign", &g_own.memalign);
  g_family.memalign = g_own.memalign != nullptr ? g_own.memalign : MemalignFromOthers;
  g_family.posix_memalign =
      g_own.posix_memalign != nullptr ? g_own.posix_memalign : PosixMemalignFromOthers;
  g_family.aligned_alloc =
      g_own.aligned_alloc != nullptr ? g_own.aligned_alloc : AlignedAllocFromOthers;
  if (!own("valloc", &g_family.valloc)) g_family.valloc = VallocFromOthers;
  if (!own("pvalloc", &g_family.pvalloc)) g_family.pvalloc = PvallocFromOthers;
  if (!own("malloc_usable_size", &g_family.malloc_usable_size)) {
    g_family.malloc_usable_size = UsableSizeUnknown;
  }
  return 1;
}

// For the constructor, which must see the lookup finished even if another thread runs it.
void WaitResolved() {
  NextMalloc();
  while (g_state.load(std::memory_order_acquire) != kResolved) sched_yield();
}

}  // namespace

const MallocFamily& ResolveNextMalloc() {
  int expected = kUnresolved;
  if (!g_state.compare_exchange_strong(expected, kResolving, std::memory_order_acq_rel)) {
    // Another thread is looking it up. Waiting could deadlock (this thread may hold a
    // lock of the dynamic linker's, from inside dl_iterate_phdr, say): the arena.
    if (expected == kResolving) return kBootstrapFamily;
    return *g_next_malloc.load(std::memory_order_acquire);
  }
  bool passed_self = false;
  dl_iterate_phdr(&FindAllocator, &passed_self);
  g_next_malloc.store(&g_family, std::memory_order_release);
  g_state.store(kResolved, std::memory_order_release);
  return g_family;
}

bool HooksAreTheProcessMalloc() {
  WaitResolved();
  return g_interposed;
}

const char* NextMallocFile() {
  WaitResolved();
  return g_file;
}

}  // namespace paddle_prof::internal
