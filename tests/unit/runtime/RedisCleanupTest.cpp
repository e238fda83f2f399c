// A GCS fault-tolerant RayCluster on the Stack: the Redis cleanup finalizer before any Pod, and on
// deletion the Pods, then (once the head is gone) one cleanup Job that empties the storage
// namespace, then the finalizer, each a journaled intent (the EffectChecker fails any write
// without one); a crash at any step of that sequence leaks no finalizer and runs no second Job.
#include <gtest/gtest.h>

#include "controller/Executor.h"
#include "support/MinimalRayCluster.h"
#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

json ftRayCluster(const std::string& name) {
  return minimalRayCluster(
      name, {{"gcsFaultToleranceOptions", {{"redisAddress", "redis:6379"}, {"redisPassword", {{"value", "pw"}}}}}});
}

bool hasCleanupFinalizer(const json& cluster) {
  for (const auto& f : cluster["metadata"].value("finalizers", json::array()))
    if (f == "ray.io/gcs-ft-redis-cleanup-finalizer") return true;
  return false;
}

int cleanupJobsCreated(SimHarness& h) {
  int n = 0;
  for (const auto& c : h.kube.createHistory())
    n += c["kind"] == "Job" && c["name"].get<std::string>().ends_with("-redis-cleanup");
  return n;
}

// Runs the cluster to ready, with its GCS's keys in the simulated Redis.
std::string startFtCluster(SimHarness& h, const std::string& name) {
  h.kube.create("RayCluster", ftRayCluster(name));
  EXPECT_TRUE(h.runUntil([&] {
    auto c = h.kube.get("RayCluster", "default", name);
    return c && (*c).value("status", json::object()).value("state", "") == "ready";
  }));
  json cluster = *h.kube.get("RayCluster", "default", name);
  EXPECT_TRUE(hasCleanupFinalizer(cluster));
  std::string storage = cluster["metadata"]["uid"];
  EXPECT_EQ(h.ray.storageNamespaces().count(storage), 1u);
  return storage;
}

TEST(RedisCleanupTest, ADeletedFtClusterEmptiesItsStorageNamespaceOnceItsHeadIsGone) {
  SimHarness h;
  std::string storage = startFtCluster(h, "ft");
  h.kube.remove("RayCluster", "default", "ft");
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayCluster", "default", "ft"); }));
  EXPECT_EQ(h.ray.storageNamespaces().count(storage), 0u) << "Redis still holds the cluster's keys";
  EXPECT_EQ(cleanupJobsCreated(h), 1);
  EXPECT_TRUE(h.anyEvent("CreatedRedisCleanupJob", "Created Redis cleanup Job default/ft-redis-cleanup"));
  EXPECT_TRUE(h.kube.list("Pod", "default").empty());
}

TEST(RedisCleanupTest, WithTheCleanupDisabledNoFinalizerIsAddedAndRedisKeepsTheKeys) {
  SimHarness h;
  h.config.redisCleanup = false;
  h.restart();
  h.kube.create("RayCluster", ftRayCluster("keep"));
  ASSERT_TRUE(h.runUntil([&] {
    auto c = h.kube.get("RayCluster", "default", "keep");
    return c && (*c).value("status", json::object()).value("state", "") == "ready";
  }));
  EXPECT_FALSE(hasCleanupFinalizer(*h.kube.get("RayCluster", "default", "keep")));
  h.kube.remove("RayCluster", "default", "keep");
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayCluster", "default", "keep"); }));
  EXPECT_EQ(h.ray.storageNamespaces().size(), 1u);
  EXPECT_EQ(cleanupJobsCreated(h), 0);
}

// A kill -9 right after each step's intent is durable, and again right after it ran: the
// restarted operator finishes the same sequence, with one cleanup Job and no leaked finalizer.
TEST(RedisCleanupTest, ACrashAtAnyStepOfTheCleanupRepeatsNothingAndLeaksNothing) {
  using Stage = controller::Executor::Stage;
  for (auto action : {controller::Action::DeletePod, controller::Action::CreateRedisCleanupJob,
                      controller::Action::RemoveFinalizer}) {
    for (Stage stage : {Stage::IntentDurable, Stage::Executed}) {
      SCOPED_TRACE(events::actionName(action) + (stage == Stage::Executed ? " executed" : " durable"));
      SimHarness h;
      std::string storage = startFtCluster(h, "crash");
      h.kube.remove("RayCluster", "default", "crash");
      ASSERT_TRUE(h.stepUntilCrash(stage, action));
      h.restart();
      ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayCluster", "default", "crash"); }));
      EXPECT_EQ(cleanupJobsCreated(h), 1);
      EXPECT_EQ(h.ray.storageNamespaces().count(storage), 0u);
    }
  }
}

}  // namespace
}  // namespace rayjournal::testing
