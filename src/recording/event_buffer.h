// An append-only store of EventRecords, written by one thread and read by the
// collector from another. Memory comes in 2 MiB chunks that are kept across windows,
// so a long training loop writes into memory it already touched; a global budget
// (FLAGS_paddle_prof_max_buffer_mb, in whole chunks rounded up) bounds all buffers
// together, and records past it are dropped and counted rather than exhausting memory.
// A buffer's first chunk is granted whatever the budget: every thread records something.
//
// Record indexes only grow within a window; chunk k of the window lives in slot
// k % kMaxChunks. A flight-recorder window (keep_last_steps) releases the records of
// dropped steps (ReleaseBelow): the owner then moves the oldest released chunk to the
// slot of the next one it needs, so memory stops growing however long the window runs.
#ifndef PADDLE_PROF_SRC_EVENT_BUFFER_H_
#define PADDLE_PROF_SRC_EVENT_BUFFER_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <string>

#include "event_record.h"

namespace paddle_prof::internal {

class EventBuffer {
 public:
  static constexpr size_t kChunkBytes = size_t{2} << 20;
  static constexpr size_t kRecordsPerChunk = kChunkBytes / sizeof(EventRecord);
  static constexpr size_t kMaxChunks = 4096;  // 8 GiB per thread, far above any budget

  EventBuffer() = default;
  EventBuffer(const EventBuffer&) = delete;
  EventBuffer& operator=(const EventBuffer&) = delete;
  // Chunks are never returned: recorders live for the whole process.

  // Owner thread only: appends `record` when it goes into the chunk already in place
  // (no allocation, no call), else returns false with nothing appended: a caller's
  // common case stays free of calls, and the rest goes through Append().
  __attribute__((always_inline)) bool AppendInChunk(const EventRecord& record) {
    const size_t n = size_.load(std::memory_order_relaxed);
    if (n % kRecordsPerChunk == 0) return false;
    chunks_[Slot(n)].load(std::memory_order_relaxed)[n % kRecordsPerChunk] = record;
    size_.store(n + 1, std::memory_order_release);  // publishes the record to the collector
    return true;
  }
  // Owner thread only. False when the budget is spent (the record is dropped). Always
  // inlined: as a call it cost a tracked alloc/free pair 7 ns (BM_TrackedAllocFree).
  __attribute__((always_inline)) bool Append(const EventRecord& record) {
    if (AppendInChunk(record)) return true;
    // The first record of a chunk: the chunk may need allocating.
    const size_t n = size_.load(std::memory_order_relaxed);
    EventRecord* chunk = ChunkFor(n);
    if (chunk == nullptr) return false;
    chunk[0] = record;
    size_.store(n + 1, std::memory_order_release);
    return true;
  }
  // Owner thread only: forget the records, keep the memory (gathered in the first slots).
  // With a `capture_prefix` (capture_files.h), the window's chunks are instead mapped
  // from files named by it and the chunk number, so that what is written survives the
  // process. Chunk files of the previous window in the same directory are renamed and
  // kept (each zeroed as it comes back into use: zero marks "not written"); other chunks
  // are returned.
  void Clear(const std::string& capture_prefix = std::string());
  // In a forked child (its only thread): chunks mapped from the parent's capture files
  // become private copies, so that the child's records never reach the parent's capture.
  void DetachCaptureInChild();
  // Owner thread only, off the hot path: make sure the first chunk exists.
  void Reserve() { ChunkFor(0); }

  // Any thread: the records published so far, and access to them.
  size_t Size() const { return size_.load(std::memory_order_acquire); }
  // Records at or above the oldest the window still keeps (see ReleaseBelow).
  const EventRecord& operator[](size_t i) const {
    return chunks_[Slot(i)].load(std::memory_order_acquire)[i % kRecordsPerChunk];
  }
  // Any thread, while the window is open: records below `index` will not be read again,
  // and their chunks may take newer records. Only grows within a window.
  void ReleaseBelow(size_t index) const {
    size_t released = released_below_.load(std::memory_order_relaxed);
    while (index > released &&
           !released_below_.compare_exchange_weak(released, index, std::memory_order_release)) {
    }
  }

  // Records below this may have been overwritten (ReleaseBelow).
  size_t ReleasedBelow() const { return released_below_.load(std::memory_order_acquire); }

  // Chunks allocated by all buffers, for tests and benchmarks.
  static size_t ChunksInUse();
  // The budget now (FLAGS_paddle_prof_max_buffer_mb), in MiB.
  static int64_t BoundMb();
  // Capture chunks that could not be had (a full disk) since the process started: each
  // ended its buffer's capture, whose later records stay in memory only.
  static int64_t CaptureChunksFailed();

 private:
  // Returns the chunk that holds record n, allocating it when needed; nullptr when the
  // budget or kMaxChunks is reached.
  EventRecord* ChunkFor(size_t n);

  // Unmaps every chunk (a window that captures never reuses them).
  void ReleaseChunks();

  static size_t Slot(size_t n) { return (n / kRecordsPerChunk) % kMaxChunks; }

  std::atomic<size_t> size_{0};
  std::array<std::atomic<EventRecord*>, kMaxChunks> chunks_{};
  // Written by the window control, which reads the buffer: what it says it will not read.
  mutable std::atomic<size_t> released_below_{0};
  size_t oldest_chunk_ = 0;  // owner only: the oldest chunk still in place
  // Owner only: the chunk files' prefix while the window captures, else empty; and
  // whether any chunk in place is mapped from a file.
  std::string capture_prefix_;
  bool file_backed_ = false;
  // Owner only: chunks [next_to_zero_, stale_chunks_) still hold an older window's
  // records (chunk k is in slot k in a capture).
  size_t stale_chunks_ = 0;
  size_t next_to_zero_ = 0;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_EVENT_BUFFER_H_
