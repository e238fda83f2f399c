// Scenarios on the simulated cluster in simulated time (a 300 s timeout costs no wall time).
#include <gtest/gtest.h>

#include "support/SimHarness.h"
#include "events/EventCodec.h"

namespace rayjournal::testing {
namespace {

TEST(LifecycleScenario, K8sJobModeHappyPathCompletesAndKeepsSubmitter) {
  SimHarness h;
  json job = sampleRayJob("happy");
  job["spec"]["shutdownAfterJobFinishes"] = true;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("happy") == "Complete"; }));
  json st = h.rayjob("happy")["status"];
  EXPECT_EQ(st["jobStatus"], "SUCCEEDED");
  EXPECT_EQ(st["succeeded"], 1);
  EXPECT_EQ(st["failed"], 0);
  EXPECT_FALSE(st.value("endTime", "").empty());
  EXPECT_EQ(st["observedGeneration"], 1);
  std::string cluster = st["rayClusterName"];
  EXPECT_EQ(cluster.rfind("happy-", 0), 0u);
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayCluster", "default", cluster); }, 10000));
  EXPECT_TRUE(h.kube.get("Job", "default", "happy")) << "the submitter Job is kept for its logs";
  EXPECT_EQ(h.ray.submissions(), 1u);
}

TEST(LifecycleScenario, IdentitiesAreInStatusBeforeAnyChildExists) {
  SimHarness h;
  h.apply(sampleRayJob("ids"));
  // The first decision also creates the RayCluster; when its intent is durable (the last
  // moment before the create), the status in Kubernetes must already name it.
  json statusAtCreate;
  std::string created;
  h.executor->hook = [&](controller::Executor::Stage stage, const controller::Intent& i, uint64_t) {
    if (stage == controller::Executor::Stage::IntentDurable &&
        i.action == controller::Action::CreateRayCluster) {
      statusAtCreate = h.rayjob("ids")["status"];
      created = i.target;
      EXPECT_TRUE(h.kube.list("RayCluster", "default").empty());
    }
  };
  h.reconciler->reconcile("default/ids");  // the first decision alone
  ASSERT_FALSE(created.empty()) << "the first decision creates the RayCluster";
  EXPECT_EQ(statusAtCreate["jobDeploymentStatus"], "Initializing");
  EXPECT_EQ(statusAtCreate.value("rayClusterName", ""), created);
  EXPECT_FALSE(statusAtCreate.value("jobId", "").empty());
  auto finalizers = h.rayjob("ids")["metadata"]["finalizers"];
  EXPECT_EQ(finalizers, json::array({"ray.io/rayjob-finalizer"}));
}

// KubeRay scenario 6 ("Retrying RayJob in K8sJobMode").
TEST(LifecycleScenario, S06_RetryAfterFailureUsesFreshClusterAndCountsAttempts) {
  SimHarness h;
  json job = sampleRayJob("retry", "K8sJobMode", "FAILED,SUCCEEDED", "1s");
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  std::string firstCluster;
  ASSERT_TRUE(h.runUntil([&] {
    if (firstCluster.empty())
      firstCluster = h.rayjob("retry").value("status", json::object()).value("rayClusterName", "");
    return h.deploymentStatus("retry") == "Complete";
  }));
  json st = h.rayjob("retry")["status"];
  EXPECT_EQ(st["failed"], 1);
  EXPECT_EQ(st["succeeded"], 1);
  EXPECT_NE(st["rayClusterName"], firstCluster);
  EXPECT_FALSE(h.kube.get("RayCluster", "default", firstCluster));
}

TEST(LifecycleScenario, DeletionStopsTheRayJobThenRemovesTheFinalizer) {
  SimHarness h;
  h.apply(sampleRayJob("deleted", "HTTPMode", "SUCCEEDED", "10m"));
  ASSERT_TRUE(h.runUntil([&] {
    return h.rayjob("deleted").value("status", json::object()).value("jobStatus", "") == "RUNNING";
  }));
  std::string id = h.rayjob("deleted")["status"]["jobId"];
  std::string dashboard = h.rayjob("deleted")["status"]["dashboardURL"];
  h.kube.remove("RayJob", "default", "deleted");
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayJob", "default", "deleted"); }, 10000));
  EXPECT_TRUE(h.kube.list("RayCluster", "default").empty()) << "children are garbage-collected";
  bool stopJournaled = false;
  for (const auto& r : h.records())
    stopJournaled =
        stopJournaled || (r.type == wal::RecordType::Intent && events::decodeIntent(r).action == events::Action::StopRayJob);
  EXPECT_TRUE(stopJournaled);
}

TEST(LifecycleScenario, HttpModeSubmitsOnceAndCompletes) {
  SimHarness h;
  h.apply(sampleRayJob("http", "HTTPMode"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("http") == "Complete"; }));
  EXPECT_TRUE(h.kube.list("Job", "default").empty());
  EXPECT_EQ(h.ray.submissions(), 1u);
}

// A lost Ray record fails the attempt under one of KubeRay's reasons (SubmissionFailed when the
// submitter failed on the broken stream first, else AppFailed), the cause leading the message.
::testing::AssertionResult lostRecordReported(SimHarness& h, const std::string& name) {
  json st = h.rayjob(name)["status"];
  std::string reason = st.value("reason", "");
  if (reason != "AppFailed" && reason != "SubmissionFailed")
    return ::testing::AssertionFailure() << "reason " << reason;
  if (st.value("message", "").rfind("RayJobRecordLost: ", 0) != 0)
    return ::testing::AssertionFailure() << "message " << st.value("message", "");
  if (!h.anyEvent("RayJobRecordLost")) return ::testing::AssertionFailure() << "no Event";
  return ::testing::AssertionSuccess();
}

// W8: after a journaled HTTP submission, a 404 means the record was lost, never a resubmit.
TEST(LifecycleScenario, W8_RayRecordLostAfterSubmissionIsNotResubmitted) {
  SimHarness h;
  h.apply(sampleRayJob("lost", "HTTPMode", "SUCCEEDED", "10m"));
  ASSERT_TRUE(h.runUntil([&] {
    return h.rayjob("lost").value("status", json::object()).value("jobStatus", "") == "RUNNING";
  }));
  h.ray.loseAllRecords("default", h.rayjob("lost")["status"]["rayClusterName"]);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("lost") == "Failed"; }, 20000));
  EXPECT_EQ(h.rayjob("lost")["status"]["reason"], "AppFailed");
  EXPECT_EQ(h.rayjob("lost")["status"].value("message", "").rfind("RayJobRecordLost: ", 0), 0u);
  EXPECT_TRUE(h.anyEvent("RayJobRecordLost"));
  EXPECT_EQ(h.ray.submissions(), 1u);
}

// W8 in K8sJobMode: Ray loses the record of a running job (a head restart without GCS fault
// tolerance); the submitter's log stream breaks and its next Pod would submit the id again, as
// KubeRay's does (the job runs twice). The journaled sighting makes the 404 a lost record: the
// attempt fails, the submitter Job goes before its next Pod starts, and nothing is resubmitted,
// also across an operator restart between the sighting and the loss.
TEST(LifecycleScenario, W8_K8sJobModeLostRecordIsNotResubmittedBySubmitterRetries) {
  SimHarness h;
  h.apply(sampleRayJob("lostk8s", "K8sJobMode", "SUCCEEDED", "10m"));
  ASSERT_TRUE(h.runUntil([&] {
    return h.rayjob("lostk8s").value("status", json::object()).value("jobStatus", "") ==
           "RUNNING";
  }));
  h.restart();
  h.ray.loseAllRecords("default", h.rayjob("lostk8s")["status"]["rayClusterName"]);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("lostk8s") == "Failed"; }, 60000));
  EXPECT_TRUE(lostRecordReported(h, "lostk8s"));
  for (int i = 0; i < 300; ++i) h.step();  // 30 s: well past the submitter's pod backoff
  EXPECT_EQ(h.ray.submissions(), 1u) << "the submitter's next Pod resubmitted the lost job";
  EXPECT_FALSE(h.kube.get("Job", "default", "lostk8s").has_value());
}

// With retries left, the lost record fails the attempt and the next one runs on a new cluster:
// one submission per attempt.
TEST(LifecycleScenario, W8_K8sJobModeLostRecordRetriesOnANewCluster) {
  SimHarness h;
  json job = sampleRayJob("lostretry", "K8sJobMode", "SUCCEEDED", "20s");
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] {
    return h.rayjob("lostretry").value("status", json::object()).value("jobStatus", "") ==
           "RUNNING";
  }));
  std::string first = h.rayjob("lostretry")["status"]["rayClusterName"];
  h.ray.loseAllRecords("default", first);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("lostretry") == "Complete"; }));
  EXPECT_EQ(h.rayjob("lostretry")["status"]["failed"], 1);
  EXPECT_NE(h.rayjob("lostretry")["status"]["rayClusterName"], first);
  EXPECT_EQ(h.ray.submissions(), 2u);
}

// The head Pod of a running RayJob's cluster is deleted. Without GCS fault tolerance Ray's record
// goes with it (W8: the attempt fails, nothing is resubmitted). With it, the new head reads the
// record back from Redis: the RayJob finishes in the same attempt, with one submission, and the
// storage namespace is emptied when the cluster is deleted.
TEST(LifecycleScenario, W8_AHeadLostWithGcsFaultToleranceKeepsTheJobInTheSameAttempt) {
  for (bool ft : {false, true}) {
    SCOPED_TRACE(ft ? "with GCS FT" : "without GCS FT");
    SimHarness h;
    json job = sampleRayJob("headloss", "HTTPMode", "SUCCEEDED", "30s");
    job["spec"]["shutdownAfterJobFinishes"] = true;
    if (ft)
      job["spec"]["rayClusterSpec"]["gcsFaultToleranceOptions"] = {{"redisAddress", "redis:6379"}};
    h.apply(job);
    ASSERT_TRUE(h.runUntil([&] {
      return h.rayjob("headloss").value("status", json::object()).value("jobStatus", "") == "RUNNING";
    }));
    std::string cluster = h.clusterOf("headloss");
    h.kube.remove("Pod", "default", cluster + "-head");
    ASSERT_TRUE(h.runUntil([&] {
      std::string s = h.deploymentStatus("headloss");
      return s == "Complete" || s == "Failed";
    }, 120000));
    EXPECT_EQ(h.deploymentStatus("headloss"), ft ? "Complete" : "Failed");
    EXPECT_EQ(h.ray.submissions(), 1u);
    EXPECT_EQ(h.rayjob("headloss")["status"].value("failed", 0), ft ? 0 : 1);
    if (!ft) {
      EXPECT_TRUE(lostRecordReported(h, "headloss"));
    }
    ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayCluster", "default", cluster); }));
    EXPECT_TRUE(h.ray.storageNamespaces().empty()) << "the cleanup Job emptied Redis";
  }
}

// SidecarMode: the sidecar never runs again (restartPolicy Never), and the RayJob says why.
TEST(LifecycleScenario, W8_SidecarModeLostRecordSaysSo) {
  SimHarness h;
  h.apply(sampleRayJob("lostside", "SidecarMode", "SUCCEEDED", "10m"));
  ASSERT_TRUE(h.runUntil([&] {
    return h.rayjob("lostside").value("status", json::object()).value("jobStatus", "") ==
           "RUNNING";
  }));
  h.ray.loseAllRecords("default", h.rayjob("lostside")["status"]["rayClusterName"]);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("lostside") == "Failed"; }, 60000));
  EXPECT_TRUE(lostRecordReported(h, "lostside"));
  EXPECT_EQ(h.ray.submissions(), 1u);
}

// W4: the operator is down while the job finishes and the deadline passes; on return Ray is
// asked first, so the job is Complete, not DeadlineExceeded.
TEST(LifecycleScenario, W4_DowntimeAcrossDeadlineDoesNotFailAFinishedJob) {
  SimHarness h;
  json job = sampleRayJob("downtime", "K8sJobMode", "SUCCEEDED", "20s");
  job["spec"]["activeDeadlineSeconds"] = 60;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] {
    return h.rayjob("downtime").value("status", json::object()).value("jobStatus", "") == "RUNNING";
  }));
  for (int i = 0; i < 100; ++i) h.step(1000, /*operatorUp=*/false);  // 100 s down
  h.restart();
  ASSERT_TRUE(h.runUntil(
      [&] {
        return h.deploymentStatus("downtime") == "Complete" ||
               h.deploymentStatus("downtime") == "Failed";
      },
      10000));
  EXPECT_EQ(h.deploymentStatus("downtime"), "Complete");
}

TEST(LifecycleScenario, SuspendedAtCreationNeverCreatesACluster) {
  SimHarness h;
  json job = sampleRayJob("susp");
  job["spec"]["suspend"] = true;
  job["spec"]["shutdownAfterJobFinishes"] = true;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("susp") == "Suspended"; }, 10000));
  EXPECT_TRUE(h.kube.list("RayCluster", "default").empty());
  EXPECT_EQ(h.rayjob("susp")["status"].value("rayClusterName", ""), "");
}

TEST(LifecycleScenario, W16_FixedSpecLeavesValidationFailed) {
  SimHarness h;
  json job = sampleRayJob("fixme");
  job["spec"]["runtimeEnvYAML"] = "key: [unclosed";
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("fixme") == "ValidationFailed"; }, 5000));
  EXPECT_NE(h.rayjob("fixme")["status"]["message"].get<std::string>().find("runtimeEnvYAML"),
            std::string::npos);
  json current = h.rayjob("fixme");
  current["spec"]["runtimeEnvYAML"] = "env_vars: {A: b}";
  h.kube.update("RayJob", current);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("fixme") == "Complete"; }));
}

}  // namespace
}  // namespace rayjournal::testing
