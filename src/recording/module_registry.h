// The modules of a model as paddle_prof.torch names them (NoteModule): each path's type
// and parameters, which its events' rows do not carry. Noted once per module and path,
// read when a window's report is built; never on the hot path.
#ifndef PADDLE_PROF_SRC_MODULE_REGISTRY_H_
#define PADDLE_PROF_SRC_MODULE_REGISTRY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace paddle_prof::internal {

struct ModuleInfo {
  std::string path;
  std::string type;
  int64_t params = 0;
  int64_t param_bytes = 0;
};

// Adds `info`, or replaces the one with its path (keeping its place in the order).
void NoteModuleInfo(ModuleInfo info);
// Every module noted so far in the process, in the order first noted.
std::vector<ModuleInfo> NotedModules();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MODULE_REGISTRY_H_
