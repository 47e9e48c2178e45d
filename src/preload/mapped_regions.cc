#include "mapped_regions.h"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace paddle_prof::internal {
namespace {

// The hooks that keep this table run inside the allocator (jemalloc and tcmalloc map
// their memory through mmap while they hold their own locks), so nothing here may
// allocate or wait on anything but this table's lock, which is held only for a search
// and a memmove. The table is a sorted array of page-aligned, non-overlapping regions;
// regions that touch are kept as one, so it holds no more entries than the process has
// mappings of its own, which the kernel caps at vm.max_map_count (65,530 unless raised).
// A region that finds the table full is not followed, and counted (MappingsNotFollowed).
constexpr size_t kMaxRegions = 1 << 16;  // 1 MiB of zero pages until used

struct Region {
  uintptr_t start;
  uintptr_t end;
};

Region g_regions[kMaxRegions];
size_t g_count = 0;
std::atomic<bool> g_locked{false};
std::atomic<int64_t> g_not_followed{0};
// Set while this thread holds the lock: a signal handler that maps memory on it skips the
// table (and is counted) instead of waiting on itself.
thread_local bool t_holding __attribute__((tls_model("initial-exec"))) = false;

bool Lock() {
  if (t_holding) return false;
  for (int spins = 0; g_locked.exchange(true, std::memory_order_acquire); ++spins) {
    if (spins >= 64) sched_yield();  // the holder is between two instructions of a memmove
  }
  t_holding = true;
  return true;
}

void Unlock() {
  t_holding = false;
  g_locked.store(false, std::memory_order_release);
}

// Read at each call (sysconf returns the loader's copy): a function-local static's guard
// would be copied held into a child forked while another thread first set it, and the
// child's first read of the mappings would wait on it forever.
size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// The first region that ends after `address`.
size_t FirstEndingAfter(uintptr_t address) {
  const Region* found = std::upper_bound(
      g_regions, g_regions + g_count, address,
      [](uintptr_t a, const Region& r) { return a < r.end; });
  return static_cast<size_t>(found - g_regions);
}

// Removes [start, end) from the regions, cutting those it overlaps. False when a cut
// in the middle of a region needs an entry the table does not have; the whole region
// is then dropped (counted), so the account never holds what is unmapped.
void Forget(uintptr_t start, uintptr_t end) {
  size_t i = FirstEndingAfter(start);
  if (i == g_count || g_regions[i].start >= end) return;
  if (g_regions[i].start < start && g_regions[i].end > end) {  // a hole in one region
    if (g_count == kMaxRegions) {
      std::memmove(&g_regions[i], &g_regions[i + 1], (g_count - i - 1) * sizeof(Region));
      --g_count;
      g_not_followed.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::memmove(&g_regions[i + 1], &g_regions[i], (g_count - i) * sizeof(Region));
    ++g_count;
    g_regions[i].end = start;
    g_regions[i + 1].start = end;
    return;
  }
  if (g_regions[i].start < start) g_regions[i++].end = start;  // keeps its head
  size_t j = i;
  while (j < g_count && g_regions[j].end <= end) ++j;  // wholly inside: removed
  if (j < g_count && g_regions[j].start < end) g_regions[j].start = end;  // keeps its tail
  std::memmove(&g_regions[i], &g_regions[j], (g_count - j) * sizeof(Region));
  g_count -= j - i;
}

// Adds [start, end), which overlaps no region, merging it with the regions it touches.
void Add(uintptr_t start, uintptr_t end) {
  size_t i = start == 0 ? 0 : FirstEndingAfter(start - 1);  // one ending at `start` touches
  const bool joins_before = i < g_count && g_regions[i].end == start;
  const size_t after = joins_before ? i + 1 : i;
  const bool joins_after = after < g_count && g_regions[after].start == end;
  if (joins_before && joins_after) {
    g_regions[i].end = g_regions[after].end;
    std::memmove(&g_regions[after], &g_regions[after + 1],
                 (g_count - after - 1) * sizeof(Region));
    --g_count;
  } else if (joins_before) {
    g_regions[i].end = end;
  } else if (joins_after) {
    g_regions[after].start = start;
  } else if (g_count == kMaxRegions) {
    g_not_followed.fetch_add(1, std::memory_order_relaxed);
  } else {
    std::memmove(&g_regions[i + 1], &g_regions[i], (g_count - i) * sizeof(Region));
    ++g_count;
    g_regions[i] = {start, end};
  }
}

bool Overlaps(uintptr_t start, uintptr_t end) {
  const size_t i = FirstEndingAfter(start);
  return i < g_count && g_regions[i].start < end;
}

}  // namespace

size_t PageRounded(size_t length) { return (length + PageSize() - 1) & ~(PageSize() - 1); }

void NoteMapping(uintptr_t start, size_t length, bool mapped) {
  const uintptr_t end = start + PageRounded(length);
  if (end <= start) return;  // empty, or past the address space: the call failed
  if (!Lock()) {
    g_not_followed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Forget(start, end);
  if (mapped) Add(start, end);
  Unlock();
}

void NoteRemapping(uintptr_t old_start, size_t old_length, uintptr_t new_start,
                   size_t new_length, bool old_kept) {
  const uintptr_t old_end = old_start + PageRounded(old_length);
  const uintptr_t new_end = new_start + PageRounded(new_length);
  if (!Lock()) {
    g_not_followed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const bool ours = Overlaps(old_start, old_end > old_start ? old_end : old_start + 1);
  if (!old_kept) Forget(old_start, old_end);
  if (new_end > new_start) {
    Forget(new_start, new_end);  // whatever was mapped there is gone
    if (ours) Add(new_start, new_end);
  }
  Unlock();
}

void ReadMappings(int64_t* reserved, int64_t* resident) {
  const size_t page = PageSize();
  constexpr size_t kPagesAtOnce = 4096;
  unsigned char pages[kPagesAtOnce];  // no allocation: a hook may wait on this lock
  if (!Lock()) return;
  for (size_t i = 0; i < g_count; ++i) {
    *reserved += static_cast<int64_t>(g_regions[i].end - g_regions[i].start);
    for (uintptr_t at = g_regions[i].start; at < g_regions[i].end; at += kPagesAtOnce * page) {
      const size_t length = std::min<uintptr_t>(g_regions[i].end - at, kPagesAtOnce * page);
      if (mincore(reinterpret_cast<void*>(at), length, pages) != 0) continue;
      for (size_t p = 0; p < length / page; ++p) {
        *resident += (pages[p] & 1) ? static_cast<int64_t>(page) : 0;
      }
    }
  }
  Unlock();
}

int64_t MappingsNotFollowed() { return g_not_followed.load(std::memory_order_relaxed); }

void CheckMappingsInChild() {
  // A thread that is not in the child held the lock at the fork: the table may be half
  // edited, so the child starts its account afresh, and says so.
  if (!g_locked.load(std::memory_order_relaxed)) return;
  g_not_followed.fetch_add(static_cast<int64_t>(g_count) + 1, std::memory_order_relaxed);
  g_count = 0;
  t_holding = false;
  g_locked.store(false, std::memory_order_release);
}

}  // namespace paddle_prof::internal
