// KubeRay v1.7.0 behaviours (reference sections 2.4-2.17) that a user sees, each on the
// simulated cluster in simulated time: deadlines before Running, deletion policies and rules,
// the grace period, the RayJob head Service, SidecarMode retries, explicit job ids, a missing
// selected cluster and the light-weight submitter.
#include <gtest/gtest.h>

#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

bool isTerminal(const std::string& deploymentStatus) {
  return deploymentStatus == "Complete" || deploymentStatus == "Failed";
}

bool clusterExists(SimHarness& h, const std::string& name) {
  return !name.empty() && h.kube.get("RayCluster", "default", name).has_value();
}

// Initializing: the cluster never gets ready (its Pods never start), the deadline fails it.
TEST(ParityScenario, PreRunningDeadlineInInitializing) {
  SimHarness h;
  h.world.setOptions({100000000, 100});
  json job = sampleRayJob("slowstart", "HTTPMode");
  job["spec"]["preRunningDeadlineSeconds"] = 5;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("slowstart") == "Failed"; }, 30000));
  EXPECT_EQ(h.status("slowstart")["reason"], "PreRunningDeadlineExceeded");
  EXPECT_EQ(h.ray.submissions(), 0u);
}

// Waiting (InteractiveMode): no jobId is ever set, the deadline fails it.
TEST(ParityScenario, PreRunningDeadlineInWaiting) {
  SimHarness h;
  json job = sampleRayJob("idle", "InteractiveMode");
  job["spec"]["preRunningDeadlineSeconds"] = 20;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("idle") == "Waiting"; }));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("idle") == "Failed"; }, 30000));
  EXPECT_EQ(h.status("idle")["reason"], "PreRunningDeadlineExceeded");
}

// A retried preRunning deadline counts per attempt (KubeRay's startTime is per attempt).
TEST(ParityScenario, PreRunningDeadlineIsRetriedWithBackoffLimit) {
  SimHarness h;
  h.world.setOptions({100000000, 100});
  json job = sampleRayJob("slowretry", "HTTPMode");
  job["spec"]["preRunningDeadlineSeconds"] = 3;
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.status("slowretry").value("failed", 0) == 1; }, 30000));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("slowretry") == "Failed"; }, 30000));
  EXPECT_EQ(h.status("slowretry")["failed"], 2);
  EXPECT_EQ(h.status("slowretry")["reason"], "PreRunningDeadlineExceeded");
}

// deletionRules on jobDeploymentStatus Failed: a deadline failure (no Ray job status) deletes
// the cluster after the rule's ttl.
TEST(ParityScenario, DeletionRuleOnDeploymentStatusFailed) {
  SimHarness h;
  json job = sampleRayJob("ruled", "HTTPMode", "SUCCEEDED", "10m");
  job["spec"]["activeDeadlineSeconds"] = 5;
  job["spec"]["deletionStrategy"] = {
      {"deletionRules",
       json::array({{{"policy", "DeleteCluster"},
                     {"condition", {{"jobDeploymentStatus", "Failed"}, {"ttlSeconds", 10}}}}})}};
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("ruled") == "Failed"; }, 30000));
  EXPECT_EQ(h.status("ruled")["reason"], "DeadlineExceeded");
  std::string cluster = h.clusterOf("ruled");
  for (int i = 0; i < 50; ++i) h.step();  // 5 s: the ttl has not passed
  EXPECT_TRUE(clusterExists(h, cluster));
  ASSERT_TRUE(h.runUntil([&] { return !clusterExists(h, cluster); }, 30000));
  EXPECT_TRUE(h.kube.get("RayJob", "default", "ruled").has_value());
}

json withLegacyPolicies(json job, const char* onSuccess, const char* onFailure) {
  job["spec"]["deletionStrategy"] = {{"onSuccess", {{"policy", onSuccess}}},
                                     {"onFailure", {{"policy", onFailure}}}};
  return job;
}

// The legacy onSuccess/onFailure policies run on the Ray job status: DeleteCluster on success,
// DeleteWorkers (every group suspended, the head kept) on failure, DeleteSelf on success.
TEST(ParityScenario, LegacyPoliciesExecute) {
  SimHarness h;
  json ok = withLegacyPolicies(sampleRayJob("legacy-ok", "HTTPMode"), "DeleteCluster", "DeleteNone");
  json bad = withLegacyPolicies(sampleRayJob("legacy-bad", "HTTPMode", "FAILED"), "DeleteNone",
                                "DeleteWorkers");
  bad = withWorkerGroup(std::move(bad), "w");
  json self = withLegacyPolicies(sampleRayJob("legacy-self", "HTTPMode"), "DeleteSelf", "DeleteNone");
  for (const json& j : {ok, bad, self}) h.apply(j);
  ASSERT_TRUE(h.runUntil([&] {
    return h.deploymentStatus("legacy-ok") == "Complete" &&
           h.deploymentStatus("legacy-bad") == "Failed";
  }));
  std::string okCluster = h.clusterOf("legacy-ok"), badCluster = h.clusterOf("legacy-bad");
  ASSERT_TRUE(h.runUntil([&] {
    auto c = h.kube.get("RayCluster", "default", badCluster);
    return !clusterExists(h, okCluster) && c &&
           (*c)["spec"]["workerGroupSpecs"][0].value("suspend", false) &&
           !h.kube.get("RayJob", "default", "legacy-self");
  }));
  EXPECT_TRUE(h.kube.get("RayJob", "default", "legacy-ok").has_value());
}

// A STOPPED Ray job (someone ran `ray job stop`) is neither success nor failure: no policy runs.
TEST(ParityScenario, LegacyPoliciesIgnoreAStoppedJob) {
  SimHarness h;
  h.apply(withLegacyPolicies(sampleRayJob("stopped", "HTTPMode", "STOPPED"), "DeleteCluster",
                             "DeleteCluster"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("stopped") == "Complete"; }));
  EXPECT_EQ(h.status("stopped")["jobStatus"], "STOPPED");
  std::string cluster = h.clusterOf("stopped");
  for (int i = 0; i < 300; ++i) h.step();
  EXPECT_TRUE(clusterExists(h, cluster));
}

// The default 300 s grace period: Ray is SUCCEEDED but the submitter never finishes; the RayJob
// leaves Running 300 s after Ray's end time, not before.
TEST(ParityScenario, DefaultGracePeriodIs300Seconds) {
  SimHarness h;
  h.apply(sampleRayJob("graceful", "K8sJobMode", "SUCCEEDED", "1s"));
  h.kube.injectFault({"updateStatus", "Job", 100000000, 500, "InternalError", false});
  ASSERT_TRUE(h.runUntil([&] { return h.status("graceful").value("jobStatus", "") == "SUCCEEDED"; }));
  int64_t succeededAt = h.clock.nowMs();
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("graceful") != "Running"; }, 400000, 1000));
  json s = h.status("graceful");
  EXPECT_EQ(s["reason"], "JobDeploymentStatusTransitionGracePeriodExceeded");
  EXPECT_EQ(s["jobDeploymentStatus"], "Complete");
  EXPECT_GE(h.clock.nowMs() - succeededAt, 295000) << "not before the grace period";
  EXPECT_LE(h.clock.nowMs() - succeededAt, 310000);
}

// The RayJob head Service <rayjob>-head-svc selects the current attempt's cluster.
TEST(ParityScenario, RayJobHeadServiceFollowsTheAttemptsCluster) {
  SimHarness h;
  json job = sampleRayJob("svc", "HTTPMode", "FAILED,SUCCEEDED", "5s");
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  auto selected = [&] {
    auto svc = h.kube.get("Service", "default", "svc-head-svc");
    return svc ? (*svc)["spec"]["selector"].value("ray.io/cluster", "") : "";
  };
  ASSERT_TRUE(h.runUntil([&] { return !selected().empty(); }));
  std::string first = h.clusterOf("svc");
  EXPECT_EQ(selected(), first);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("svc") == "Complete"; }));
  EXPECT_NE(h.clusterOf("svc"), first);
  EXPECT_EQ(selected(), h.clusterOf("svc"));
  auto svc = *h.kube.get("Service", "default", "svc-head-svc");
  EXPECT_EQ(svc["metadata"]["ownerReferences"][0]["kind"], "RayJob");
}

// SidecarMode: an application failure is retried on a new cluster with a new sidecar.
TEST(ParityScenario, SidecarModeRetries) {
  SimHarness h;
  json job = sampleRayJob("side-retry", "SidecarMode", "FAILED,SUCCEEDED");
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("side-retry") == "Complete"; }));
  EXPECT_EQ(h.status("side-retry")["failed"], 1);
  EXPECT_EQ(h.status("side-retry")["succeeded"], 1);
  EXPECT_EQ(h.ray.submissions(), 2u);
}

// SidecarMode: the head Pod is lost mid-run; KubeRay does not recreate it (the sidecar would
// submit again), the attempt fails AppFailed "Ray head pod not found." and is retried.
TEST(ParityScenario, SidecarModeHeadPodLossFailsTheAttempt) {
  SimHarness h;
  json job = sampleRayJob("side-head", "SidecarMode", "SUCCEEDED", "30s");
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.status("side-head").value("jobStatus", "") == "RUNNING"; }));
  std::string first = h.clusterOf("side-head");
  h.kube.remove("Pod", "default", first + "-head");
  ASSERT_TRUE(h.runUntil([&] { return h.status("side-head").value("failed", 0) == 1; }));
  EXPECT_TRUE(
      h.kube.list("Pod", "default", {{"ray.io/cluster", first}, {"ray.io/node-type", "head"}})
          .empty())
      << "the head of a SidecarMode cluster is not recreated";
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("side-head") == "Complete"; }));
  EXPECT_NE(h.clusterOf("side-head"), first);
  EXPECT_EQ(h.ray.submissions(), 2u);
}

// An explicit spec.jobId is submitted again on each attempt's new cluster, in every mode that
// submits, and again after a suspend and resume.
TEST(ParityScenario, ExplicitJobIdAcrossRetriesAndResumesInEveryMode) {
  for (const char* mode : {"K8sJobMode", "HTTPMode", "SidecarMode"}) {
    SimHarness h;
    json job = sampleRayJob("fixed", mode, "FAILED,SUCCEEDED,SUCCEEDED", "30s");
    job["spec"]["jobId"] = "my-fixed-id";
    job["spec"]["backoffLimit"] = 1;
    job["spec"]["shutdownAfterJobFinishes"] = true;
    h.apply(job);
    ASSERT_TRUE(h.runUntil([&] { return h.status("fixed").value("failed", 0) == 1; })) << mode;
    ASSERT_TRUE(h.runUntil([&] { return h.status("fixed").value("jobStatus", "") == "RUNNING"; }))
        << mode;
    EXPECT_EQ(h.status("fixed")["jobId"], "my-fixed-id") << mode;
    json current = h.rayjob("fixed");
    current["spec"]["suspend"] = true;
    h.kube.update("RayJob", current);
    ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("fixed") == "Suspended"; })) << mode;
    current = h.rayjob("fixed");
    current["spec"]["suspend"] = false;
    h.kube.update("RayJob", current);
    ASSERT_TRUE(h.runUntil([&] { return isTerminal(h.deploymentStatus("fixed")); })) << mode;
    EXPECT_EQ(h.deploymentStatus("fixed"), "Complete") << mode << " " << h.status("fixed").dump();
    EXPECT_EQ(h.status("fixed")["jobId"], "my-fixed-id") << mode;
    EXPECT_EQ(h.ray.submissions(), 3u) << mode << ": one per attempt and one after the resume";
  }
}

// clusterSelector naming a cluster that does not exist: KubeRay's RayClusterNotFound event, the
// RayJob waits in Initializing (no cluster is created), and starts once the cluster appears.
TEST(ParityScenario, ClusterSelectorNamingAMissingCluster) {
  SimHarness h;
  json job = sampleRayJob("orphan", "HTTPMode");
  job["spec"].erase("rayClusterSpec");
  job["spec"]["clusterSelector"] = {{"ray.io/cluster", "not-yet"}};
  h.apply(job);
  for (int i = 0; i < 100; ++i) h.step();
  EXPECT_EQ(h.deploymentStatus("orphan"), "Initializing");
  EXPECT_TRUE(h.anyEvent("RayClusterNotFound"));
  EXPECT_TRUE(h.kube.list("RayCluster", "default").empty());
  h.kube.create("RayCluster",
                {{"apiVersion", "ray.io/v1"},
                 {"kind", "RayCluster"},
                 {"metadata", {{"name", "not-yet"}, {"namespace", "default"}}},
                 {"spec",
                  {{"headGroupSpec",
                    {{"template",
                      {{"spec", {{"containers", json::array({{{"name", "h"}, {"image", "x"}}})}}}}}}}}}});
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("orphan") == "Complete"; }));
}

// The light-weight submitter: a custom image and command, no entrypoint. The command is kept
// verbatim, KubeRay's env is added, and the RayJob completes when Ray does.
TEST(ParityScenario, LightWeightSubmitterKeepsTheUsersImageAndCommand) {
  SimHarness h;
  json job = sampleRayJob("light", "K8sJobMode");
  job["spec"].erase("entrypoint");
  job["spec"]["submitterPodTemplate"] = {
      {"spec",
       {{"restartPolicy", "Never"},
        {"containers",
         json::array({{{"name", "my-submitter"},
                       {"image", "example.com/submitter:1"},
                       {"command", json::array({"sh", "-c",
                                                "ray job submit --address "
                                                "http://$RAY_DASHBOARD_ADDRESS "
                                                "--submission-id $RAY_JOB_SUBMISSION_ID -- "
                                                "python job.py"})}}})}}}};
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("light") == "Complete"; }));
  json container = (*h.kube.get("Job", "default", "light"))["spec"]["template"]["spec"]
                                                             ["containers"][0];
  EXPECT_EQ(container["image"], "example.com/submitter:1");
  EXPECT_EQ(container["command"][0], "sh");
  EXPECT_FALSE(container.contains("args"));
  json names = json::array();
  for (const auto& e : container["env"]) names.push_back(e["name"]);
  EXPECT_EQ(names, json::array({"PYTHONUNBUFFERED", "RAY_DASHBOARD_ADDRESS",
                                "RAY_JOB_SUBMISSION_ID"}));
  EXPECT_EQ(h.ray.submissions(), 1u);
}

}  // namespace
}  // namespace rayjournal::testing
