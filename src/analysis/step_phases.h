// A training step's wall time by phase (StepPhases): data, forward, backward, optimizer
// and the rest, found from the events the framework bridges (paddle_prof.torch,
// paddle_prof.paddle) and the frameworks themselves record; and the throughput the
// steps' samples and times give.
#ifndef PADDLE_PROF_SRC_STEP_PHASES_H_
#define PADDLE_PROF_SRC_STEP_PHASES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collection.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

enum class Phase { kData, kForward, kBackward, kOptimizer, kNone };

// The phase a call of `name` is, if any: a DataLoader iterator's __next__ (torch's
// "enumerate(DataLoader)#..."), a root module's forward ("nn.Module: Net"),
// "torch.autograd.backward" or "torch.autograd.grad", "Optimizer.step#..." or
// "Optimizer.zero_grad#...", and Paddle's counterparts; a static program's feeding
// ("paddle.static.Executor.feed") is data.
Phase PhaseOf(std::string_view name);

// The event around a PaddlePaddle static program's run: it has no phase of its own, and
// each op inside it (on any thread) has its StaticOpPhase.
inline constexpr std::string_view kStaticRunEvent = "paddle.static.Executor.run";

// Whether `name` is an op's as PaddlePaddle names them: lower-case letters, digits and
// underscores ("matmul", "relu_grad_"), not empty.
bool IsPlainOpName(std::string_view name);

// A static program's op by its role, read from its name (Paddle's executor gives no
// role): a gradient op ("matmul_grad", in place "relu_grad_") backward, an optimizer's
// update ("momentum_", "adam_") optimizer, "fetch" none, any other op forward; an event
// whose name is not an op's (lower-case letters, digits, underscores) none.
Phase StaticOpPhase(std::string_view name);

// The time the window's phase events cover, cut into disjoint spans in time order, each
// the phase that owns it where several overlap (the order PhasesPerStep gives).
struct PhaseSpan {
  uint64_t start, end;
  Phase phase;
};
std::vector<PhaseSpan> PhaseSpans(const Collection& c);

// For each step of `c`, in order: the ticks of its span [previous mark, its mark) in each
// phase of `spans` (PhaseSpans), as milliseconds. Where phases overlap (a forward
// recomputed inside backward), the time is backward's, then the optimizer's, then
// data's, then forward's; `other` is what is left, so the five add up to the step's wall
// time.
std::vector<StepPhases> PhasesPerStep(const Collection& c, const std::vector<PhaseSpan>& spans);

// Whether `report`'s steps have phases to show (paddle_prof.torch's) or samples.
bool HasPhases(const Report& report);

// The table's line for `t`: "ips: 2,345.6 samples/s, reader 1.20 ms, batch 27.29 ms\n".
std::string ThroughputLine(const Throughput& t);

// Medians over `steps` (none when there are no steps).
std::optional<Throughput> ThroughputOf(const std::vector<StepSummary>& steps);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_STEP_PHASES_H_
