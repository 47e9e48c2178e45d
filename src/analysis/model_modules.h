// The model's view: one ModuleSummary per module path a framework bridge noted, from the
// calls of its events "nn.Module: <path>" (forward) and "nn.Module: <path>.backward"
// (PaddlePaddle's layers: "nn.Layer: ...").
#ifndef PADDLE_PROF_SRC_MODEL_MODULES_H_
#define PADDLE_PROF_SRC_MODEL_MODULES_H_

#include <string_view>
#include <vector>

#include "collection.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// A module call's event: "nn.Module: <path>" (PyTorch) or "nn.Layer: <path>"
// (PaddlePaddle), its backward "<...>.backward".
inline constexpr std::string_view kModuleEventPrefixes[] = {"nn.Module: ", "nn.Layer: "};
inline constexpr std::string_view kModuleBackwardSuffix = ".backward";

// The path of a module event's name (with ".backward" if it has it), or false for a name
// that is not a module's event.
inline bool ModuleEventPath(std::string_view name, std::string_view* path) {
  for (const std::string_view prefix : kModuleEventPrefixes) {
    if (name.substr(0, prefix.size()) == prefix) {
      *path = name.substr(prefix.size());
      return true;
    }
  }
  return false;
}

// The modules called in the window, in order of their first call; empty when none was
// noted.
std::vector<ModuleSummary> BuildModules(const Collection& c);

// Modules of several reports by path: calls and times add up, memory keeps the largest.
// `into` keeps its order, and gains the paths it lacked in their order.
void MergeModules(const std::vector<ModuleSummary>& from, std::vector<ModuleSummary>* into);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MODEL_MODULES_H_
