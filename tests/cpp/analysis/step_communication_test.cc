// Time in collective communication per step (step_communication.h).
#include "step_communication.h"

#include <gtest/gtest.h>

#include <thread>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::IsCommunication;

TEST(StepCommunicationTest, CollectivesAreNamedByTheirOpsAndWork) {
  for (const char* name :
       {"c10d::allreduce_", "gloo:all_reduce", "nccl:all_gather", "record_param_comms"}) {
    EXPECT_TRUE(IsCommunication(name)) << name;
    EXPECT_TRUE(internal::WaitsForCommunication(name)) << name;
  }
  // Its forward runs the model: compute, though it may wait for buffers too.
  EXPECT_FALSE(IsCommunication("DistributedDataParallel.forward"));
  EXPECT_TRUE(internal::WaitsForCommunication("DistributedDataParallel.forward"));
  for (const char* name : {"aten::add", "slow_op", "Optimizer.step#SGD.step", "reduce",
                           "aten::broadcast_tensors", "my_barrier"}) {
    EXPECT_FALSE(IsCommunication(name)) << name;
    EXPECT_FALSE(internal::WaitsForCommunication(name)) << name;
  }
}

TEST(StepCommunicationTest, EachStepCountsTheTimeAThreadWasInCommunicationOnce) {
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent work("aten::add");
    testing::Spin(2000);
  }
  MarkStep();  // step 0: no communication
  {
    RecordEvent wait("c10d::allreduce_");
    testing::Spin(3000);
  }
  MarkStep();  // step 1: one call, wholly inside
  {
    // Two threads in communication at once count the time once.
    RecordEvent outer("c10d::broadcast_");
    std::thread worker([] {
      RecordEvent work("gloo:broadcast");
      testing::Spin(1000);
    });
    worker.join();
    testing::Spin(1000);
  }
  MarkStep();
  const Report report = StopProfiler();
  ASSERT_EQ(report.steps.size(), 3u);
  EXPECT_EQ(report.steps[0].comm_ms, 0.0);
  EXPECT_EQ(report.steps[1].comm_ms, testing::Row(report, "c10d::allreduce_").total_ms);
  // The worker's call lies inside the outer one.
  EXPECT_EQ(report.steps[2].comm_ms, testing::Row(report, "c10d::broadcast_").total_ms);
  for (const StepSummary& step : report.steps) EXPECT_LE(step.comm_ms, step.wall_ms);
}

TEST(StepCommunicationTest, AWindowWithoutCommunicationHasNone) {
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent work("aten::add"); }
  MarkStep();
  const Report report = StopProfiler();
  ASSERT_EQ(report.steps.size(), 1u);
  EXPECT_EQ(report.steps[0].comm_ms, 0.0);
}

}  // namespace
}  // namespace paddle_prof
