// KubeRay's operator settings (environment variables and feature gates) as a user sees them in
// the objects the operator writes, on the simulated cluster.
#include <gtest/gtest.h>

#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

json withWorkers(json job) {
  job["spec"]["rayClusterSpec"]["workerGroupSpecs"] = json::array(
      {{{"groupName", "small"},
        {"replicas", 1},
        {"minReplicas", 1},
        {"maxReplicas", 1},
        {"template",
         {{"spec",
           {{"containers", json::array({{{"name", "ray-worker"},
                                         {"image", "rayproject/ray:2.46.0"}}})}}}}}}});
  return job;
}

json pod(SimHarness& h, const std::string& cluster, const std::string& nodeType) {
  auto pods =
      h.kube.list("Pod", "default", {{"ray.io/cluster", cluster}, {"ray.io/node-type", nodeType}});
  return pods.empty() ? json() : pods[0];
}

std::string clusterOf(SimHarness& h, const std::string& job) {
  return h.rayjob(job).value("status", json::object()).value("rayClusterName", "");
}

// ENABLE_LOGIN_SHELL=true: the submitter runs `bash -cel`, the Ray and init containers
// `bash -cl` (KubeRay's GetContainerCommand). Before, the setting was not read.
TEST(OperatorSettingsScenario, LoginShellReachesTheSubmitterAndTheRayContainers) {
  SimHarness h;
  h.config.loginShell = true;
  h.restart();
  h.apply(withWorkers(sampleRayJob("login")));
  ASSERT_TRUE(h.runUntil([&] { return h.kube.get("Job", "default", "login").has_value(); }));
  json submitter = *h.kube.get("Job", "default", "login");
  EXPECT_EQ(submitter["spec"]["template"]["spec"]["containers"][0]["command"],
            json::array({"/bin/bash", "-cel", "--"}));
  json worker = pod(h, clusterOf(h, "login"), "worker");
  ASSERT_FALSE(worker.is_null());
  EXPECT_EQ(worker["spec"]["containers"][0]["command"], json::array({"/bin/bash", "-cl", "--"}));
  EXPECT_EQ(worker["spec"]["initContainers"][0]["command"],
            json::array({"/bin/bash", "-cl", "--"}));
  json head = pod(h, clusterOf(h, "login"), "head");
  EXPECT_EQ(head["spec"]["containers"][0]["command"], json::array({"/bin/bash", "-cl", "--"}));
}

TEST(OperatorSettingsScenario, ByDefaultTheShellIsNotALoginShell) {
  SimHarness h;
  h.apply(withWorkers(sampleRayJob("plain")));
  ASSERT_TRUE(h.runUntil([&] { return h.kube.get("Job", "default", "plain").has_value(); }));
  json submitter = *h.kube.get("Job", "default", "plain");
  EXPECT_EQ(submitter["spec"]["template"]["spec"]["containers"][0]["command"],
            json::array({"/bin/bash", "-ce", "--"}));
  json worker = pod(h, clusterOf(h, "plain"), "worker");
  EXPECT_EQ(worker["spec"]["containers"][0]["command"], json::array({"/bin/bash", "-c", "--"}));
  EXPECT_EQ(worker["spec"]["initContainers"][0]["name"], "wait-gcs-ready");
  EXPECT_TRUE(worker["spec"]["containers"][0].contains("readinessProbe"));
}

// ENABLE_PROBES_INJECTION=false and ENABLE_INIT_CONTAINER_INJECTION=false: no probes, no
// wait-gcs-ready; the RayJob still completes (the simulated kubelet needs neither).
TEST(OperatorSettingsScenario, ProbeAndInitContainerInjectionCanBeTurnedOff) {
  SimHarness h;
  h.config.injectProbes = false;
  h.config.injectWaitGcsReady = false;
  h.restart();
  h.apply(withWorkers(sampleRayJob("bare", "HTTPMode")));
  ASSERT_TRUE(h.runUntil([&] { return !pod(h, clusterOf(h, "bare"), "worker").is_null(); }));
  json worker = pod(h, clusterOf(h, "bare"), "worker");
  json head = pod(h, clusterOf(h, "bare"), "head");
  EXPECT_FALSE(worker["spec"].contains("initContainers")) << worker["spec"].dump();
  for (const json& p : {worker, head}) {
    EXPECT_FALSE(p["spec"]["containers"][0].contains("readinessProbe"));
    EXPECT_FALSE(p["spec"]["containers"][0].contains("livenessProbe"));
  }
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("bare") == "Complete"; }));
}

// RayClusterStatusConditions=false: the RayCluster's status has no conditions. The gate was
// parsed but the RayCluster reconciler dropped it and always wrote them.
TEST(OperatorSettingsScenario, StatusConditionsGateOffWritesNoClusterConditions) {
  SimHarness h;
  h.config.gates.rayClusterStatusConditions = false;
  h.restart();
  h.apply(sampleRayJob("nocond", "HTTPMode"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("nocond") == "Running"; }));
  json cluster = *h.kube.get("RayCluster", "default", clusterOf(h, "nocond"));
  EXPECT_EQ(cluster["status"].value("state", ""), "ready");
  EXPECT_FALSE(cluster["status"].contains("conditions")) << cluster["status"].dump();
}

TEST(OperatorSettingsScenario, StatusConditionsGateOnWritesClusterConditions) {
  SimHarness h;
  h.apply(sampleRayJob("cond", "HTTPMode"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("cond") == "Running"; }));
  json cluster = *h.kube.get("RayCluster", "default", clusterOf(h, "cond"));
  EXPECT_FALSE(cluster["status"].value("conditions", json::array()).empty());
}

}  // namespace
}  // namespace rayjournal::testing
