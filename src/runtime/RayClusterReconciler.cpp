#include "runtime/RayClusterReconciler.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterBuild.h"
#include "controller/raycluster/GcsFaultTolerance.h"
#include "controller/raycluster/RayClusterDecide.h"
#include "controller/Volcano.h"
#include "model/Names.h"
#include "runtime/Handlers.h"

namespace rayjournal::runtime {
namespace {

using controller::Action;
using controller::Intent;

// The decision's creates, deletions and status as intents, in the order they run.
controller::Plan intentsOf(controller::ClusterPlan&& decided, const std::string& cluster) {
  controller::Plan plan;
  if (decided.finalizer == controller::FinalizerChange::Add)
    plan.intents.push_back({Action::AddFinalizer, cluster, nullptr});
  for (auto& [kind, object] : decided.creates) {
    std::string name = controller::stringAt(controller::objectAt(*object, "metadata"), "name");
    Action action = kind == "Pod"              ? Action::CreatePod
                    : kind == "Secret"         ? Action::CreateSecret
                    : kind == "ServiceAccount" ? Action::CreateServiceAccount
                    : kind == "Role"           ? Action::CreateRole
                    : kind == "RoleBinding"    ? Action::CreateRoleBinding
                    : kind == "Job"            ? Action::CreateRedisCleanupJob
                    : kind == "PersistentVolumeClaim" ? Action::CreatePersistentVolumeClaim
                    : kind == "PodGroup"       ? Action::CreatePodGroup
                                               : Action::CreateService;
    plan.intents.push_back({action, std::move(name), std::move(object)});
  }
  if (decided.podGroupUpdate) {  // before the Pods it counts
    std::string name = controller::stringAt(controller::objectAt(*decided.podGroupUpdate, "metadata"), "name");
    plan.intents.insert(plan.intents.begin(), {Action::UpdatePodGroup, std::move(name), std::move(decided.podGroupUpdate)});
  }
  for (auto& warning : decided.warnings)
    plan.events.push_back({"Warning", std::move(warning.reason), std::move(warning.message),
                           std::move(warning.action)});
  for (auto& pod : decided.deletePods)
    plan.intents.push_back({Action::DeletePod, std::move(pod), nullptr});
  if (decided.status)
    plan.intents.push_back({Action::WriteStatus, cluster, std::move(decided.status), true});
  if (decided.finalizer == controller::FinalizerChange::Remove)
    plan.intents.push_back({Action::RemoveFinalizer, cluster, nullptr});
  plan.why = std::move(decided.why);
  if (decided.more) plan.requeueAfterMs = 0;  // the next batch of Pods
  if (decided.retryAfterMs >= 0) plan.requeueAfterMs = decided.retryAfterMs;
  return plan;
}

}  // namespace

// The cluster's Redis cleanup Job as the cache holds it (Jobs made by KubeRay's operator are
// watched); one of that name the cluster does not own counts as none (its create will say so).
// headGone: the decision would make the Job now, so whether the namespace is going matters.
controller::RedisCleanupJob RayClusterReconciler::cleanupJobOf(const std::string& ns,
                                                               const std::string& cluster,
                                                               const std::string& uid, bool headGone) {
  kube::Snapshot job = kube_.getSnapshot("Job", ns, controller::redisCleanupJobName(cluster));
  if (!job) {
    // Only when a Job would be made: is the namespace going (no create would be allowed)?
    controller::RedisCleanupJob none;
    if (!headGone) return none;
    try {
      kube::Snapshot space = kube_.getSnapshot("Namespace", "", ns);
      none.namespaceTerminating =
          space && (controller::stringAt(controller::objectAt(*space, "status"), "phase") == "Terminating" ||
                    controller::objectAt(*space, "metadata").contains("deletionTimestamp"));
    } catch (const std::exception& e) {  // no RBAC for it (an older chart): KubeRay's deadline still applies
      spdlog::debug("RayCluster {}/{}: namespace unreadable: {}", ns, cluster, e.what());
    }
    return none;
  }
  bool ours = false;
  for (const auto& ref : controller::arrayAt(controller::objectAt(*job, "metadata"), "ownerReferences"))
    ours = ours || controller::stringAt(ref, "uid") == uid;
  if (!ours) return {};
  controller::RedisCleanupJob seen{true};
  for (const auto& c : controller::arrayAt(controller::objectAt(*job, "status"), "conditions")) {
    if (controller::stringAt(c, "status") != "True") continue;
    seen.complete = seen.complete || controller::stringAt(c, "type") == "Complete";
    seen.failed = seen.failed || controller::stringAt(c, "type") == "Failed";
  }
  return seen;
}

controller::AutoscalerRbac RayClusterReconciler::autoscalerRbacOf(const controller::RayClusterView& cluster,
                                                                  const std::string& uid) {
  {
    std::lock_guard lock(rbacMu_);
    if (rbacSeen_.count(uid)) return {};
  }
  // Not cached (KubeRay's reads are, through controller-runtime): three GETs until all three
  // were seen once for this cluster, then none. One the user deletes later comes back after the
  // next restart.
  const std::string& role = cluster.autoscalerRole;
  controller::AutoscalerRbac rbac{
      kube_.getSnapshot("ServiceAccount", cluster.ns, cluster.autoscalerServiceAccount) != nullptr,
      kube_.getSnapshot("Role", cluster.ns, role) != nullptr,
      kube_.getSnapshot("RoleBinding", cluster.ns, role) != nullptr};
  if (rbac.complete()) {
    std::lock_guard lock(rbacMu_);
    if (rbacSeen_.size() >= kMaxRbacSeen) rbacSeen_.clear();  // bounded; a re-read is cheap
    rbacSeen_.insert(uid);
  }
  return rbac;
}

controller::GcsStorageClaim RayClusterReconciler::gcsStorageClaimOf(
    const controller::RayClusterView& cluster, const std::string& uid) {
  {
    std::lock_guard lock(claimMu_);
    auto seen = claimSeen_.find(uid);
    if (seen != claimSeen_.end() && seen->second.first == cluster.generation)
      return {true, seen->second.second};
  }
  kube::Snapshot claim = kube_.getSnapshot("PersistentVolumeClaim", cluster.ns, cluster.gcsStorageClaim);
  if (!claim) return {false, ""};
  std::string drift;
  if (!cluster.gcsStorageClaimUsers)
    drift = controller::gcsStorageClaimDrift(controller::gcsStorageClaimFor(cluster.raw.get()), *claim);
  std::lock_guard lock(claimMu_);
  if (claimSeen_.size() >= kMaxClaimSeen) claimSeen_.clear();  // bounded; a re-read is cheap
  claimSeen_[uid] = {cluster.generation, drift};
  return {true, std::move(drift)};
}

// A standalone cluster's PodGroup, read until it is seen with the gang of the cluster's
// generation (PodGroups are not watched; KubeRay reads its cache every pass).
void RayClusterReconciler::podGroupOf(controller::ClusterObserved& observed, const std::string& uid) {
  const controller::RayClusterView& cluster = observed.cluster;
  const nlohmann::json& raw = cluster.raw.get();
  if (controller::stringAt(controller::objectAt(controller::objectAt(raw, "metadata"), "labels"),
                           "ray.io/originated-from-crd") == "RayJob")
    return;  // in its RayJob's PodGroup
  {
    std::lock_guard lock(podGroupMu_);
    auto seen = podGroupSeen_.find(uid);
    if (seen != podGroupSeen_.end() && seen->second == cluster.generation) return;
  }
  observed.podGroupRead = true;
  kube::Snapshot podGroup = kube_.getSnapshot("PodGroup", cluster.ns, controller::volcanoPodGroupName(raw));
  if (!podGroup) return;
  observed.podGroup = model::Document(podGroup);
  if (!controller::podGroupWithGang(*podGroup, controller::clusterGang(controller::objectAt(raw, "spec"))).is_null())
    return;
  std::lock_guard lock(podGroupMu_);
  if (podGroupSeen_.size() >= kMaxPodGroupSeen) podGroupSeen_.clear();  // bounded; a re-read is cheap
  podGroupSeen_[uid] = cluster.generation;
}

std::optional<events::SpecChanged> RayClusterReconciler::specChangeToJournal(
    const controller::RayClusterView& cluster, const std::string& uid) {
  if (!controller::specChangedSinceStatus(cluster)) return std::nullopt;
  {
    std::lock_guard lock(specMu_);
    auto [it, fresh] = specSeen_.try_emplace(uid, cluster.generation);
    if (!fresh && it->second >= cluster.generation) return std::nullopt;  // journaled already
    if (specSeen_.size() > kMaxSpecSeen) specSeen_.clear();  // bounded; at worst one more record
    specSeen_[uid] = cluster.generation;
  }
  std::string changedBy;
  try {
    changedBy = kube_.specManager("RayCluster", cluster.ns, cluster.name);
  } catch (const std::exception& e) {  // who changed it is worth a record, not a failed pass
    spdlog::debug("RayCluster {}/{}: who changed the spec is unknown: {}", cluster.ns, cluster.name,
                  e.what());
  }
  return controller::specChangedOf(cluster, std::move(changedBy));
}

std::string shardKeyOfCluster(const nlohmann::json& cluster) {
  std::string owner = keyOfControllerOwner(cluster, "RayJob");
  return owner.empty() ? keyOfObject(cluster) : owner;
}

controller::Subject RayClusterReconciler::subjectOf(const kube::Snapshot& cluster) const {
  const auto& meta = (*cluster)["metadata"];
  controller::Subject s;
  s.kind = "RayCluster";
  s.ns = meta.value("namespace", "default");
  s.name = meta.value("name", "");
  s.uid = meta.value("uid", "");
  s.parent = keyOfControllerOwner(*cluster, "RayJob");
  s.shardKey = s.parent.empty() ? s.key() : s.parent;
  if (!s.parent.empty()) s.attempt = projection_.attemptOfCluster(s.parent, s.name);
  s.raw = cluster;
  return s;
}

std::variant<Result, PlannedReconciler::Decision> RayClusterReconciler::decideKey(
    const std::string& key) {
  const std::string ns = key.substr(0, key.find('/'));
  const std::string name = key.substr(key.find('/') + 1);
  kube::Snapshot cluster = kube_.getSnapshot("RayCluster", ns, name);
  if (!cluster) return Result{};
  controller::Subject subject = subjectOf(cluster);
  const nlohmann::json& spec = controller::objectAt(*cluster, "spec");
  kube::Snapshot headService =
      kube_.getSnapshot("Service", ns, controller::headServiceNameOf(name, spec));
  std::vector<controller::PodView> pods;
  kube_.forEachOwned("Pod", ns, subject.uid,
                     [&](const nlohmann::json& pod) { pods.push_back(controller::podView(pod)); });
  controller::ClusterContext context = context_;
  context.nowMs = clock_.nowMs();
  controller::ClusterObserved observed =
      controller::clusterObserved(cluster, std::move(pods), headService, context);
  if (!observed.cluster.authSecret.empty())
    observed.authSecretExists = kube_.getSnapshot("Secret", ns, observed.cluster.authSecret) != nullptr;
  if (observed.cluster.autoscaling) observed.autoscalerRbac = autoscalerRbacOf(observed.cluster, subject.uid);
  if (observed.cluster.gcsEmbedded && !observed.cluster.deleting && observed.cluster.invalid.empty())
    observed.gcsStorageClaim = gcsStorageClaimOf(observed.cluster, subject.uid);
  if (observed.cluster.injection.volcano && !observed.cluster.deleting && observed.cluster.invalid.empty())
    podGroupOf(observed, subject.uid);
  if (observed.cluster.deleting && observed.cluster.redisCleanupFinalizer)
    observed.redisCleanupJob = cleanupJobOf(
        ns, name, subject.uid,
        std::none_of(observed.pods.begin(), observed.pods.end(),
                     [&](const controller::PodView& p) { return p.name == model::headPodName(name); }));
  auto [reason, message] = projection_.replicaFailure(key, subject.uid);
  observed.replicaFailure = {std::move(reason), std::move(message)};
  for (auto& [group, next] : projection_.nextWorkerIndex(key, subject.uid))
    observed.nextWorkerIndex.emplace(group, next);
  controller::Plan plan = intentsOf(controller::decideRayCluster(observed), name);
  if (auto changed = specChangeToJournal(observed.cluster, subject.uid)) {
    spdlog::info("RayCluster {}: spec changed (generation {}) by {}: {}", key, changed->generation,
                 changed->changedBy.empty() ? "an unknown writer" : changed->changedBy,
                 changed->workers);
    plan.observations.push_back(std::move(*changed));
  }
  bool changesPods = !plan.intents.empty() && plan.intents.front().action != Action::WriteStatus;
  if (changesPods) spdlog::info("RayCluster {}: {}", key, plan.why);
  for (const auto& e : plan.events) {
    spdlog::warn("RayCluster {}: {}", key, e.message);
    executor_.postEvent(subject, e);
  }
  return Decision{std::move(subject), std::move(plan), true};
}

}  // namespace rayjournal::runtime
