#include "model_modules.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "name_interner.h"
#include "record_cursor.h"

namespace paddle_prof::internal {
namespace {

// What a call's name is to the modules: a forward or backward call of one of them.
struct ModuleCallKind {
  int module = -1;  // index into the modules noted; -1: not a module's event
  bool backward = false;
};

struct Accumulated {
  ModuleSummary summary;
  uint64_t first = std::numeric_limits<uint64_t>::max();  // tick of its first call
  uint64_t forward_ticks = 0;
  uint64_t backward_ticks = 0;
};

ModuleCallKind KindOf(std::string_view name,
                      const std::unordered_map<std::string_view, int>& by_path) {
  std::string_view path;
  if (!ModuleEventPath(name, &path)) return {};
  if (const auto it = by_path.find(path); it != by_path.end()) return {it->second, false};
  if (path.size() > kModuleBackwardSuffix.size() &&
      path.substr(path.size() - kModuleBackwardSuffix.size()) == kModuleBackwardSuffix) {
    path.remove_suffix(kModuleBackwardSuffix.size());
    if (const auto it = by_path.find(path); it != by_path.end()) return {it->second, true};
  }
  return {};
}

}  // namespace

std::vector<ModuleSummary> BuildModules(const Collection& c) {
  if (c.modules.empty()) return {};
  std::unordered_map<std::string_view, int> by_path;
  std::vector<Accumulated> modules(c.modules.size());
  for (size_t i = 0; i < c.modules.size(); ++i) {
    const ModuleInfo& info = c.modules[i];
    by_path.emplace(info.path, static_cast<int>(i));
    ModuleSummary& m = modules[i].summary;
    m.path = info.path;
    m.type = info.type;
    m.depth = static_cast<int>(std::count(info.path.begin(), info.path.end(), '.'));
    m.params = info.params;
    m.param_bytes = info.param_bytes;
  }
  std::unordered_map<const char*, ModuleCallKind> kinds;  // by interned or literal name
  for (const ThreadSnapshot& thread : c.threads) {
    for (RecordCursor records(thread); records.NextCall();) {
      const RecordedCall& call = records.call();
      if (!Kept(c, call)) continue;
      const auto [it, inserted] = kinds.try_emplace(call.name);
      if (inserted) it->second = KindOf(NameBytes(call.name), by_path);
      const ModuleCallKind kind = it->second;
      if (kind.module < 0) continue;
      Accumulated& a = modules[kind.module];
      if (kind.backward) {
        a.backward_ticks += call.duration();
        continue;
      }
      a.summary.calls += 1;
      a.forward_ticks += call.duration();
      a.first = std::min(a.first, call.start);
      for (int p = 0; p < call.places; ++p) {
        const ScopeMemoryRecord& r = call.memory[p];
        if (r.place < 0 || r.place >= static_cast<int>(c.places.size())) continue;
        ModuleMemory& m = a.summary.memory[c.places[r.place].place];
        m.peak_bytes = std::max(m.peak_bytes, r.stats.peak_bytes);
        m.activation_bytes = std::max(m.activation_bytes, r.held_bytes);
      }
    }
  }
  std::vector<Accumulated*> called;
  for (Accumulated& a : modules) {
    if (a.summary.calls > 0) called.push_back(&a);
  }
  std::stable_sort(called.begin(), called.end(),
                   [](const Accumulated* x, const Accumulated* y) { return x->first < y->first; });
  std::vector<ModuleSummary> out;
  out.reserve(called.size());
  for (Accumulated* a : called) {
    a->summary.forward_ms = c.TicksToMs(a->forward_ticks);
    a->summary.backward_ms = c.TicksToMs(a->backward_ticks);
    out.push_back(std::move(a->summary));
  }
  return out;
}

void MergeModules(const std::vector<ModuleSummary>& from, std::vector<ModuleSummary>* into) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < into->size(); ++i) index.emplace((*into)[i].path, i);
  for (const ModuleSummary& m : from) {
    const auto [it, fresh] = index.emplace(m.path, into->size());
    if (fresh) {
      into->push_back(m);
      continue;
    }
    ModuleSummary& merged = (*into)[it->second];
    merged.calls += m.calls;
    merged.forward_ms += m.forward_ms;
    merged.backward_ms += m.backward_ms;
    for (const auto& [place, memory] : m.memory) {
      ModuleMemory& kept = merged.memory[place];
      kept.peak_bytes = std::max(kept.peak_bytes, memory.peak_bytes);
      kept.activation_bytes = std::max(kept.activation_bytes, memory.activation_bytes);
    }
  }
}

}  // namespace paddle_prof::internal
