// Volcano gang scheduling on the Stack (--batch-scheduler volcano), as KubeRay v1.7.0 does it:
// a RayJob's PodGroup "ray-<job>-pg" is a journaled intent before its RayCluster, every Pod of the
// gang (head, workers, the submitter) names it and runs under schedulerName volcano, and once the
// RayJob is done the gang shrinks to what is left; a standalone RayCluster gets its own PodGroup
// before its first Pod, kept to its replicas. A Pod made before its PodGroup, or a gang that
// keeps its size after the job, is a queue Volcano holds for nothing.
#include <gtest/gtest.h>

#include "controller/Executor.h"
#include "support/MinimalRayCluster.h"
#include "support/SampleRayJob.h"
#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

void useVolcano(SimHarness& h) {
  h.config.batchScheduler = "volcano";
  h.restart();
}

// Index of the first create of `kind` in the API server's history ({kind, namespace, name, ...}).
int firstCreate(SimHarness& h, const std::string& kind) {
  std::vector<json> history = h.kube.createHistory();
  for (size_t i = 0; i < history.size(); ++i)
    if (history[i]["kind"] == kind) return int(i);
  return -1;
}

int creates(SimHarness& h, const std::string& kind) {
  int n = 0;
  for (const auto& c : h.kube.createHistory()) n += c["kind"] == kind;
  return n;
}

json podGroup(SimHarness& h, const std::string& name) {
  auto pg = h.kube.get("PodGroup", "default", name);
  return pg ? *pg : json();
}

json volcanoJob(const std::string& name) {
  json job = withWorkerGroup(sampleRayJob(name, "K8sJobMode", "SUCCEEDED", "30s"));
  job["metadata"]["labels"] = {{"volcano.sh/queue-name", "q1"}};
  job["spec"]["shutdownAfterJobFinishes"] = true;
  return job;
}

TEST(VolcanoScenario, ARayJobsGangIsMadeBeforeItsClusterAndReleasedWhenItIsDone) {
  SimHarness h;
  useVolcano(h);
  h.apply(volcanoJob("gang"));
  ASSERT_TRUE(h.runUntil([&] { return h.status("gang").value("jobStatus", "") == "RUNNING"; }));
  json pg = podGroup(h, "ray-gang-pg");
  ASSERT_TRUE(pg.is_object());
  EXPECT_EQ(pg["spec"]["minMember"], 2) << "head and one worker";
  EXPECT_EQ(pg["spec"]["queue"], "q1");
  EXPECT_EQ(pg["spec"]["minResources"]["cpu"], "500m") << "the default submitter's request";
  EXPECT_LT(firstCreate(h, "PodGroup"), firstCreate(h, "RayCluster"));
  json cluster = h.kube.list("RayCluster", "default")[0];
  EXPECT_EQ(cluster["metadata"]["annotations"]["scheduling.k8s.io/group-name"], "ray-gang-pg");
  for (const json& pod : h.kube.list("Pod", "default")) {
    EXPECT_EQ(pod["spec"]["schedulerName"], "volcano") << pod["metadata"]["name"];
    EXPECT_EQ(pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"], "ray-gang-pg");
    EXPECT_EQ(pod["metadata"]["labels"]["volcano.sh/queue-name"], "q1");
  }
  json submitter = *h.kube.get("Job", "default", "gang");
  EXPECT_EQ(submitter["spec"]["template"]["spec"]["schedulerName"], "volcano");
  EXPECT_EQ(submitter["spec"]["template"]["metadata"]["annotations"]["volcano.sh/task-spec"], "submittergroup");
  EXPECT_FALSE(podGroup(h, "ray-" + cluster["metadata"]["name"].get<std::string>() + "-pg").is_object())
      << "a RayJob's cluster is in its RayJob's PodGroup, not one of its own";
  ASSERT_TRUE(h.runUntil([&] { return h.kube.list("RayCluster", "default").empty(); }));
  ASSERT_TRUE(h.runUntil([&] { return podGroup(h, "ray-gang-pg")["spec"].value("minMember", -1) == 0; }));
  EXPECT_TRUE(podGroup(h, "ray-gang-pg")["spec"]["minResources"].empty());
  EXPECT_TRUE(h.anyEvent("BatchSchedulerCleanedUp", "Cleaned up batch scheduler resources for RayJob default/gang"));
  EXPECT_EQ(creates(h, "PodGroup"), 1);
}

TEST(VolcanoScenario, AStandaloneClusterGetsItsPodGroupFirstAndKeepsItToItsReplicas) {
  SimHarness h;
  useVolcano(h);
  h.kube.create("RayCluster", minimalRayCluster("solo", json::object(), 1));
  ASSERT_TRUE(h.runUntil([&] { return h.kube.list("Pod", "default").size() == 2; }));
  EXPECT_EQ(podGroup(h, "ray-solo-pg")["spec"]["minMember"], 2);
  EXPECT_LT(firstCreate(h, "PodGroup"), firstCreate(h, "Pod"));
  for (const json& pod : h.kube.list("Pod", "default")) {
    std::string task = pod["metadata"]["labels"]["ray.io/node-type"] == "head" ? "headgroup" : "small";
    EXPECT_EQ(pod["metadata"]["annotations"]["volcano.sh/task-spec"], task);
  }
  json cluster = *h.kube.get("RayCluster", "default", "solo");
  cluster["spec"]["workerGroupSpecs"][0]["replicas"] = 3;
  h.kube.update("RayCluster", cluster);
  ASSERT_TRUE(h.runUntil([&] { return podGroup(h, "ray-solo-pg")["spec"].value("minMember", -1) == 4; }));
  EXPECT_EQ(creates(h, "PodGroup"), 1);
}

// A kill -9 right after the PodGroup's intent is durable, and right after its create ran: the
// restarted operator resolves the intent and the RayJob has one PodGroup, then its cluster.
TEST(VolcanoScenario, ACrashAroundThePodGroupsCreateMakesItOnce) {
  using Stage = controller::Executor::Stage;
  for (Stage stage : {Stage::IntentDurable, Stage::Executed}) {
    SCOPED_TRACE(stage == Stage::Executed ? "executed" : "durable");
    SimHarness h;
    useVolcano(h);
    h.apply(volcanoJob("crash"));
    ASSERT_TRUE(h.stepUntilCrash(stage, controller::Action::CreatePodGroup));
    h.restart();
    ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("crash") == "Complete"; }));
    EXPECT_EQ(creates(h, "PodGroup"), 1);
    EXPECT_EQ(creates(h, "RayCluster"), 1);
  }
}

TEST(VolcanoScenario, WithoutTheSchedulerNothingIsGangScheduled) {
  SimHarness h;
  h.apply(volcanoJob("plain"));
  ASSERT_TRUE(h.runUntil([&] { return h.status("plain").value("jobStatus", "") == "RUNNING"; }));
  std::vector<json> pods = h.kube.list("Pod", "default");
  ASSERT_EQ(pods.size(), 2u) << "head and worker";
  for (const json& pod : pods) EXPECT_FALSE(pod["spec"].contains("schedulerName"));
  EXPECT_FALSE((*h.kube.get("Job", "default", "plain"))["spec"]["template"]["spec"].contains("schedulerName"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("plain") == "Complete"; }));
  EXPECT_EQ(creates(h, "PodGroup"), 0);
}

// YuniKorn (--batch-scheduler yunikorn): no object of its own; the RayJob's app id, queue and task
// groups on its cluster's Pods and its submitter, schedulerName yunikorn on each.
TEST(YuniKornScenario, ARayJobsPodsCarryItsApplicationAndTaskGroups) {
  SimHarness h;
  h.config.batchScheduler = "yunikorn";
  h.restart();
  json job = volcanoJob("yk");
  job["metadata"]["labels"] = {{"yunikorn.apache.org/app-id", "app-7"},
                               {"yunikorn.apache.org/queue", "root.ml"},
                               {"ray.io/gang-scheduling-enabled", "true"}};
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.status("yk").value("jobStatus", "") == "RUNNING"; }));
  for (const json& pod : h.kube.list("Pod", "default")) {
    EXPECT_EQ(pod["spec"]["schedulerName"], "yunikorn");
    EXPECT_EQ(pod["metadata"]["labels"]["applicationId"], "app-7");
    EXPECT_EQ(pod["metadata"]["labels"]["queue"], "root.ml");
    json groups = json::parse(pod["metadata"]["annotations"]["yunikorn.apache.org/task-groups"].get<std::string>());
    EXPECT_EQ(groups.size(), 3u) << "head, workers, submitter";
  }
  json submitter = (*h.kube.get("Job", "default", "yk"))["spec"]["template"];
  EXPECT_EQ(submitter["metadata"]["annotations"]["yunikorn.apache.org/task-group-name"], "submittergroup");
  EXPECT_EQ(creates(h, "PodGroup"), 0);
}

}  // namespace
}  // namespace rayjournal::testing
