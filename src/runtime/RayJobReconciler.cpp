#include "runtime/RayJobReconciler.h"

#include <spdlog/spdlog.h>

#include "controller/rayjob/Children.h"
#include "controller/rayjob/Decide.h"
#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterViews.h"
#include "events/EventCodec.h"
#include "model/Names.h"
#include "adapters/ClusterToken.h"
#include "model/TokenAuth.h"

namespace rayjournal::runtime {

using namespace controller;  // the decision types this reconciler feeds

bool isAtRest(const RayJob& job) {
  using enum DeploymentStatus;
  const DeploymentStatus s = job.status.jobDeploymentStatus;
  if (job.deleting) return false;
  if (s == Complete || s == Failed || s == ValidationFailed || s == Suspended) return true;
  return s == Waiting && job.spec.jobId.empty();
}

Observed RayJobReconciler::observe(RayJob parsed) {
  Observed o{std::move(parsed), {}, {}, {}, {}, {}, {}, false, {}};
  const RayJob& job = o.job;
  const RayJobStatus& st = job.status;
  if (!st.rayClusterName.empty()) {
    if (auto cluster = kube_.getSnapshot("RayCluster", job.ns, st.rayClusterName)) {
      const std::string service =
          headServiceNameOf(st.rayClusterName, objectAt(*cluster, "spec"));
      if (job.spec.submissionMode == SubmissionMode::SidecarMode) observeHeadPods(o, *cluster);
      if (!st.dashboardURL.empty()) useClusterToken(*cluster, st.dashboardURL);
      o.cluster = clusterView(std::move(cluster), job.uid);
      if (auto svc = kube_.getSnapshot("Service", job.ns, service))
        o.headService = serviceView(std::move(svc));
    }
  }
  if (job.spec.submissionMode == SubmissionMode::K8sJobMode && !st.jobId.empty()) {
    // W3: a same-named Job is this attempt's submitter only when this RayJob controls it; a
    // stale one (a deleted RayJob's, left by --cascade=orphan) is not read, so the create meets
    // it and is refused with a Warning naming it.
    auto submitter = kube_.getSnapshot("Job", job.ns, job.name);
    if (submitter && controller::ownedBy(*submitter, job.uid))
      o.submitter = submitterView(*submitter);
  }
  if (st.jobDeploymentStatus == DeploymentStatus::Running && job.spec.clusterSelector.empty()) {
    auto svc = kube_.getSnapshot("Service", job.ns, model::rayJobHeadServiceName(job.name));
    if (svc) o.jobHeadService = serviceView(std::move(svc));
  }
  const DeploymentStatus s = st.jobDeploymentStatus;
  bool wantsRay = s == DeploymentStatus::Running || s == DeploymentStatus::Suspending ||
                  s == DeploymentStatus::Retrying || job.deleting;
  if (wantsRay && !st.dashboardURL.empty() && !st.jobId.empty() &&
      !ray::isTerminalRayStatus(job.deleting ? st.jobStatus : ""))
    askRay(job, o.ray);
  else if (s != DeploymentStatus::Running)
    forgetAnswer(job.key());
  observePodGroup(o);
  return o;
}

// Volcano: the RayJob's PodGroup, read while its state wants a gang the PodGroup was not last
// seen with (PodGroups are not watched; a finished RayJob's is read again only when what is left
// of its cluster changes).
void RayJobReconciler::observePodGroup(Observed& o) {
  std::optional<Gang> gang = rayJobPodGroupTarget(o, config_);
  if (!gang) return;
  const std::string fingerprint =
      std::to_string(gang->minMember) + " " + resourceList(gang->minResources).dump();
  {
    std::lock_guard lock(podGroupsMu_);
    auto seen = podGroupsSeen_.find(o.job.uid);
    if (seen != podGroupsSeen_.end() && seen->second == fingerprint) return;
  }
  o.podGroupRead = true;
  kube::Snapshot podGroup = kube_.getSnapshot("PodGroup", o.job.ns, volcanoPodGroupName(*o.job.raw));
  if (!podGroup) return;
  o.podGroup = model::Document(podGroup);
  if (!podGroupWithGang(*podGroup, *gang).is_null()) return;
  std::lock_guard lock(podGroupsMu_);
  if (podGroupsSeen_.size() >= kMaxPodGroupsSeen) podGroupsSeen_.clear();  // bounded; a re-read is cheap
  podGroupsSeen_[o.job.uid] = fingerprint;
}

void RayJobReconciler::askRay(const RayJob& job, RayProbe& probe) {
  probe.asked = true;
  if (reuseAnswer(job, probe)) return;
  try {
    probe.info = ray_.getJob(job.status.dashboardURL, job.status.jobId);
    probe.reachable = true;
  } catch (const ray::RayError& e) {
    probe.error = e.what();
  }
  keepAnswer(job, probe);
}

// Only a Running RayJob's answer that named its job: a deleted or suspended RayJob asks afresh
// (its stop is confirmed by Ray), and so does one whose job Ray did not know (it submits).
bool RayJobReconciler::reuseAnswer(const RayJob& job, RayProbe& probe) {
  if (config_.rayAnswerReuseMs <= 0 || job.deleting ||
      job.status.jobDeploymentStatus != DeploymentStatus::Running)
    return false;
  std::lock_guard lock(answersMu_);
  auto it = answers_.find(job.key());
  if (it == answers_.end()) return false;
  const RecentAnswer& recent = it->second;
  const int64_t age = clock_.nowMs() - recent.atMs;
  if (recent.jobId != job.status.jobId || recent.dashboard != job.status.dashboardURL ||
      age < 0 || age >= config_.rayAnswerReuseMs)
    return false;
  probe.reachable = true;
  probe.info = recent.info;
  return true;
}

void RayJobReconciler::keepAnswer(const RayJob& job, const RayProbe& probe) {
  const bool keep = config_.rayAnswerReuseMs > 0 && !job.deleting &&
                    job.status.jobDeploymentStatus == DeploymentStatus::Running &&
                    probe.reachable && probe.info;
  if (!keep) return forgetAnswer(job.key());
  std::lock_guard lock(answersMu_);
  if (answers_.size() >= 100000) answers_.clear();  // bounded; a reconcile then asks again
  answers_[job.key()] = {job.status.jobId, job.status.dashboardURL, *probe.info, clock_.nowMs()};
}

void RayJobReconciler::forgetAnswer(const std::string& key) {
  std::lock_guard lock(answersMu_);
  answers_.erase(key);
}

void RayJobReconciler::useClusterToken(const json& cluster, const std::string& dashboard) {
  const json& meta = objectAt(cluster, "metadata");
  // Called on every reconcile with a cluster; most clusters use no token and cost no lock.
  if (model::tokenAuthSecretName(objectAt(cluster, "spec"), stringAt(meta, "name")).empty()) return;
  const std::string& uid = stringAt(meta, "uid");
  {
    std::lock_guard lock(tokensMu_);
    if (tokenClusters_.count(uid)) return;
  }
  auto use = adapters::useClusterToken(kube_, ray_, cluster, dashboard);
  if (use.result == adapters::ClusterTokenUse::Result::Missing)
    spdlog::warn("RayCluster {}/{} uses token auth but Secret {} holds no {}: Ray will refuse "
                 "the operator's calls",
                 stringAt(meta, "namespace"), stringAt(meta, "name"), use.secretName,
                 model::kAuthTokenKey);
  if (use.result != adapters::ClusterTokenUse::Result::Used) return;
  std::lock_guard lock(tokensMu_);
  if (tokenClusters_.size() >= 100000) tokenClusters_.clear();  // bounded; re-read on demand
  tokenClusters_.insert(uid);
}

// The cluster's head Pods (SidecarMode's submitter runs in them), through the cache's owner
// index: reading them by label would visit every Pod of the namespace.
void RayJobReconciler::observeHeadPods(Observed& o, const nlohmann::json& cluster) {
  const json& meta = objectAt(cluster, "metadata");
  kube_.forEachOwned("Pod", o.job.ns, stringAt(meta, "uid"), [&](const json& pod) {
    const json& labels = objectAt(objectAt(pod, "metadata"), "labels");
    if (stringAt(labels, "ray.io/node-type") == "head") o.headPods.push_back(headPodView(pod));
  });
}

void RayJobReconciler::checkDrift(const RayJob& job) {
  auto state = projection_.job(job.key());
  if (!state || state->uid != job.uid || !state->inDoubt.empty() ||
      state->lastDeploymentStatus.empty())
    return;
  if (deploymentStatusFromName(state->lastDeploymentStatus) == job.status.jobDeploymentStatus)
    return;
  const std::string& has = deploymentStatusName(job.status.jobDeploymentStatus);
  wal::Record r;
  r.type = wal::RecordType::Observation;
  r.object = {"RayJob", job.ns, job.name, job.uid};
  r.attempt = uint32_t(job.status.failed + 1);
  r.body = events::encode(events::Drift{state->lastDeploymentStatus,
                                        has,
                                        "Kubernetes is authoritative"});
  journal_.append(r, wal::Durability::Lazy);
  spdlog::warn(
      "RayJob {}: status drift: journal last wrote {} but Kubernetes has {}; deciding from "
      "Kubernetes",
      job.key(), state->lastDeploymentStatus, has);
}

std::variant<Result, PlannedReconciler::Decision> RayJobReconciler::decideKey(
    const std::string& key) {
  std::string ns = key.substr(0, key.find('/'));
  std::string name = key.substr(key.find('/') + 1);
  auto doc = kube_.getSnapshot("RayJob", ns, name);
  if (!doc) return Result{false, std::nullopt, false};
  RayJob parsed;
  try {
    parsed = parseRayJob(std::move(doc));
  } catch (const std::exception& e) {
    spdlog::error("RayJob {}: cannot be read: {}", key, e.what());
    return Result{};
  }
  checkDrift(parsed);
  Observed observed = observe(std::move(parsed));
  const RayJob& job = observed.job;
  Plan plan = decide(observed, projection_.facts(key, job.status.jobId), clock_.nowMs(), config_);
  if (!plan.why.empty() && (!plan.intents.empty()))
    spdlog::info("RayJob {} [{}]: {}", key, deploymentStatusName(job.status.jobDeploymentStatus),
                 plan.why);
  for (const auto& e : plan.events) executor_.postEvent(job, e);
  // A plan that writes nothing leaves a terminal, suspended or waiting RayJob at rest.
  bool atRest = plan.intents.empty() && isAtRest(job);
  return Decision{subjectOf(job), std::move(plan), atRest};
}

}  // namespace rayjournal::runtime
