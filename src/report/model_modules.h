// The model's view: one ModuleSummary per module path paddle_prof.torch noted, from the
// calls of its events "nn.Module: <path>" (forward) and "nn.Module: <path>.backward".
#ifndef PADDLE_PROF_SRC_MODEL_MODULES_H_
#define PADDLE_PROF_SRC_MODEL_MODULES_H_

#include <string_view>
#include <vector>

#include "collection.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

inline constexpr std::string_view kModuleEventPrefix = "nn.Module: ";
inline constexpr std::string_view kModuleBackwardSuffix = ".backward";

// The modules called in the window, in order of their first call; empty when none was
// noted.
std::vector<ModuleSummary> BuildModules(const Collection& c);

// Modules of several reports by path: calls and times add up, memory keeps the largest.
// `into` keeps its order, and gains the paths it lacked in their order.
void MergeModules(const std::vector<ModuleSummary>& from, std::vector<ModuleSummary>* into);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MODEL_MODULES_H_
