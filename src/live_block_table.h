// Every tracked block that is still allocated: pointer → size, place and owner (the
// thread, scope and event that allocated it, the window and step it was allocated in).
// A free anywhere finds the block's size here; the report charges still-live blocks to
// their owners.
//
// Lock-free open addressing: an insert claims a slot with one compare-and-swap, a
// removal turns the key into a tombstone with another. Probing is bounded
// (kMaxProbe), so a full neighbourhood makes an insert fail (counted) instead of a
// search running long; the slots are reserved once (FLAGS_paddle_prof_max_live_blocks)
// and touched only as they are used.
#ifndef PADDLE_PROF_SRC_LIVE_BLOCK_TABLE_H_
#define PADDLE_PROF_SRC_LIVE_BLOCK_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace paddle_prof::internal {

struct LiveBlock {
  int64_t size = 0;
  int place = 0;
  int thread = -1;             // allocating recorder's index; -1 when profiling was off
  uint64_t serial = 0;         // innermost open scope at allocation (0: none)
  uint64_t window = 0;         // window of the allocation (0: profiling was off)
  int step = 0;                // MarkStep() calls in that window before the allocation
  const char* name = nullptr;  // innermost open event at allocation, if any
  const char* tag = nullptr;
};

class LiveBlockTable {
 public:
  static constexpr int kMaxProbe = 64;

  static LiveBlockTable& Get();  // sized from FLAGS_paddle_prof_max_live_blocks on first use

  explicit LiveBlockTable(size_t min_slots);
  LiveBlockTable(const LiveBlockTable&) = delete;
  LiveBlockTable& operator=(const LiveBlockTable&) = delete;
  ~LiveBlockTable();

  // Starts loading the slot `ptr` hashes to, so that work done meanwhile hides the miss.
  void Prefetch(const void* ptr) const {
    __builtin_prefetch(&slots_[Home(reinterpret_cast<uintptr_t>(ptr))], 1);
  }
  bool Insert(const void* ptr, const LiveBlock& block);
  bool Remove(const void* ptr, LiveBlock* block);

  // Calls fn(const LiveBlock&) for each block live during the walk; safe while other
  // threads insert and remove.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (size_t i = 0; i < slots_count_; ++i) {
      const Slot& s = slots_[i];
      const uintptr_t key = s.key.load(std::memory_order_acquire);
      if (key < kFirstKey) continue;
      LiveBlock block = s.Read();
      if (s.key.load(std::memory_order_acquire) == key) fn(block);  // unchanged meanwhile
    }
  }

 private:
  static constexpr uintptr_t kEmpty = 0;
  static constexpr uintptr_t kTombstone = 1;
  static constexpr uintptr_t kBusy = 2;  // claimed, fields being written
  static constexpr uintptr_t kFirstKey = 3;

  // Fields are atomics so that the collector may read a slot while it is reused.
  struct alignas(64) Slot {
    std::atomic<uintptr_t> key;
    std::atomic<int64_t> size;
    std::atomic<uint64_t> place_thread_step;
    std::atomic<uint64_t> serial;
    std::atomic<uint64_t> window;
    std::atomic<const char*> name;
    std::atomic<const char*> tag;
    void Write(const LiveBlock& b);
    LiveBlock Read() const;
  };

  size_t Home(uintptr_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);  // Fibonacci hashing
  }

  Slot* slots_;
  size_t slots_count_;  // a power of two
  int shift_;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_LIVE_BLOCK_TABLE_H_
