#include "event_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "capture_files.h"
#include "flags.h"
#include "native_guard.h"

namespace paddle_prof::internal {

namespace {

// Chunks a capture could not map in its directory (a full disk), since the process began.
std::atomic<int64_t> g_capture_chunks_failed{0};

std::atomic<size_t> g_chunks_in_use{0};

// A 2 MiB-aligned, pre-faulted chunk straight from mmap: the profiler's memory must
// never pass through malloc (a preloaded malloc hook would count it), and with
// transparent huge pages it costs one fault instead of 512.
EventRecord* MapChunk() {
  constexpr size_t kSize = EventBuffer::kChunkBytes;
  void* p = mmap(nullptr, 2 * kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (begin + kSize - 1) & ~(uintptr_t{kSize} - 1);
  if (aligned > begin) munmap(p, aligned - begin);
  if (aligned + kSize < begin + 2 * kSize) {
    munmap(reinterpret_cast<void*>(aligned + kSize), begin + 2 * kSize - aligned - kSize);
  }
  auto* chunk = reinterpret_cast<char*>(aligned);
  madvise(chunk, kSize, MADV_HUGEPAGE);
  for (size_t off = 0; off < kSize; off += 4096) {
    reinterpret_cast<volatile char*>(chunk)[off] = 0;
  }
  return reinterpret_cast<EventRecord*>(chunk);
}

}  // namespace

int64_t EventBuffer::CaptureChunksFailed() {
  return g_capture_chunks_failed.load(std::memory_order_relaxed);
}

size_t EventBuffer::ChunksInUse() { return g_chunks_in_use.load(std::memory_order_relaxed); }

int64_t EventBuffer::BoundMb() { return std::max(FLAGS_paddle_prof_max_buffer_mb, 0); }

void EventBuffer::ReleaseChunks() {
  for (std::atomic<EventRecord*>& slot : chunks_) {
    if (EventRecord* chunk = slot.exchange(nullptr, std::memory_order_relaxed)) {
      munmap(chunk, kChunkBytes);
      g_chunks_in_use.fetch_sub(1, std::memory_order_relaxed);
    }
  }
}

void EventBuffer::DetachCaptureInChild() {
  if (!file_backed_) return;
  for (std::atomic<EventRecord*>& slot : chunks_) {
    EventRecord* chunk = slot.load(std::memory_order_relaxed);
    if (chunk == nullptr) continue;
    void* copy =
        mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED) continue;
    std::memcpy(copy, chunk, kChunkBytes);
    // Replaces the shared mapping in place: the chunk keeps its address and its records.
    if (mremap(copy, kChunkBytes, kChunkBytes, MREMAP_MAYMOVE | MREMAP_FIXED, chunk) ==
        MAP_FAILED) {
      munmap(copy, kChunkBytes);
    }
  }
  file_backed_ = false;
  capture_prefix_.clear();
  stale_chunks_ = next_to_zero_ = 0;
}

namespace {

// The directory part of a chunk file prefix.
std::string_view DirOf(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  return std::string_view(prefix).substr(0, slash == std::string::npos ? 0 : slash);
}

}  // namespace

void EventBuffer::Clear(const std::string& capture_prefix) {
  stale_chunks_ = next_to_zero_ = 0;
  size_.store(0, std::memory_order_relaxed);
  released_below_.store(0, std::memory_order_relaxed);
  oldest_chunk_ = 0;
  // Chunks moved around the ring by a flight recorder come back to the first slots,
  // where the next records look for them.
  size_t next = 0;
  for (size_t slot = 0; slot < kMaxChunks; ++slot) {
    EventRecord* chunk = chunks_[slot].load(std::memory_order_relaxed);
    if (chunk == nullptr) continue;
    if (slot != next) {
      chunks_[next].store(chunk, std::memory_order_relaxed);
      chunks_[slot].store(nullptr, std::memory_order_relaxed);
    }
    ++next;
  }
  if (capture_prefix.empty() && !file_backed_) return;
  // A capture in the directory of the last one keeps its chunk files (a capture is never
  // a flight recorder: chunk k is in slot k), renamed for the new window; any other
  // change of capture returns the chunks.
  bool keep = !capture_prefix.empty() && !capture_prefix_.empty() &&
              DirOf(capture_prefix) == DirOf(capture_prefix_);
  for (size_t k = 0; keep && k < next; ++k) {
    keep = capture_prefix == capture_prefix_ ||
           rename((capture_prefix_ + std::to_string(k)).c_str(),
                  (capture_prefix + std::to_string(k)).c_str()) == 0;
  }
  if (keep) {
    stale_chunks_ = next;
  } else {
    ReleaseChunks();
  }
  file_backed_ = !capture_prefix.empty();
  capture_prefix_ = capture_prefix;
}

EventRecord* EventBuffer::ChunkFor(size_t n) {
  const size_t index = n / kRecordsPerChunk;
  const size_t slot = Slot(n);
  const bool oldest_released =
      oldest_chunk_ < index &&
      (oldest_chunk_ + 1) * kRecordsPerChunk <= released_below_.load(std::memory_order_acquire);
  const bool ring_full = index - oldest_chunk_ >= kMaxChunks;  // then `slot` is the oldest's
  if (ring_full && !oldest_released) return nullptr;
  EventRecord* chunk = chunks_[slot].load(std::memory_order_relaxed);
  if (chunk != nullptr && !ring_full) {
    // A capture's chunks taken up again are zeroed, this one and the next: while this
    // one fills, what follows it reads as not written. (Captures keep no flight
    // recorder, so their chunk k is in slot k.)
    for (; next_to_zero_ < stale_chunks_ && next_to_zero_ <= index + 1; ++next_to_zero_) {
      std::memset(static_cast<void*>(chunks_[next_to_zero_].load(std::memory_order_relaxed)), 0,
                  kChunkBytes);
    }
    return chunk;
  }
  // The oldest chunk, if all its records were released, takes the new ones.
  if (oldest_released) {
    std::atomic<EventRecord*>& oldest = chunks_[oldest_chunk_ % kMaxChunks];
    chunk = oldest.load(std::memory_order_relaxed);
    oldest.store(nullptr, std::memory_order_relaxed);
    ++oldest_chunk_;
    chunks_[slot].store(chunk, std::memory_order_release);
    return chunk;
  }
  // The bound in whole chunks, rounded up; a buffer's first chunk is granted whatever
  // the bound, so that every recording thread records something (the report says when
  // that took the buffers past the bound).
  const size_t bound = static_cast<size_t>(BoundMb()) << 20;
  const size_t budget = (bound + kChunkBytes - 1) / kChunkBytes;
  size_t in_use = g_chunks_in_use.load(std::memory_order_relaxed);
  do {
    if (index > 0 && in_use >= budget) return nullptr;
  } while (!g_chunks_in_use.compare_exchange_weak(in_use, in_use + 1, std::memory_order_relaxed));
  {
    NativeGuard profiler_memory;  // not the program's mapping, under --native
    if (!capture_prefix_.empty()) {
      chunk = MapCaptureChunk(capture_prefix_ + std::to_string(index), kChunkBytes);
      // A capture that cannot grow (a full disk) ends; the records stay in memory.
      if (chunk == nullptr) {
        capture_prefix_.clear();
        g_capture_chunks_failed.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (chunk == nullptr) chunk = MapChunk();
  }
  if (chunk == nullptr) {
    g_chunks_in_use.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  chunks_[slot].store(chunk, std::memory_order_release);
  return chunk;
}

}  // namespace paddle_prof::internal
