#include "controller/rayjob/Decide.h"

#include <algorithm>
#include <optional>

#include "adapters/TimeFormat.h"
#include "controller/rayjob/Builders.h"
#include "controller/rayjob/Validate.h"
#include "controller/YuniKorn.h"
#include "model/Names.h"

namespace rayjournal::controller {
namespace {

// Working state of one decision.
struct Ctx {
  const Observed& o;
  const JobFacts& facts;
  int64_t now;
  const DecideConfig& cfg;
  const RayJob& job;
  RayJobStatus st;  // the status being built
  Plan plan;
  // The status write runs even if an earlier intent fails: it records that failure's streak
  // (a submission that keeps failing starts the status-check timer).
  bool statusAfterFailure = false;
  // Where in the plan the status write goes when an intent after it depends on it being durable
  // in Kubernetes first (the identities it names); by default it is the last intent.
  std::optional<size_t> statusAt;

  bool selectorMode() const { return !job.spec.clusterSelector.empty(); }
  void intent(Action a, std::string target, model::ApiObject object = nullptr) {
    plan.intents.push_back({a, std::move(target), std::move(object)});
  }
  template <typename Fact>
  void observe(Fact fact) {
    plan.observations.emplace_back(std::in_place_type<Fact>, std::move(fact));
  }
  void event(const std::string& type, const std::string& reason, const std::string& message,
             const std::string& action = "Reconcile") {
    plan.events.push_back({type, reason, message, action});
  }
  void fail(const std::string& reason, const std::string& message) {
    st.jobDeploymentStatus = DeploymentStatus::Failed;
    st.reason = reason;
    st.message = message;
  }
  bool passed(const std::string& since, int64_t ms) const {
    auto t = parseRfc3339(since);
    return t && now >= *t + ms;
  }
};

bool deadlinesPassed(Ctx& c, bool activeDeadline, bool preRunningDeadline) {
  const auto& s = c.job.spec;
  if (activeDeadline && s.activeDeadlineSeconds &&
      c.passed(c.st.startTime, int64_t(*s.activeDeadlineSeconds) * 1000)) {
    c.fail("DeadlineExceeded",
           "The RayJob has passed the activeDeadlineSeconds. StartTime: " +
               goTimeString(c.st.startTime) +
               ". ActiveDeadlineSeconds: " + std::to_string(*s.activeDeadlineSeconds));
    return true;
  }
  if (preRunningDeadline && s.preRunningDeadlineSeconds &&
      c.passed(c.st.startTime, int64_t(*s.preRunningDeadlineSeconds) * 1000)) {
    c.fail("PreRunningDeadlineExceeded",
           "The RayJob has passed the preRunningDeadlineSeconds. StartTime: " +
               goTimeString(c.st.startTime) +
               ". PreRunningDeadlineSeconds: " + std::to_string(*s.preRunningDeadlineSeconds));
    return true;
  }
  return false;
}

bool ensureCluster(Ctx& c);

constexpr int64_t kMirrorUnreadyClusterAfterMs = 10000;

// The RayJob's document, for the PodGroup it owns and labels.
model::Document rawOf(const RayJob& job) { return job.raw ? model::Document(job.raw) : model::Document(); }

bool volcano(const Ctx& c) { return c.cfg.batchScheduler == "volcano"; }
bool yunikorn(const Ctx& c) { return c.cfg.batchScheduler == "yunikorn"; }

// KubeRay's syncPodGroup for the RayJob: created when missing, its gang updated when it differs
// (before the cluster's Pods or after its children are gone, as the state wants). Returns false
// when it cannot be built (a malformed topology label): nothing is made without it.
bool syncPodGroup(Ctx& c, bool cleanup) {
  std::optional<Gang> gang = rayJobPodGroupTarget(c.o, c.cfg);
  if (!gang || !c.o.podGroupRead) return true;
  const std::string name = volcanoPodGroupNameOf(rawOf(c.job));
  if (c.o.podGroup.isNull()) {
    std::string error;
    model::ApiObject created = podGroupCreateFor(rawOf(c.job), *gang, error);
    if (!created) {
      c.event("Warning", "FailedToCreatePodGroup", c.job.key() + ": " + error, "Create");
      c.plan.why = "no PodGroup: " + error;
      return false;
    }
    c.intent(Action::CreatePodGroup, name, std::move(created));
    return true;
  }
  model::ApiObject updated = podGroupUpdateFor(c.o.podGroup, *gang);
  if (!updated) return true;
  c.intent(Action::UpdatePodGroup, name, std::move(updated));
  if (cleanup)
    c.event("Normal", "BatchSchedulerCleanedUp",
            "Cleaned up batch scheduler resources for RayJob " + c.job.key(), "Cleanup");
  return true;
}

// The K8sJobMode submitter, in the RayJob's PodGroup under Volcano (task group "submittergroup").
model::ApiObject submitterFor(const Ctx& c) {
  RayJob withStatus = c.job;
  withStatus.status = c.st;
  model::ApiObject job = submitterJobFor(withStatus, c.o.cluster->raw, c.cfg.loginShell);
  if (volcano(c)) joinVolcanoGangAsSubmitter(rawOf(c.job), job);
  if (yunikorn(c)) joinYuniKornAsSubmitter(rawOf(c.job), job);
  return job;
}

void decideNew(Ctx& c) {
  if (!c.job.hasFinalizer()) c.intent(Action::AddFinalizer, c.job.name);
  uint32_t incarnation = std::max<uint32_t>(c.facts.nextIncarnation, uint32_t(c.st.failed) + 1);
  if (c.job.spec.submissionMode != SubmissionMode::InteractiveMode && c.st.jobId.empty()) {
    c.st.jobId =
        c.job.spec.jobId.empty() ? generatedName(c.job, incarnation, "job") : c.job.spec.jobId;
  }
  if (c.st.rayClusterName.empty()) {
    auto it = c.job.spec.clusterSelector.find("ray.io/cluster");
    c.st.rayClusterName = it != c.job.spec.clusterSelector.end()
                              ? it->second
                              : generatedName(c.job, incarnation, "cluster");
  }
  c.st.jobStatus = "";
  c.st.reason = "";
  c.st.message = "";
  c.st.jobDeploymentStatus = DeploymentStatus::Initializing;
  c.st.startTime = toRfc3339(c.now);
  c.observe(events::AttemptStarted{
      uint32_t(c.st.failed + 1), incarnation, c.st.rayClusterName, c.st.jobId});
  c.plan.why = "new attempt: identities " + c.st.rayClusterName + " / " +
               (c.st.jobId.empty() ? "(interactive)" : c.st.jobId);
  // KubeRay creates the RayCluster one reconcile later; here it is created in the same plan,
  // after the status write that names it (a crash between the two leaves a status that names
  // the cluster, and the next decision creates that one, never a second). That saves a round
  // through the queue and the RayCluster side starts while the RayJob's own writes still wait
  // for their rate limit.
  if (!c.selectorMode() && !c.job.spec.suspend && !c.o.cluster) {
    c.statusAt = c.plan.intents.size();
    std::string why = c.plan.why;
    if (!syncPodGroup(c, false)) return;
    ensureCluster(c);
    c.plan.why = why + "; creating RayCluster " + c.st.rayClusterName;
  }
}

// Returns false when the cluster is not usable yet (the plan says what to do meanwhile).
bool ensureCluster(Ctx& c) {
  if (!c.o.cluster) {
    if (c.selectorMode()) {
      c.event("Warning", "RayClusterNotFound",
              "RayCluster " + c.job.ns + "/" + c.st.rayClusterName +
                  " set in the clusterSelector is not found. It must be created manually",
              "Validate");
      c.plan.why = "clusterSelector cluster " + c.st.rayClusterName + " not found";
      return false;
    }
    RayJob withStatus = c.job;  // the status being built names the submission (SidecarMode)
    withStatus.status = c.st;
    model::ApiObject cluster = rayClusterFor(withStatus, c.st.rayClusterName,
                                             {c.cfg.loginShell, c.cfg.gates.sidecarSubmitterRestart});
    // KubeRay labels the cluster for its RayJob's gang in K8sJobMode only.
    if (c.job.spec.submissionMode == SubmissionMode::K8sJobMode) {
      if (volcano(c)) joinVolcanoGang(rawOf(c.job), cluster, "", false);
      if (yunikorn(c)) joinYuniKorn(rawOf(c.job), cluster, "", false);
    }
    c.intent(Action::CreateRayCluster, c.st.rayClusterName, std::move(cluster));
    c.plan.why = "creating RayCluster " + c.st.rayClusterName;
    return false;
  }
  if (!c.selectorMode() && !c.o.cluster->ownedBy) {
    c.event("Warning", "FailedToCreateRayCluster",
            "RayCluster " + c.job.ns + "/" + c.st.rayClusterName +
                " exists but is not owned by this RayJob (uid " + c.job.uid + "); not adopting it",
            "Create");
    c.plan.why = "foreign RayCluster " + c.st.rayClusterName;
    return false;
  }
  return true;
}

// KubeRay's `state: ready` never goes back (W15); a HeadPodReady condition, when the
// RayCluster controller writes one, is the current signal and must agree.
bool clusterReadyNow(const ClusterView& cluster) {
  return cluster.state == "ready" && cluster.headPodReady.value_or(true);
}

// SidecarMode: a head Pod whose submitter container has exited is never Ready again (its
// restartPolicy is Never), so a job that ended before the cluster was first ready would wait in
// Initializing until a deadline, if it has one (KubeRay does: its e2e case "Failing RayJob with
// SidecarMode submission mode" passes only when the workers win that race). The submission is
// over either way; Running reads its outcome.
bool sidecarSubmitterEnded(const Ctx& c) {
  return c.job.spec.submissionMode == SubmissionMode::SidecarMode &&
         !c.cfg.gates.sidecarSubmitterRestart && c.o.headPods.size() == 1 &&
         c.o.headPods[0].submitterExited;
}

void decideInitializing(Ctx& c) {
  if (c.job.spec.suspend) {
    c.st.jobDeploymentStatus = DeploymentStatus::Suspending;
    return;
  }
  if (deadlinesPassed(c, true, true)) return;
  if (!syncPodGroup(c, false)) return;
  if (!ensureCluster(c)) return;
  if (c.st.dashboardURL.empty()) {
    if (!clusterReadyNow(*c.o.cluster) && !sidecarSubmitterEnded(c)) {
      // KubeRay writes every change of a cluster that is not ready yet into the RayJob. A cluster
      // that is ready within its first seconds is shown with the Running write instead (one
      // RayJob write fewer per lifecycle, on the kind that limits throughput); one that takes
      // longer, the one a user looks into, is mirrored as KubeRay does.
      if (c.passed(c.st.startTime, kMirrorUnreadyClusterAfterMs))
        c.st.rayClusterStatus = c.o.cluster->status;
      c.plan.why = "waiting for RayCluster " + c.st.rayClusterName + " to be ready";
      return;
    }
    if (!c.o.headService) {
      c.plan.why = "waiting for the head Service of " + c.st.rayClusterName;
      return;
    }
    c.st.rayClusterStatus = c.o.cluster->status;
    c.st.dashboardURL = c.o.headService->name + "." + c.job.ns + ".svc." + c.cfg.clusterDomain +
                        ":" + std::to_string(c.o.headService->dashboardPort);
  }
  if (c.job.spec.submissionMode == SubmissionMode::InteractiveMode) {
    c.st.jobDeploymentStatus = DeploymentStatus::Waiting;
    return;
  }
  if (c.job.spec.submissionMode == SubmissionMode::K8sJobMode && !c.o.submitter)
    c.intent(Action::CreateSubmitterJob, c.job.name, submitterFor(c));
  c.st.jobDeploymentStatus = DeploymentStatus::Running;
  c.plan.why = sidecarSubmitterEnded(c) && !clusterReadyNow(*c.o.cluster)
                   ? "the submitter exited before RayCluster " + c.st.rayClusterName +
                         " was ready; reading the job's outcome"
                   : "cluster ready at " + c.st.dashboardURL + "; running";
}

void decideWaiting(Ctx& c) {
  if (deadlinesPassed(c, false, true)) return;
  if (c.job.spec.jobId.empty()) {
    // Setting spec.jobId is a spec change, which the watch delivers: no need to poll (KubeRay
    // requeues every 3 s). A preRunningDeadline still needs a look when it passes.
    c.plan.requeueAfterMs.reset();
    if (auto start = parseRfc3339(c.st.startTime); start && c.job.spec.preRunningDeadlineSeconds) {
      c.plan.requeueAfterMs =
          std::max<int64_t>(
              0, *start + int64_t(*c.job.spec.preRunningDeadlineSeconds) * 1000 - c.now) +
          1000;
    }
    c.plan.why = "waiting for the user to set spec.jobId";
    return;
  }
  c.st.jobId = c.job.spec.jobId;
  c.st.jobDeploymentStatus = DeploymentStatus::Running;
}

bool statusChecksTimedOut(const Ctx& c) {
  return !c.st.jobStatusCheckFailureStartTime.empty() &&
         c.passed(c.st.jobStatusCheckFailureStartTime, c.cfg.statusCheckTimeoutMs);
}

// Returns true when the timeout passed and the RayJob failed: KubeRay's message, and for a cause
// KubeRay does not have (an unknown Ray status) that cause after it.
bool recordStatusCheckFailure(Ctx& c, const std::string& error, bool causeInMessage = false) {
  c.plan.why = "Ray status check failed: " + error;
  if (c.st.jobStatusCheckFailureStartTime.empty()) {
    c.st.jobStatusCheckFailureStartTime = toRfc3339(c.now);
    return false;
  }
  if (!statusChecksTimedOut(c)) return false;
  c.fail("JobStatusCheckTimeoutExceeded",
         "Job status checks have been failing since " +
             goDateTime(c.st.jobStatusCheckFailureStartTime) + "; exceeded timeout of " +
             std::to_string(c.cfg.statusCheckTimeoutMs / 1000) + "s" +
             (causeInMessage ? ": " + error : ""));
  return true;
}

// Applies what Ray said. Returns true when the RayJob reached a terminal deployment status.
void applyRayInfo(Ctx& c, const ray::JobInfo& info, bool submitterFinished) {
  c.st.jobStatusCheckFailureStartTime = "";
  c.st.jobStatus = info.status;
  c.st.message = info.message;
  if (info.startTimeMs) c.st.rayJobInfoStartTime = toRfc3339(int64_t(info.startTimeMs));
  if (info.endTimeMs) c.st.rayJobInfoEndTime = toRfc3339(int64_t(info.endTimeMs));
  if (c.o.cluster) c.st.rayClusterStatus = c.o.cluster->status;
  bool hasSubmitter =
      c.job.spec.submissionMode == SubmissionMode::K8sJobMode || c.job.spec.submissionMode == SubmissionMode::SidecarMode;
  if (ray::isTerminalRayStatus(info.status) && (!hasSubmitter || submitterFinished)) {
    if (info.status == "FAILED")
      c.fail("AppFailed", info.message);
    else {
      c.st.jobDeploymentStatus = DeploymentStatus::Complete;
      c.st.reason = "";
    }
    c.observe(events::RayJobTerminal{info.status, c.st.jobId});
  } else if (info.status != "FAILED") {
    c.st.reason = "";
  }
  c.plan.why = "Ray job " + c.st.jobId + " is " + info.status;
}

// The RayJob-level head Service gives users a stable address across retries (reference 2.17).
void reconcileJobHeadService(Ctx& c) {
  if (c.selectorMode() || !c.o.headService) return;
  if (!c.o.jobHeadService) {
    c.intent(Action::CreateHeadService, model::rayJobHeadServiceName(c.job.name),
             jobHeadServiceFor(c.job, c.o.headService->raw, c.st.rayClusterName));
    return;
  }
  if (c.o.jobHeadService->selectorCluster != c.st.rayClusterName) {
    c.intent(Action::UpdateHeadService, model::rayJobHeadServiceName(c.job.name),
             withClusterSelector(c.o.jobHeadService->raw, c.st.rayClusterName));
  }
}

// How the attempt's submitter (the K8sJobMode Job, or the SidecarMode container) stands.
struct SubmitterState {
  bool finished = false;
  bool failed = false;
  std::string finishedAt;
  std::string failure;  // KubeRay's SubmissionFailed message for this mode
};

// SidecarSubmitterRestart: a non-zero exit restarts the container (transient); the submitter
// failed once it restarted submitterConfig.backoffLimit times (2; KubeRay's
// checkIsRestartCountExceeded), and finished when it exited 0.
bool checkRestartingSidecar(Ctx& c, const HeadPodView& head, SubmitterState& s) {
  if (head.submitterExited && head.exitCode == 0) {
    s.finished = true;
    s.finishedAt = head.finishedAt;
    return true;
  }
  const int limit = c.job.spec.submitterBackoffLimit.value_or(2);
  if (!head.terminatedBefore || head.restartCount < limit) return true;
  s.finished = s.failed = true;
  s.finishedAt = head.finishedAt;
  s.failure = "Ray head pod submitter container " + std::string(model::kSubmitterContainer) +
              " terminated after exceeding the maximum restart count";
  return true;
}

// SidecarMode: the submitter is a container of the head Pod (reference 2.11). Returns false
// when the decision is already made (no head Pod, or more than one).
bool checkSidecar(Ctx& c, SubmitterState& s) {
  if (c.o.headPods.size() > 1) {
    c.plan.why =
        std::to_string(c.o.headPods.size()) + " head Pods found for " + c.st.rayClusterName;
    return false;
  }
  if (c.o.headPods.empty()) {
    c.fail("AppFailed", "Ray head pod not found.");
    return false;
  }
  const HeadPodView& head = c.o.headPods[0];
  if (c.cfg.gates.sidecarSubmitterRestart) return checkRestartingSidecar(c, head, s);
  if (!head.submitterExited) return true;
  s.finished = true;
  s.finishedAt = head.finishedAt;
  if (head.exitCode != 0) {
    s.failed = true;
    s.failure = "Ray head pod container " + std::string(model::kSubmitterContainer) +
                " terminated with exit code " + std::to_string(head.exitCode) + ": " +
                head.terminatedReason;
  }
  return true;
}

// Returns false when the decision is already made (the attempt failed, or no usable head Pod).
bool submitterState(Ctx& c, SubmitterState& s) {
  if (c.job.spec.submissionMode == SubmissionMode::K8sJobMode && c.o.submitter) {
    const SubmitterView& job = *c.o.submitter;
    s.failed = job.failed;
    s.finished = job.complete || job.failed;
    if (s.finished) s.finishedAt = job.finishedAt;
    if (s.failed)
      s.failure = "Job submission has failed. Reason: " + job.failedReason +
                  ". Message: " + job.failedMessage;
  }
  if (c.job.spec.submissionMode == SubmissionMode::SidecarMode) return checkSidecar(c, s);
  return true;
}

// The submitter failed and Ray cannot show the job running: the attempt failed (retryable).
// KubeRay's reasons: AppFailed when Ray last said FAILED, else SubmissionFailed.
void failSubmission(Ctx& c, const SubmitterState& sub) {
  if (c.st.jobStatus == "FAILED")
    c.fail("AppFailed", c.st.message);
  else
    c.fail("SubmissionFailed", sub.failure);
}

// W6: the submitter was deleted by someone; recreate it under the same submission id (the submit
// command is idempotent), instead of looping on NotFound.
void recreateSubmitter(Ctx& c) {
  // A clusterSelector RayJob's cluster is not its own and may be gone: with no cluster to build
  // the submitter from (its image), none is made; Ray's answer decides the job as without one.
  if (!c.o.cluster) return;
  c.observe(events::ChildMissing{"Job", c.job.name, c.st.jobId});
  c.intent(Action::CreateSubmitterJob, c.job.name, submitterFor(c));
  c.event("Warning", "SubmitterJobRecreated",
          "submitter Job " + c.job.ns + "/" + c.job.name +
              " was missing; recreated it for submission " + c.st.jobId);
}

// Ray answers with a status its Jobs API does not define: shown as it is (as KubeRay does), and
// treated as a failing status check, so the RayJob fails with JobStatusCheckTimeoutExceeded
// once the timeout passes instead of staying Running for ever (a submitter that finished decides
// earlier, below).
void onUnknownRayStatus(Ctx& c, const ray::JobInfo& info) {
  std::string what = "Ray reports job " + c.st.jobId + " as '" + info.status +
                     "', not a status of Ray's Jobs API (PENDING, RUNNING, STOPPED, SUCCEEDED, "
                     "FAILED)";
  if (c.st.jobStatusCheckFailureStartTime.empty())
    c.event("Warning", "UnknownRayJobStatus", what + "; failing after the status check timeout");
  c.st.jobStatus = info.status;
  c.st.message = info.message;
  recordStatusCheckFailure(c, what, true);
}

// Ray knows the job. Returns true when the decision is made.
bool onRayAnswer(Ctx& c, const ray::JobInfo& info, const SubmitterState& sub) {
  const SubmissionMode mode = c.job.spec.submissionMode;
  bool submitterMode = mode == SubmissionMode::K8sJobMode || mode == SubmissionMode::SidecarMode;
  if (submitterMode && !c.facts.submittedIds.count(c.st.jobId))
    c.observe(events::SubmissionSeen{c.st.jobId, info.status});
  if (ray::isKnownRayStatus(info.status))
    applyRayInfo(c, info, sub.finished);
  else
    onUnknownRayStatus(c, info);
  if (isTerminalDeploymentStatus(c.st.jobDeploymentStatus)) return true;
  if (ray::isTerminalRayStatus(info.status) && !c.st.rayJobInfoEndTime.empty() &&
      c.passed(c.st.rayJobInfoEndTime, c.cfg.transitionGracePeriodMs)) {
    const std::string message =
        "JobDeploymentStatus does not transition to Complete or Failed within the grace period "
        "after JobStatus reaches a terminal state.";
    c.fail("JobDeploymentStatusTransitionGracePeriodExceeded", message);
    if (info.status != "FAILED") c.st.jobDeploymentStatus = DeploymentStatus::Complete;
    return true;
  }
  if (sub.failed && !ray::isTerminalRayStatus(info.status)) {
    // W5: the submitter failed (a dropped log stream, an evicted Pod) but Ray runs the job, so
    // the job's own outcome decides; KubeRay would fail it as SubmissionFailed here.
    c.plan.why = "the submitter failed (" + sub.failure + ") but Ray says job " + c.st.jobId +
                 " is " + info.status + ": following Ray";
    return false;
  }
  if (sub.finished && !ray::isTerminalRayStatus(info.status) &&
      c.passed(sub.finishedAt, c.cfg.submitterFinishedTimeoutMs)) {
    c.st.jobStatus = "FAILED";
    c.fail("JobDeploymentStatusTransitionGracePeriodExceeded",
           "The RayJob submitter finished at " + goDateTime(sub.finishedAt) +
               " but the ray job did not reach terminal state within " +
               std::to_string(c.cfg.submitterFinishedTimeoutMs / 1000) + "s");
    return true;
  }
  return false;
}

// Failures only rayjournal detects (W7, W8) carry KubeRay's reason values, so that alert rules and
// tests written for KubeRay's set still see them: SubmissionFailed when the attempt's submitter
// failed too (what KubeRay reports then), else AppFailed (KubeRay's reason when Ray does not know
// a submitted job). Our own cause names the Warning Event and leads the message.
void failDetectedByJournal(Ctx& c, const SubmitterState& sub, const std::string& cause,
                           const std::string& detail) {
  std::string message = cause + ": " + detail;
  if (sub.failed) message += "; " + sub.failure;
  c.fail(sub.failed ? "SubmissionFailed" : "AppFailed", message);
  c.event("Warning", cause, "RayJob " + c.job.key() + " failed: " + detail);
}

// W8: the journal says Ray had this submission on this cluster (HTTPMode: it accepted the
// POST; the other modes: Ray answered for it), and now Ray answers 404: Ray lost the record (a
// head restart without GCS fault tolerance). The attempt fails instead of submitting again.
// A K8sJobMode submitter still running would resubmit from its next Pod, so it goes.
bool onRayRecordLost(Ctx& c, const SubmitterState& sub) {
  bool http = c.job.spec.submissionMode == SubmissionMode::HTTPMode;
  failDetectedByJournal(c, sub, "RayJobRecordLost",
                        "Ray job " + c.st.jobId +
                            (http ? " was submitted (journaled)"
                                  : " was seen on the Ray cluster (journaled)") +
                            " but the Ray cluster no longer knows it");
  if (c.job.spec.submissionMode == SubmissionMode::K8sJobMode && c.o.submitter &&
      !sub.finished && !c.o.submitter->deleting) {
    c.intent(Action::DeleteSubmitterJob, c.job.name);
    c.event("Warning", "SubmitterJobDeleted",
            "Ray lost the record of submission " + c.st.jobId +
                "; deleted submitter Job " + c.job.ns + "/" + c.job.name +
                " so that its next Pod does not submit it again");
  }
  return true;
}

// Ray answered 404 for the submission. Returns true when the decision is made.
bool onRayNotFound(Ctx& c, const SubmitterState& sub) {
  // HTTPMode: a submission that keeps failing is a failing status check, as KubeRay's
  // reconcileHTTPModeJobNotFound records it, and ends JobStatusCheckTimeoutExceeded.
  const bool submitFailing =
      c.job.spec.submissionMode == SubmissionMode::HTTPMode && !c.facts.lastSubmitError.empty();
  if (submitFailing && recordStatusCheckFailure(c, "submitting " + c.st.jobId + " failed: " +
                                                       c.facts.lastSubmitError))
    return true;
  // Otherwise the status check itself succeeded, so an earlier failure streak is over (KubeRay
  // keeps the timer running through 404s and can time out a healthy wait).
  if (!submitFailing) c.st.jobStatusCheckFailureStartTime = "";
  c.statusAfterFailure = submitFailing;
  if (c.facts.submittedIds.count(c.st.jobId)) return onRayRecordLost(c, sub);
  if (c.job.spec.submissionMode == SubmissionMode::HTTPMode) {
    c.intent(Action::SubmitRayJob, c.st.jobId, submitRequestFor(c.job, c.st));
    c.plan.why = "submitting " + c.st.jobId + " over HTTP";
  } else if (sub.finished && !sub.failed) {
    c.fail("AppFailed", "Submitter completed but Ray job not found in RayCluster.");
    return true;
  } else {
    c.plan.why = "waiting for the submitter to submit " + c.st.jobId;
  }
  return false;
}

void decideRunning(Ctx& c) {
  if (c.job.spec.suspend) {
    c.st.jobDeploymentStatus = DeploymentStatus::Suspending;
    return;
  }
  if (!c.selectorMode() && (!c.o.cluster || c.o.cluster->deleting)) {
    // W7: never recreate a cluster the attempt already ran on; the attempt failed.
    SubmitterState sub;
    submitterState(c, sub);
    failDetectedByJournal(c, sub, "RayClusterDeleted",
                          "RayCluster " + c.st.rayClusterName +
                              " was deleted while the job was running");
    return;
  }
  SubmitterState sub;
  if (!submitterState(c, sub)) return;
  reconcileJobHeadService(c);
  if (c.job.spec.submissionMode == SubmissionMode::K8sJobMode && !c.o.submitter) recreateSubmitter(c);
  const RayProbe& ray = c.o.ray;
  // W4: Ray is asked before any elapsed-time rule, so downtime never fails a finished job.
  if (ray.reachable && ray.info) {
    if (onRayAnswer(c, *ray.info, sub)) return;
  } else if (ray.reachable) {
    if (onRayNotFound(c, sub)) return;
  } else if (ray.asked) {
    // W5: a failed submitter and a Ray that cannot be asked: wait for Ray up to the status-check
    // timeout, then fail the attempt as the submitter says (retryable), not as a lost check.
    if (sub.failed && statusChecksTimedOut(c)) return failSubmission(c, sub);
    recordStatusCheckFailure(c, ray.error);
    if (isTerminalDeploymentStatus(c.st.jobDeploymentStatus)) return;
  }
  bool rayKnowsIt = ray.reachable && ray.info;
  bool rayUnreachable = ray.asked && !ray.reachable;
  // W5: only a failed submitter and a Ray that does not know the job fail the attempt at once.
  if (sub.failed && !rayKnowsIt && !rayUnreachable) return failSubmission(c, sub);
  deadlinesPassed(c, true, false);
}

// Suspending and Retrying: stop the Ray job (W13, bounded), delete children, wait until gone.
void decideTeardown(Ctx& c) {
  bool gone = true;
  const RayProbe& ray = c.o.ray;
  if (ray.reachable && ray.info && !ray::isTerminalRayStatus(ray.info->status) &&
      c.facts.stopAttempts < c.cfg.maxStopAttempts) {
    c.intent(Action::StopRayJob, c.st.jobId, stopRequestFor(c.st.dashboardURL));
    c.plan.why = "stopping Ray job " + c.st.jobId + " before teardown";
    return;
  }
  if (!c.selectorMode() && c.o.cluster) {
    gone = false;
    if (!c.o.cluster->deleting) c.intent(Action::DeleteRayCluster, c.st.rayClusterName);
  }
  if (c.job.spec.submissionMode == SubmissionMode::K8sJobMode && c.o.submitter) {
    gone = false;
    if (!c.o.submitter->deleting) c.intent(Action::DeleteSubmitterJob, c.job.name);
  }
  if (!gone) {
    c.plan.why = "waiting for the children of " + c.job.key() + " to be deleted";
    return;
  }
  syncPodGroup(c, true);  // the gang released before the status says so (KubeRay's order)
  bool retrying = c.st.jobDeploymentStatus == DeploymentStatus::Retrying;
  c.st.rayClusterStatus = model::Document();
  c.st.rayClusterName = c.st.dashboardURL = c.st.jobId = c.st.message = c.st.reason = "";
  c.st.rayJobInfoStartTime = c.st.rayJobInfoEndTime = c.st.jobStatusCheckFailureStartTime =
      c.st.jobStatus = "";
  c.st.jobDeploymentStatus = retrying ? DeploymentStatus::New : DeploymentStatus::Suspended;
  c.plan.why = retrying ? "children gone; starting the next attempt" : "children gone; suspended";
}

bool clusterGoneOrGoing(const Ctx& c) {
  return !c.o.cluster || c.o.cluster->deleting;
}

bool workersSuspended(const Ctx& c) {
  return clusterGoneOrGoing(c) || c.o.cluster->workersSuspended;
}

int impact(const std::string& policy) {
  if (policy == "DeleteSelf") return 3;
  if (policy == "DeleteCluster") return 2;
  if (policy == "DeleteWorkers") return 1;
  return 0;
}

void executePolicy(Ctx& c, const std::string& policy) {
  if (policy == "DeleteSelf") {
    c.intent(Action::DeleteRayJob, c.job.name);
  } else if (policy == "DeleteCluster" && !clusterGoneOrGoing(c)) {
    c.intent(Action::DeleteRayCluster, c.st.rayClusterName);
  } else if (policy == "DeleteWorkers" && !workersSuspended(c)) {
    c.intent(Action::SuspendWorkerGroups, c.st.rayClusterName,
             withWorkersSuspended(c.o.cluster->raw));
  }
  c.plan.why = "deletion policy " + policy + " is due";
}

// Gates a policy on endTime + ttl; returns true when it is due now, else schedules a look.
bool dueAfter(Ctx& c, int64_t ttlSeconds) {
  auto end = parseRfc3339(c.st.endTime);
  int64_t at = (end ? *end : c.now) + ttlSeconds * 1000;
  if (c.now >= at) return true;
  int64_t wait = at - c.now + 2000;
  if (!c.plan.requeueAfterMs || *c.plan.requeueAfterMs > wait) c.plan.requeueAfterMs = wait;
  return false;
}

void deletionRules(Ctx& c, const std::vector<DeletionRule>& rules) {
  std::string best;
  for (const auto& rule : rules) {
    bool matches = rule.jobStatus == c.st.jobStatus ||
                   rule.jobDeploymentStatus == c.st.jobDeploymentStatus;
    if (!matches) continue;
    const std::string& policy = rule.policy;
    if (!dueAfter(c, rule.ttlSeconds)) continue;
    bool done = policy == "DeleteNone" || (policy == "DeleteCluster" && clusterGoneOrGoing(c)) ||
                (policy == "DeleteWorkers" && workersSuspended(c));
    if (!done && impact(policy) > impact(best)) best = policy;
  }
  if (!best.empty()) executePolicy(c, best);  // only the most impactful overdue rule
}

void legacyDeletionPolicy(Ctx& c, const DeletionStrategy& strategy) {
  const std::string* policy = c.st.jobStatus == "SUCCEEDED" ? &strategy.onSuccessPolicy
                              : c.st.jobStatus == "FAILED"  ? &strategy.onFailurePolicy
                                                            : nullptr;
  if (!policy || *policy == "DeleteNone") return;
  if (dueAfter(c, c.job.spec.ttlSecondsAfterFinished)) executePolicy(c, *policy);
}

void decideFinished(Ctx& c) {
  c.plan.requeueAfterMs.reset();
  syncPodGroup(c, true);  // KubeRay's deferred cleanup, on every pass of a finished RayJob
  if (c.selectorMode()) return;  // never delete a cluster we did not create
  const DeletionStrategy& strategy = c.job.spec.deletionStrategy;
  if (strategy.set) {
    if (strategy.hasRules)
      deletionRules(c, strategy.rules);
    else
      legacyDeletionPolicy(c, strategy);
    return;
  }
  if (!c.job.spec.shutdownAfterJobFinishes) return;
  if (!dueAfter(c, c.job.spec.ttlSecondsAfterFinished)) {
    c.plan.why = "cleanup after ttlSecondsAfterFinished";
    return;
  }
  if (c.cfg.deleteRayJobAfterJobFinishes) {
    c.intent(Action::DeleteRayJob, c.job.name);
  } else if (!clusterGoneOrGoing(c)) {
    c.intent(Action::DeleteRayCluster, c.st.rayClusterName);
    c.plan.why = "job finished; deleting RayCluster " + c.st.rayClusterName +
                 " (submitter Job kept for its logs)";
  }
}

// W9: the stop is retried until Ray confirms it, for maxStopAttempts and for the confirmation
// window after the deletion, so that a dashboard that stalls for a few polls (a busy head, a
// restarting dashboard) still gets the stop; then the finalizer goes regardless. A cluster that
// is gone or going (its RayJob's own, or a whole namespace deleted) takes its Ray jobs with it:
// nothing is left to wait for.
bool stopWindowOpen(const Ctx& c) {
  if (c.facts.stopAttempts < c.cfg.maxStopAttempts) return true;
  if (!c.o.cluster || c.o.cluster->deleting) return false;
  auto deletedAt = parseRfc3339(c.job.deletionTimestamp);
  return deletedAt && c.now < *deletedAt + c.cfg.stopConfirmTimeoutMs;
}

void decideDeletion(Ctx& c) {
  c.plan.requeueAfterMs = c.cfg.requeueMs;
  if (!c.job.hasFinalizer()) return;
  const RayProbe& ray = c.o.ray;
  bool running = ray.reachable && ray.info && !ray::isTerminalRayStatus(ray.info->status);
  bool unknown = ray.asked && !ray.reachable;
  if ((running || unknown) && stopWindowOpen(c)) {
    c.intent(Action::StopRayJob, c.st.jobId, stopRequestFor(c.st.dashboardURL));
    c.plan.why = "RayJob deleted: stopping Ray job " + c.st.jobId + " (attempt " +
                 std::to_string(c.facts.stopAttempts + 1) + ")";
    return;
  }
  if (running || unknown) {
    // W9: never hold the finalizer forever; say that the stop was not confirmed.
    std::string why = !c.o.cluster || c.o.cluster->deleting
                          ? " and its RayCluster is gone or being deleted"
                          : " over " + std::to_string(c.cfg.stopConfirmTimeoutMs / 1000) +
                                " s since the deletion";
    c.event("Warning", "StopJobNotConfirmed",
            "Ray job " + c.st.jobId + " was not confirmed stopped after " +
                std::to_string(c.facts.stopAttempts) + " attempts" + why +
                "; removing the finalizer anyway");
  }
  c.intent(Action::RemoveFinalizer, c.job.name);
  c.plan.why = "RayJob deleted: removing finalizer";
}

void accountBackoff(Ctx& c) {
  const DeploymentStatus was = c.job.status.jobDeploymentStatus;
  if (c.st.jobDeploymentStatus == DeploymentStatus::Failed && was != DeploymentStatus::Failed) {
    c.st.failed += 1;
    const auto& limit = c.job.spec.backoffLimit;
    if (limit && c.st.failed < *limit + 1 && c.st.reason != "DeadlineExceeded" &&
        c.st.reason != "JobStatusCheckTimeoutExceeded") {
      c.st.jobDeploymentStatus = DeploymentStatus::Retrying;
      c.plan.why +=
          "; attempt " + std::to_string(c.st.failed) + " failed (" + c.st.reason + "), retrying";
    }
  }
  if (c.st.jobDeploymentStatus == DeploymentStatus::Complete && was != DeploymentStatus::Complete &&
      c.st.jobStatus == "SUCCEEDED")
    c.st.succeeded += 1;
  if (isTerminalDeploymentStatus(c.st.jobDeploymentStatus) && !isTerminalDeploymentStatus(was)) {
    c.st.endTime = toRfc3339(c.now);  // W11: the time of the terminal observation, journaled
  }
}

// One state's step (reference 2.4); New, ValidationFailed (W16: a fixed spec restarts) and
// Suspended with suspend lifted start a new attempt.
void decideState(Ctx& c) {
  switch (c.st.jobDeploymentStatus) {
    case DeploymentStatus::New:
    case DeploymentStatus::ValidationFailed:
      return decideNew(c);
    case DeploymentStatus::Initializing:
      return decideInitializing(c);
    case DeploymentStatus::Waiting:
      return decideWaiting(c);
    case DeploymentStatus::Running:
      return decideRunning(c);
    case DeploymentStatus::Suspending:
    case DeploymentStatus::Retrying:
      return decideTeardown(c);
    case DeploymentStatus::Suspended:
      c.plan.requeueAfterMs.reset();
      if (!c.job.spec.suspend) {
        c.st.jobStatus = "";
        c.st.jobDeploymentStatus = DeploymentStatus::New;
        c.plan.requeueAfterMs = 0;
      }
      return;
    case DeploymentStatus::Complete:
    case DeploymentStatus::Failed:
      return decideFinished(c);
    case DeploymentStatus::Unknown:
      c.plan.why = "unknown jobDeploymentStatus \"" + c.st.unknownDeploymentStatus + "\"; waiting";
      return;
  }
}

}  // namespace

std::optional<Gang> rayJobPodGroupTarget(const Observed& o, const DecideConfig& cfg) {
  const RayJob& job = o.job;
  if (cfg.batchScheduler != "volcano" || job.deleting || !job.spec.clusterSelector.empty() ||
      job.spec.rayClusterSpec.isNull())
    return std::nullopt;
  switch (job.status.jobDeploymentStatus) {
    case DeploymentStatus::New:
    case DeploymentStatus::Initializing:
      if (job.spec.suspend) return std::nullopt;
      return rayJobGangOf(rawOf(job));
    case DeploymentStatus::Suspending:
    case DeploymentStatus::Retrying:
    case DeploymentStatus::Complete:
    case DeploymentStatus::Failed:
      if (job.status.rayClusterName.empty()) return std::nullopt;  // CleanupOnCompletion
      return leftoverGangOf(o.cluster ? &o.cluster->raw : nullptr);
    default:
      return std::nullopt;
  }
}

Plan decide(const Observed& o, const JobFacts& facts, int64_t nowMs, const DecideConfig& cfg) {
  Ctx c{o, facts, nowMs, cfg, o.job, o.job.status, {}, false, std::nullopt};
  c.plan.requeueAfterMs = cfg.requeueMs;
  if (c.job.spec.managedBy && *c.job.spec.managedBy != "ray.io/kuberay-operator") {
    c.plan.requeueAfterMs.reset();
    c.plan.why = "managed by " + *c.job.spec.managedBy + "; skipping";
    return std::move(c.plan);
  }
  if (c.job.deleting) {
    decideDeletion(c);
    return std::move(c.plan);
  }
  if (auto error = validateRayJob(c.job, c.cfg.gates)) {
    c.st.jobDeploymentStatus = DeploymentStatus::ValidationFailed;
    c.st.reason = "ValidationFailed";
    c.st.message = error->message;
    c.plan.requeueAfterMs.reset();
    if (c.st != c.job.status)
      c.event("Warning", error->reason, c.job.key() + ": " + error->message, "Validate");
    c.plan.why = "validation failed: " + error->message;
  } else {
    decideState(c);
    accountBackoff(c);
  }
  c.st.observedGeneration = c.job.generation;
  // As KubeRay's inconsistentRayJobStatus: a new message alone is not worth a write (Ray's
  // message text changes while RUNNING); it rides along with the next real change.
  RayJobStatus ignoringMessage = c.st;
  ignoringMessage.message = c.job.status.message;
  if (ignoringMessage != c.job.status) {
    Intent write{Action::WriteStatus, c.job.name, statusObject(c.st)};
    write.runsAfterFailure = c.statusAfterFailure;
    auto at = c.plan.intents.begin() +
              std::min(c.statusAt.value_or(c.plan.intents.size()), c.plan.intents.size());
    c.plan.intents.insert(at, std::move(write));
  }
  return std::move(c.plan);
}

}  // namespace rayjournal::controller
