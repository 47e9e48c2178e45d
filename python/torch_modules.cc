#include "torch_modules.h"

#include <ATen/SequenceNumber.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "bindings_api.h"
#include "paddle_prof/paddle_prof.h"

namespace paddle_prof::torch_bridge {
namespace {

struct Module {
  std::string forward;   // "nn.Module: Net.block.fc1"
  std::string backward;  // "nn.Module: Net.block.fc1.backward"
  int parent = -1;
};

// Appended under the GIL, read by any thread: chunks that never move, published by
// the count. Leaked: ops may run during exit.
constexpr int kChunk = 1024;
constexpr int kChunks = 64;
constexpr int kMaxModules = kChunk * kChunks;
struct ModuleTable {
  std::array<Module*, kChunks> chunks{};
  std::atomic<int> count{0};
  std::unordered_map<std::string, int> index;  // by path; written under the GIL only
};

ModuleTable& Table() {
  static ModuleTable table;
  return table;
}

const Module* ModuleAt(int index) {
  ModuleTable& t = Table();
  if (index < 0 || index >= t.count.load(std::memory_order_acquire)) return nullptr;
  return &t.chunks[index / kChunk][index % kChunk];
}

// One thread's open module events, and the module each of its recent forward ops ran in.
struct ModuleStacks {
  static constexpr int kDepth = 64;
  struct Open {
    int module = -1;
    std::optional<RecordEvent> event;
    int64_t first_seq = 0;  // the thread's next sequence number as a forward call opened
  };
  Open forward[kDepth];
  int forward_depth = 0;
  Open backward[kDepth];
  int backward_depth = 0;
  // By sequence number modulo its size: the forward ops of one step fit.
  static constexpr int64_t kTrail = 1 << 15;
  struct Noted {
    int64_t seq = -1;
    int module = -1;
  };
  Noted trail[kTrail];
};

void CloseBackwardTo(ModuleStacks& s, int depth) {
  while (s.backward_depth > depth) s.backward[--s.backward_depth].event.reset();
}

// Has `module` and its parents open on this thread's backward stack, outermost first,
// after closing what is open and not among them.
void OpenBackward(ModuleStacks& s, int module) {
  int chain[ModuleStacks::kDepth];
  int length = 0;
  for (int m = module; m >= 0 && length < ModuleStacks::kDepth;) {
    chain[length++] = m;
    const Module* entry = ModuleAt(m);
    m = entry != nullptr ? entry->parent : -1;
  }
  // chain[length - 1] is the root: keep the open prefix that matches it.
  int keep = 0;
  while (keep < s.backward_depth && keep < length &&
         s.backward[keep].module == chain[length - 1 - keep]) {
    ++keep;
  }
  CloseBackwardTo(s, keep);
  for (int i = length - 1 - keep; i >= 0 && s.backward_depth < ModuleStacks::kDepth; --i) {
    ModuleStacks::Open& open = s.backward[s.backward_depth++];
    open.module = chain[i];
    open.event.emplace(ModuleAt(chain[i])->backward.c_str());  // kept for good: not interned
  }
}

}  // namespace

bool ModulesOnThread() { return internal::ThreadOwned<ModuleStacks>(/*make=*/false) != nullptr; }

bool IsEvaluateFunction(const at::RecordFunction& fn) {
  constexpr std::string_view kPrefix = "autograd::engine::evaluate_function: ";
  return std::string_view(fn.name()).substr(0, kPrefix.size()) == kPrefix;
}

int RegisterModule(const std::string& path, int parent, const std::string& type,
                   int64_t params, int64_t param_bytes) {
  internal::NativeGuard profiler_memory;  // the profiler's own, never the program's
  NoteModule(path, type, params, param_bytes);
  ModuleTable& t = Table();
  if (const auto it = t.index.find(path); it != t.index.end()) return it->second;
  const int index = t.count.load(std::memory_order_relaxed);
  if (index == kMaxModules) return -1;  // its calls are then ops of the module around it
  t.index.emplace(path, index);
  Module*& chunk = t.chunks[index / kChunk];
  if (chunk == nullptr) chunk = new Module[kChunk];
  chunk[index % kChunk] = Module{"nn.Module: " + path, "nn.Module: " + path + ".backward",
                                 parent < index ? parent : -1};
  t.count.store(index + 1, std::memory_order_release);
  return index;
}

int EnterModule(int index) {
  ModuleStacks* s = internal::ThreadOwned<ModuleStacks>();
  if (s == nullptr || ModuleAt(index) == nullptr) return -1;
  const int depth = s->forward_depth;
  if (depth == ModuleStacks::kDepth) return -1;
  ModuleStacks::Open& open = s->forward[s->forward_depth++];
  open.module = index;
  open.event.emplace(ModuleAt(index)->forward.c_str());  // kept for good: not interned
  open.first_seq = static_cast<int64_t>(at::sequence_number::peek());
  return depth;
}

void ExitModule(int depth) {
  ModuleStacks* s = internal::ThreadOwned<ModuleStacks>(/*make=*/false);
  if (s == nullptr || depth < 0) return;
  // The autograd nodes the call made with no op to note them (a scripted module's
  // DifferentiableGraph makes its node in the graph executor) are its own: the sequence
  // numbers taken during the call that no op or inner call noted. Inner calls close
  // first, so each number goes to the innermost call open as it was taken.
  const int64_t next_seq = static_cast<int64_t>(at::sequence_number::peek());
  while (s->forward_depth > depth) {
    ModuleStacks::Open& open = s->forward[--s->forward_depth];
    for (int64_t seq = std::max(open.first_seq, next_seq - ModuleStacks::kTrail); seq < next_seq;
         ++seq) {
      ModuleStacks::Noted& noted = s->trail[seq % ModuleStacks::kTrail];
      if (noted.seq != seq) noted = {seq, open.module};
    }
    open.event.reset();
  }
}

void EndModuleBackward() {
  if (ModuleStacks* s = internal::ThreadOwned<ModuleStacks>(/*make=*/false)) CloseBackwardTo(*s, 0);
}

void NoteOpModule(const at::RecordFunction& fn) {
  ModuleStacks* s = internal::ThreadOwned<ModuleStacks>(/*make=*/false);
  if (s == nullptr) return;  // no module ran on this thread
  const int64_t seq = fn.seqNr();
  if (seq < 0) return;
  ModuleStacks::Noted& noted = s->trail[seq % ModuleStacks::kTrail];
  if (fn.scope() == at::RecordScope::FUNCTION) {
    if (s->forward_depth > 0) noted = {seq, s->forward[s->forward_depth - 1].module};
    return;
  }
  // A node made on another thread, or one whose forward op ran outside every module,
  // leaves the stack as it is (AccumulateGrad stays with the module before it).
  if (fn.scope() != at::RecordScope::BACKWARD_FUNCTION ||
      fn.forwardThreadId() != at::RecordFunction::currentThreadId() || noted.seq != seq) {
    return;
  }
  OpenBackward(*s, noted.module);
}

}  // namespace paddle_prof::torch_bridge
