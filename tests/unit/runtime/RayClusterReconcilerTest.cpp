// The RayCluster reconciler on the Stack: every Pod, Service and status write it makes is an
// intent durable before it runs (the harness's EffectChecker fails any test where one is not),
// and an in-doubt one is resolved at restart like a RayJob's.
#include "runtime/RayClusterReconciler.h"
#include "events/EventCodec.h"

#include <gtest/gtest.h>

#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

struct Crash : std::runtime_error {
  Crash() : std::runtime_error("simulated crash") {}
};

int intents(SimHarness& h, const std::string& kind, const std::string& action) {
  int n = 0;
  for (const auto& r : h.records())
    n += r.type == wal::RecordType::Intent && r.object.kind == kind &&
         events::actionName(events::decodeIntent(r).action) == action;
  return n;
}

TEST(RayClusterReconcilerTest, PodsServicesAndStatusAreJournaledIntents) {
  SimHarness h;
  json job = sampleRayJob("rc");
  job["spec"]["rayClusterSpec"]["workerGroupSpecs"] = json::array(
      {{{"groupName", "w"}, {"replicas", 2}, {"template", {{"spec", {{"containers", json::array({{{"name", "w"}}})}}}}}}});
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("rc") == "Complete"; }));
  EXPECT_EQ(intents(h, "RayCluster", "CreatePod"), 3);
  EXPECT_EQ(intents(h, "RayCluster", "CreateService"), 1);
  EXPECT_GE(intents(h, "RayCluster", "WriteStatus"), 2);
  EXPECT_GT(h.checker.writesChecked(), 0u);
  // The cluster's records say which RayJob attempt it belongs to.
  for (const auto& r : h.records()) {
    if (r.object.kind != "RayCluster" || r.type != wal::RecordType::Intent) continue;
    EXPECT_EQ(events::decodeIntent(r).rayjob, "default/rc");
    EXPECT_EQ(r.attempt, 1u);
  }
}

TEST(RayClusterReconcilerTest, AnInDoubtPodCreateIsResolvedAtRestartAndNeverRepeated) {
  SimHarness h;
  h.apply(sampleRayJob("doubt"));
  bool crashed = false;
  h.executor->hook = [&](controller::Executor::Stage stage, const controller::Intent& i, uint64_t) {
    if (stage == controller::Executor::Stage::Executed && i.action == controller::Action::CreatePod) {
      crashed = true;
      throw Crash();
    }
  };
  for (int i = 0; i < 50 && !crashed; ++i) {
    try {
      h.step();
    } catch (const Crash&) {
    }
  }
  ASSERT_TRUE(crashed);
  auto report = h.restart();
  EXPECT_GE(report.found, 1u) << "the head Pod exists: its create is resolved found";
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("doubt") == "Complete"; }));
  int headCreates = 0;
  for (const auto& c : h.kube.createHistory())
    headCreates += c["kind"] == "Pod" && c["name"].get<std::string>().ends_with("-head");
  EXPECT_EQ(headCreates, 1);
  bool resolvedCluster = false;
  for (const auto& r : h.records())
    resolvedCluster = resolvedCluster || (r.type == wal::RecordType::Outcome &&
                                          r.object.kind == "RayCluster" &&
                                          events::isResolution(events::decodeOutcome(r).result));
  EXPECT_TRUE(resolvedCluster);
}

TEST(RayClusterReconcilerTest, WithoutTheRayClusterControllerNoPodIsCreated) {
  SimHarness h;
  h.manageRayClusters = false;
  h.restart();
  h.apply(sampleRayJob("left"));
  for (int i = 0; i < 50; ++i) h.step();
  EXPECT_EQ(h.kube.list("RayCluster", "default").size(), 1u);
  EXPECT_TRUE(h.kube.list("Pod", "default").empty()) << "another operator owns RayClusters";
  EXPECT_EQ(h.deploymentStatus("left"), "Initializing");
}

TEST(RayClusterReconcilerTest, ACustomHeadServiceNameWorksEndToEnd) {
  for (const char* mode : {"K8sJobMode", "HTTPMode", "SidecarMode"}) {
    SimHarness h;
    std::string name = std::string("svc-") + char(std::tolower(mode[0]));
    json job = sampleRayJob(name, mode);
    job["spec"]["rayClusterSpec"]["headGroupSpec"]["headService"] = {
        {"metadata", {{"name", "custom-head"}}}};
    h.apply(job);
    ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus(name) == "Complete"; })) << mode;
    EXPECT_TRUE(h.kube.get("Service", "default", "custom-head")) << mode;
    EXPECT_NE(h.rayjob(name)["status"].value("dashboardURL", "").find("custom-head."),
              std::string::npos);
  }
}

json conditionOf(const json& cluster, const std::string& type) {
  for (const auto& c : cluster.value("status", json::object()).value("conditions", json::array()))
    if (c.value("type", "") == type) return c;
  return nullptr;
}

// KubeRay's RayClusterReplicaFailure: a Pod create the API server refuses shows on the cluster
// (reason FailedCreateHeadPod / FailedCreateWorkerPod, the error in the message) while Pods
// still have to be made, and goes once they are. Its type is "ReplicaFailure", the constant's
// value: written under the constant's name, KubeRay's sampleyaml check never found it.
TEST(RayClusterReconcilerTest, ARefusedPodCreateShowsAsReplicaFailureUntilThePodsExist) {
  SimHarness h;
  h.kube.injectFault({"create", "Pod", 4, 403, "Forbidden", false});
  h.apply(sampleRayJob("quota"));
  json failure;
  ASSERT_TRUE(h.runUntil([&] {
    json status = h.rayjob("quota").value("status", json::object());
    std::string name = status.value("rayClusterName", "");
    auto cluster = name.empty() ? std::nullopt : h.kube.get("RayCluster", "default", name);
    if (cluster) failure = conditionOf(*cluster, "ReplicaFailure");
    return !failure.is_null();
  }));
  EXPECT_EQ(failure["status"], "True");
  EXPECT_EQ(failure["reason"], "FailedCreateHeadPod");
  EXPECT_EQ(failure["message"].get<std::string>().rfind("FailedCreateHeadPod\n", 0), 0u);
  EXPECT_NE(failure["message"].get<std::string>().find("Forbidden"), std::string::npos);
  std::string name = h.rayjob("quota")["status"]["rayClusterName"];
  ASSERT_TRUE(h.runUntil([&] {
    auto cluster = h.kube.get("RayCluster", "default", name);
    return cluster && (*cluster)["status"].value("state", "") == "ready";
  }));
  EXPECT_TRUE(conditionOf(*h.kube.get("RayCluster", "default", name), "ReplicaFailure")
                  .is_null());
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("quota") == "Complete"; }));
}

// The checker itself: a write that bypasses the Executor is caught.
// KubeRay's e2e TestRayClusterAutoscalerPlacementGroup: a worker deleted by hand comes back
// under a name no earlier worker had, also after a restart (the journal keeps the count).
TEST(RayClusterReconcilerTest, ADeletedWorkerIsReplacedUnderAFreshNameAcrossRestarts) {
  SimHarness h;
  json pod = {{"spec", {{"containers", json::array({{{"name", "ray"}, {"image", "rayproject/ray:2.60.0"}}})}}}};
  json cluster = {{"apiVersion", "ray.io/v1"}, {"kind", "RayCluster"},
                  {"metadata", {{"name", "pg"}, {"namespace", "default"}}},
                  {"spec", {{"headGroupSpec", {{"rayStartParams", json::object()}, {"template", pod}}},
                            {"workerGroupSpecs", json::array({{{"groupName", "cpu"}, {"replicas", 1},
                                                               {"rayStartParams", json::object()},
                                                               {"template", pod}}})}}}};
  h.kube.create("RayCluster", cluster);
  auto workers = [&] {
    std::vector<std::string> names;
    for (const auto& p : h.kube.list("Pod", "default"))
      if (p["metadata"]["name"].get<std::string>().find("-worker-") != std::string::npos)
        names.push_back(p["metadata"]["name"]);
    return names;
  };
  using Names = std::vector<std::string>;
  ASSERT_TRUE(h.runUntil([&] { return workers() == Names{"pg-cpu-worker-0"}; }));
  h.kube.remove("Pod", "default", "pg-cpu-worker-0");
  ASSERT_TRUE(h.runUntil([&] { return workers() == Names{"pg-cpu-worker-1"}; })) << workers().size();
  h.restart();
  h.kube.remove("Pod", "default", "pg-cpu-worker-1");
  ASSERT_TRUE(h.runUntil([&] { return workers() == Names{"pg-cpu-worker-2"}; })) << workers().size();
}

// KubeRay's e2e TestRayClusterScalingDown: a standalone RayCluster whose Pods carry a finalizer of
// another controller, scaled from two workers to one: one worker is deleted at once (it stays,
// with a deletionTimestamp, until the finalizer goes) and the head is not.
TEST(RayClusterReconcilerTest, AScaleDownDeletesOneWorkerWhosePodsCarryAForeignFinalizer) {
  SimHarness h;
  json pod = {{"metadata", {{"finalizers", json::array({"test.kuberay.io/finalizers"})}}},
              {"spec", {{"containers", json::array({{{"name", "ray"}, {"image", "rayproject/ray:2.46.0"}}})}}}};
  json cluster = {{"apiVersion", "ray.io/v1"}, {"kind", "RayCluster"},
                  {"metadata", {{"name", "down"}, {"namespace", "default"}}},
                  {"spec", {{"headGroupSpec", {{"rayStartParams", json::object()}, {"template", pod}}},
                            {"workerGroupSpecs", json::array({{{"groupName", "small"}, {"replicas", 2},
                                                               {"minReplicas", 1}, {"maxReplicas", 5},
                                                               {"rayStartParams", json::object()},
                                                               {"template", pod}}})}}}};
  h.kube.create("RayCluster", cluster);
  ASSERT_TRUE(h.runUntil([&] {
    auto c = h.kube.get("RayCluster", "default", "down");
    return c && (*c).value("status", json::object()).value("state", "") == "ready";
  }));
  json current = *h.kube.get("RayCluster", "default", "down");
  current["spec"]["workerGroupSpecs"][0]["replicas"] = 1;
  h.kube.updateAs("kuberay-test", "RayCluster", current);
  for (int i = 0; i < 50; ++i) h.step();
  int deleting = 0, workers = 0;
  for (const auto& p : h.kube.list("Pod", "default")) {
    bool worker = p["metadata"]["name"].get<std::string>().find("-worker-") != std::string::npos;
    bool marked = p["metadata"].contains("deletionTimestamp");
    workers += worker;
    deleting += worker && marked;
    if (!worker) {
      EXPECT_FALSE(marked) << "the head was deleted";
    }
  }
  EXPECT_EQ(workers, 2);
  EXPECT_EQ(deleting, 1);
}

TEST(EffectCheckerTest, AWriteWithoutADurableIntentIsAViolation) {
  SimHarness h;
  h.port.create("Service", {{"metadata", {{"name", "sneaky"}, {"namespace", "default"}}}});
  ASSERT_EQ(h.checker.violations().size(), 1u);
  EXPECT_NE(h.checker.violations()[0].find("sneaky"), std::string::npos);
  h.checker.clearViolations();
}

}  // namespace
}  // namespace rayjournal::testing
