// RayCluster spec.suspend on the Stack, as KubeRay v1.7.0 moves it (Kueue holds a cluster this
// way until it is admitted): RayClusterSuspending, then every Pod deleted (each a journaled
// intent), then RayClusterSuspended with state "suspended" and RayClusterProvisioned False;
// resumed, the Pods come back and the cluster is provisioned again. Before, spec.suspend was
// ignored with a Warning and the cluster kept its Pods.
#include <gtest/gtest.h>

#include "support/MinimalRayCluster.h"
#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

json plainRayCluster(const std::string& name) { return minimalRayCluster(name, json::object(), 2); }

std::string conditionOf(const json& cluster, const std::string& type) {
  for (const auto& c : cluster.value("status", json::object()).value("conditions", json::array()))
    if (c.value("type", "") == type) return c.value("status", "");
  return "";
}

json clusterNamed(SimHarness& h, const std::string& name) { return *h.kube.get("RayCluster", "default", name); }

void setSuspend(SimHarness& h, const std::string& name, bool suspend) {
  json c = clusterNamed(h, name);
  c["spec"]["suspend"] = suspend;
  h.kube.update("RayCluster", c);
}

TEST(RayClusterSuspendTest, ASuspendedClusterLosesItsPodsAndGetsThemBackWhenResumed) {
  SimHarness h;
  h.kube.create("RayCluster", plainRayCluster("rc"));
  ASSERT_TRUE(h.runUntil([&] { return clusterNamed(h, "rc").value("status", json::object()).value("state", "") == "ready"; }));
  setSuspend(h, "rc", true);
  ASSERT_TRUE(h.runUntil([&] { return conditionOf(clusterNamed(h, "rc"), "RayClusterSuspended") == "True"; }))
      << clusterNamed(h, "rc").dump() << " pods " << h.kube.list("Pod", "default").size();
  json c = clusterNamed(h, "rc");
  EXPECT_TRUE(h.kube.list("Pod", "default").empty());
  EXPECT_EQ(c["status"]["state"], "suspended");
  EXPECT_TRUE(c["status"]["stateTransitionTimes"].contains("suspended"));
  EXPECT_EQ(conditionOf(c, "RayClusterSuspending"), "False");
  EXPECT_EQ(conditionOf(c, "RayClusterProvisioned"), "False");
  for (int i = 0; i < 30; ++i) h.step();
  EXPECT_TRUE(h.kube.list("Pod", "default").empty()) << "a suspended cluster must not get Pods back";
  setSuspend(h, "rc", false);
  ASSERT_TRUE(h.runUntil([&] { return conditionOf(clusterNamed(h, "rc"), "RayClusterProvisioned") == "True"; }));
  c = clusterNamed(h, "rc");
  EXPECT_EQ(c["status"]["state"], "ready");
  EXPECT_EQ(conditionOf(c, "RayClusterSuspended"), "False");
  EXPECT_EQ(h.kube.list("Pod", "default").size(), 3u);
}

// Suspended before any Pod was made (as Kueue creates clusters): none is ever created.
TEST(RayClusterSuspendTest, AClusterCreatedSuspendedNeverGetsAPod) {
  SimHarness h;
  json rc = plainRayCluster("held");
  rc["spec"]["suspend"] = true;
  h.kube.create("RayCluster", rc);
  ASSERT_TRUE(h.runUntil([&] { return conditionOf(clusterNamed(h, "held"), "RayClusterSuspended") == "True"; }));
  EXPECT_EQ(clusterNamed(h, "held")["status"]["state"], "suspended");
  for (const auto& c : h.kube.createHistory()) EXPECT_NE(c["kind"], "Pod");
}

}  // namespace
}  // namespace rayjournal::testing
