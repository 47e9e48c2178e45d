#include "module_registry.h"

#include <mutex>
#include <unordered_map>
#include <utility>

namespace paddle_prof::internal {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<ModuleInfo> modules;
  std::unordered_map<std::string, size_t> index;  // by path
};

Registry& GetRegistry() {
  static auto* registry = new Registry;  // leaked: modules are noted until exit
  return *registry;
}

}  // namespace

void NoteModuleInfo(ModuleInfo info) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto [it, inserted] = r.index.try_emplace(info.path, r.modules.size());
  if (inserted) {
    r.modules.push_back(std::move(info));
  } else {
    r.modules[it->second] = std::move(info);
  }
}

std::vector<ModuleInfo> NotedModules() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.modules;
}

}  // namespace paddle_prof::internal
