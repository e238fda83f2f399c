// In-tree autoscaling on the simulated cluster, end to end: the operator builds the head with the
// autoscaler sidecar and its RBAC; the simulated Ray autoscaler (SimAutoscaler) raises the worker
// group for a job that asks for CPUs, the operator creates exactly those Pods, the job runs and
// completes, and after the idle timeout the autoscaler names the Pods to remove: exactly those go,
// and the list is cleared by the autoscaler, never by the operator. Also across operator restarts
// while a scale-up and a scale-down are in flight.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "events/EventCodec.h"
#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

json autoscalingRayJob(const std::string& name, int cpus, int idleSeconds = 5) {
  json job = sampleRayJob(name, "K8sJobMode", "SUCCEEDED", "3s");
  job["metadata"]["annotations"]["rayjournal.io/sim-demand"] = "cpu=" + std::to_string(cpus);
  json& cluster = job["spec"]["rayClusterSpec"];
  cluster["enableInTreeAutoscaling"] = true;
  cluster["autoscalerOptions"] = {{"idleTimeoutSeconds", idleSeconds}};
  cluster["headGroupSpec"]["rayStartParams"] = {{"num-cpus", "0"}};
  cluster["workerGroupSpecs"] = json::array(
      {{{"groupName", "small"},
        {"replicas", 0},
        {"minReplicas", 0},
        {"maxReplicas", 5},
        {"rayStartParams", {{"num-cpus", "1"}}},
        {"template",
         {{"spec", {{"containers", json::array({{{"name", "w"}, {"image", "rayproject/ray:2.46.0"}}})}}}}}}});
  return job;
}

// Watches what happens to one cluster's worker Pods and what the autoscaler asked for.
struct ScaleLog {
  std::set<std::string> created, deleted, named;
  size_t mostWorkers = 0;

  void attach(SimHarness& h) {
    h.kube.watch("Pod", [this](kube::WatchEventType type, const json& pod) {
      const std::string name = pod["metadata"].value("name", "");
      if (pod["metadata"].value("labels", json::object()).value("ray.io/node-type", "") != "worker") return;
      if (type == kube::WatchEventType::Added) created.insert(name);
      if (type == kube::WatchEventType::Deleted) deleted.insert(name);
    });
  }
  void look(SimHarness& h, const std::string& cluster) {
    auto rc = h.kube.get("RayCluster", "default", cluster);
    if (!rc) return;
    for (const auto& g : (*rc)["spec"]["workerGroupSpecs"])
      for (const auto& n : g.value("scaleStrategy", json::object()).value("workersToDelete", json::array()))
        named.insert(n.get<std::string>());
    mostWorkers = std::max(mostWorkers, workers(h, cluster));
  }
  static size_t workers(SimHarness& h, const std::string& cluster) {
    return h.kube.list("Pod", "default", {{"ray.io/cluster", cluster}, {"ray.io/node-type", "worker"}}).size();
  }
};

json workerGroup(SimHarness& h, const std::string& cluster) {
  return (*h.kube.get("RayCluster", "default", cluster))["spec"]["workerGroupSpecs"][0];
}

// Runs until the autoscaler's scale-down is over: no worker left and workersToDelete cleared.
bool runUntilScaledDown(SimHarness& h, ScaleLog& log, const std::string& cluster) {
  return h.runUntil([&] {
    log.look(h, cluster);
    return ScaleLog::workers(h, cluster) == 0 && workerGroup(h, cluster)["scaleStrategy"]["workersToDelete"].empty();
  }, 120000);
}

TEST(AutoscalingScenario, TheAutoscalerGrowsTheGroupForTheJobAndShrinksItWhenIdle) {
  SimHarness h;
  ScaleLog log;
  log.attach(h);
  h.apply(autoscalingRayJob("as1", 3));
  std::string cluster;
  ASSERT_TRUE(h.runUntil([&] {
    cluster = h.clusterOf("as1");
    if (!cluster.empty()) log.look(h, cluster);
    return h.deploymentStatus("as1") == "Complete";
  }));
  EXPECT_EQ(h.status("as1")["jobStatus"], "SUCCEEDED");
  EXPECT_EQ(log.mostWorkers, 3u) << "3 CPUs asked, 1 CPU a worker, the head has none";
  EXPECT_EQ(workerGroup(h, cluster)["replicas"], 3) << "the operator kept what the autoscaler set";
  for (const char* kind : {"ServiceAccount", "Role", "RoleBinding"})
    EXPECT_TRUE(h.kube.get(kind, "default", cluster).has_value()) << kind;
  auto head = h.kube.get("Pod", "default", cluster + "-head");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ((*head)["spec"]["containers"][1]["name"], "autoscaler");
  // Idle: after 5 s the autoscaler names the Pods; the operator deletes exactly those.
  ASSERT_TRUE(runUntilScaledDown(h, log, cluster));
  EXPECT_EQ(workerGroup(h, cluster)["replicas"], 0);
  EXPECT_EQ(log.deleted, log.named) << "every deleted worker was one the autoscaler named";
  EXPECT_EQ(log.created.size(), 3u) << "no worker created twice or replaced";
  EXPECT_TRUE(h.anyEvent("CreatedServiceAccount"));
  EXPECT_TRUE(h.anyEvent("CreatedRoleBinding"));
  // The journal says who changed the spec before the intents that followed.
  std::vector<std::string> changes;
  std::set<std::string> deleteIntents;
  h.journal->scanObject({"RayCluster", "default", cluster, ""}, 0, [&](const wal::Record& r) {
    auto fact = r.type == wal::RecordType::Observation ? events::decodeObservation(r) : std::nullopt;
    if (const auto* changed = fact ? std::get_if<events::SpecChanged>(&*fact) : nullptr) {
      EXPECT_EQ(changed->changedBy, "ray-autoscaler (simulated)");
      changes.push_back(changed->workers);
    }
    if (r.type == wal::RecordType::Intent && events::decodeIntent(r).action == events::Action::DeletePod)
      deleteIntents.insert(events::decodeIntent(r).target);
    return true;
  });
  ASSERT_GE(changes.size(), 2u) << "the scale-up and the scale-down";
  EXPECT_EQ(changes.front(), "small: replicas 3");
  EXPECT_TRUE(std::any_of(changes.begin(), changes.end(), [&](const std::string& c) {
    return c.rfind("small: replicas 0, workersToDelete " + cluster + "-small-worker-", 0) == 0;
  })) << "the scale-down, with the Pods it named";
  EXPECT_EQ(deleteIntents, log.named);
}

TEST(AutoscalingScenario, RestartsDuringScaleUpAndScaleDownNeitherDuplicateNorDeleteUnnamedPods) {
  SimHarness h;
  ScaleLog log;
  log.attach(h);
  h.apply(autoscalingRayJob("as2", 4));
  std::string cluster;
  // A restart as soon as the autoscaler raised the replicas, before every Pod is ready.
  ASSERT_TRUE(h.runUntil([&] {
    cluster = h.clusterOf("as2");
    return !cluster.empty() && h.kube.get("RayCluster", "default", cluster) &&
           workerGroup(h, cluster)["replicas"].get<int>() > 0;
  }));
  h.restart();
  ASSERT_TRUE(h.runUntil([&] {
    log.look(h, cluster);
    return h.deploymentStatus("as2") == "Complete";
  }));
  // A restart as soon as the autoscaler named Pods to remove.
  ASSERT_TRUE(h.runUntil([&] {
    log.look(h, cluster);
    return !workerGroup(h, cluster)["scaleStrategy"]["workersToDelete"].empty();
  }, 120000));
  h.restart();
  ASSERT_TRUE(runUntilScaledDown(h, log, cluster));
  EXPECT_EQ(log.mostWorkers, 4u);
  EXPECT_EQ(log.created.size(), 4u) << "a restart never creates a worker twice";
  EXPECT_EQ(log.deleted, log.named);
  EXPECT_EQ(h.status("as2").value("failed", 0), 0);
}

TEST(AutoscalingScenario, AServiceAccountTheHeadNamesMustExistBeforeAnyPod) {
  SimHarness h;
  json job = autoscalingRayJob("as3", 1);
  job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"] = "team-sa";
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.anyEvent("AutoscalerServiceAccountNotFound", "team-sa"); }));
  const std::string cluster = h.clusterOf("as3");
  EXPECT_TRUE(h.kube.list("Pod", "default", {{"ray.io/cluster", cluster}}).empty());
  h.kube.create("ServiceAccount", {{"apiVersion", "v1"},
                                   {"kind", "ServiceAccount"},
                                   {"metadata", {{"name", "team-sa"}, {"namespace", "default"}}}});
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("as3") == "Complete"; }));
  EXPECT_FALSE(h.kube.get("ServiceAccount", "default", cluster).has_value()) << "the user's is used";
  EXPECT_EQ((*h.kube.get("RoleBinding", "default", cluster))["subjects"][0]["name"], "team-sa");
}

}  // namespace
}  // namespace rayjournal::testing
