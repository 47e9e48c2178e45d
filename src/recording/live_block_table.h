// Every tracked block that is still allocated: pointer → size, place and owner (the
// thread, scope and event that allocated it, the window and step it was allocated in).
// A free on any thread finds the block's size here; the report charges still-live
// blocks to their owners.
//
// Each allocating thread inserts into tables of its own (open addressing, linear
// probing), so an insert is plain stores published by one release store: no
// read-modify-write, nothing shared with other allocating threads. A free looks in the
// freeing thread's tables first, then in the others' (a block freed by another thread
// than the one that allocated it), and turns the key into a tombstone with a plain
// store: a block is freed once, and its address is not handed out again before its
// free is recorded. The owner's lookups of absent addresses empty the tombstones at the
// end of the run they walked, so that such lookups stay short. A bit per slot, kept by
// the owner, says which slots may hold a block: an insert into a free slot writes it
// without waiting for its cache line, and a walk of the live blocks reads only the
// slots taken. A table that fills gets a successor twice its size; slots are reserved
// with mmap and touched only as they are used.
#ifndef PADDLE_PROF_SRC_LIVE_BLOCK_TABLE_H_
#define PADDLE_PROF_SRC_LIVE_BLOCK_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "block_kind.h"
#include "place_shares.h"

namespace paddle_prof::internal {

struct LiveBlock {
  int64_t size = 0;
  int place = 0;
  int thread = -1;      // allocating recorder's index; -1 when profiling was off
  uint64_t serial = 0;  // innermost open scope at allocation (0: none)
  // Window of the allocation (0: profiling was off), its low 32 bits as the table keeps
  // it: compare with SameWindow().
  uint64_t window = 0;
  int step = 0;               // MarkStep() calls in that window before the allocation
  uint64_t tick = 0;          // when it was allocated (0: profiling was off): its call path
  uint32_t native_stack = 0;  // a native block's stack (native_stacks.h), 0 for none
  // Which TrackingAllocator's base made it (TrackAlloc), kAnySource for RecordAlloc,
  // the preload library and counters.
  uint8_t source = 0;
  // Innermost open event at allocation, if any. Read only while `window` is open: an
  // interned name may be freed once it is over (name_interner.h).
  const char* name = nullptr;
  const char* tag = nullptr;
  uint8_t kind = 0;  // what it is known to be (block_kind.h), 0 until told
};

// Whether a block's window is `window`: the table keeps 32 bits of it, which leaves the
// slot's last word to the native stack (four billion windows apart would look alike).
inline bool SameWindow(uint64_t block_window, uint64_t window) {
  return static_cast<uint32_t>(block_window) == static_cast<uint32_t>(window);
}

// One table: its owner thread inserts, any thread removes or reads.
class BlockTable {
 public:
  static constexpr int kMaxProbe = 64;

  explicit BlockTable(size_t slots);  // a power of two
  BlockTable(const BlockTable&) = delete;
  BlockTable& operator=(const BlockTable&) = delete;
  ~BlockTable();

  // Inline: every tracked allocation and free goes through them.
  bool Insert(const void* ptr, const LiveBlock& block) {  // owner only; false when full
    const auto key = reinterpret_cast<uintptr_t>(ptr);
    const size_t mask = count_ - 1;
    for (size_t i = Home(key), n = 0; n < kMaxProbe; i = (i + 1) & mask, ++n) {
      Slot& s = slots_[i];
      std::atomic<uint64_t>& word = taken_[i / 64];
      const uint64_t bits = word.load(std::memory_order_relaxed);
      const uint64_t bit = uint64_t{1} << (i % 64);
      // A slot not taken is written without being read: the common insert stores into a
      // line it does not wait for. A taken one may hold another thread's tombstone.
      // Only this thread turns a free slot into a used one: no compare-and-swap needed.
      if ((bits & bit) == 0 || s.key.load(std::memory_order_relaxed) < kFirstKey) {
        word.store(bits | bit, std::memory_order_relaxed);
        s.Write(block);
        s.key.store(key, std::memory_order_release);  // publishes the fields
        return true;
      }
    }
    return false;
  }
  // `owner`: the calling thread is the table's owner, the only one that inserts.
  bool Remove(const void* ptr, LiveBlock* block, bool owner) {
    const auto key = reinterpret_cast<uintptr_t>(ptr);
    const size_t mask = count_ - 1;
    for (size_t i = Home(key), n = 0; n < kMaxProbe; i = (i + 1) & mask, ++n) {
      Slot& s = slots_[i];
      const uintptr_t k = s.key.load(std::memory_order_acquire);
      if (k == kEmpty) {  // never used past here: the block is not in this table
        if (owner) EmptyTombstonesBefore(i, n);
        return false;
      }
      if (k != key) continue;
      s.Read(block);
      s.key.store(kTombstone, std::memory_order_relaxed);
      if (owner) ClearTaken(i);
      return true;
    }
    return false;
  }
  // Merges `kind` into the live block at `ptr` (MergeKinds); false when it is not here.
  // Any thread, while the block's owner keeps it from being freed.
  bool Mark(const void* ptr, uint8_t kind) {
    const auto key = reinterpret_cast<uintptr_t>(ptr);
    const size_t mask = count_ - 1;
    for (size_t i = Home(key), n = 0; n < kMaxProbe; i = (i + 1) & mask, ++n) {
      Slot& s = slots_[i];
      const uintptr_t k = s.key.load(std::memory_order_acquire);
      if (k == kEmpty) return false;
      if (k != key) continue;
      int64_t word = s.size.load(std::memory_order_relaxed);
      while (!s.size.compare_exchange_weak(
          word, Slot::WithKind(word, MergeKinds(Slot::KindOf(word), kind)),
          std::memory_order_relaxed)) {
      }
      return true;
    }
    return false;
  }
  // Forgets what was told of every block here (Mark). Any thread.
  void ClearKinds() {
    for (size_t w = 0; w * 64 < count_; ++w) {
      for (uint64_t bits = taken_[w].load(std::memory_order_relaxed); bits != 0; bits &= bits - 1) {
        std::atomic<int64_t>& size = slots_[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))].size;
        int64_t word = size.load(std::memory_order_relaxed);
        while (Slot::KindOf(word) != 0 &&
               !size.compare_exchange_weak(word, Slot::WithKind(word, 0), std::memory_order_relaxed)) {
        }
      }
    }
  }
  void Prefetch(const void* ptr) const {
    __builtin_prefetch(&slots_[Home(reinterpret_cast<uintptr_t>(ptr))], 1);
  }
  size_t slots() const { return count_; }

  // Calls fn(const LiveBlock&) for each block live during the walk (ForEachAt:
  // fn(const void* ptr, const LiveBlock&)). Reads the taken bits (one per 64-byte slot)
  // and only the slots they name.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    ForEachAt([&fn](const void*, const LiveBlock& block) { fn(block); });
  }
  template <typename Fn>
  void ForEachAt(Fn&& fn) const {
    for (size_t w = 0; w * 64 < count_; ++w) {
      for (uint64_t bits = taken_[w].load(std::memory_order_relaxed); bits != 0; bits &= bits - 1) {
        const Slot& s = slots_[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))];
        const uintptr_t key = s.key.load(std::memory_order_acquire);
        if (key < kFirstKey) continue;
        LiveBlock block;
        s.Read(&block);
        // Unchanged meanwhile.
        if (s.key.load(std::memory_order_acquire) == key) fn(reinterpret_cast<const void*>(key), block);
      }
    }
  }

  // Older, smaller tables of the same thread; written by the owner before publishing.
  BlockTable* older = nullptr;

 private:
  static constexpr uintptr_t kEmpty = 0;
  static constexpr uintptr_t kTombstone = 1;
  static constexpr uintptr_t kFirstKey = 2;

  // Fields are atomics so that other threads may read a slot while it is reused.
  struct alignas(64) Slot {  // one cache line
    std::atomic<uintptr_t> key;
    std::atomic<int64_t> size;  // the block's kind above bit 56: sizes are at most 2^56
    std::atomic<uint64_t> place_thread_step;
    std::atomic<uint64_t> serial;
    std::atomic<uint64_t> window_stack;  // the window's low 32 bits, the native stack's id
    std::atomic<const char*> name;
    std::atomic<const char*> tag;
    std::atomic<uint64_t> tick;  // the line's last free word
    static constexpr int kKindShift = 57;
    static uint8_t KindOf(int64_t word) { return static_cast<uint8_t>(word >> kKindShift); }
    static int64_t WithKind(int64_t word, uint8_t kind) {
      return (word & ((int64_t{1} << kKindShift) - 1)) | static_cast<int64_t>(kind) << kKindShift;
    }
    void Write(const LiveBlock& b) {
      constexpr auto kRelaxed = std::memory_order_relaxed;
      size.store(WithKind(b.size, b.kind), kRelaxed);
      place_thread_step.store(static_cast<uint64_t>(b.place & 0xff) |
                                  static_cast<uint64_t>(static_cast<uint16_t>(b.thread)) << 8 |
                                  static_cast<uint64_t>(static_cast<uint32_t>(b.step)) << 24 |
                                  static_cast<uint64_t>(b.source) << 56,
                              kRelaxed);
      serial.store(b.serial, kRelaxed);
      window_stack.store((b.window & 0xffffffffu) | static_cast<uint64_t>(b.native_stack) << 32,
                         kRelaxed);
      name.store(b.name, kRelaxed);
      tag.store(b.tag, kRelaxed);
      tick.store(b.tick, kRelaxed);
    }
    // Into the caller's block: a copy out of a fresh temporary stalls on store forwarding.
    void Read(LiveBlock* b) const {
      constexpr auto kRelaxed = std::memory_order_relaxed;
      const int64_t size_kind = size.load(kRelaxed);
      b->size = WithKind(size_kind, 0);
      b->kind = KindOf(size_kind);
      const uint64_t pts = place_thread_step.load(kRelaxed);
      b->place = static_cast<int>(pts & 0xff);
      b->thread = static_cast<int16_t>((pts >> 8) & 0xffff);
      b->step = static_cast<int>(static_cast<uint32_t>(pts >> 24));
      b->source = static_cast<uint8_t>(pts >> 56);
      b->serial = serial.load(kRelaxed);
      const uint64_t window_stack_bits = window_stack.load(kRelaxed);
      b->window = window_stack_bits & 0xffffffffu;
      b->native_stack = static_cast<uint32_t>(window_stack_bits >> 32);
      b->name = name.load(kRelaxed);
      b->tag = tag.load(kRelaxed);
      b->tick = tick.load(kRelaxed);
    }
  };

  static_assert(sizeof(Slot) == 64, "a slot is one cache line");

  // The tombstones just before empty slot `i` (up to `walked` of them, the slots a
  // lookup just read) become empty: no block's probe runs through them, so the next
  // lookup of an absent address (RecordAlloc's, a free of another thread's block) stops
  // sooner, and freed addresses cannot pile up into runs every miss walks. Owner only:
  // an insert by another thread could otherwise land just past a slot being emptied.
  // Other threads only ever turn a key into a tombstone, never a slot into an empty one,
  // so a live block's probe path stays unbroken while they look.
  void EmptyTombstonesBefore(size_t i, size_t walked) {
    const size_t mask = count_ - 1;
    for (size_t j = (i - 1) & mask; walked > 0; j = (j - 1) & mask, --walked) {
      if (slots_[j].key.load(std::memory_order_relaxed) != kTombstone) return;
      slots_[j].key.store(kEmpty, std::memory_order_relaxed);
      ClearTaken(j);
    }
  }

  void ClearTaken(size_t i) {  // owner only: a plain load and store
    std::atomic<uint64_t>& word = taken_[i / 64];
    word.store(word.load(std::memory_order_relaxed) & ~(uint64_t{1} << (i % 64)),
               std::memory_order_relaxed);
  }
  // The slots, then the taken bits in whole words.
  size_t MappedBytes() const { return count_ * sizeof(Slot) + (count_ + 63) / 64 * 8; }

  size_t Home(uintptr_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);  // Fibonacci hashing
  }

  Slot* slots_;
  // One bit per slot, written by the owner only: set while the slot may hold a key. The
  // owner sets it as it inserts and clears it when it takes the key out itself; another
  // thread's remove leaves it set (its tombstone is reused when an insert reads it). So
  // a clear bit always means no live block: an insert into such a slot need not read it,
  // and a walk skips it.
  std::atomic<uint64_t>* taken_;
  size_t count_;
  int shift_;
};

// All live blocks, across threads.
class LiveBlocks {
 public:
  // On the allocating thread. False when no memory could be had for a table.
  static bool Insert(const void* ptr, const LiveBlock& block);
  static bool Remove(const void* ptr, LiveBlock* block);
  // Looks in the calling thread's own tables only: what it allocated itself.
  static bool RemoveOwn(const void* ptr, LiveBlock* block);
  // Merges `kind` into the live block at `ptr`, in whichever thread's table it is;
  // false when no table holds it. Off the hot path: it looks in every table.
  static bool Mark(const void* ptr, uint8_t kind);
  // Forgets what was told of every live block: a window tells its own.
  static void ClearKinds();
  // Starts loading the slot `ptr` would take in this thread's table.
  static void Prefetch(const void* ptr);
  // The calling thread's share of each place's live bytes (place_shares.h).
  static PlaceShares& OwnShares();
  // What the shares of every thread, exited ones included, add up to on `place`.
  struct PlaceSum {
    int64_t live = 0;
    // With each share that moved since sample `sample` at its high-water mark instead.
    int64_t high = 0;
    int moved = 0;  // threads whose share moved since
  };
  static PlaceSum SumShares(int place, uint32_t sample);
  // The registry's lock, held across fork(), so that the child finds it free.
  static void LockForFork();
  static void UnlockAfterFork();
  // Every block live during the walk; safe while other threads allocate and free.
  template <typename Fn>
  static void ForEach(Fn&& fn) {
    ForEachTable([&fn](const BlockTable& table) { table.ForEach(fn); });
  }
  // ForEach with each block's pointer: fn(const void* ptr, const LiveBlock&).
  template <typename Fn>
  static void ForEachAt(Fn&& fn) {
    ForEachTable([&fn](const BlockTable& table) { table.ForEachAt(fn); });
  }

  struct ThreadTables;

  // The calling thread's tables; initial-exec: one %fs-relative load on every
  // allocation and free. Cleared when the thread exits.
  static inline thread_local ThreadTables* own_
      __attribute__((tls_model("initial-exec"), visibility("hidden"))) = nullptr;

 private:
  template <typename Fn>
  static void ForEachTable(Fn&& fn);
  static ThreadTables* First();
  // The calling thread's, registered on first use.
  static ThreadTables* Own() {
    ThreadTables* t = own_;
    return t != nullptr ? t : RegisterThisThread();
  }
  static ThreadTables* RegisterThisThread();
  // The calling thread's newest table, without registering; nullptr if it has none.
  static BlockTable* OwnNewest();
  // The thread's first block, a full table; a block in an older table or another
  // thread's.
  static bool InsertSlow(const void* ptr, const LiveBlock& block);
  static bool RemoveSlow(const void* ptr, LiveBlock* block);
};

// The tables of one thread (or of threads that exited: a new thread adopts them, so
// their blocks stay findable while memory stays bounded).
// Its own cache lines: other threads' allocations never write them.
struct alignas(64) LiveBlocks::ThreadTables {
  std::atomic<BlockTable*> newest{nullptr};
  std::atomic<bool> retired{false};
  std::atomic<ThreadTables*> next{nullptr};  // the registry's list, append-only
  PlaceShares shares;  // kept by a thread that adopts the tables: the sums stay whole
};

inline PlaceShares& LiveBlocks::OwnShares() { return Own()->shares; }

inline BlockTable* LiveBlocks::OwnNewest() {
  ThreadTables* t = own_;
  return t != nullptr ? t->newest.load(std::memory_order_relaxed) : nullptr;
}

// The common case inline: the thread's newest table.
inline bool LiveBlocks::Insert(const void* ptr, const LiveBlock& block) {
  BlockTable* table = OwnNewest();
  return (table != nullptr && table->Insert(ptr, block)) || InsertSlow(ptr, block);
}

inline bool LiveBlocks::Remove(const void* ptr, LiveBlock* block) {
  BlockTable* table = OwnNewest();
  return (table != nullptr && table->Remove(ptr, block, /*owner=*/true)) || RemoveSlow(ptr, block);
}

template <typename Fn>
void LiveBlocks::ForEachTable(Fn&& fn) {
  for (ThreadTables* t = First(); t != nullptr; t = t->next.load(std::memory_order_acquire)) {
    for (BlockTable* table = t->newest.load(std::memory_order_acquire); table != nullptr;
         table = table->older) {
      fn(*table);
    }
  }
}

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_LIVE_BLOCK_TABLE_H_
