#include "thread_recorder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "capture_files.h"
#include "clock.h"
#include "native_guard.h"
#include "native_stacks.h"
#include "paddle_prof/profiler_enabled.h"
#include "recorder_registry.h"
#include "window_state.h"

namespace paddle_prof::internal {

namespace {

thread_local bool t_exiting = false;

}  // namespace

// Retires the thread's recorder when the thread exits; its records stay readable.
struct ThreadRecorder::ExitNotifier {
  ThreadRecorder* recorder = nullptr;
  ~ExitNotifier() {
    t_exiting = true;
    current_ = nullptr;
    recorder->Retire();
  }
};

ThreadRecorder* ThreadRecorder::RegisterCurrentThread() {
  if (t_exiting) return nullptr;
  NativeGuard profiler_memory;
  char name[16] = "";
  pthread_getname_np(pthread_self(), name, sizeof(name));
  ThreadRecorder* r = RecorderRegistry::Get().Register(static_cast<int>(syscall(SYS_gettid)), name);
  r->buffer_.Reserve();  // fault the first chunk in now, not inside a timed scope
  thread_local ExitNotifier notifier;
  notifier.recorder = r;
  current_ = r;
  return r;
}

ThreadRecorder::ThreadRecorder(int index, int os_tid, std::string thread_name)
    : index_(index), os_tid_(os_tid), thread_name_(std::move(thread_name)) {}

void ThreadRecorder::Adopt(int os_tid, std::string thread_name) {
  os_tid_ = os_tid;
  thread_name_ = std::move(thread_name);
  depth_.store(0, std::memory_order_relaxed);  // the old thread's open scopes never end
  retired_.store(false, std::memory_order_release);
}

void ThreadRecorder::StartWindow(uint64_t window) {
  // No window before this one is read again (name_interner.h): of the names, only
  // those open scopes hold are still needed.
  if (!names_.empty()) {
    const char* held[3 * kMaxDepth];
    size_t count = 0;
    for (uint32_t d = 0, depth = depth_.load(std::memory_order_relaxed); d < depth; ++d) {
      held[count++] = stack_[d].name;
      held[count++] = stack_[d].tag;
      if (stack_[d].detail) held[count++] = stack_[d].inputs;
    }
    std::sort(held, held + count, std::less<const char*>());
    names_.ReleaseAllBut(held, count);
  }
  StartCapture(window);
  counters_.Clear();
  // The old window's interval and share, whose names may go now.
  native_owners_.store(0, std::memory_order_relaxed);
  native_events_ = 0;
  native_flushed_to_.store(0, std::memory_order_relaxed);
  native_kept_.peak.store(0, std::memory_order_relaxed);
  native_raised_.store(0, std::memory_order_relaxed);
  native_seen_peak_ = 0;
  window_first_serial_.store(next_serial_.load(std::memory_order_relaxed),
                             std::memory_order_relaxed);
  for (RootUsage& root : roots_) root.Clear();
  // Release: a collector that sees the new window id also sees the emptied buffer.
  window_.store(window, std::memory_order_release);
}

void ThreadRecorder::StartCapture(uint64_t window) {
  const CaptureTarget* capture = g_capture.load(std::memory_order_acquire);
  if (capture == nullptr || capture->window != window) {
    buffer_.Clear();
    return;
  }
  NativeGuard profiler_memory;
  WriteCaptureThread(capture->dir, window, index_, os_tid_, thread_name_);
  // Names kept from an earlier window were logged in its capture, not this one's.
  names_.ForEach(LogCapturedName);
  buffer_.Clear(CaptureChunkPrefix(capture->dir, window, index_));
  buffer_.Reserve();  // the first chunk's file now, not at the first record
}

bool ThreadRecorder::BeginSlow(const void* owner, const char* name, const char* tag,
                               uint64_t window, uint32_t* depth) {
  SyncWindow(window);
  uint32_t d = depth_.load(std::memory_order_relaxed);
  if (d > 0 && stack_[d - 1].owner.load(std::memory_order_relaxed) == kAbandoned) {
    d = PopAbandoned(d);
  }
  uint32_t stack = 0;
  if (d == 0) {
    if (const StackCapture capture = g_stack_capture.load(std::memory_order_relaxed)) {
      stack = capture();
      // Code the capture ran (a finalizer, say) may have left a scope of its own open.
      d = depth_.load(std::memory_order_relaxed);
    }
  }
  // Counted as begun before anything can drop it: what the window began and the report
  // does not hold is left out, counted once (see BegunInWindow). After the capture,
  // whose code may begin scopes of its own: serials grow with depth.
  const uint64_t serial = next_serial_.load(std::memory_order_relaxed) + 1;
  next_serial_.store(serial, std::memory_order_relaxed);
  if (d == kMaxDepth) {
    Bump(counters_.dropped);
    return false;
  }
  OpenScope& scope = Fill(d, owner, name, tag, window, serial, d == 0 ? stack : 0,
                          g_gpu_tracer.load(std::memory_order_relaxed));
  if (scope.gpu != nullptr) scope.gpu->PushScope(GpuScopeId(index_, scope.serial));
  depth_.store(d + 1, std::memory_order_relaxed);
  *depth = d;
  scope.start = Clock::Now();  // last, so that the bookkeeping is not timed
  return true;
}

void ThreadRecorder::BackdateOpenScopes(int count, uint64_t tick) {
  const uint32_t d = depth_.load(std::memory_order_relaxed);
  const uint32_t first = count >= 0 && static_cast<uint32_t>(count) < d ? d - count : 0;
  const uint64_t floor = first > 0 ? stack_[first - 1].start : 0;
  for (uint32_t i = first; i < d; ++i) {
    stack_[i].start = std::min(stack_[i].start, std::max(tick, floor));
  }
}

void ThreadRecorder::EmitSlow(const OpenScope& scope, uint32_t depth, uint64_t end_tick) {
  if (scope.gpu != nullptr) scope.gpu->PopScope();
  // Acquire pairs with the release that opened the window: the collector of the
  // previous window is done with this memory before it is written again.
  const uint64_t window = g_window.load(std::memory_order_acquire);
  if (window == 0) return;  // profiling is off: the collector counted the scope as open
  SyncWindow(window);
  // The native interval closes with each call, so that the timeline follows the calls.
  if (native_owners_.load(std::memory_order_relaxed) != 0) {
    BeginNativeWrite();
    FlushNative(g_native_place_index.load(std::memory_order_relaxed));
    EndNativeWrite();
  }
  // A scope begun in an earlier window is cut: its record only tells the report
  // where its children's time belongs. It has left the stack, so its interned name
  // may be freed when this window starts (just now): the record names nothing.
  const bool cut = scope.window.load(std::memory_order_relaxed) != window;
  const bool recorded = buffer_.Append(EventRecord::Call(
      cut ? nullptr : scope.name, cut ? nullptr : scope.tag, depth, cut, scope.start, end_tick));
  if (!recorded && !cut) Bump(counters_.dropped);
  if (!scope.memory.empty()) FoldMemory(scope, depth, recorded && !cut);
  if (scope.gpu != nullptr && recorded && !cut) {
    buffer_.Append(EventRecord::GpuScope(GpuScopeId(index_, scope.serial)));
  }
  if (depth == 0 && scope.stack != 0 && recorded && !cut) {
    buffer_.Append(EventRecord::Stack(scope.stack));
  }
  if (scope.detail && recorded && !cut &&
      buffer_.Append(EventRecord::OpDetail(scope.inputs, scope.sequence, scope.forward_thread,
                                           scope.torch_thread)) &&
      scope.sequence != 0) {
    Bump(counters_.autograd_ops);
  }
}

OpenScope* ThreadRecorder::DetailOf(const void* owner) {
  ThreadRecorder* r = current_;
  if (r == nullptr) return nullptr;
  const uint32_t d = r->depth_.load(std::memory_order_relaxed);
  if (d == 0 || r->stack_[d - 1].owner.load(std::memory_order_relaxed) != owner) return nullptr;
  OpenScope& scope = r->stack_[d - 1];
  if (!scope.detail) {
    scope.detail = true;
    scope.inputs = nullptr;
    scope.sequence = 0;
  }
  return &scope;
}

void ThreadRecorder::NoteInputs(const void* owner, std::string_view inputs) {
  OpenScope* scope = DetailOf(owner);
  // Interned for the window the scope is recorded in; one that began in an earlier
  // window is cut from this one's report.
  const uint64_t window = scope != nullptr ? scope->window.load(std::memory_order_relaxed) : 0;
  if (window != 0 && window == current_->window_.load(std::memory_order_relaxed)) {
    scope->inputs = current_->Intern(inputs, window);
  }
}

void ThreadRecorder::NoteSequence(const void* owner, int64_t number, uint64_t forward_thread,
                                  uint64_t torch_thread) {
  if (number < 0) return;
  if (OpenScope* scope = DetailOf(owner)) {
    scope->sequence = static_cast<uint64_t>(number) + 1;
    scope->forward_thread = static_cast<uint32_t>(forward_thread);
    scope->torch_thread = static_cast<uint32_t>(torch_thread);
  }
}

uint32_t ThreadRecorder::PopAbandoned(uint32_t depth) {
  while (depth > 0 && stack_[depth - 1].owner.load(std::memory_order_relaxed) == kAbandoned) {
    --depth;
    if (stack_[depth].gpu != nullptr) stack_[depth].gpu->PopScope();
    // Its call is not reported, but what it allocated still belongs to its parent.
    if (!stack_[depth].memory.empty()) FoldMemory(stack_[depth], depth, /*emit=*/false);
  }
  depth_.store(depth, std::memory_order_relaxed);
  return depth;
}

void ThreadRecorder::EndSlow(const void* owner, uint32_t depth, uint64_t end_tick) {
  const uint32_t top = PopAbandoned(depth_.load(std::memory_order_relaxed));
  if (depth >= top || stack_[depth].owner.load(std::memory_order_relaxed) != owner) {
    return;  // an outer end already closed it
  }
  // Scopes opened after this one end with it, innermost first, as RAII would have.
  bool forced = false;
  for (uint32_t d = top; d > depth;) {
    --d;
    depth_.store(d, std::memory_order_relaxed);
    if (stack_[d].owner.load(std::memory_order_relaxed) == kAbandoned) continue;
    forced = forced || d != depth;
    Emit(stack_[d], d, end_tick);
  }
  const uint64_t window = g_window.load(std::memory_order_acquire);
  if (!forced || window == 0) return;
  SyncWindow(window);
  Bump(counters_.forced_closes);
}

int64_t ThreadRecorder::OpenScopesBegunIn(uint64_t first, uint64_t last) const {
  const uint32_t depth = depth_.load(std::memory_order_relaxed);
  int64_t open = 0;
  for (uint32_t i = 0; i < depth && i < kMaxDepth; ++i) {
    const uint64_t window = stack_[i].window.load(std::memory_order_relaxed);
    open += window >= first && window < last &&
            stack_[i].owner.load(std::memory_order_relaxed) != kAbandoned;
  }
  return open;
}

std::vector<OpenCall> ThreadRecorder::OpenScopes(uint64_t window) const {
  std::vector<OpenCall> open;
  for (uint32_t d = 0, depth = depth_.load(std::memory_order_relaxed); d < depth; ++d) {
    const OpenScope& scope = stack_[d];
    if (scope.owner.load(std::memory_order_relaxed) == kAbandoned ||
        scope.window.load(std::memory_order_relaxed) != window) {
      continue;
    }
    open.push_back({index_, scope.name, scope.tag, scope.start, d, d == 0 ? scope.stack : 0});
  }
  return open;
}

std::vector<std::string> ThreadRecorder::OpenScopeNames(uint64_t window) const {
  std::vector<std::string> names;
  for (const OpenCall& call : OpenScopes(window)) names.push_back(NameBytes(call.name));
  return names;
}

void ThreadRecorder::CountForeignEnd(ThreadRecorder* recorder, uint32_t depth, const void* owner) {
  // Only if the slot is still this scope's: its thread may have closed it already.
  const void* expected = owner;
  const bool abandoned = recorder->stack_[depth].owner.compare_exchange_strong(
      expected, kAbandoned, std::memory_order_relaxed);
  const uint64_t window = g_window.load(std::memory_order_acquire);
  if (window == 0) return;
  // Counted as foreign on this thread, so not as left open on its own.
  if (abandoned && recorder->stack_[depth].window.load(std::memory_order_relaxed) == window) {
    recorder->counters_.abandoned.fetch_add(1, std::memory_order_relaxed);
  }
  SyncWindow(window);
  Bump(counters_.foreign_ends);
}

void ThreadRecorder::FoldMemory(const OpenScope& scope, uint32_t depth, bool emit) {
  if (emit) {
    for (int i = 0; i < scope.memory.size(); ++i) {
      const PlaceUsage& u = scope.memory[i];
      EventRecord pair[2];
      ScopeMemoryRecord{u.place, u.Stats(), u.running}.Encode(pair);
      if (!buffer_.Append(pair[0]) || !buffer_.Append(pair[1])) Bump(counters_.dropped_memory);
    }
  }
  // A top-level scope folds into nothing: "[no event]" holds only what no event allocated.
  if (depth > 0 && !stack_[depth - 1].memory.Absorb(scope.memory)) Bump(counters_.lost_places);
}

void ThreadRecorder::SetOwner(uint64_t window, LiveBlock* block) {
  SyncWindow(window);
  uint32_t d = depth_.load(std::memory_order_relaxed);
  if (d > 0 && stack_[d - 1].owner.load(std::memory_order_relaxed) == kAbandoned) {
    d = PopAbandoned(d);
  }
  block->thread = index_;
  block->window = window;
  block->step = StepsInWindow();
  // Where it came from (its call path, at report time), with the timeline only: without
  // it, tracking skips the clock read.
  block->tick = MemoryTimelineOn() ? Clock::Now() : 0;
  block->native_stack = 0;
  if (g_native_stacks.load(std::memory_order_relaxed) && IsNativePlace(block->place)) {
    block->native_stack = CaptureNativeStack();
  }
  if (d == 0) {
    block->serial = 0;
    const bool lent = lent_.window == window;
    block->name = lent ? lent_.name : kNoEventName;
    block->tag = lent ? lent_.tag : nullptr;
  } else {
    const OpenScope& top = stack_[d - 1];
    block->serial = top.serial;
    block->name = top.name;
    block->tag = top.tag;
  }
}

LentOwner ThreadRecorder::Lend(const LentOwner& owner) {
  const LentOwner previous = lent_;
  lent_ = owner;
  return previous;
}

bool ThreadRecorder::InnermostOpen(uint64_t window, LentOwner* owner) {
  if (window == 0) return false;
  if (const ThreadRecorder* r = current_; r != nullptr && r->window() == window) {
    for (uint32_t d = r->depth_.load(std::memory_order_relaxed); d > 0; --d) {
      const OpenScope& scope = r->stack_[d - 1];
      if (scope.owner.load(std::memory_order_relaxed) == kAbandoned) continue;
      if (scope.window.load(std::memory_order_relaxed) != window) break;
      *owner = {scope.name, scope.tag, window};
      return true;
    }
  }
  if (lent_.window != window) return false;
  *owner = lent_;
  return true;
}

void ThreadRecorder::ChargeAlloc(const LiveBlock& block, const NativeMove& move) {
  const uint32_t d = depth_.load(std::memory_order_relaxed);
  if (d == 0) {
    roots_[block.place].Alloc(block.size);
  } else if (PlaceUsage* u = stack_[d - 1].memory.FindOrAdd(block.place)) {
    u->Alloc(block.size);
  } else {
    Bump(counters_.lost_places);
  }
  // Native blocks are folded by interval; the others get a record each.
  if (IsNativePlace(block.place)) {
    if (MemoryTimelineOn()) NativeMoved(block.place, block.name, block.tag, block.size, move);
  } else {
    AppendMemoryEvent(RecordKind::kAlloc, block.place, block.name, block.tag, block.size,
                      block.tick);
  }
}

int ThreadRecorder::LevelOf(const LiveBlock& block) const {
  if (block.thread != index_ || !SameWindow(block.window, window_.load(std::memory_order_relaxed))) {
    return -2;  // another thread's, or from before this window
  }
  if (block.serial == 0) return -1;
  // Serials grow with depth: the deepest open scope begun no later than the block's
  // allocating scope was open then and still is, so its running bytes hold the block.
  for (int d = static_cast<int>(depth_.load(std::memory_order_relaxed)) - 1; d >= 0; --d) {
    if (stack_[d].serial <= block.serial) return d;
  }
  return -2;  // allocated in a top-level scope that has ended
}

void ThreadRecorder::ChargeFree(uint64_t window, const LiveBlock& block, const NativeMove& move) {
  SyncWindow(window);
  const int top = static_cast<int>(depth_.load(std::memory_order_relaxed)) - 1;
  const int level = LevelOf(block);
  if (level == -1) {
    roots_[block.place].running -= block.size;
  } else if (level >= 0) {
    // Before an outer scope's running bytes drop, the inner scopes' peaks are folded
    // up, so that the outer peak keeps the moment when it still held this block.
    for (int d = top - 1; d >= level; --d) {
      PlaceUsage* outer = stack_[d].memory.Find(block.place);
      const PlaceUsage* inner = stack_[d + 1].memory.Find(block.place);
      if (outer != nullptr && inner != nullptr) {
        outer->RaisePeak(outer->running + inner->peak);
      }
    }
    if (PlaceUsage* u = stack_[level].memory.Find(block.place)) u->running -= block.size;
  }
  if (top < 0) {
    roots_[block.place].CountFree(block.size);
  } else if (PlaceUsage* u = stack_[top].memory.FindOrAdd(block.place)) {
    u->CountFree(block.size);
  } else {
    Bump(counters_.lost_places);
  }
  const bool this_window = SameWindow(block.window, window);
  const char* name = this_window ? block.name : kBeforeWindowName;
  const char* tag = this_window ? block.tag : nullptr;
  if (IsNativePlace(block.place)) {
    if (MemoryTimelineOn()) NativeMoved(block.place, name, tag, -block.size, move);
  } else {
    // Where the block came from, for its call path: right after its free, or not at all
    // (a record with no free before it would lend its origin to another).
    if (AppendMemoryEvent(RecordKind::kFree, block.place, name, tag, block.size, 0, block.kind) &&
        this_window) {
      buffer_.Append(EventRecord::FreeOrigin(block.thread, block.tick));
    }
  }
}

bool ThreadRecorder::AppendMemoryEvent(RecordKind kind, int place, const char* name,
                                       const char* tag, int64_t bytes, uint64_t tick,
                                       uint8_t block_kind) {
  if (!MemoryTimelineOn()) return false;
  // A free's tick is read here, only when the timeline is on; an allocation's came with
  // its block.
  if (tick == 0) tick = Clock::Now();
  if (!buffer_.Append(EventRecord::Memory(kind, place, name, tag, tick, bytes, block_kind))) {
    Bump(counters_.dropped_memory);
    return false;
  }
  return true;
}

void ThreadRecorder::NativeMoved(int place, const char* name, const char* tag, int64_t delta,
                                 const NativeMove& move) {
  BeginNativeWrite();
  if (move.peak_before != native_seen_peak_) {
    KeepNativeShare(move.peak_before);  // another thread raised it since this one's last move
  } else if (const int64_t raised = native_raised_.load(std::memory_order_relaxed);
             raised != 0 && move.peak_after == move.peak_before) {
    KeepNativeShare(raised);  // this thread raised it last, and this move goes below it
  }
  native_raised_.store(0, std::memory_order_relaxed);
  AddNative(place, name, tag, delta);
  native_seen_peak_ = move.peak_after;
  if (move.peak_after > move.peak_before) {
    native_raised_.store(move.peak_after, std::memory_order_relaxed);
  }
  EndNativeWrite();
}

void ThreadRecorder::KeepNativeShare(int64_t peak) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const int owners = native_owners_.load(kRelaxed);
  for (int i = 0; i < owners; ++i) {
    native_kept_.owner[i].name.store(native_[i].name.load(kRelaxed), kRelaxed);
    native_kept_.owner[i].tag.store(native_[i].tag.load(kRelaxed), kRelaxed);
    native_kept_.owner[i].delta.store(native_[i].delta.load(kRelaxed), kRelaxed);
  }
  native_kept_.owners.store(owners, kRelaxed);
  native_kept_.records_to.store(native_flushed_to_.load(kRelaxed), kRelaxed);
  native_kept_.peak.store(peak, kRelaxed);
}

NativeShare ThreadRecorder::NativeShareAt(int64_t peak) const {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  NativeShare share;
  // The owner thread may be moving on (a snapshot's window goes on): read until a pass
  // saw no write, at most a few times (a busy thread's share then is a close reading).
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint32_t seq = native_seq_.load(std::memory_order_acquire);
    if (seq % 2 != 0) continue;
    share = {};
    const NativeOwner* owners = native_;
    int count = native_owners_.load(kRelaxed);
    if (native_raised_.load(kRelaxed) != peak && native_kept_.peak.load(kRelaxed) == peak) {
      owners = native_kept_.owner;
      count = native_kept_.owners.load(kRelaxed);
      share.records_to = native_kept_.records_to.load(kRelaxed);
    }
    for (int i = 0; i < count && i < kNativeOwners; ++i) {
      share.open.push_back({owners[i].name.load(kRelaxed), owners[i].tag.load(kRelaxed),
                            owners[i].delta.load(kRelaxed)});
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (native_seq_.load(kRelaxed) == seq) break;
  }
  return share;
}

void ThreadRecorder::AddNative(int place, const char* name, const char* tag, int64_t delta) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  int owners = native_owners_.load(kRelaxed);
  int i = 0;
  while (i < owners && (native_[i].name.load(kRelaxed) != name ||
                        native_[i].tag.load(kRelaxed) != tag)) {
    ++i;
  }
  if (i == kNativeOwners) {
    FlushNative(place);
    i = owners = 0;
  }
  if (i == owners) {
    native_[i].name.store(name, kRelaxed);
    native_[i].tag.store(tag, kRelaxed);
    native_[i].delta.store(0, kRelaxed);
    native_owners_.store(owners + 1, kRelaxed);
  }
  native_[i].delta.store(native_[i].delta.load(kRelaxed) + delta, kRelaxed);
  if (++native_events_ == kNativeEventsPerInterval) FlushNative(place);
}

void ThreadRecorder::FlushNative(int place) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const uint64_t tick = Clock::Now();
  const int owners = native_owners_.load(kRelaxed);
  // Frees first: an interval's net figures must never make up a peak it did not have.
  for (const bool frees : {true, false}) {
    for (int i = 0; i < owners; ++i) {
      const int64_t delta = native_[i].delta.load(kRelaxed);
      if (delta == 0 || (delta < 0) != frees) continue;
      const RecordKind kind = frees ? RecordKind::kFree : RecordKind::kAlloc;
      if (!buffer_.Append(EventRecord::Memory(kind, place, native_[i].name.load(kRelaxed),
                                              native_[i].tag.load(kRelaxed), tick,
                                              frees ? -delta : delta))) {
        Bump(counters_.dropped_memory);
      }
    }
  }
  native_owners_.store(0, kRelaxed);
  native_events_ = 0;
  native_flushed_to_.store(tick, kRelaxed);
}

}  // namespace paddle_prof::internal
