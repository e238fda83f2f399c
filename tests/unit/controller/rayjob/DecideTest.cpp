// Pure decision logic: KubeRay's unit tests ported
// (TestCreateRayJobSubmitterIfNeed, TestUpdateStatusToSuspendingIfNeeded,
// TestCheckJobStatusCheckTimeoutAndUpdateStatusIfNeeded, TestRecordJobStatusCheckFailure).
#include <gtest/gtest.h>

#include "support/MinimalRayJob.h"

#include "adapters/TimeFormat.h"
#include "controller/rayjob/Children.h"
#include "controller/rayjob/Decide.h"
#include "controller/rayjob/Validate.h"

namespace rayjournal::controller {
namespace {

json manifest() { return testing::minimalRayJob(); }


// TestCreateRayJobSubmitterIfNeed: the submitter Job's labels, owner and backoffLimit.
TEST(DecideTest, SubmitterJobIsBuiltLikeKubeRays) {
  RayJob job = parseRayJob(manifest());
  job.status.jobId = "job-abcde";
  job.status.dashboardURL = "c-head-svc.default.svc.cluster.local:8265";
  json submitter = buildSubmitterJob(job, json::object());
  EXPECT_EQ(submitter["metadata"]["name"], "job");
  EXPECT_EQ(submitter["metadata"]["labels"]["ray.io/originated-from-crd"], "RayJob");
  EXPECT_EQ(submitter["metadata"]["labels"]["app.kubernetes.io/created-by"], "kuberay-operator");
  EXPECT_EQ(submitter["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(submitter["spec"]["backoffLimit"], 2);
  std::string args = submitter["spec"]["template"]["spec"]["containers"][0]["args"][0];
  EXPECT_NE(args.find("if ! ray job status --address "
                      "http://c-head-svc.default.svc.cluster.local:8265 job-abcde"),
            std::string::npos);
  EXPECT_NE(args.find("--submission-id job-abcde -- python x.py || ray job status --address "
                      "http://c-head-svc.default.svc.cluster.local:8265 job-abcde >/dev/null "
                      "2>&1 ; fi ; ray job logs"),
            std::string::npos)
      << "W17: an already-submitted job is confirmed, not counted as a submitter failure";
}

// Nothing of rayjournal's own reaches the user's Ray job: the submitter's env is KubeRay's three
// variables after the user's, and the HTTP submission's metadata is the user's map. Before, a
// RAYJOURNAL_ATTEMPT variable and a rayjournal.io/attempt metadata key went along.
TEST(DecideTest, NoOperatorKeysLeakIntoTheSubmitterEnvOrRayMetadata) {
  json m = manifest();
  m["spec"]["metadata"] = {{"team", "ml"}};
  RayJob job = parseRayJob(m);
  job.status.jobId = "job-abcde";
  job.status.dashboardURL = "c-head-svc.default.svc.cluster.local:8265";
  json submitter = buildSubmitterJob(job, json::object());
  json names = json::array();
  for (const auto& e : submitter["spec"]["template"]["spec"]["containers"][0]["env"])
    names.push_back(e["name"]);
  EXPECT_EQ(names, json::array({"PYTHONUNBUFFERED", "RAY_DASHBOARD_ADDRESS",
                                "RAY_JOB_SUBMISSION_ID"}));
  auto request = submitRequestFor(job, job.status);
  EXPECT_EQ((*request)["metadata"], json({{"team", "ml"}}));
}

// Asked for with the annotation, the attempt number (failed + 1) joins the user's metadata in
// every submission path: the HTTP request, the submitter Job's and the sidecar's --metadata-json.
TEST(DecideTest, TheAttemptAnnotationPutsTheAttemptIntoEverySubmissionsMetadata) {
  json m = manifest();
  m["spec"]["metadata"] = {{"team", "ml"}};
  m["metadata"]["annotations"] = {{kAttemptMetadataAnnotation, "true"}};
  RayJob job = parseRayJob(m);
  job.status.jobId = "job-abcde";
  job.status.dashboardURL = "c-head-svc.default.svc.cluster.local:8265";
  job.status.failed = 2;
  EXPECT_EQ((*submitRequestFor(job, job.status))["metadata"],
            json({{"team", "ml"}, {"rayjournal.io/attempt", "3"}}));
  json submitter = buildSubmitterJob(job, json::object());
  std::string args = submitter["spec"]["template"]["spec"]["containers"][0]["args"][0];
  EXPECT_NE(args.find(R"(--metadata-json "{\"rayjournal.io/attempt\":\"3\",\"team\":\"ml\"}")"),
            std::string::npos)
      << args;
  EXPECT_NE(buildSidecarCommand(job, 8265).find("rayjournal.io/attempt"), std::string::npos);
  job.annotations[kAttemptMetadataAnnotation] = "false";
  EXPECT_EQ((*submitRequestFor(job, job.status))["metadata"], json({{"team", "ml"}}));
}

// KubeRay trims the entrypoint before `--` in both submitter commands; the sidecar's was not.
TEST(DecideTest, SidecarEntrypointIsTrimmed) {
  json m = manifest();
  m["spec"]["entrypoint"] = "\n  python x.py \n";
  RayJob job = parseRayJob(m);
  job.status.jobId = "job-abcde";
  std::string command = buildSidecarCommand(job, 8265);
  EXPECT_NE(command.find("--submission-id job-abcde -- python x.py ;"), std::string::npos)
      << command;
  EXPECT_EQ(command.substr(command.size() - 17), " -- python x.py ;");
}

std::shared_ptr<const json> shared(json object) {
  return std::make_shared<const json>(std::move(object));
}

// The cluster as the reconciler's boundary shows it to the RayJob "uid-1".
ClusterView clusterOf(json cluster) {
  return clusterView(shared(std::move(cluster)), "uid-1");
}

Observed observed(const json& doc) {
  return Observed{parseRayJob(doc), {}, {}, {}, {}, {}, {}, false, {}};
}

// TestUpdateStatusToSuspendingIfNeeded: only Initializing and Running may become Suspending.
TEST(DecideTest, OnlyInitializingAndRunningSuspend) {
  for (std::string state : {"Initializing", "Running", "Complete", "Failed", "Suspended"}) {
    json doc = manifest();
    doc["spec"]["suspend"] = true;
    doc["spec"]["shutdownAfterJobFinishes"] = true;
    doc["status"] = {{"jobDeploymentStatus", state},
                     {"rayClusterName", "c"},
                     {"jobId", "j"},
                     {"startTime", toRfc3339(1000)}};
    Plan plan = decide(observed(doc), {}, 2000, {});
    bool suspending = false;
    for (const auto& i : plan.intents)
      suspending = suspending || (i.action == Action::WriteStatus &&
                                  i.object->value("jobDeploymentStatus", "") == "Suspending");
    EXPECT_EQ(suspending, state == "Initializing" || state == "Running") << state;
  }
}

json runningDoc(const std::string& checkFailureSince) {
  json doc = manifest();
  doc["spec"]["submissionMode"] = "HTTPMode";
  doc["status"] = {{"jobDeploymentStatus", "Running"},
                   {"rayClusterName", "c"},
                   {"jobId", "j"},
                   {"dashboardURL", "c-head-svc.default.svc.cluster.local:8265"},
                   {"startTime", toRfc3339(0)}};
  if (!checkFailureSince.empty())
    doc["status"]["jobStatusCheckFailureStartTime"] = checkFailureSince;
  return doc;
}

json writtenStatus(const Plan& plan) {
  for (const auto& i : plan.intents)
    if (i.action == Action::WriteStatus) return *i.object;
  return json();
}

// TestRecordJobStatusCheckFailure: the first failure is persisted, a success clears it.
TEST(DecideTest, StatusCheckFailureIsRecordedThenCleared) {
  Observed o = observed(runningDoc(""));
  o.cluster = clusterOf({{"metadata",
               {{"name", "c"},
                {"ownerReferences", json::array({{{"uid", "uid-1"}, {"controller", true}}})}}}});
  o.ray.asked = true;
  o.ray.error = "connection refused";
  json st = writtenStatus(decide(o, {}, 5000, {}));
  EXPECT_EQ(st.value("jobStatusCheckFailureStartTime", ""), toRfc3339(5000));
  Observed ok = observed(runningDoc(toRfc3339(5000)));
  ok.cluster = o.cluster;
  ok.ray.asked = ok.ray.reachable = true;
  ok.ray.info = ray::JobInfo{"j", "RUNNING", "running", 1000, 0};
  json cleared = writtenStatus(decide(ok, {}, 6000, {}));
  EXPECT_FALSE(cleared.contains("jobStatusCheckFailureStartTime"));
}

// TestCheckJobStatusCheckTimeoutAndUpdateStatusIfNeeded: fails only once the timeout passed.
TEST(DecideTest, StatusCheckTimeout) {
  for (int64_t elapsed : {100000, 300000}) {
    Observed o = observed(runningDoc(toRfc3339(0)));
    o.cluster = clusterOf({{"metadata",
                 {{"name", "c"},
                  {"ownerReferences", json::array({{{"uid", "uid-1"}, {"controller", true}}})}}}});
    o.ray.asked = true;
    o.ray.error = "timeout";
    json st = writtenStatus(decide(o, {}, elapsed, {}));
    if (elapsed >= 300000) {
      EXPECT_EQ(st.value("jobDeploymentStatus", ""), "Failed");
      EXPECT_EQ(st.value("reason", ""), "JobStatusCheckTimeoutExceeded");
    } else {
      EXPECT_TRUE(st.is_null() || st.value("jobDeploymentStatus", "") == "Running");
    }
  }
}

// HTTPMode: a POST that keeps failing is a failing status check (KubeRay's
// reconcileHTTPModeJobNotFound): the timer starts, the submission is tried again, and after
// the timeout the RayJob ends Failed/JobStatusCheckTimeoutExceeded with KubeRay's message.
// Before, a RayJob whose submissions all failed stayed Running for ever.
TEST(DecideTest, AnHttpSubmissionThatKeepsFailingEndsAtTheStatusCheckTimeout) {
  auto at = [](int64_t now, const std::string& since, const std::string& submitError) {
    Observed o = observed(runningDoc(since));
    o.cluster = clusterOf({{"metadata",
                 {{"name", "c"},
                  {"ownerReferences", json::array({{{"uid", "uid-1"}, {"controller", true}}})}}}});
    o.ray.asked = o.ray.reachable = true;  // Ray answers 404: not submitted yet
    projection::JobFacts facts;
    facts.lastSubmitError = submitError;
    return decide(o, facts, now, {});
  };
  Plan first = at(5000, "", "HTTP 503 from the dashboard");
  EXPECT_EQ(writtenStatus(first).value("jobStatusCheckFailureStartTime", ""), toRfc3339(5000));
  bool resubmits = false;
  for (const auto& i : first.intents) resubmits = resubmits || i.action == Action::SubmitRayJob;
  EXPECT_TRUE(resubmits);
  json later = writtenStatus(at(5000 + 300000, toRfc3339(5000), "HTTP 503 from the dashboard"));
  EXPECT_EQ(later.value("jobDeploymentStatus", ""), "Failed");
  EXPECT_EQ(later.value("reason", ""), "JobStatusCheckTimeoutExceeded");
  EXPECT_EQ(later.value("message", ""),
            "Job status checks have been failing since 1970-01-01 00:00:05; exceeded timeout of "
            "300s");
  json recovered = writtenStatus(at(6000, toRfc3339(5000), ""));
  EXPECT_FALSE(recovered.contains("jobStatusCheckFailureStartTime")) << "a landed submission";
}

// A status Ray's Jobs API does not define never leaves the RayJob Running for ever: it is
// shown, warned about once, and fails the RayJob when the status check timeout passes.
TEST(DecideTest, UnknownRayStatusFailsAfterTheStatusCheckTimeout) {
  auto at = [](int64_t now, const std::string& since) {
    Observed o = observed(runningDoc(since));
    o.cluster = clusterOf({{"metadata",
                 {{"name", "c"},
                  {"ownerReferences", json::array({{{"uid", "uid-1"}, {"controller", true}}})}}}});
    o.ray.asked = o.ray.reachable = true;
    o.ray.info = ray::JobInfo{"j", "HALF_DONE", "?", 1000, 0};
    return decide(o, {}, now, {});
  };
  Plan first = at(5000, "");
  json st = writtenStatus(first);
  EXPECT_EQ(st.value("jobStatus", ""), "HALF_DONE");
  EXPECT_EQ(st.value("jobDeploymentStatus", ""), "Running");
  EXPECT_EQ(st.value("jobStatusCheckFailureStartTime", ""), toRfc3339(5000));
  bool warned = false;
  for (const auto& e : first.events) warned = warned || e.reason == "UnknownRayJobStatus";
  EXPECT_TRUE(warned) << "no Warning Event for the unknown status";
  json later = writtenStatus(at(5000 + 300000, toRfc3339(5000)));
  EXPECT_EQ(later.value("jobDeploymentStatus", ""), "Failed");
  EXPECT_EQ(later.value("reason", ""), "JobStatusCheckTimeoutExceeded");
  EXPECT_NE(later.value("message", "").find("HALF_DONE"), std::string::npos) << later.dump();
}

TEST(DecideTest, DecideIsDeterministic) {
  json doc = manifest();
  Plan a = decide(observed(doc), {}, 1234, {});
  Plan b = decide(observed(doc), {}, 1234, {});
  ASSERT_EQ(a.intents.size(), b.intents.size());
  for (size_t i = 0; i < a.intents.size(); ++i) {
    ASSERT_EQ(bool(a.intents[i].object), bool(b.intents[i].object));
    if (a.intents[i].object) {
      EXPECT_EQ(*a.intents[i].object, *b.intents[i].object);
    }
  }
  EXPECT_EQ(writtenStatus(a)["rayClusterName"], writtenStatus(b)["rayClusterName"]);
}

json ownerRef() {
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayJob"},
          {"name", "job"},
          {"uid", "uid-1"},
          {"controller", true}};
}

// A RayJob in `mode`, Initializing on RayCluster c (not observed yet) whose head Service is up.
Observed initializingWithHeadService(const std::string& mode) {
  json doc = manifest();
  doc["spec"]["submissionMode"] = mode;
  doc["status"] = {{"jobDeploymentStatus", "Initializing"},
                   {"rayClusterName", "c"},
                   {"jobId", "j"},
                   {"startTime", toRfc3339(0)}};
  doc["metadata"]["finalizers"] = json::array({"ray.io/rayjob-finalizer"});
  Observed o = observed(doc);
  json headSvc{{"metadata", {{"name", "c-head-svc"}}},
               {"spec", {{"ports", json::array({{{"name", "dashboard"}, {"port", 8265}}})}}}};
  o.headService = serviceView(shared(headSvc));
  return o;
}

// W15: KubeRay's `state: ready` is sticky; the current HeadPodReady condition must agree.
TEST(DecideTest, W15_StickyReadyWithAHeadThatIsNotReadyIsNotReady) {
  Observed o = initializingWithHeadService("HTTPMode");
  json headNotReady{{"type", "HeadPodReady"}, {"status", "False"}};
  json owner = ownerRef();
  json cluster{{"metadata", {{"name", "c"}, {"ownerReferences", json::array({owner})}}},
               {"status", {{"state", "ready"}, {"conditions", json::array({headNotReady})}}}};
  o.cluster = clusterOf(cluster);
  Plan waiting = decide(o, {}, 1000, {});
  EXPECT_NE(waiting.why.find("waiting for RayCluster c to be ready"), std::string::npos)
      << waiting.why;
  cluster["status"]["conditions"][0]["status"] = "True";
  o.cluster = clusterOf(cluster);
  Plan go = decide(o, {}, 1000, {});
  EXPECT_EQ(writtenStatus(go).value("jobDeploymentStatus", ""), "Running") << go.why;
  // Without the condition (a RayCluster controller that does not write it), state decides.
  cluster["status"].erase("conditions");
  o.cluster = clusterOf(cluster);
  EXPECT_EQ(writtenStatus(decide(o, {}, 1000, {})).value("jobDeploymentStatus", ""), "Running");
}

// TestUpdateRayJobStatus: a change to the message alone is not written.
TEST(DecideTest, MessageAloneIsNotWritten) {
  json doc = runningDoc("");
  doc["metadata"]["finalizers"] = json::array({"ray.io/rayjob-finalizer"});
  doc["status"]["jobStatus"] = "RUNNING";
  doc["status"]["message"] = "an older message";
  doc["status"]["observedGeneration"] = 1;
  doc["status"]["rayJobInfo"] = {{"startTime", toRfc3339(0)}};
  doc["status"]["rayClusterStatus"] = {{"state", "ready"}};
  Observed o = observed(doc);
  json owner = ownerRef();
  o.cluster = clusterOf({{"metadata", {{"name", "c"}, {"ownerReferences", json::array({owner})}}},
                      {"status", {{"state", "ready"}}}});
  o.ray.reachable = true;
  o.ray.info = ray::JobInfo{"j", "RUNNING", "Job is currently running.", 0, 0};
  Plan plan = decide(o, {}, 1000, {});
  EXPECT_TRUE(writtenStatus(plan).is_null()) << plan.why << " " << writtenStatus(plan).dump();
  o.ray.info->status = "SUCCEEDED";
  EXPECT_FALSE(writtenStatus(decide(o, {}, 1000, {})).is_null()) << "a real change is written";
}

// A status write is a fixed point: deciding again on the status just written writes nothing,
// also while the cluster has no status yet (an empty copy must read back as equal, or every
// reconcile writes the same status again).
TEST(DecideTest, DecidingOnTheStatusJustWrittenWritesNothing) {
  json doc = manifest();
  doc["metadata"]["finalizers"] = json::array({"ray.io/rayjob-finalizer"});
  doc["status"] = {{"jobDeploymentStatus", "Initializing"},
                   {"rayClusterName", "c"},
                   {"jobId", "j"},
                   {"startTime", toRfc3339(0)}};
  for (json clusterStatus : {json(), json::object(), json{{"state", ""}, {"desiredWorkerReplicas", 1}}}) {
    json cluster{{"metadata", {{"name", "c"}, {"ownerReferences", json::array({ownerRef()})}}}};
    if (!clusterStatus.is_null()) cluster["status"] = clusterStatus;
    json current = doc;
    for (int round = 0; round < 3; ++round) {
      Observed o = observed(current);
      o.cluster = clusterOf(cluster);
      json written = writtenStatus(decide(o, {}, 1000, {}));
      if (written.is_null()) break;
      ASSERT_LT(round, 1) << "wrote again on its own status: " << written.dump();
      current["status"] = written;
    }
  }
}

// Deployment states are an enum at the boundary: KubeRay's New is the empty string (an older
// rayjournal wrote "New", still read as New), and a value nobody defines is kept as written and
// not overwritten.
TEST(DecideTest, DeploymentStatusNamesRoundTripAndAnUnknownOneIsLeftAlone) {
  EXPECT_EQ(deploymentStatusFromName(""), DeploymentStatus::New);
  EXPECT_EQ(deploymentStatusFromName("New"), DeploymentStatus::New);
  EXPECT_EQ(deploymentStatusName(DeploymentStatus::New), "");
  for (auto s : {DeploymentStatus::Initializing, DeploymentStatus::Retrying,
                 DeploymentStatus::ValidationFailed})
    EXPECT_EQ(deploymentStatusFromName(deploymentStatusName(s)), s);
  json doc = manifest();
  doc["metadata"]["finalizers"] = json::array({"ray.io/rayjob-finalizer"});
  doc["status"] = {{"jobDeploymentStatus", "Teleporting"}, {"observedGeneration", 1}};
  Observed o = observed(doc);
  EXPECT_EQ(o.job.status.jobDeploymentStatus, DeploymentStatus::Unknown);
  Plan plan = decide(o, {}, 1000, {});
  EXPECT_TRUE(writtenStatus(plan).is_null()) << writtenStatus(plan).dump();
  EXPECT_NE(plan.why.find("Teleporting"), std::string::npos) << plan.why;
}

// A Running K8sJobMode RayJob at Ray's "RUNNING" whose submitter Job failed at time 0 (a dropped
// `ray job logs --follow`, an evicted Pod).
Observed runningWithFailedSubmitter(const std::string& checkFailureSince) {
  json doc = runningDoc(checkFailureSince);
  doc["spec"]["submissionMode"] = "K8sJobMode";
  doc["metadata"]["finalizers"] = json::array({"ray.io/rayjob-finalizer"});
  doc["status"]["jobStatus"] = "RUNNING";
  Observed o = observed(doc);
  o.cluster = clusterOf({{"metadata", {{"name", "c"}, {"ownerReferences", json::array({ownerRef()})}}},
                         {"status", {{"state", "ready"}}}});
  o.submitter = SubmitterView{false, false, true, toRfc3339(0), "BackoffLimitExceeded",
                              "Job has reached the specified backoff limit"};
  o.ray.asked = true;
  return o;
}

// W5: a submitter that failed while Ray runs the job does not decide the outcome; Ray does.
// Before, the RayJob ended Failed/JobDeploymentStatusTransitionGracePeriodExceeded with jobStatus
// forced to FAILED 30 s after the submitter failed, while the Ray job kept running.
TEST(DecideTest, W5_ASubmitterThatFailsWhileRayRunsTheJobLeavesTheOutcomeToRay) {
  Observed o = runningWithFailedSubmitter("");
  o.ray.reachable = true;
  o.ray.info = ray::JobInfo{"j", "RUNNING", "Job is currently running.", 1000, 0};
  Plan later = decide(o, {}, 600000, {});
  json st = writtenStatus(later);
  EXPECT_TRUE(st.is_null() || st.value("jobDeploymentStatus", "") == "Running") << st.dump();
  EXPECT_NE(later.why.find("following Ray"), std::string::npos) << later.why;
  o.ray.info = ray::JobInfo{"j", "SUCCEEDED", "Job finished successfully.", 1000, 590000};
  json done = writtenStatus(decide(o, {}, 600000, {}));
  EXPECT_EQ(done.value("jobDeploymentStatus", ""), "Complete") << done.dump();
  EXPECT_EQ(done.value("jobStatus", ""), "SUCCEEDED");
}

// W5: with the submitter failed and Ray unreachable, the wait is bounded by the status-check
// timeout and ends as the submitter says: SubmissionFailed, which backoffLimit retries. Before,
// it ended JobStatusCheckTimeoutExceeded, which is never retried.
TEST(DecideTest, W5_AFailedSubmitterAndAnUnreachableRayFailTheAttemptAsASubmissionFailure) {
  Observed waiting = runningWithFailedSubmitter(toRfc3339(5000));
  waiting.ray.error = "connection refused";
  json st = writtenStatus(decide(waiting, {}, 100000, {}));
  EXPECT_TRUE(st.is_null() || st.value("jobDeploymentStatus", "") == "Running") << st.dump();
  Observed timedOut = runningWithFailedSubmitter(toRfc3339(5000));
  timedOut.job.spec.backoffLimit = 1;
  timedOut.ray.error = "connection refused";
  json failed = writtenStatus(decide(timedOut, {}, 5000 + 300000, {}));
  EXPECT_EQ(failed.value("reason", ""), "SubmissionFailed") << failed.dump();
  EXPECT_EQ(failed.value("message", ""),
            "Job submission has failed. Reason: BackoffLimitExceeded. Message: Job has reached "
            "the specified backoff limit");
  EXPECT_EQ(failed.value("jobDeploymentStatus", ""), "Retrying") << "SubmissionFailed is retried";
}

bool hasEvent(const Plan& plan, const std::string& reason) {
  for (const auto& e : plan.events)
    if (e.reason == reason) return true;
  return false;
}

// W8 found by KubeRay's e2e suite ("recreates the head Pod if it is deleted while the job is
// running"): the head restarts without GCS fault tolerance, the submitter (backoffLimit 0) fails
// on the broken log stream, and the new head answers 404 for the journaled submission. The
// status carries KubeRay's reason for a failed submitter, SubmissionFailed, as KubeRay's test and
// alert rules expect; the lost record leads the message and names the Warning Event. Before, the
// reason was RayJobRecordLost, which no rule written for KubeRay matches.
TEST(DecideTest, W8_ALostRecordWithAFailedSubmitterFailsAsSubmissionFailed) {
  Observed o = runningWithFailedSubmitter("");
  o.ray.reachable = true;
  projection::JobFacts facts;
  facts.submittedIds = {"j"};
  Plan plan = decide(o, facts, 1000, {});
  json st = writtenStatus(plan);
  EXPECT_EQ(st.value("jobDeploymentStatus", ""), "Failed") << st.dump();
  EXPECT_EQ(st.value("reason", ""), "SubmissionFailed");
  EXPECT_EQ(st.value("message", ""),
            "RayJobRecordLost: Ray job j was seen on the Ray cluster (journaled) but the Ray "
            "cluster no longer knows it; Job submission has failed. Reason: BackoffLimitExceeded. "
            "Message: Job has reached the specified backoff limit");
  EXPECT_TRUE(hasEvent(plan, "RayJobRecordLost"));
}

// W8 with no failed submitter (HTTPMode here): KubeRay's reason for a job Ray does not know,
// AppFailed, and the lost record in the message.
TEST(DecideTest, W8_ALostRecordOtherwiseFailsAsAppFailed) {
  Observed o = observed(runningDoc(""));
  o.cluster = clusterOf({{"metadata", {{"name", "c"}, {"ownerReferences", json::array({ownerRef()})}}},
                         {"status", {{"state", "ready"}}}});
  o.ray.asked = o.ray.reachable = true;
  projection::JobFacts facts;
  facts.submittedIds = {"j"};
  Plan plan = decide(o, facts, 1000, {});
  json st = writtenStatus(plan);
  EXPECT_EQ(st.value("reason", ""), "AppFailed") << st.dump();
  EXPECT_EQ(st.value("message", "").rfind("RayJobRecordLost: Ray job j was submitted", 0), 0u);
  EXPECT_TRUE(hasEvent(plan, "RayJobRecordLost"));
  for (const auto& i : plan.intents) EXPECT_NE(i.action, Action::SubmitRayJob);
}

// W7: a RayCluster deleted mid-run fails the attempt under KubeRay's AppFailed, the cause in the
// message and a RayClusterDeleted Warning.
TEST(DecideTest, W7_ADeletedClusterFailsAsAppFailedAndSaysWhy) {
  Observed o = observed(runningDoc(""));
  Plan plan = decide(o, {}, 1000, {});
  json st = writtenStatus(plan);
  EXPECT_EQ(st.value("reason", ""), "AppFailed") << st.dump();
  EXPECT_EQ(st.value("message", ""),
            "RayClusterDeleted: RayCluster c was deleted while the job was running");
  EXPECT_TRUE(hasEvent(plan, "RayClusterDeleted"));
}

// W9: a deleted RayJob whose Ray job cannot be asked (a stalled dashboard). The stop is retried
// past the three attempts while the confirmation window since the deletion is open, and only
// then does the finalizer go with StopJobNotConfirmed. Before, three attempts a poll apart (about
// 30 s with the Ray timeout) removed the finalizer, and a dashboard that stalled that long left
// the job running on a shared cluster.
TEST(DecideTest, W9_TheStopIsRetriedForTheConfirmationWindowNotOnlyThreeTimes) {
  json doc = runningDoc("");
  doc["metadata"]["finalizers"] = json::array({"ray.io/rayjob-finalizer"});
  doc["metadata"]["deletionTimestamp"] = toRfc3339(10000);
  Observed o = observed(doc);
  o.ray.asked = true;
  o.ray.error = "timed out";
  json cluster{{"metadata", {{"name", "c"}, {"ownerReferences", json::array({ownerRef()})}}},
               {"status", {{"state", "ready"}}}};
  o.cluster = clusterOf(cluster);
  projection::JobFacts facts;
  facts.stopAttempts = 3;
  auto actions = [](const Plan& p) {
    std::vector<Action> out;
    for (const auto& i : p.intents) out.push_back(i.action);
    return out;
  };
  Plan within = decide(o, facts, 10000 + 59000, {});
  EXPECT_EQ(actions(within), std::vector<Action>{Action::StopRayJob}) << within.why;
  Plan after = decide(o, facts, 10000 + 60000, {});
  EXPECT_EQ(actions(after), std::vector<Action>{Action::RemoveFinalizer}) << after.why;
  EXPECT_TRUE(hasEvent(after, "StopJobNotConfirmed"));
  facts.stopAttempts = 1;
  EXPECT_EQ(actions(decide(o, facts, 10000 + 600000, {})), std::vector<Action>{Action::StopRayJob})
      << "at least three attempts, however late the first pass";
  // The namespace is being deleted: the cluster, and the Ray job with it, is going anyway.
  facts.stopAttempts = 3;
  cluster["metadata"]["deletionTimestamp"] = toRfc3339(10000);
  o.cluster = clusterOf(cluster);
  EXPECT_EQ(actions(decide(o, facts, 10000 + 1000, {})),
            std::vector<Action>{Action::RemoveFinalizer});
  o.cluster.reset();
  Plan gone = decide(o, facts, 10000 + 1000, {});
  EXPECT_EQ(actions(gone), std::vector<Action>{Action::RemoveFinalizer});
  ASSERT_TRUE(hasEvent(gone, "StopJobNotConfirmed"));
  for (const auto& e : gone.events)
    EXPECT_NE(e.message.find("its RayCluster is gone or being deleted"), std::string::npos)
        << "the Event says why the window closed early, not that 60 s passed: " << e.message;
}

// The texts of KubeRay's terminal messages, which alerting rules match.
TEST(DecideTest, DeadlineGracePeriodAndSubmitterMessagesAreKubeRays) {
  Observed deadline = runningWithFailedSubmitter("");
  deadline.submitter.reset();
  deadline.job.spec.activeDeadlineSeconds = 10;
  deadline.ray.reachable = true;
  deadline.ray.info = ray::JobInfo{"j", "RUNNING", "", 1000, 0};
  EXPECT_EQ(writtenStatus(decide(deadline, {}, 20000, {})).value("message", ""),
            "The RayJob has passed the activeDeadlineSeconds. StartTime: 1970-01-01 00:00:00 "
            "+0000 UTC. ActiveDeadlineSeconds: 10");
  Observed grace = runningWithFailedSubmitter("");
  grace.submitter->failed = false;
  grace.submitter->complete = true;
  grace.ray.reachable = true;
  grace.ray.info = ray::JobInfo{"j", "RUNNING", "", 1000, 0};
  EXPECT_EQ(writtenStatus(decide(grace, {}, 31000, {})).value("message", ""),
            "The RayJob submitter finished at 1970-01-01 00:00:00 but the ray job did not reach "
            "terminal state within 30s");
  grace.submitter = SubmitterView{};  // still streaming logs
  grace.ray.info = ray::JobInfo{"j", "SUCCEEDED", "", 1000, 2000};
  grace.job.status.rayJobInfoEndTime = toRfc3339(2000);
  json stuck = writtenStatus(decide(grace, {}, 2000 + 300000, {}));
  EXPECT_EQ(stuck.value("jobDeploymentStatus", ""), "Complete") << stuck.dump();
  EXPECT_EQ(stuck.value("message", ""),
            "JobDeploymentStatus does not transition to Complete or Failed within the grace "
            "period after JobStatus reaches a terminal state.");
}

// SidecarMode: KubeRay's message names the container, its exit code and the terminated reason.
TEST(DecideTest, AFailedSidecarSubmitterIsReportedAsKubeRayDoes) {
  Observed o = runningWithFailedSubmitter("");
  o.job.spec.submissionMode = SubmissionMode::SidecarMode;
  o.submitter.reset();
  o.job.status.jobStatus = "";
  o.headPods.push_back(HeadPodView{true, toRfc3339(0), 1, "Error"});
  o.ray.reachable = true;  // Ray answers 404: the submitter never submitted
  json st = writtenStatus(decide(o, {}, 1000, {}));
  EXPECT_EQ(st.value("reason", ""), "SubmissionFailed") << st.dump();
  EXPECT_EQ(st.value("message", ""),
            "Ray head pod container ray-job-submitter terminated with exit code 1: Error");
}

TEST(DecideTest, AnUnknownSubmissionModeFailsValidationNamingIt) {
  json doc = manifest();
  doc["spec"]["submissionMode"] = "CarrierPigeonMode";
  Plan plan = decide(observed(doc), {}, 1000, {});
  json st = writtenStatus(plan);
  EXPECT_EQ(st.value("jobDeploymentStatus", ""), "ValidationFailed");
  EXPECT_NE(st.value("message", "").find("CarrierPigeonMode"), std::string::npos) << st.dump();
}

}  // namespace
}  // namespace rayjournal::controller

namespace rayjournal::controller {
namespace {

// A new RayJob's first plan creates its RayCluster (one round through the queue fewer than
// KubeRay), but only after the status write that names it: a crash between the two must leave a
// status naming the cluster, so that the next decision creates that one and never a second.
TEST(DecideTest, ANewRayJobCreatesItsRayClusterAfterTheStatusThatNamesIt) {
  Plan plan = decide(observed(manifest()), {}, 1000, {});
  std::vector<Action> actions;
  for (const auto& i : plan.intents) actions.push_back(i.action);
  ASSERT_EQ(actions, (std::vector<Action>{Action::AddFinalizer, Action::WriteStatus,
                                          Action::CreateRayCluster}));
  EXPECT_EQ(plan.intents[1].object->value("jobDeploymentStatus", ""), "Initializing");
  EXPECT_EQ(plan.intents[1].object->value("rayClusterName", ""), plan.intents[2].target);

  json suspended = manifest();
  suspended["spec"]["suspend"] = true;
  for (const auto& i : decide(observed(suspended), {}, 1000, {}).intents)
    EXPECT_NE(i.action, Action::CreateRayCluster) << "a suspended RayJob gets no cluster";
  json selector = manifest();
  selector["spec"].erase("rayClusterSpec");
  selector["spec"]["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  for (const auto& i : decide(observed(selector), {}, 1000, {}).intents)
    EXPECT_NE(i.action, Action::CreateRayCluster) << "a clusterSelector RayJob creates none";
}

}  // namespace
}  // namespace rayjournal::controller

namespace rayjournal::controller {
namespace {

// A RayCluster still starting is not mirrored into the RayJob in its first 10 s (it is, with
// the Running write, once ready); one that takes longer is, as KubeRay shows it.
TEST(DecideTest, AnUnreadyClusterIsMirroredOnlyOnceItTakesLongerThanTenSeconds) {
  json doc = manifest();
  doc["metadata"]["finalizers"] = json::array({"ray.io/rayjob-finalizer"});
  doc["status"] = {{"jobDeploymentStatus", "Initializing"},
                   {"rayClusterName", "c"},
                   {"jobId", "j"},
                   {"observedGeneration", 1},
                   {"startTime", toRfc3339(0)}};
  Observed o = observed(doc);
  json owner = ownerRef();
  o.cluster = clusterOf({{"metadata", {{"name", "c"}, {"ownerReferences", json::array({owner})}}},
                         {"status", {{"state", ""}, {"desiredWorkerReplicas", 1}}}});
  EXPECT_TRUE(writtenStatus(decide(o, {}, 9000, {})).is_null()) << "9 s: not yet";
  json late = writtenStatus(decide(o, {}, 11000, {}));
  ASSERT_FALSE(late.is_null()) << "11 s: the cluster's status is shown";
  EXPECT_EQ(late["rayClusterStatus"].value("desiredWorkerReplicas", 0), 1);
}

}  // namespace
}  // namespace rayjournal::controller

namespace rayjournal::controller {
namespace {

// KubeRay's e2e "Failing RayJob with SidecarMode submission mode": the job failed before the
// workers were ready, the exited submitter keeps the head Pod from ever being Ready again, and
// the RayJob must not wait in Initializing for a readiness that cannot come.
TEST(DecideTest, ASidecarSubmitterThatExitedBeforeTheClusterWasReadyEndsInitializing) {
  Observed o = initializingWithHeadService("SidecarMode");
  json cluster{{"metadata", {{"name", "c"}, {"ownerReferences", json::array({ownerRef()})}}},
               {"status", {{"state", ""}}}};
  o.cluster = clusterOf(cluster);
  o.headPods.push_back(HeadPodView{});  // the submitter is still running: wait for readiness
  Plan waiting = decide(o, {}, 1000, {});
  EXPECT_NE(waiting.why.find("waiting for RayCluster c to be ready"), std::string::npos)
      << waiting.why;
  o.headPods[0] = HeadPodView{true, toRfc3339(500), 1, "Error"};
  Plan go = decide(o, {}, 1000, {});
  json st = writtenStatus(go);
  EXPECT_EQ(st.value("jobDeploymentStatus", ""), "Running") << go.why;
  EXPECT_EQ(st.value("dashboardURL", ""), "c-head-svc.default.svc.cluster.local:8265");
  EXPECT_NE(go.why.find("submitter exited before RayCluster c was ready"), std::string::npos)
      << go.why;
}

}  // namespace
}  // namespace rayjournal::controller
