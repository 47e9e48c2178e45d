// A step's phases and the throughput of the steps (step_phases.h), and the modules a
// report gives (model_modules.h), through the public API.
#include "step_phases.h"

#include <gtest/gtest.h>

#include <thread>

#include "paddle_prof/paddle_prof.h"
#include "summary_reader.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::Phase;
using internal::PhaseOf;
using internal::StaticOpPhase;

TEST(StepPhasesTest, PhasesAreNamedByTheEventsThatMarkThem) {
  EXPECT_EQ(PhaseOf("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), Phase::kData);
  EXPECT_EQ(PhaseOf("nn.Module: ResNet"), Phase::kForward);
  EXPECT_EQ(PhaseOf("nn.Module: ResNet.layer1"), Phase::kNone);  // inside a root
  EXPECT_EQ(PhaseOf("nn.Module: ResNet.backward"), Phase::kNone);
  EXPECT_EQ(PhaseOf("torch.autograd.backward"), Phase::kBackward);
  EXPECT_EQ(PhaseOf("torch.autograd.grad"), Phase::kBackward);
  EXPECT_EQ(PhaseOf("Optimizer.step#SGD.step"), Phase::kOptimizer);
  EXPECT_EQ(PhaseOf("Optimizer.zero_grad#Adam.zero_grad"), Phase::kOptimizer);
  EXPECT_EQ(PhaseOf("aten::add"), Phase::kNone);
  // PaddlePaddle's: its layers, its backward, its DataLoader and its optimizers.
  EXPECT_EQ(PhaseOf("nn.Layer: Net"), Phase::kForward);
  EXPECT_EQ(PhaseOf("nn.Layer: Net.fc1"), Phase::kNone);
  EXPECT_EQ(PhaseOf("nn.Layer: Net.backward"), Phase::kNone);
  EXPECT_EQ(PhaseOf("paddle.autograd.backward"), Phase::kBackward);
  EXPECT_EQ(PhaseOf("paddle.autograd.grad"), Phase::kBackward);
  EXPECT_EQ(PhaseOf("Optimizer.minimize#SGD.minimize"), Phase::kOptimizer);
  EXPECT_EQ(PhaseOf("paddle.io.DataLoader#_DataLoaderIterSingleProcess.__next__"), Phase::kData);
  EXPECT_EQ(PhaseOf("Optimizer.step#Adam.step"), Phase::kOptimizer);
  EXPECT_EQ(PhaseOf("Optimizer.clear_grad#Adam.clear_grad"), Phase::kOptimizer);
  EXPECT_EQ(PhaseOf("paddle.static.Executor.feed"), Phase::kData);
  EXPECT_EQ(PhaseOf("paddle.static.Executor.run"), Phase::kNone);
}

TEST(StepPhasesTest, AStaticProgramsOpsArePhasedByTheirRoleFromTheirName) {
  EXPECT_EQ(StaticOpPhase("matmul"), Phase::kForward);
  EXPECT_EQ(StaticOpPhase("relu_"), Phase::kForward);
  EXPECT_EQ(StaticOpPhase("matmul_grad"), Phase::kBackward);
  EXPECT_EQ(StaticOpPhase("relu_grad_"), Phase::kBackward);
  EXPECT_EQ(StaticOpPhase("momentum_"), Phase::kOptimizer);
  EXPECT_EQ(StaticOpPhase("adam_"), Phase::kOptimizer);
  EXPECT_EQ(StaticOpPhase("sgd"), Phase::kOptimizer);
  EXPECT_EQ(StaticOpPhase("adamw"), Phase::kOptimizer);
  EXPECT_EQ(StaticOpPhase("adam_grad_clip"), Phase::kForward);  // not an update: a prefix
  EXPECT_EQ(StaticOpPhase("fetch"), Phase::kNone);
  EXPECT_EQ(StaticOpPhase("paddle.static.Executor.run"), Phase::kNone);
  EXPECT_EQ(StaticOpPhase("nn.Layer: Net"), Phase::kNone);
  EXPECT_EQ(StaticOpPhase("Matmul"), Phase::kNone);
  EXPECT_EQ(StaticOpPhase(""), Phase::kNone);
}

TEST(StepPhasesTest, AStaticRunsOpsOnAnotherThreadHaveTheirRolesOnlyInsideTheRun) {
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent run("paddle.static.Executor.run");
    {
      RecordEvent feed("paddle.static.Executor.feed");
      testing::Spin(1000);
    }
    std::thread worker([] {  // the executor's ops run on its threads
      {
        RecordEvent op("matmul");
        testing::Spin(1000);
      }
      {
        RecordEvent op("matmul_grad");
        testing::Spin(1000);
      }
      RecordEvent op("momentum_");
      testing::Spin(1000);
    });
    worker.join();
  }
  {
    RecordEvent op("matmul");  // an eager op outside a run: no phase of its own
    testing::Spin(1000);
  }
  MarkStep();
  const Report report = DisableProfiler(EventSortingKey::kTotal, "");
  ASSERT_EQ(report.steps.size(), 1u);
  const StepSummary& s = report.steps[0];
  const StepPhases& p = s.phases_ms;
  EXPECT_NEAR(p.data + p.forward + p.backward + p.optimizer + p.other, s.wall_ms, 1e-6);
  double feed = 0, grad = 0, update = 0, matmul = 0;
  for (const EventRow& row : report.events) {
    if (row.name == "paddle.static.Executor.feed") feed = row.total_ms;
    if (row.name == "matmul_grad") grad = row.total_ms;
    if (row.name == "momentum_") update = row.total_ms;
    if (row.name == "matmul") matmul = row.total_ms;
  }
  EXPECT_NEAR(p.data, feed, 1e-3);
  EXPECT_NEAR(p.backward, grad, 1e-3);
  EXPECT_NEAR(p.optimizer, update, 1e-3);
  EXPECT_GE(p.forward, 1.0);
  EXPECT_LT(p.forward, matmul);  // the eager call's time is other
  EXPECT_GE(p.other, 1.0);
}

TEST(StepPhasesTest, PhasesAddUpToTheStepAndOverlapGoesToBackward) {
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent data("enumerate(DataLoader)#It.__next__");
    testing::Spin(2000);
  }
  {
    RecordEvent forward("nn.Module: Net");
    testing::Spin(2000);
    RecordEvent backward("torch.autograd.backward");  // a recompute's overlap
    testing::Spin(2000);
  }
  testing::Spin(1000);  // other
  MarkStep(8);
  MarkStep();  // a step of nothing but other
  const Report report = DisableProfiler(EventSortingKey::kTotal, "");
  ASSERT_EQ(report.steps.size(), 2u);
  const StepSummary& s = report.steps[0];
  const StepPhases& p = s.phases_ms;
  EXPECT_NEAR(p.data + p.forward + p.backward + p.optimizer + p.other, s.wall_ms, 1e-6);
  EXPECT_GE(p.data, 2.0);
  EXPECT_GE(p.forward, 2.0);
  EXPECT_GE(p.backward, 2.0);
  // The overlap went to backward: forward is its event's time less backward's, however
  // long the spins took on a busy machine.
  double forward_event = 0, backward_event = 0;
  for (const EventRow& row : report.events) {
    if (row.name == "nn.Module: Net") forward_event = row.total_ms;
    if (row.name == "torch.autograd.backward") backward_event = row.total_ms;
  }
  EXPECT_NEAR(p.forward, forward_event - backward_event, 1e-3);
  EXPECT_NEAR(p.backward, backward_event, 1e-3);
  EXPECT_GE(p.other, 1.0);
  EXPECT_EQ(p.optimizer, 0.0);
  EXPECT_EQ(s.samples, 8);
  EXPECT_FALSE(report.steps[1].samples);
  EXPECT_NEAR(report.steps[1].phases_ms.other, report.steps[1].wall_ms, 1e-9);
  ASSERT_TRUE(report.throughput);
  EXPECT_NEAR(*report.throughput->samples_per_s, 8 / (s.wall_ms / 1e3), 1e-6);
  EXPECT_NEAR(report.throughput->batch_cost_ms, (s.wall_ms + report.steps[1].wall_ms) / 2, 1e-9);
  EXPECT_NE(report.Table().find("ips: "), std::string::npos);
  EXPECT_NE(report.PhaseTable().find("Dataloader"), std::string::npos);
  EXPECT_THROW(MarkStep(-1), std::invalid_argument);
}

TEST(ModulesTest, NotedModulesGetTheirEventsCallsTimesAndActivations) {
  NoteModule("Net", "Net", 30, 120);
  NoteModule("Net.fc", "Linear", 20, 80);
  EnableProfiler(ProfilerState::kCPU);
  TrackingAllocator alloc(CPUAllocator(), CPUPlace());
  void* kept = nullptr;
  for (int i = 0; i < 2; ++i) {
    RecordEvent net("nn.Module: Net");
    RecordEvent fc("nn.Module: Net.fc");
    void* scratch = alloc.Allocate(4096);
    alloc.Free(scratch);
    if (kept != nullptr) alloc.Free(kept);
    kept = alloc.Allocate(1024);  // the call's output, left alive
  }
  { RecordEvent backward("nn.Module: Net.fc.backward"); }
  const Report report = DisableProfiler(EventSortingKey::kTotal, "");
  alloc.Free(kept);
  ASSERT_EQ(report.modules.size(), 2u);
  const ModuleSummary& net = report.modules[0];
  const ModuleSummary& fc = report.modules[1];
  EXPECT_EQ(net.path, "Net");
  EXPECT_EQ(net.depth, 0);
  EXPECT_EQ(fc.type, "Linear");
  EXPECT_EQ(fc.depth, 1);
  EXPECT_EQ(fc.calls, 2);
  EXPECT_EQ(fc.params, 20);
  EXPECT_EQ(fc.param_bytes, 80);
  EXPECT_GT(fc.backward_ms, 0);
  EXPECT_EQ(fc.memory.at("CPU").peak_bytes, 4096);  // the scratch, freed before the output
  EXPECT_EQ(fc.memory.at("CPU").activation_bytes, 1024);
  EXPECT_NE(report.ModuleTable().find("  fc "), std::string::npos);
  const Report read = internal::ReportFromJson(report.ToJson(), "test");
  ASSERT_EQ(read.modules.size(), 2u);
  EXPECT_EQ(read.modules[1].memory.at("CPU").activation_bytes, 1024);
}

}  // namespace
}  // namespace paddle_prof
