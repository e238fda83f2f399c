// KubeRay's acceptance scenarios (reference section 8) and the weak-spot scenarios, on the
// simulated cluster in simulated time.
#include <gtest/gtest.h>

#include "adapters/TimeFormat.h"
#include "events/EventCodec.h"
#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

// 1: labels and annotations propagate; stays Running until the submitter completes.
TEST(KubeRayScenario, S01_SuccessfulK8sJobModeCopiesLabelsAndWaitsForSubmitter) {
  SimHarness h;
  json job = sampleRayJob("s01", "K8sJobMode", "SUCCEEDED", "2s");
  job["metadata"]["labels"] = {{"team", "ml"}};
  job["metadata"]["annotations"]["owner"] = "alice";
  job["spec"]["shutdownAfterJobFinishes"] = true;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.list("RayCluster", "default").empty(); }));
  json cluster = h.kube.list("RayCluster", "default")[0];
  EXPECT_EQ(cluster["metadata"]["labels"]["team"], "ml");
  EXPECT_EQ(cluster["metadata"]["labels"]["ray.io/originated-from-crd"], "RayJob");
  EXPECT_EQ(cluster["metadata"]["labels"]["ray.io/originated-from-cr-name"], "s01");
  EXPECT_EQ(cluster["metadata"]["annotations"]["owner"], "alice");
  // Hold the submitter: Ray reaches SUCCEEDED but the Job is not Complete yet.
  h.kube.injectFault({"updateStatus", "Job", 1000000, 500, "InternalError", false});
  ASSERT_TRUE(
      h.runUntil([&] { return h.status("s01").value("jobStatus", "") == "SUCCEEDED"; }, 60000));
  EXPECT_EQ(h.status("s01")["jobDeploymentStatus"], "Running");
}

// 2: submitter backoffLimit default 2, and submitterConfig.backoffLimit.
TEST(KubeRayScenario, S02_SubmitterBackoffLimit) {
  SimHarness h;
  h.apply(sampleRayJob("s02a"));
  json custom = sampleRayJob("s02b");
  custom["spec"]["submitterConfig"] = {{"backoffLimit", 88}};
  h.apply(custom);
  ASSERT_TRUE(h.runUntil([&] { return h.kube.list("Job", "default").size() == 2; }));
  EXPECT_EQ((*h.kube.get("Job", "default", "s02a"))["spec"]["backoffLimit"], 2);
  EXPECT_EQ((*h.kube.get("Job", "default", "s02b"))["spec"]["backoffLimit"], 88);
}

// 3 and 19: a 47-character name works, 48 is ValidationFailed.
TEST(KubeRayScenario, S03_S19_NameLength) {
  SimHarness h;
  std::string ok(47, 'a'), tooLong(48, 'a');
  h.apply(sampleRayJob(ok));
  h.apply(sampleRayJob(tooLong));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus(ok) == "Complete"; }));
  EXPECT_EQ(h.deploymentStatus(tooLong), "ValidationFailed");
  EXPECT_TRUE(h.anyEvent("InvalidRayJobMetadata", "47 characters"));
  EXPECT_TRUE(h.kube.get("Service", "default",
                         h.status(ok)["rayClusterName"].get<std::string>() + "-head-svc"));
}

// 4: a submitter template without restartPolicy is rejected by the API server; the create
// failure is an Event naming the Job, and the RayJob waits in error backoff.
TEST(KubeRayScenario, S04_InvalidSubmitterTemplate) {
  SimHarness h;
  json job = sampleRayJob("rayjob-invalid-test");
  job["spec"]["submitterPodTemplate"] = {
      {"spec",
       {{"containers",
         json::array({{{"name", "ray-job-submitter"}, {"image", "rayproject/ray:2.46.0"}}})}}}};
  h.apply(job);
  ASSERT_TRUE(h.runUntil(
      [&] {
        return h.anyEvent("FailedToCreateRayJobSubmitter",
                        "Failed to create new Kubernetes Job default/rayjob-invalid-test");
      },
      10000));
  EXPECT_FALSE(h.kube.get("Job", "default", "rayjob-invalid-test"));
  EXPECT_EQ(h.deploymentStatus("rayjob-invalid-test"), "Initializing");
}

// 5: activeDeadlineSeconds passes before the cluster is ready.
TEST(KubeRayScenario, S05_ActiveDeadlineInInitializing) {
  SimHarness h;
  h.world.setOptions({60000, 100});  // pods take a minute
  json job = sampleRayJob("s05");
  job["spec"]["activeDeadlineSeconds"] = 3;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s05") == "Failed"; }, 10000));
  EXPECT_EQ(h.status("s05")["reason"], "DeadlineExceeded");
}

// 7: InteractiveMode waits for the user's jobId.
TEST(KubeRayScenario, S07_InteractiveMode) {
  SimHarness h;
  h.apply(sampleRayJob("s07", "InteractiveMode"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s07") == "Waiting"; }));
  EXPECT_EQ(h.status("s07").value("jobId", ""), "");
  json current = h.rayjob("s07");
  current["spec"]["jobId"] = "my-interactive-job";
  h.kube.update("RayJob", current);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s07") == "Running"; }, 5000));
  EXPECT_EQ(h.status("s07")["jobId"], "my-interactive-job");
}

// 8: DELETE_RAYJOB_CR_AFTER_JOB_FINISHES deletes the RayJob itself.
TEST(KubeRayScenario, S08_DeleteRayJobAfterJobFinishes) {
  SimHarness h;
  h.config.deleteRayJobAfterJobFinishes = true;
  h.restart();
  json job = sampleRayJob("s08");
  job["spec"]["shutdownAfterJobFinishes"] = true;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayJob", "default", "s08"); }));
  EXPECT_TRUE(h.kube.list("RayCluster", "default").empty());
}

// 9: deletion rules run in order (workers, cluster, self); all overdue -> only DeleteSelf.
TEST(KubeRayScenario, S09_MultiStageDeletionRules) {
  SimHarness h;
  json job = sampleRayJob("s09");
  job["spec"]["rayClusterSpec"]["workerGroupSpecs"] = json::array(
      {{{"groupName", "g"},
        {"replicas", 2},
        {"minReplicas", 0},
        {"maxReplicas", 4},
        {"template",
         {{"spec", {{"containers", json::array({{{"name", "w"}, {"image", "x"}}})}}}}}}});
  job["spec"]["deletionStrategy"] = {
      {"deletionRules",
       json::array({{{"policy", "DeleteWorkers"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 0}}}},
                    {{"policy", "DeleteCluster"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 5}}}},
                    {{"policy", "DeleteSelf"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 10}}}}})}};
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s09") == "Complete"; }));
  int64_t end = *parseRfc3339(h.status("s09")["endTime"]);
  std::string cluster = h.status("s09")["rayClusterName"];
  ASSERT_TRUE(h.runUntil(
      [&] {
        auto c = h.kube.get("RayCluster", "default", cluster);
        return c && (*c)["spec"]["workerGroupSpecs"][0].value("suspend", false);
      },
      3000));
  EXPECT_TRUE(h.kube.get("RayCluster", "default", cluster))
      << "the cluster stays until its own TTL";
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayCluster", "default", cluster); }, 10000));
  EXPECT_GE(h.clock.nowMs(), end + 5000);
  EXPECT_TRUE(h.kube.get("RayJob", "default", "s09"));
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayJob", "default", "s09"); }, 10000));
  EXPECT_GE(h.clock.nowMs(), end + 10000);
}

TEST(KubeRayScenario, S09b_AllRulesOverdueRunsOnlyDeleteSelf) {
  SimHarness h;
  json job = sampleRayJob("s09b");
  job["spec"]["deletionStrategy"] = {
      {"deletionRules",
       json::array({{{"policy", "DeleteCluster"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 0}}}},
                    {{"policy", "DeleteSelf"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 0}}}}})}};
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayJob", "default", "s09b"); }));
  int clusterDeletes = 0;
  for (const auto& r : h.records())
    clusterDeletes += r.type == wal::RecordType::Intent && events::decodeIntent(r).action == events::Action::DeleteRayCluster;
  EXPECT_EQ(clusterDeletes, 0);
}

// 10: a failing status query persists jobStatusCheckFailureStartTime, then times out.
TEST(KubeRayScenario, S10_JobStatusCheckTimeout) {
  SimHarness h;
  h.apply(sampleRayJob("s10", "HTTPMode", "SUCCEEDED", "1h"));
  ASSERT_TRUE(h.runUntil([&] { return h.status("s10").value("jobStatus", "") == "RUNNING"; }));
  h.ray.failNextCalls(1000000);
  ASSERT_TRUE(h.runUntil(
      [&] { return !h.status("s10").value("jobStatusCheckFailureStartTime", "").empty(); }, 5000));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s10") == "Failed"; }, 400000));
  EXPECT_EQ(h.status("s10")["reason"], "JobStatusCheckTimeoutExceeded");
}

// 11 and 12: created suspended; resume creates the cluster; suspend is atomic.
TEST(KubeRayScenario, S11_S12_SuspendAndResumeAndAtomicSuspend) {
  SimHarness h;
  json job = sampleRayJob("s11", "K8sJobMode", "SUCCEEDED", "1h");
  job["spec"]["shutdownAfterJobFinishes"] = true;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s11") == "Running"; }));
  std::string cluster = h.status("s11")["rayClusterName"];
  // Block the cluster's deletion with a finalizer, then suspend and flip suspend back.
  json c = *h.kube.get("RayCluster", "default", cluster);
  c["metadata"]["finalizers"] = json::array({"test/block"});
  h.kube.update("RayCluster", c);
  json current = h.rayjob("s11");
  current["spec"]["suspend"] = true;
  h.kube.update("RayJob", current);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s11") == "Suspending"; }, 5000));
  current = h.rayjob("s11");
  current["spec"]["suspend"] = false;
  h.kube.update("RayJob", current);
  for (int i = 0; i < 20; ++i) h.step();
  EXPECT_EQ(h.deploymentStatus("s11"), "Suspending") << "suspend is atomic";
  current = h.rayjob("s11");
  current["spec"]["suspend"] = true;
  h.kube.update("RayJob", current);
  c = *h.kube.get("RayCluster", "default", cluster);
  c["metadata"]["finalizers"] = json::array();
  h.kube.update("RayCluster", c);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s11") == "Suspended"; }, 5000));
  EXPECT_FALSE(h.kube.get("Job", "default", "s11"));
  EXPECT_EQ(h.status("s11").value("rayClusterName", ""), "");
  current = h.rayjob("s11");
  current["spec"]["suspend"] = false;
  h.kube.update("RayJob", current);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s11") == "Running"; }));
  EXPECT_NE(h.status("s11")["rayClusterName"], cluster);
  EXPECT_EQ(h.status("s11")["dashboardURL"].get<std::string>().rfind("s11-", 0), 0u);
}

// 13: a failing submitter Job with backoffLimit 2 ends Failed/SubmissionFailed, failed=3.
TEST(KubeRayScenario, S13_FailingSubmitterWithRetries) {
  SimHarness h;
  json job = sampleRayJob("s13");
  job["metadata"]["annotations"]["rayjournal.io/sim-submitter"] = "fail";
  job["spec"]["backoffLimit"] = 2;
  job["spec"]["shutdownAfterJobFinishes"] = true;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s13") == "Failed"; }));
  EXPECT_EQ(h.status("s13")["reason"], "SubmissionFailed");
  EXPECT_EQ(h.status("s13")["failed"], 3);
  EXPECT_EQ(h.status("s13").value("jobStatus", ""), "");
  ASSERT_TRUE(h.runUntil([&] { return h.kube.list("RayCluster", "default").empty(); }, 10000));
  EXPECT_TRUE(h.kube.get("Job", "default", "s13"));
}

// 14: the submitter completes while Ray is still RUNNING: Failed after 30 s.
TEST(KubeRayScenario, S14_SubmitterFinishedTimeout) {
  SimHarness h;
  h.apply(sampleRayJob("s14", "K8sJobMode", "SUCCEEDED", "1h"));
  ASSERT_TRUE(h.runUntil([&] { return h.status("s14").value("jobStatus", "") == "RUNNING"; }));
  json submitter = *h.kube.get("Job", "default", "s14");
  submitter["status"]["conditions"] =
      json::array({{{"type", "Complete"},
                    {"status", "True"},
                    {"lastTransitionTime", toRfc3339(h.clock.nowMs())}}});
  h.kube.updateStatus("Job", submitter);
  int64_t completed = h.clock.nowMs();
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s14") == "Failed"; }, 60000));
  EXPECT_EQ(h.status("s14")["reason"], "JobDeploymentStatusTransitionGracePeriodExceeded");
  EXPECT_EQ(h.status("s14")["jobStatus"], "FAILED");
  EXPECT_NE(h.status("s14")["message"].get<std::string>().find(
                "did not reach terminal state within 30s"),
            std::string::npos);
  EXPECT_NEAR(double(h.clock.nowMs() - completed), 30000, 5000);
}

// W5: the submitter Job fails (its log stream dropped) while Ray runs the job: the RayJob
// follows Ray and completes when the job does. Before, it failed 30 s after the submitter with
// JobDeploymentStatusTransitionGracePeriodExceeded and jobStatus forced to FAILED; KubeRay fails
// it at once with SubmissionFailed.
TEST(KubeRayScenario, W5_SubmitterFailureWhileRayRunsTheJobDoesNotFailIt) {
  SimHarness h;
  h.apply(sampleRayJob("w5", "K8sJobMode", "SUCCEEDED", "90s"));
  ASSERT_TRUE(h.runUntil([&] { return h.status("w5").value("jobStatus", "") == "RUNNING"; }));
  json submitter = *h.kube.get("Job", "default", "w5");
  submitter["status"]["conditions"] = json::array({{{"type", "Failed"},
                                                    {"status", "True"},
                                                    {"reason", "BackoffLimitExceeded"},
                                                    {"message", "log stream closed"},
                                                    {"lastTransitionTime", toRfc3339(h.clock.nowMs())}}});
  h.kube.updateStatus("Job", submitter);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("w5") == "Complete" ||
                                      h.deploymentStatus("w5") == "Failed"; }, 200000));
  EXPECT_EQ(h.deploymentStatus("w5"), "Complete") << h.status("w5").dump();
  EXPECT_EQ(h.status("w5")["jobStatus"], "SUCCEEDED");
}

// W3: a same-named submitter Job left by a deleted RayJob (--cascade=orphan), visible to the
// cache, is never taken as this RayJob's submitter. Before, its Failed condition was read as
// this attempt's and the new RayJob ended Failed/SubmissionFailed without ever submitting.
TEST(KubeRayScenario, W3_AStaleSubmitterJobOfADeletedRayJobIsNotAdopted) {
  SimHarness h;
  json stale = {{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata",
                 {{"name", "w3"},
                  {"namespace", "default"},
                  {"labels",
                   {{"ray.io/originated-from-crd", "RayJob"},
                    {"ray.io/originated-from-cr-name", "w3"},
                    {"app.kubernetes.io/created-by", "kuberay-operator"}}},
                  {"ownerReferences", json::array({{{"apiVersion", "ray.io/v1"},
                                                    {"kind", "RayJob"},
                                                    {"name", "w3"},
                                                    {"uid", "uid-of-the-deleted-rayjob"},
                                                    {"controller", true}}})}}},
                {"spec", {{"backoffLimit", 2}, {"template", {{"spec", {{"restartPolicy", "Never"}}}}}}}};
  h.kube.create("Job", stale);
  stale = *h.kube.get("Job", "default", "w3");
  stale["status"]["conditions"] = json::array({{{"type", "Failed"},
                                                {"status", "True"},
                                                {"reason", "BackoffLimitExceeded"},
                                                {"lastTransitionTime", toRfc3339(h.clock.nowMs())}}});
  h.kube.updateStatus("Job", stale);
  h.apply(sampleRayJob("w3", "K8sJobMode", "SUCCEEDED", "2s"));
  ASSERT_TRUE(h.runUntil([&] { return h.anyEvent("FailedToCreateRayJobSubmitter", "not owned"); }));
  h.runUntil([] { return false; }, 20000);
  EXPECT_NE(h.deploymentStatus("w3"), "Failed") << h.status("w3").dump();
  h.kube.remove("Job", "default", "w3");
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("w3") == "Complete"; }, 120000))
      << h.status("w3").dump();
  EXPECT_EQ(h.status("w3")["jobStatus"], "SUCCEEDED");
}

// 15: application failure with backoffLimit 2: Failed/AppFailed, failed=3; submitter Job succeeded.
TEST(KubeRayScenario, S15_ApplicationFailureRetriesThenFails) {
  SimHarness h;
  json job = sampleRayJob("s15", "K8sJobMode", "FAILED");
  job["spec"]["backoffLimit"] = 2;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s15") == "Failed"; }));
  EXPECT_EQ(h.status("s15")["reason"], "AppFailed");
  EXPECT_EQ(h.status("s15")["jobStatus"], "FAILED");
  EXPECT_EQ(h.status("s15")["failed"], 3);
  EXPECT_EQ((*h.kube.get("Job", "default", "s15"))["status"]["succeeded"], 1);
}

// 17: HTTPMode: FAILED gives Failed/AppFailed; STOPPED gives Complete.
TEST(KubeRayScenario, S17_HttpModeOutcomes) {
  SimHarness h;
  h.apply(sampleRayJob("s17f", "HTTPMode", "FAILED"));
  h.apply(sampleRayJob("s17s", "HTTPMode", "STOPPED"));
  ASSERT_TRUE(h.runUntil([&] {
    return h.deploymentStatus("s17f") == "Failed" && h.deploymentStatus("s17s") == "Complete";
  }));
  EXPECT_EQ(h.status("s17f")["reason"], "AppFailed");
  EXPECT_EQ(h.status("s17s")["jobStatus"], "STOPPED");
  EXPECT_TRUE(h.kube.list("Job", "default").empty());
}

// A RayCluster made outside any RayJob, for clusterSelector.
json existingCluster(const std::string& name) {
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"headGroupSpec",
             {{"template",
               {{"spec", {{"containers", json::array({{{"name", "h"}, {"image", "x"}}})}}}}}}}}}};
}

// 18: clusterSelector uses an existing cluster and never deletes it; managedBy skips the object.
TEST(KubeRayScenario, S18_ClusterSelectorAndManagedBy) {
  SimHarness h;
  h.kube.create("RayCluster", existingCluster("shared"));
  json job = sampleRayJob("s18", "HTTPMode");
  job["spec"].erase("rayClusterSpec");
  job["spec"]["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  h.apply(job);
  json external = sampleRayJob("s18ext");
  external["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  h.apply(external);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s18") == "Complete"; }));
  for (int i = 0; i < 20; ++i) h.step();
  EXPECT_TRUE(h.kube.get("RayCluster", "default", "shared"));
  EXPECT_EQ(h.status("s18")["rayClusterName"], "shared");
  EXPECT_EQ(h.deploymentStatus("s18ext"), "");
}

// 20: suspend a Running job, then resume it to Running.
TEST(KubeRayScenario, S20_SuspendRunningThenResume) {
  SimHarness h;
  json job = sampleRayJob("s20", "K8sJobMode", "SUCCEEDED", "1h");
  job["spec"]["shutdownAfterJobFinishes"] = true;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s20") == "Running"; }));
  json current = h.rayjob("s20");
  current["spec"]["suspend"] = true;
  h.kube.update("RayJob", current);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s20") == "Suspended"; }, 10000));
  EXPECT_TRUE(h.kube.list("RayCluster", "default").empty());
  EXPECT_FALSE(h.kube.get("Job", "default", "s20"));
  current = h.rayjob("s20");
  current["spec"]["suspend"] = false;
  h.kube.update("RayJob", current);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("s20") == "Running"; }));
}

TEST(KubeRayScenario, SidecarModeSucceedsAndFails) {
  SimHarness h;
  h.apply(sampleRayJob("side-ok", "SidecarMode", "SUCCEEDED"));
  h.apply(sampleRayJob("side-bad", "SidecarMode", "FAILED"));
  ASSERT_TRUE(h.runUntil([&] {
    return h.deploymentStatus("side-ok") == "Complete" &&
           h.deploymentStatus("side-bad") == "Failed";
  }));
  EXPECT_EQ(h.status("side-bad")["reason"], "AppFailed");
  json cluster = *h.kube.get("RayCluster", "default", h.status("side-ok")["rayClusterName"]);
  auto containers = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"];
  EXPECT_EQ(containers.back()["name"], "ray-job-submitter");
  EXPECT_EQ(cluster["spec"]["headGroupSpec"]["template"]["spec"]["restartPolicy"], "Never");
  EXPECT_TRUE(h.kube.list("Job", "default").empty());
}

// W6: the submitter Job deleted mid-run is recreated under the same submission id.
TEST(KubeRayScenario, W6_DeletedSubmitterIsRecreatedNotLoopedOn) {
  SimHarness h;
  h.apply(sampleRayJob("w6", "K8sJobMode", "SUCCEEDED", "20s"));
  ASSERT_TRUE(h.runUntil([&] { return h.status("w6").value("jobStatus", "") == "RUNNING"; }));
  h.kube.remove("Job", "default", "w6");
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("w6") == "Complete"; }));
  EXPECT_EQ(h.ray.submissions(), 1u);
  EXPECT_TRUE(h.anyEvent("SubmitterJobRecreated"));
}

// W6 beside clusterSelector: the submitter Job and the selected cluster both deleted mid-run. The
// operator crashed building a submitter from the missing cluster (KubeRay's e2e suite hit it when
// a test's namespace was torn down); it now makes none and goes on.
TEST(KubeRayScenario, W6_ASelectedClusterGoneWithTheSubmitterMakesNoSubmitter) {
  SimHarness h;
  h.kube.create("RayCluster", existingCluster("shared"));
  json job = sampleRayJob("w6sel", "K8sJobMode", "SUCCEEDED", "1h");
  job["spec"].erase("rayClusterSpec");
  job["spec"]["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("w6sel") == "Running"; }));
  ASSERT_TRUE(h.kube.get("Job", "default", "w6sel"));
  h.kube.remove("Job", "default", "w6sel");
  h.kube.remove("RayCluster", "default", "shared");
  for (int i = 0; i < 50; ++i) h.step();
  EXPECT_FALSE(h.kube.get("Job", "default", "w6sel")) << "a submitter built without its cluster";
  EXPECT_FALSE(h.anyEvent("SubmitterJobRecreated"));
}

// HTTPMode: a dashboard that refuses every submission (Ray reachable, the POST fails) ends the
// RayJob Failed/JobStatusCheckTimeoutExceeded after the status check timeout, as KubeRay;
// it once stayed Running for ever.
TEST(KubeRayScenario, HttpSubmissionsThatKeepFailingEndAtTheStatusCheckTimeout) {
  SimHarness h;
  h.ray.failNextSubmissions(1000000);
  h.apply(sampleRayJob("refused", "HTTPMode"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("refused") == "Failed"; }, 900000));
  EXPECT_EQ(h.status("refused")["reason"], "JobStatusCheckTimeoutExceeded");
  EXPECT_EQ(h.status("refused")["message"].get<std::string>().rfind(
                "Job status checks have been failing since ", 0),
            0u);
  EXPECT_EQ(h.ray.submissions(), 0u);
}

// W7: a RayCluster deleted mid-run is never silently recreated; the attempt fails and retries.
TEST(KubeRayScenario, W7_DeletedClusterFailsTheAttemptInsteadOfRecreating) {
  SimHarness h;
  json job = sampleRayJob("w7", "HTTPMode", "SUCCEEDED", "20s");
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.status("w7").value("jobStatus", "") == "RUNNING"; }));
  std::string first = h.status("w7")["rayClusterName"];
  h.kube.remove("RayCluster", "default", first);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("w7") == "Complete"; }));
  EXPECT_EQ(h.status("w7")["failed"], 1);
  EXPECT_NE(h.status("w7")["rayClusterName"], first);
  EXPECT_EQ(h.ray.submissions(), 2u) << "one submission per attempt, none on a recreated cluster";
}

// W9: an unconfirmable stop is retried through the confirmation window (60 s after the
// deletion; KubeRay gives up after three quick tries), then the finalizer goes regardless at the
// next retry (they back off exponentially, so within about twice the window).
TEST(KubeRayScenario, W9_FinalizerRemovedAfterBoundedStopAttempts) {
  SimHarness h;
  h.apply(sampleRayJob("w9", "HTTPMode", "SUCCEEDED", "1h"));
  ASSERT_TRUE(h.runUntil([&] { return h.status("w9").value("jobStatus", "") == "RUNNING"; }));
  h.ray.failNextCalls(1000000);
  h.kube.remove("RayJob", "default", "w9");
  EXPECT_FALSE(h.runUntil([&] { return !h.kube.get("RayJob", "default", "w9"); }, 50000))
      << "the finalizer went before the confirmation window closed";
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayJob", "default", "w9"); }, 100000));
  EXPECT_TRUE(h.anyEvent("StopJobNotConfirmed"));
}

// W18: observedGeneration follows metadata.generation.
TEST(KubeRayScenario, W18_ObservedGeneration) {
  SimHarness h;
  h.apply(sampleRayJob("w18", "K8sJobMode", "SUCCEEDED", "1h"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("w18") == "Running"; }));
  json current = h.rayjob("w18");
  current["spec"]["entrypoint"] = "python other.py";
  h.kube.update("RayJob", current);
  ASSERT_TRUE(
      h.runUntil([&] { return h.status("w18").value("observedGeneration", 0) == 2; }, 5000));
}

}  // namespace
// W14: the head Pod create's response is lost (applied, error returned); the next pass
// re-creates under the same deterministic name, gets AlreadyExists, and there is one head.
TEST(KubeRayScenario, W14_LostHeadPodCreateResponseNeverMakesASecondHead) {
  SimHarness h;
  h.kube.injectFault({"create", "Pod", 1, 504, "Timeout", true});
  h.apply(sampleRayJob("w14", "HTTPMode"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("w14") == "Complete"; }));
  std::string cluster = h.status("w14")["rayClusterName"];
  auto heads =
      h.kube.list("Pod", "default", {{"ray.io/cluster", cluster}, {"ray.io/node-type", "head"}});
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0]["metadata"]["name"], cluster + "-head");
}

// W15: a head Pod that goes away turns the cluster back to not ready (KubeRay keeps `ready`),
// so a RayJob using that cluster through clusterSelector waits instead of submitting.
TEST(KubeRayScenario, W15_ReadinessIsNotSticky) {
  SimHarness h;
  h.kube.create("RayCluster", existingCluster("shared"));
  auto state = [&] {
    return h.kube.get("RayCluster", "default", "shared")
        ->value("status", json::object())
        .value("state", "");
  };
  ASSERT_TRUE(h.runUntil([&] { return state() == "ready"; }));
  h.kube.remove("Pod", "default", "shared-head");
  h.drain();  // the operator's RayCluster reconciler sees the Pod go
  EXPECT_EQ(state(), "") << "a cluster without its head is not ready";
  json job = sampleRayJob("w15", "HTTPMode");
  job["spec"].erase("rayClusterSpec");
  job["spec"]["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  h.apply(job);
  h.reconciler->reconcile("default/w15");
  h.reconciler->reconcile("default/w15");
  EXPECT_EQ(h.deploymentStatus("w15"), "Initializing");
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("w15") == "Complete"; }));
  EXPECT_EQ(h.kube.list("Pod", "default", {{"ray.io/node-type", "head"}}).size(), 1u);
}

// W17: the submitter's status check fails once while the Ray job runs; KubeRay's script then
// re-submits, gets "already exists" and exits non-zero, burning a submitter retry. Ours checks
// again and carries on.
TEST(KubeRayScenario, W17_TransientStatusFailureDoesNotBurnASubmitterRetry) {
  SimHarness h;
  h.apply(sampleRayJob("w17", "K8sJobMode", "SUCCEEDED", "5s"));
  ASSERT_TRUE(h.runUntil([&] { return h.status("w17").value("jobStatus", "") == "RUNNING"; }));
  h.world.replaceSubmitterPod(*h.kube.get("Job", "default", "w17"));
  h.ray.failNextCalls(1);
  h.world.advance();  // the new Pod's status check meets the failure
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("w17") == "Complete"; }));
  json submitter = *h.kube.get("Job", "default", "w17");
  EXPECT_EQ(submitter["status"].value("failed", 0), 0) << submitter["status"].dump();
  EXPECT_EQ(h.status("w17")["jobStatus"], "SUCCEEDED");
}

}  // namespace rayjournal::testing
