// The Redis cleanup decision of a GCS fault-tolerant RayCluster, step by step: the finalizer
// first, the head Pod's end awaited, one Job, the finalizer last; KubeRay's deadline; and a
// finalizer that no longer applies is not left to hold the cluster forever.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "controller/raycluster/RedisCleanup.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

json cleanupCluster(bool deleting, bool finalizer, json extraAnnotations = json::object()) {
  json container = {{"name", "ray"}, {"image", "rayproject/ray:2.60.0"},
                    {"readinessProbe", {{"exec", {{"command", json::array({"true"})}}}}}};
  json meta = {{"name", "rc"}, {"namespace", "ns"}, {"uid", "u-9"}, {"annotations", extraAnnotations}};
  if (finalizer) meta["finalizers"] = json::array({"ray.io/gcs-ft-redis-cleanup-finalizer"});
  if (deleting) meta["deletionTimestamp"] = "2026-12-07T10:00:00Z";
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", meta},
          {"spec",
           {{"gcsFaultToleranceOptions", {{"redisAddress", "redis:6379"}, {"redisUsername", {{"value", "u"}}}}},
            {"headGroupSpec", {{"template", {{"spec", {{"containers", json::array({container})}}}}}}}}}};
}

PodView podNamed(const std::string& name, bool deleting = false) {
  PodView p;
  p.name = name;
  p.deleting = deleting;
  return p;
}

constexpr int64_t kDeletedAtMs = 1796637600000;  // 2026-12-07T10:00:00Z

ClusterObserved observed(const json& cluster, std::vector<PodView> pods = {}, int64_t nowMs = kDeletedAtMs) {
  ClusterContext context;
  context.nowMs = nowMs;
  return clusterObserved(std::make_shared<const json>(cluster), std::move(pods), nullptr, context);
}

TEST(RedisCleanupDecideTest, ALiveFtClusterGetsTheFinalizerBeforeAnythingElse) {
  ClusterPlan plan = decideRayCluster(observed(cleanupCluster(false, false)));
  EXPECT_EQ(plan.finalizer, FinalizerChange::Add);
  EXPECT_TRUE(plan.creates.empty()) << "no Pod before the finalizer";
  EXPECT_EQ(plan.retryAfterMs, kRedisCleanupPollMs);
  ClusterPlan next = decideRayCluster(observed(cleanupCluster(false, true)));
  EXPECT_EQ(next.finalizer, FinalizerChange::None);
  EXPECT_FALSE(next.creates.empty());
}

TEST(RedisCleanupDecideTest, TheJobWaitsForTheHeadPodToBeGone) {
  ClusterObserved o = observed(cleanupCluster(true, true), {podNamed("rc-head", true), podNamed("rc-w-worker-0")});
  ClusterPlan plan = decideRayCluster(o);
  EXPECT_EQ(plan.deletePods, std::vector<std::string>{"rc-w-worker-0"}) << "the head is deleting already";
  EXPECT_TRUE(plan.creates.empty());
  EXPECT_EQ(plan.retryAfterMs, kHeadTerminationPollMs);
  EXPECT_EQ(plan.finalizer, FinalizerChange::None);
}

TEST(RedisCleanupDecideTest, OneJobThenTheFinalizerGoesWhenItFinishesEitherWay) {
  ClusterObserved o = observed(cleanupCluster(true, true));
  ClusterPlan create = decideRayCluster(o);
  ASSERT_EQ(create.creates.size(), 1u);
  const json& job = *create.creates[0].second;
  EXPECT_EQ(job["metadata"]["name"], "rc-redis-cleanup");
  EXPECT_EQ(job["metadata"]["labels"]["ray.io/node-type"], "redis-cleanup");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["uid"], "u-9");
  EXPECT_EQ(job["spec"]["backoffLimit"], 0);
  EXPECT_EQ(job["spec"]["activeDeadlineSeconds"], 300);
  const json& pod = job["spec"]["template"];
  EXPECT_FALSE(pod["metadata"].contains("ownerReferences"));
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Never");
  const json& c = pod["spec"]["containers"][0];
  EXPECT_FALSE(c.contains("readinessProbe"));
  EXPECT_EQ(c["resources"]["limits"]["cpu"], "200m");
  EXPECT_NE(c["args"][0].get<std::string>().find("username=os.getenv('REDIS_USERNAME'"), std::string::npos);
  EXPECT_EQ(create.finalizer, FinalizerChange::None);
  o.redisCleanupJob = {true, false, false};
  ClusterPlan running = decideRayCluster(o);
  EXPECT_TRUE(running.creates.empty());
  EXPECT_EQ(running.finalizer, FinalizerChange::None);
  EXPECT_EQ(running.retryAfterMs, kRedisCleanupPollMs);
  o.redisCleanupJob = {true, false, true};
  EXPECT_EQ(decideRayCluster(o).finalizer, FinalizerChange::Remove);
  o.redisCleanupJob = {true, true, false};
  EXPECT_EQ(decideRayCluster(o).finalizer, FinalizerChange::Remove);
}

TEST(RedisCleanupDecideTest, PastTheDeadlineTheFinalizerGoesWithAWarning) {
  json cluster = cleanupCluster(true, true, {{"ray.io/gcs-ft-deletion-timeout", "60"}});
  ClusterPlan early = decideRayCluster(observed(cluster, {podNamed("rc-head")}, kDeletedAtMs + 59000));
  EXPECT_EQ(early.finalizer, FinalizerChange::None);
  ClusterPlan late = decideRayCluster(observed(cluster, {podNamed("rc-head")}, kDeletedAtMs + 61500));
  EXPECT_EQ(late.finalizer, FinalizerChange::Remove);
  ASSERT_EQ(late.warnings.size(), 1u);
  EXPECT_EQ(late.warnings[0].reason, "ForceDeletedStuckCluster");
  EXPECT_EQ(late.warnings[0].message,
            "Force-removed GCS FT finalizer after 1m1.5s due to Redis cleanup timeout; Redis "
            "storage namespace \"\" may need manual cleanup");
}

TEST(RedisCleanupDecideTest, AFinalizerThatNoLongerAppliesIsRemovedOnDeletion) {
  json cluster = cleanupCluster(true, true);
  cluster["spec"].erase("gcsFaultToleranceOptions");  // FT turned off after the finalizer came
  ClusterPlan plan = decideRayCluster(observed(cluster));
  EXPECT_EQ(plan.finalizer, FinalizerChange::Remove);
  EXPECT_TRUE(plan.creates.empty());
}

// A namespace being deleted refuses every new object, the cleanup Job too: the finalizer goes at
// once with a Warning instead of holding the namespace's deletion for KubeRay's 5 minutes.
TEST(RedisCleanupDecideTest, AClusterDeletedWithItsNamespaceDropsTheFinalizerAtOnce) {
  ClusterObserved o = observed(cleanupCluster(true, true, {{"ray.io/external-storage-namespace", "s1"}}));
  o.redisCleanupJob.namespaceTerminating = true;
  ClusterPlan plan = decideRayCluster(o);
  EXPECT_EQ(plan.finalizer, FinalizerChange::Remove);
  EXPECT_TRUE(plan.creates.empty());
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].reason, "RedisCleanupSkipped");
  EXPECT_NE(plan.warnings[0].message.find("Redis storage namespace \"s1\" may need manual cleanup"),
            std::string::npos);
  o.redisCleanupJob = {true, false, false, true};
  EXPECT_EQ(decideRayCluster(o).finalizer, FinalizerChange::None) << "a Job made before waits on";
}

}  // namespace
}  // namespace rayjournal::controller
