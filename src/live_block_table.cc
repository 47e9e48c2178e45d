#include "live_block_table.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

#include "flags.h"

namespace paddle_prof::internal {

namespace {

constexpr std::memory_order kRelaxed = std::memory_order_relaxed;

}  // namespace

LiveBlockTable& LiveBlockTable::Get() {
  // Twice the slots of the blocks it must hold keeps probe runs short. Leaked: blocks
  // are freed during exit, after static destructors.
  static auto* table = new LiveBlockTable(
      2 * static_cast<size_t>(std::max(FLAGS_paddle_prof_max_live_blocks, 1024)));
  return *table;
}

LiveBlockTable::LiveBlockTable(size_t min_slots) {
  slots_count_ = 1;
  shift_ = 64;
  while (slots_count_ < min_slots) {
    slots_count_ <<= 1;
    --shift_;
  }
  // Straight from mmap: zero pages are a table of empty slots, and untouched ones cost
  // nothing. Never from malloc, which a preloaded hook would count.
  void* p = mmap(nullptr, slots_count_ * sizeof(Slot), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, slots_count_ * sizeof(Slot), MADV_HUGEPAGE);  // random probes: spare the TLB
  slots_ = static_cast<Slot*>(p);
}

LiveBlockTable::~LiveBlockTable() { munmap(slots_, slots_count_ * sizeof(Slot)); }

void LiveBlockTable::Slot::Write(const LiveBlock& b) {
  size.store(b.size, kRelaxed);
  place_thread_step.store(static_cast<uint64_t>(b.place & 0xff) |
                              static_cast<uint64_t>(static_cast<uint16_t>(b.thread)) << 8 |
                              static_cast<uint64_t>(static_cast<uint32_t>(b.step)) << 24,
                          kRelaxed);
  serial.store(b.serial, kRelaxed);
  window.store(b.window, kRelaxed);
  name.store(b.name, kRelaxed);
  tag.store(b.tag, kRelaxed);
}

LiveBlock LiveBlockTable::Slot::Read() const {
  LiveBlock b;
  b.size = size.load(kRelaxed);
  const uint64_t pts = place_thread_step.load(kRelaxed);
  b.place = static_cast<int>(pts & 0xff);
  b.thread = static_cast<int16_t>((pts >> 8) & 0xffff);
  b.step = static_cast<int>(static_cast<uint32_t>(pts >> 24));
  b.serial = serial.load(kRelaxed);
  b.window = window.load(kRelaxed);
  b.name = name.load(kRelaxed);
  b.tag = tag.load(kRelaxed);
  return b;
}

bool LiveBlockTable::Insert(const void* ptr, const LiveBlock& block) {
  const auto key = reinterpret_cast<uintptr_t>(ptr);
  const size_t mask = slots_count_ - 1;
  for (size_t i = Home(key), n = 0; n < kMaxProbe; i = (i + 1) & mask, ++n) {
    Slot& s = slots_[i];
    uintptr_t k = s.key.load(kRelaxed);
    if ((k == kEmpty || k == kTombstone) &&
        s.key.compare_exchange_strong(k, kBusy, std::memory_order_acquire)) {
      s.Write(block);
      s.key.store(key, std::memory_order_release);  // publishes the fields
      return true;
    }
  }
  return false;
}

bool LiveBlockTable::Remove(const void* ptr, LiveBlock* block) {
  const auto key = reinterpret_cast<uintptr_t>(ptr);
  const size_t mask = slots_count_ - 1;
  for (size_t i = Home(key), n = 0; n < kMaxProbe; i = (i + 1) & mask, ++n) {
    Slot& s = slots_[i];
    uintptr_t k = s.key.load(std::memory_order_acquire);
    if (k == kEmpty) return false;  // never used past here: the block is not in the table
    if (k != key) continue;
    *block = s.Read();
    // A plain store suffices: the block's address cannot be handed out again (and
    // inserted) before its free is recorded, which is the callers' contract.
    s.key.store(kTombstone, std::memory_order_relaxed);
    return true;
  }
  return false;
}

}  // namespace paddle_prof::internal
