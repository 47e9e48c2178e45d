#include "live_block_table.h"

#include <sys/mman.h>

#include <algorithm>
#include <mutex>
#include <new>

#include "native_guard.h"

namespace paddle_prof::internal {

namespace {

constexpr std::memory_order kRelaxed = std::memory_order_relaxed;
constexpr size_t kFirstTableSlots = size_t{1} << 14;  // 1 MiB of slots, reserved

}  // namespace

BlockTable::BlockTable(size_t slots) : count_(slots), shift_(64) {
  for (size_t n = slots; n > 1; n >>= 1) --shift_;
  NativeGuard profiler_memory;  // not the program's mapping, under --native
  // Straight from mmap: zero pages are empty slots, untouched ones cost nothing, and a
  // preloaded malloc hook never sees the profiler's own memory.
  void* p = mmap(nullptr, MappedBytes(), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  slots_ = static_cast<Slot*>(p);
  taken_ = reinterpret_cast<std::atomic<uint64_t>*>(slots_ + count_);  // after the slots
}

BlockTable::~BlockTable() { munmap(slots_, MappedBytes()); }

namespace {

std::mutex& RegistryMutex() {
  static auto* mu = new std::mutex;  // leaked: blocks are freed during exit too
  return *mu;
}

std::atomic<LiveBlocks::ThreadTables*> g_first{nullptr};

// Marks the thread's tables retired when it exits, for the next new thread to adopt.
struct RetireOnExit {
  LiveBlocks::ThreadTables* tables = nullptr;
  ~RetireOnExit() {
    tables->retired.store(true, std::memory_order_release);
    LiveBlocks::own_ = nullptr;
  }
};

}  // namespace

void LiveBlocks::LockForFork() { RegistryMutex().lock(); }
void LiveBlocks::UnlockAfterFork() { RegistryMutex().unlock(); }

LiveBlocks::ThreadTables* LiveBlocks::First() { return g_first.load(std::memory_order_acquire); }

LiveBlocks::ThreadTables* LiveBlocks::RegisterThisThread() {
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(RegistryMutex());
  ThreadTables* t = nullptr;
  ThreadTables* last = nullptr;
  for (ThreadTables* x = First(); x != nullptr; x = x->next.load(kRelaxed)) {
    last = x;
    if (x->retired.load(std::memory_order_acquire)) {
      x->retired.store(false, kRelaxed);
      t = x;
      break;
    }
  }
  if (t == nullptr) {
    t = new ThreadTables;  // never freed: other threads may be walking the list
    (last != nullptr ? last->next : g_first).store(t, std::memory_order_release);
  }
  thread_local RetireOnExit retire;
  retire.tables = t;
  LiveBlocks::own_ = t;
  return t;
}

LiveBlocks::PlaceSum LiveBlocks::SumShares(int place, uint32_t sample) {
  PlaceSum sum;
  for (ThreadTables* t = First(); t != nullptr; t = t->next.load(std::memory_order_acquire)) {
    const PlaceShares& s = t->shares;
    const int64_t live = s.live[place].load(kRelaxed);
    sum.live += live;
    if (s.sample[place].load(kRelaxed) == sample) {
      sum.high += std::max(live, s.high[place].load(kRelaxed));
      ++sum.moved;
    } else {
      sum.high += live;
    }
  }
  return sum;
}

void LiveBlocks::Prefetch(const void* ptr) {
  if (const BlockTable* table = OwnNewest()) table->Prefetch(ptr);
}

bool LiveBlocks::InsertSlow(const void* ptr, const LiveBlock& block) {
  ThreadTables* t = Own();
  BlockTable* table = t->newest.load(kRelaxed);
  if (table != nullptr && table->Insert(ptr, block)) return true;  // a table of a new thread
  // Full (or first): a table twice as large takes the new blocks; the older ones keep
  // theirs until they are freed.
  try {
    NativeGuard profiler_memory;
    auto* bigger = new BlockTable(table != nullptr ? 2 * table->slots() : kFirstTableSlots);
    bigger->older = table;
    t->newest.store(bigger, std::memory_order_release);
    return bigger->Insert(ptr, block);
  } catch (const std::bad_alloc&) {
    return false;
  }
}

bool LiveBlocks::RemoveOwn(const void* ptr, LiveBlock* block) {
  for (BlockTable* table = OwnNewest(); table != nullptr; table = table->older) {
    if (table->Remove(ptr, block, /*owner=*/true)) return true;
  }
  return false;
}

bool LiveBlocks::Mark(const void* ptr, uint8_t kind) {
  // The calling thread's own tables first: a model is most often made where it is run.
  const ThreadTables* own = own_;
  for (BlockTable* table = OwnNewest(); table != nullptr; table = table->older) {
    if (table->Mark(ptr, kind)) return true;
  }
  for (ThreadTables* t = First(); t != nullptr; t = t->next.load(std::memory_order_acquire)) {
    if (t == own) continue;
    for (BlockTable* table = t->newest.load(std::memory_order_acquire); table != nullptr;
         table = table->older) {
      if (table->Mark(ptr, kind)) return true;
    }
  }
  return false;
}

void LiveBlocks::ClearKinds() {
  ForEachTable([](BlockTable& table) { table.ClearKinds(); });
}

bool LiveBlocks::RemoveSlow(const void* ptr, LiveBlock* block) {
  // The newest table was tried inline: the thread's older ones, then other threads'.
  const BlockTable* newest = OwnNewest();
  for (BlockTable* table = newest != nullptr ? newest->older : nullptr; table != nullptr;
       table = table->older) {
    if (table->Remove(ptr, block, /*owner=*/true)) return true;
  }
  const ThreadTables* own = own_;
  for (ThreadTables* t = First(); t != nullptr; t = t->next.load(std::memory_order_acquire)) {
    if (t == own) continue;
    for (BlockTable* table = t->newest.load(std::memory_order_acquire); table != nullptr;
         table = table->older) {
      if (table->Remove(ptr, block, /*owner=*/false)) return true;
    }
  }
  return false;
}

}  // namespace paddle_prof::internal
