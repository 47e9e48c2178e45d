// The per-thread half of recording: a stack of the thread's open scopes and the
// buffer its finished calls go to. Only the owner thread writes; the collector reads
// the buffer, the counters and the stack's depth from another thread while the owner
// goes on.
//
// Windows (enable → reset → … → disable) are told apart by id: a recorder holds the
// records of one window, and the first scope a thread begins or ends in a newer window
// rewinds its buffer and frees the interned names its open scopes do not hold
// (name_interner.h). So a reset from any thread never touches another thread's memory,
// and records of an older window are never read as current.
#ifndef PADDLE_PROF_SRC_THREAD_RECORDER_H_
#define PADDLE_PROF_SRC_THREAD_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "call_stacks.h"
#include "clock.h"
#include "event_buffer.h"
#include "gpu_tracer.h"
#include "live_block_table.h"
#include "memory_figures.h"
#include "name_interner.h"
#include "native_peak.h"
#include "open_call.h"
#include "paddle_prof/profiler_enabled.h"
#include "place_registry.h"
#include "scope_memory.h"

namespace paddle_prof::internal {

// Aligned, so that what every scope touches (everything before `memory`, and the
// memory's slot count) shares one cache line.
struct alignas(64) OpenScope {
  const char* name;
  const char* tag;
  uint64_t start;
  // The RecordEvent that opened it, or kAbandoned once it ended on another thread.
  // Atomic: that other thread marks it, the owner thread pops it.
  std::atomic<const void*> owner;
  std::atomic<uint64_t> window;  // read by the collector to count scopes left open
  uint64_t serial;               // per thread, increasing: tells blocks allocated inside
  GpuTracer* gpu;                // the tracer it pushed its id to, or null
  ScopeMemory memory;
  uint32_t stack;  // a top-level scope's call stack id (call_stacks.h), 0 for none
  // What a framework told more of the op (kOpDetail), set only where `detail` is: its
  // inputs' dims and types, interned (NoteInputs; null for none); for an op autograd
  // records (NoteSequence), its sequence number + 1 (0 for none) and the ids torch gave
  // its forward op's thread (0 for a forward op) and its own, small counters of the
  // threads torch has seen. Packed so that the slot stays five cache lines.
  uint32_t forward_thread;
  const char* inputs;
  uint64_t sequence;
  uint32_t torch_thread;
  bool detail;
};
static_assert(sizeof(OpenScope) == 5 * 64, "a scope's slot grew a cache line");

// Per-window counts for the report's warnings, written by the owner only (but one),
// off the common path.
struct RecorderCounters {
  OwnedCounter forced_closes;   // ends that closed scopes opened after them
  OwnedCounter foreign_ends;    // scopes ended on a thread that did not begin them
  OwnedCounter dropped;         // calls lost to the buffer budget or depth bound
  OwnedCounter lost_places;     // a scope touched more than ScopeMemory::kSlots
  OwnedCounter dropped_memory;  // memory records lost to the buffer budget
  OwnedCounter autograd_ops;    // calls recorded with torch's sequence number (kOpDetail)
  // This thread's scopes of the window ended on another thread: written by that thread,
  // so a real atomic add.
  std::atomic<int64_t> abandoned{0};

  void Clear() {
    for (OwnedCounter* c :
         {&forced_closes, &foreign_ends, &dropped, &lost_places, &dropped_memory, &autograd_ops}) {
      *c = 0;
    }
    abandoned.store(0, std::memory_order_relaxed);
  }
};

// An op open on one thread, lent to another (ThreadRecorder::Lend).
struct LentOwner {
  const char* name = nullptr;
  const char* tag = nullptr;
  uint64_t window = 0;  // the owner's names are valid while this window is open
};

class ThreadRecorder {
 public:
  static constexpr uint32_t kMaxDepth = kMaxScopeDepth;
  // Never the address of a RecordEvent.
  static inline const void* const kAbandoned = reinterpret_cast<const void*>(uintptr_t{1});

  // The calling thread's recorder, registered on first use; nullptr while the thread
  // is exiting.
  static ThreadRecorder* Current() {
    ThreadRecorder* r = current_;
    return r != nullptr ? r : RegisterCurrentThread();
  }

  // The calling thread's recorder if it has one, without registering it (which could
  // hand it an exited thread's recorder while that one's records are read).
  static ThreadRecorder* CurrentIfRegistered() { return current_; }

  ThreadRecorder(int index, int os_tid, std::string thread_name);

  // ---- Owner-thread operations: the hot path, inline. ----

  // Opens a scope for `owner` in `window`; false (and a counted drop) past kMaxDepth.
  // Inline to the end of the common case (the window's recorder, no abandoned scope on
  // top, no stack to take, no GPU tracer): a handful of loads and stores around the clock
  // read, no call. The rest is BeginSlow's, out of line, so that its calls cost the
  // common case no saved registers.
  __attribute__((always_inline)) bool Begin(const void* owner, const char* name,
                                            const char* tag, uint64_t window, uint32_t* depth) {
    const uint32_t d = depth_.load(std::memory_order_relaxed);
    const bool rare =
        window_.load(std::memory_order_relaxed) != window || d >= kMaxDepth ||
        (d > 0 ? stack_[d - 1].owner.load(std::memory_order_relaxed) == kAbandoned
               : g_stack_capture.load(std::memory_order_relaxed) != nullptr) ||
        g_gpu_tracer.load(std::memory_order_relaxed) != nullptr;
    if (__builtin_expect(rare, 0)) return BeginSlow(owner, name, tag, window, depth);
    const uint64_t serial = next_serial_.load(std::memory_order_relaxed) + 1;
    next_serial_.store(serial, std::memory_order_relaxed);
    OpenScope& scope = Fill(d, owner, name, tag, window, serial, /*stack=*/0, /*gpu=*/nullptr);
    depth_.store(d + 1, std::memory_order_relaxed);
    *depth = d;
    scope.start = Clock::Now();  // last, so that the bookkeeping is not timed
    return true;
  }

  // Writes the slot of a scope begun at depth `d`, all but its start.
  __attribute__((always_inline)) OpenScope& Fill(uint32_t d, const void* owner, const char* name,
                                                 const char* tag, uint64_t window,
                                                 uint64_t serial, uint32_t stack,
                                                 GpuTracer* gpu) {
    OpenScope& scope = stack_[d];
    scope.stack = stack;  // read only at depth 0
    scope.detail = false;
    scope.name = name;
    scope.tag = tag;
    scope.owner.store(owner, std::memory_order_relaxed);
    scope.window.store(window, std::memory_order_relaxed);
    scope.serial = serial;
    scope.memory.Clear();
    scope.gpu = gpu;
    return scope;
  }

  // Begin() in every case: rewinds for a new window, drops abandoned scopes, takes a
  // top-level scope's stack, tells the GPU tracer.
  bool BeginSlow(const void* owner, const char* name, const char* tag, uint64_t window,
                 uint32_t* depth);

  // Ends `owner`'s scope at `depth` if it is still open (an outer end may have closed
  // it). A live owner's address is unique, so it also tells the scope from a later one
  // at the same depth.
  __attribute__((always_inline)) void End(const void* owner, uint32_t depth, uint64_t end_tick) {
    if (depth + 1 == depth_.load(std::memory_order_relaxed) &&
        stack_[depth].owner.load(std::memory_order_relaxed) == owner) {
      depth_.store(depth, std::memory_order_relaxed);
      Emit(stack_[depth], depth, end_tick);
    } else {
      EndSlow(owner, depth, end_tick);
    }
  }

  // Note what a framework tells of the op whose scope `owner` (a RecordEvent) has just
  // begun on this thread, if it did begin one and is still the innermost: its record
  // carries it (kOpDetail). NoteInputs: its inputs' dims and types (interned here).
  // NoteSequence: torch's sequence number; `forward_thread`: for a backward node, the id
  // torch gave its forward op's thread, else 0; `torch_thread`: the id torch gives this
  // thread.
  static void NoteInputs(const void* owner, std::string_view inputs);
  static void NoteSequence(const void* owner, int64_t number, uint64_t forward_thread,
                           uint64_t torch_thread);

  // Moves the start of the `count` innermost open scopes back to `tick`, none before
  // the start of the scope around them (scope_backdate.h). Owner thread only.
  void BackdateOpenScopes(int count, uint64_t tick);

  // Called on the thread that ends a scope `recorder` (another thread's) began: marks
  // the scope abandoned, so its own thread drops it, and counts it on this thread.
  void CountForeignEnd(ThreadRecorder* recorder, uint32_t depth, const void* owner);
  // `s` interned for a scope of `window` (see name_interner.h): valid while `window` is
  // open and while a scope holding it is.
  const char* Intern(std::string_view s, uint64_t window) {
    SyncWindow(window);
    return names_.Intern(s);
  }

  // Memory, on the allocating or freeing thread while `window` is open. Allocation:
  // fills in who owns the block, then charges it to the innermost open scope.
  // A native block's `move` is what it did to the native place (native_peak.h).
  void SetOwner(uint64_t window, LiveBlock* block);
  void ChargeAlloc(const LiveBlock& block, const NativeMove& move = {});
  // Free: charges the free to the innermost open scope and takes the block out of the
  // running bytes of the open scope (or root) that allocated it, if any.
  void ChargeFree(uint64_t window, const LiveBlock& block, const NativeMove& move = {});

  // Work a thread does for an op open on another thread (an OpenMP region the op started,
  // src/preload/parallel_regions.cc): the blocks it allocates with no event of its own
  // open are owned by that op, so that its live bytes, the holders at the peak and the
  // holders of growth name it; the worker's own figures ([no event]'s allocations, its
  // share of the place) count them as before, since a call's peak is per thread.
  // Lends `owner` to the calling thread; returns what it had, to restore after. Out of
  // line, as InnermostOpen: the preload library calls them, and must reach this
  // library's thread-locals, not copies of its own.
  static LentOwner Lend(const LentOwner& owner);
  // The calling thread's innermost scope open in `window`, else what it was lent for
  // `window`; false for neither.
  static bool InnermostOpen(uint64_t window, LentOwner* owner);

  // Owner thread: its scopes open in `window`, outermost first, and their names (an
  // out-of-memory dump's path).
  std::vector<OpenCall> OpenScopes(uint64_t window) const;
  std::vector<std::string> OpenScopeNames(uint64_t window) const;

  // ---- Collector-side reads. ----
  uint64_t window() const { return window_.load(std::memory_order_acquire); }
  const EventBuffer& buffer() const { return buffer_; }
  const RecorderCounters& counters() const { return counters_; }
  const RootUsage& root_usage(int place) const { return roots_[place]; }
  // The thread's share of the native place at the moment its peak was `peak` (the
  // window's highest, read after the window closed).
  NativeShare NativeShareAt(int64_t peak) const;
  // Scopes on the stack begun in windows [first, last), not ended on another thread (a
  // racy but safe snapshot).
  int64_t OpenScopesBegunIn(uint64_t first, uint64_t last) const;
  // Scopes begun in the recorder's window so far, dropped ones included. Read after the
  // buffer's Size(): every call recorded by then was begun by then.
  int64_t BegunInWindow() const {
    return static_cast<int64_t>(next_serial_.load(std::memory_order_relaxed) -
                                window_first_serial_.load(std::memory_order_relaxed));
  }
  // Scopes begun by the thread so far (any window): where a step starts, in serials.
  uint64_t SerialNow() const { return next_serial_.load(std::memory_order_relaxed); }
  int index() const { return index_; }
  int os_tid() const { return os_tid_; }
  const std::string& thread_name() const { return thread_name_; }

  // ---- Registry-side: a recorder whose thread exited can be handed to a new thread
  // once nobody needs its records. ----
  bool retired() const { return retired_.load(std::memory_order_acquire); }
  // No record is read again (EventBuffer::ReleaseBelow), or none was made.
  bool AllRecordsReleased() const { return buffer_.ReleasedBelow() >= buffer_.Size(); }
  void Retire() { retired_.store(true, std::memory_order_release); }
  void Adopt(int os_tid, std::string thread_name);
  // In a forked child: the buffer's capture chunks become the child's own.
  void DetachCaptureInChild() { buffer_.DetachCaptureInChild(); }
  // Frees the names of a retired recorder, once no window can read its records.
  void ReleaseNames() { names_.ReleaseAllBut(nullptr, 0); }

 private:
  struct ExitNotifier;
  static ThreadRecorder* RegisterCurrentThread();

  static void Bump(OwnedCounter& counter) { counter += 1; }
  // The innermost open scope of this thread's recorder if `owner` opened it (else null),
  // marked as holding a detail (OpenScope::detail), its fields cleared the first time.
  static OpenScope* DetailOf(const void* owner);
  // Rewinds buffer and counters when `window` is newer than what they hold.
  void SyncWindow(uint64_t window) {
    if (window_.load(std::memory_order_relaxed) != window) StartWindow(window);
  }
  // Rewinds, and frees the names no open scope holds.
  void StartWindow(uint64_t window);
  // Rewinds the buffer, onto files of the window's capture when it has one.
  void StartCapture(uint64_t window);
  // Drops abandoned scopes from the top of the stack; returns the new depth.
  uint32_t PopAbandoned(uint32_t depth);
  void EndSlow(const void* owner, uint32_t depth, uint64_t end_tick);
  // Hands a finished scope's memory to its parent; off the common path.
  void FoldMemory(const OpenScope& scope, uint32_t depth, bool emit);
  // The open scope (or -1: root) whose running bytes hold `block`; -2 for none.
  int LevelOf(const LiveBlock& block) const;
  // False when nothing was appended (the timeline is off, or the buffer bound hit).
  bool AppendMemoryEvent(RecordKind kind, int place, const char* name, const char* tag,
                         int64_t bytes, uint64_t tick, uint8_t block_kind = 0);  // tick 0: now
  // The native place's blocks (every malloc, under --native) come by the million: their
  // timeline is kept by intervals (kNativeEventsPerInterval events, or up to the next
  // call's end), one record per owner of the net bytes it allocated in the interval, so
  // that its memory stays bounded. A peak inside an interval is not in the timeline, nor
  // is an interval still open when the window closes (the place's figures count every
  // block; its peak is sampled, as the report says).
  void AddNative(int place, const char* name, const char* tag, int64_t delta);
  void FlushNative(int place);
  // A native move of the window: the thread's ledger at the place's peak kept around
  // the interval's update (AddNative), so that the report knows what the thread held at
  // the moment of the peak. Taken lazily: at the thread's first move after another
  // thread raised the peak (its state then is its state at that moment), or at its move
  // after it raised the peak itself, unless that one raises it again.
  void NativeMoved(int place, const char* name, const char* tag, int64_t delta,
                   const NativeMove& move);
  void KeepNativeShare(int64_t peak);
  // The owner's side of `native_seq_` (a sequence lock: plain stores, no atomic
  // read-modify-write on the tracked pair's path).
  void BeginNativeWrite() {
    native_seq_.store(native_seq_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  void EndNativeWrite() {
    native_seq_.store(native_seq_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Every scope that leaves the stack goes through here (or PopAbandoned). Inline for
  // the common case, with no call: a scope of the current window that touched no
  // memory, with no GPU tracer, no native interval open and no stack to record, is one
  // record appended to the chunk in place.
  __attribute__((always_inline)) void Emit(const OpenScope& scope, uint32_t depth,
                                           uint64_t end_tick) {
    const uint64_t window = g_window.load(std::memory_order_acquire);
    const bool rare = scope.gpu != nullptr || window == 0 ||
                      window_.load(std::memory_order_relaxed) != window ||
                      native_owners_.load(std::memory_order_relaxed) != 0 ||
                      !scope.memory.empty() || (depth == 0 && scope.stack != 0) ||
                      scope.detail || scope.window.load(std::memory_order_relaxed) != window;
    // A new chunk (once in 65,536 records) also goes the slow way.
    if (__builtin_expect(rare || !buffer_.AppendInChunk(EventRecord::Call(
                                         scope.name, scope.tag, depth, false, scope.start,
                                         end_tick)),
                         0)) {
      EmitSlow(scope, depth, end_tick);
    }
  }

  // Emit() in every case.
  void EmitSlow(const OpenScope& scope, uint32_t depth, uint64_t end_tick);

  // initial-exec: a plain %fs-relative load, no __tls_get_addr call per scope. The
  // initializer is visible here, so no TLS init wrapper is called on access either.
  static inline thread_local ThreadRecorder* current_
      __attribute__((tls_model("initial-exec"), visibility("hidden"))) = nullptr;
  static inline thread_local LentOwner lent_ __attribute__((tls_model("initial-exec")));

  // Owner-only state (depth_ and the scopes' windows are also read by the collector).
  OpenScope stack_[kMaxDepth];
  std::atomic<uint32_t> depth_{0};
  // Owner-written, collector-read: every Begin() takes the next serial.
  std::atomic<uint64_t> next_serial_{0};
  std::atomic<uint64_t> window_first_serial_{0};
  NameCache names_;  // the dynamic names and tags this thread's scopes use
  // The native interval and the share kept at the peak are written by the owner thread
  // only and read by the collector: atomics, read under `native_seq_` (odd while the
  // owner writes), so that a snapshot's report reads them whole.
  struct NativeOwner {
    std::atomic<const char*> name{nullptr};
    std::atomic<const char*> tag{nullptr};
    std::atomic<int64_t> delta{0};
  };
  static constexpr int kNativeOwners = 8;
  static constexpr int kNativeEventsPerInterval = 4096;
  NativeOwner native_[kNativeOwners];
  std::atomic<int> native_owners_{0};
  int native_events_ = 0;
  std::atomic<uint64_t> native_flushed_to_{0};  // the tick of the interval's last flush
  struct NativeKept {
    std::atomic<int64_t> peak{0};  // the peak it is at; 0 for none
    std::atomic<uint64_t> records_to{0};
    std::atomic<int> owners{0};
    NativeOwner owner[kNativeOwners];
  };
  NativeKept native_kept_;
  std::atomic<int64_t> native_raised_{0};  // a peak this thread raised, not kept yet
  int64_t native_seen_peak_ = 0;           // the peak after the thread's last move
  std::atomic<uint32_t> native_seq_{0};

  // Shared with the collector.
  std::atomic<uint64_t> window_{0};
  RecorderCounters counters_;
  RootUsage roots_[kMaxPlaces];  // what the thread did with no event open ("[no event]")
  EventBuffer buffer_;
  std::atomic<bool> retired_{false};

  const int index_;
  int os_tid_;
  std::string thread_name_;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_THREAD_RECORDER_H_
