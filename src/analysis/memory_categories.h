// Each tracked block's memory category (paddle_prof.torch): parameter, gradient and
// optimizer state by identity (what the framework told of the block, block_kind.h);
// then input, temporary, activation and other from when the block lived:
//   input       allocated in the data phase, or outside every phase and then handed to
//               a root module's forward;
//   temporary   freed before the outermost op that allocated it ended (an ATen op, or
//               the autograd node autograd ran it in);
//   activation  allocated in the forward phase, outliving its op;
//   other       the rest (a block allocated before the window and never told of).
// The replay of a place's allocations and frees, by category, gives its categories at
// the peak, at the end and along the timeline.
#ifndef PADDLE_PROF_SRC_MEMORY_CATEGORIES_H_
#define PADDLE_PROF_SRC_MEMORY_CATEGORIES_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "collection.h"
#include "gpu_correlation.h"
#include "step_phases.h"

namespace paddle_prof::internal {

enum class MemoryCategory : uint8_t {
  kParameter, kGradient, kOptimizerState, kInput, kTemporary, kActivation, kOther
};
constexpr int kCategories = 7;
// "parameter", "gradient", "optimizer_state", "input", "temporary", "activation", "other".
const char* CategoryName(int category);

using CategoryBytes = std::array<int64_t, kCategories>;

struct BlockCategories {
  std::vector<uint8_t> of_event;     // the category of c.memory_events[i]'s block
  std::vector<CategoryBytes> start;  // by place index: the window's start bytes split
};
// Whether a call of this name is an op that a temporary lives within: an ATen op, or the
// autograd node autograd ran it in; with `plain_op_names` (Collection::plain_op_names),
// any name of lower-case letters, digits and underscores ("matmul", "matmul_grad").
bool IsOpName(const char* name, bool plain_op_names = false);

// A thread's calls as start and end ticks, in the order they were recorded (as they
// ended): those no other holds, in time order. A call comes after those nested in it,
// so one pass drops them; calls out of that order, or overlapping without nesting (never
// expected: a foreign or damaged record), are sorted by start instead.
std::vector<TickInterval> OutermostCalls(std::vector<TickInterval> calls);

// `calls`: each thread's (record_scan.h), for its outermost ops; `phases`: the window's
// PhaseSpans (step_phases.h).
BlockCategories CategorizeBlocks(const Collection& c, const std::vector<ThreadCalls>& calls,
                                 const std::vector<PhaseSpan>& phases);

// A place's categories after its first `applied` allocations and frees of the window
// (0: at its start), for each of `applied` in increasing order.
std::vector<CategoryBytes> CategoriesAfter(const Collection& c, const BlockCategories& categories,
                                           int place, const std::vector<size_t>& applied);

// The names with their bytes, every category present (0 for none).
std::map<std::string, int64_t> Named(const CategoryBytes& bytes);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MEMORY_CATEGORIES_H_
