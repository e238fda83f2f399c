// Recovery of each in-doubt kind: a crash between a durable intent and its execution, and
// between execution and the outcome, resolves against the world before any work starts.
#include <gtest/gtest.h>

#include "support/SimHarness.h"
#include "events/EventCodec.h"

namespace rayjournal::testing {
namespace {

struct Crash : std::runtime_error {
  Crash() : std::runtime_error("simulated crash") {}
};

// Runs until the first intent of `action` executes, crashing right after it (before the
// outcome), or right before it when `beforeExecution`.
void crashAt(SimHarness& h, const std::string& action, bool beforeExecution) {
  bool crashed = false;
  if (beforeExecution) {
    h.journal->setAppendListener([&](const wal::Record& r) {
      h.projection->apply(r);
      h.checker.journaled(r);
      if (r.type == wal::RecordType::Intent && events::actionName(events::decodeIntent(r).action) == action) crashed = true;
    });
  }
  h.executor->hook = [&](controller::Executor::Stage stage, const controller::Intent& i, uint64_t) {
    if (stage == controller::Executor::Stage::Executed && !beforeExecution &&
        controller::actionName(i.action) == action) {
      crashed = true;
      throw Crash();
    }
  };
  for (int i = 0; i < 200 && !crashed; ++i) {
    try {
      if (beforeExecution) {
        // Crash before execution: drop what the executor would do by failing the adapter call.
        h.kube.injectFault({"create", "RayCluster", 1000, 503, "ServiceUnavailable", false});
      }
      h.step();
    } catch (const Crash&) {
    }
  }
  ASSERT_TRUE(crashed);
}

TEST(RecoveryTest, CreatedClusterWithoutOutcomeResolvesFoundAndIsAdopted) {
  SimHarness h;
  h.apply(sampleRayJob("r1"));
  crashAt(h, "CreateRayCluster", false);
  auto report = h.restart();
  EXPECT_GE(report.inDoubt, 1u);
  EXPECT_GE(report.found, 1u);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("r1") == "Complete"; }));
  EXPECT_EQ(h.kube.list("RayCluster", "default").size(), 1u);
  EXPECT_EQ(h.rayjob("r1")["status"]["failed"], 0);
  bool resolved = false;
  for (const auto& r : h.records()) {
    resolved = resolved || (r.type == wal::RecordType::Outcome &&
                            events::decodeOutcome(r).result == events::Result::Found);
  }
  EXPECT_TRUE(resolved);
}

TEST(RecoveryTest, RestartNeverIncrementsAttemptOrFailed) {
  SimHarness h;
  json job = sampleRayJob("r3", "K8sJobMode", "FAILED,SUCCEEDED", "1s");
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  for (int i = 0; i < 30; ++i) {
    h.step(200);
    h.restart();
  }
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("r3") == "Complete"; }));
  EXPECT_EQ(h.rayjob("r3")["status"]["failed"], 1);
  EXPECT_EQ(h.rayjob("r3")["status"]["succeeded"], 1);
  EXPECT_EQ(h.ray.submissions(), 2u);
}

}  // namespace
}  // namespace rayjournal::testing
