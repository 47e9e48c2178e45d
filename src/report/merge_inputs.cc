#include "merge_inputs.h"

#include <map>
#include <set>
#include <utility>

namespace paddle_prof::internal {

namespace {

bool EveryInputHasItsOwnRank(const std::vector<Report>& inputs) {
  std::set<int> ranks;
  for (const Report& input : inputs) {
    if (!input.process.rank || !ranks.insert(*input.process.rank).second) return false;
  }
  return true;
}

}  // namespace

std::string InputName(const Report& input, size_t i) {
  return input.summary_path.empty() ? "input " + std::to_string(i + 1) : input.summary_path;
}

std::string ProcessLabel(const ProcessInfo& process, bool by_rank) {
  if (by_rank && process.rank) return "rank " + std::to_string(*process.rank);
  const std::string pid = "pid " + std::to_string(process.pid);
  return process.host.empty() ? pid : process.host + " " + pid;
}

InputNames NameInputs(const std::vector<Report>& inputs) {
  InputNames names;
  const bool by_rank = EveryInputHasItsOwnRank(inputs);
  names.by = by_rank ? "rank" : "process";
  std::map<int64_t, int> pids;
  for (const Report& input : inputs) ++pids[input.process.pid];
  std::map<std::pair<std::string, int64_t>, size_t> first_of_process;
  std::map<int, size_t> first_of_rank;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ProcessInfo& p = inputs[i].process;
    names.ids.push_back(by_rank ? *p.rank : p.pid);
    std::string label = ProcessLabel(p, by_rank);
    const auto [first, fresh] = first_of_process.emplace(std::make_pair(p.host, p.pid), i);
    if (!by_rank && !fresh) {
      label += " (input " + std::to_string(i + 1) + ")";
      const Report& other = inputs[first->second];
      const bool same_rank = p.rank && other.process.rank == p.rank;
      names.warnings.push_back(
          InputName(other, first->second) + " and " + InputName(inputs[i], i) +
          " claim the same process (" + ProcessLabel(p, false) +
          (p.pid == 0 ? ", a summary that does not name its process" : "") + ") and " +
          (same_rank ? "the same rank, " + std::to_string(*p.rank) : "no rank") +
          ": kept apart as " + names.labels[first->second] + " and " + label +
          "; merge one profile per process, or give each rank its RANK");
    } else if (!by_rank && p.rank) {
      // Two processes that claim one rank: every input goes by host and pid instead.
      const auto [same, alone] = first_of_rank.emplace(*p.rank, i);
      if (!alone) {
        names.warnings.push_back(
            InputName(inputs[same->second], same->second) + " and " + InputName(inputs[i], i) +
            " both claim rank " + std::to_string(*p.rank) + ": the inputs go by host and pid (" +
            names.labels[same->second] + ", " + label + ")");
      }
    }
    if (by_rank) {
      names.keys.push_back(std::to_string(*p.rank));
    } else if (pids[p.pid] == 1) {
      names.keys.push_back(std::to_string(p.pid));
    } else {
      names.keys.push_back(label);
    }
    names.labels.push_back(std::move(label));
  }
  return names;
}

}  // namespace paddle_prof::internal
