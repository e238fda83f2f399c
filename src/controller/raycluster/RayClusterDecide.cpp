#include "controller/raycluster/RayClusterDecide.h"

#include <algorithm>
#include <map>
#include <vector>

#include "controller/raycluster/RayClusterBuild.h"
#include "controller/raycluster/RedisCleanup.h"
#include "controller/Volcano.h"
#include "model/Names.h"

namespace rayjournal::controller {
namespace {

// Keys point into the observation's PodViews, which outlive the decision.
using PodsByName = std::map<std::string_view, const PodView*>;

struct GroupTally {
  int64_t desired = 0;
  int64_t ready = 0;
  int64_t available = 0;
};

struct GroupPod {
  uint64_t index;
  std::string_view name;
  const PodView* pod;
};

// This group's Pods (by the name rule), lowest index first; the autoscaler's workersToDelete
// are deleted on the way and left out. taken: every index whose name is in use or listed.
std::vector<GroupPod> keptGroupPods(const RayClusterView& cluster, const WorkerGroupView& group,
                                    const PodsByName& pods, ClusterPlan& plan,
                                    std::vector<uint64_t>& taken) {
  const std::string prefix = model::workerPodPrefix(cluster.name, group.name);
  std::vector<GroupPod> kept;
  for (const auto& [podName, pod] : pods) {
    auto index = model::workerIndexAfterPrefix(podName, prefix);
    if (!index) continue;  // the head, another group's, or a foreign Pod: not this group's
    taken.push_back(*index);
    if (group.workersToDelete.count(podName)) {
      if (!pod->deleting) plan.deletePods.emplace_back(podName);
      continue;
    }
    kept.push_back({*index, podName, pod});
  }
  for (const auto& listed : group.workersToDelete)
    if (auto index = model::workerIndexAfterPrefix(listed, prefix)) taken.push_back(*index);
  std::sort(kept.begin(), kept.end(),
            [](const GroupPod& a, const GroupPod& b) { return a.index < b.index; });
  std::sort(taken.begin(), taken.end());
  return kept;
}

// The first index a new worker of the group may take. A single-host group's workers get names
// no earlier worker of this cluster had (from the journal's count; KubeRay's are generated), so
// Ray's autoscaler, which tells nodes apart by Pod name, never takes a replacement for the dead
// node it replaces. A multi-host group fills its lowest free indices: index / numOfHosts is the
// replica a Pod belongs to.
uint64_t firstNewIndex(const ClusterObserved& o, const WorkerGroupView& group) {
  if (group.hosts > 1) return 0;
  auto next = o.nextWorkerIndex.find(group.name);
  return next == o.nextWorkerIndex.end() ? 0 : next->second;
}

// One worker group: deletes the workersToDelete, the surplus (highest index first) and the
// unhealthy, and plans the missing Pods at the free indices from firstNewIndex (within the batch).
GroupTally planGroup(const ClusterObserved& o, const WorkerGroupView& group,
                     const PodsByName& pods, ClusterPlan& plan) {
  const RayClusterView& cluster = o.cluster;
  GroupTally tally{group.desired, 0, 0};
  std::vector<uint64_t> taken;
  std::vector<GroupPod> kept = keptGroupPods(cluster, group, pods, plan, taken);
  // A Pod being deleted still holds its name, so it counts until it is gone. Under autoscaling
  // the surplus stays (the autoscaler names what goes in workersToDelete, and a Pod it did not
  // name may be running work) unless ENABLE_RANDOM_POD_DELETE says otherwise, as in KubeRay.
  const bool trimSurplus = !cluster.autoscaling || cluster.injection.randomPodDelete;
  while (trimSurplus && int64_t(kept.size()) > tally.desired) {
    if (!kept.back().pod->deleting) plan.deletePods.emplace_back(kept.back().name);
    kept.pop_back();
  }
  for (const auto& k : kept) {
    if (k.pod->unhealthy && !k.pod->deleting) plan.deletePods.emplace_back(k.name);
    if (k.pod->ready) ++tally.ready;
    if (k.pod->running) ++tally.available;
  }
  int64_t present = int64_t(kept.size());
  // Skipped: names in use, still being deleted, or on the autoscaler's list (a new Pod of that
  // name would be deleted by the next reconcile until the autoscaler clears the list).
  auto next = taken.begin();
  for (uint64_t i = firstNewIndex(o, group); present < tally.desired; ++i) {
    while (next != taken.end() && *next < i) ++next;
    if (next != taken.end() && *next == i) continue;
    if (plan.creates.size() >= kMaxPodCreatesPerReconcile) {
      plan.more = true;
      break;
    }
    std::string podName = model::workerPodName(cluster.name, group.name, i);
    plan.creates.push_back({"Pod", workerPodFor(cluster, group, podName, int64_t(i))});
    ++present;
  }
  return tally;
}

// The Ray autoscaler's RBAC, created before any Pod, as KubeRay reconciles it. A ServiceAccount the
// user named in the head template must exist: without it nothing else is done, and a Warning says
// so (the head Pod could not run as it). Returns false then.
bool planAutoscalerRbac(const ClusterObserved& o, ClusterPlan& plan) {
  const RayClusterView& cluster = o.cluster;
  const AutoscalerRbac& rbac = o.autoscalerRbac;
  if (!rbac.serviceAccount && cluster.userServiceAccount) {
    std::string actionable =
        "If users specify ServiceAccountName for the head Pod, they need to create a "
        "ServiceAccount themselves. However, ServiceAccount " + cluster.autoscalerServiceAccount +
        " is not found. Please create one. See the PR description of "
        "https://github.com/ray-project/kuberay/pull/1128 for more details.";
    plan.warnings.push_back({"AutoscalerServiceAccountNotFound",
                             "Failed to reconcile RayCluster " + cluster.ns + "/" + cluster.name + ". " + actionable});
    plan.why = "waiting for ServiceAccount " + cluster.autoscalerServiceAccount +
               " that the head template names (the Ray autoscaler runs as it)";
    plan.retryAfterMs = kMissingServiceAccountRetryMs;
    return false;
  }
  if (!rbac.serviceAccount) plan.creates.push_back({"ServiceAccount", autoscalerServiceAccountFor(cluster)});
  if (!rbac.role) plan.creates.push_back({"Role", autoscalerRoleFor(cluster)});
  if (!rbac.roleBinding) plan.creates.push_back({"RoleBinding", autoscalerRoleBindingFor(cluster)});
  return true;
}

// KubeRay's warning for autoscaler v1 (asked for by name) with worker groups whose Pods restart
// in place: the autoscaler may then count a restarting Pod as a node it asked for.
void warnV1RestartPolicy(const RayClusterView& cluster, ClusterPlan& plan) {
  if (!cluster.autoscaling || cluster.autoscalerVersion != "v1") return;
  std::string groups;
  for (const auto& g : cluster.groups)
    if (!g.restartPolicy.empty() && g.restartPolicy != "Never")
      groups += (groups.empty() ? "" : ", ") + g.name;
  if (groups.empty()) return;
  plan.warnings.push_back(
      {"InvalidRayClusterSpec",
       "RayCluster spec warning " + cluster.ns + "/" + cluster.name +
           ": restartPolicy for worker groups [" + groups +
           "] should be Never or unset when using autoscaler V1",
       "Validate"});
}

// The embedded GCS store's claim, before the Pods (KubeRay's reconcileGCSStoragePVC): the
// operator's own created when missing, a difference from the spec reported (a claim is not
// changed in place); a user's claim that is missing is reported and the head waits for it
// (Pending until the claim exists).
void planGcsStorageClaim(const ClusterObserved& o, ClusterPlan& plan) {
  const RayClusterView& cluster = o.cluster;
  if (!cluster.gcsEmbedded) return;
  const std::string key = cluster.ns + "/" + cluster.gcsStorageClaim;
  if (cluster.gcsStorageClaimUsers) {
    if (!o.gcsStorageClaim.exists)
      plan.warnings.push_back(
          {"FailedToCreatePVC",
           "GcsFaultToleranceOptions.Storage.ClaimName \"" + cluster.gcsStorageClaim +
               "\" not found in namespace " + cluster.ns + "; the head Pod will not start until it exists",
           "Validate"});
    return;
  }
  if (!o.gcsStorageClaim.exists) {
    plan.creates.push_back({"PersistentVolumeClaim", gcsStorageClaimObjectFor(cluster)});
    return;
  }
  if (!o.gcsStorageClaim.drift.empty())
    plan.warnings.push_back({"FailedToCreatePVC",
                             "GCS storage PVC " + key + " already exists and cannot be reconfigured in place (" +
                                 o.gcsStorageClaim.drift + "); delete the PVC to recreate it with the new settings",
                             "Update"});
}

// Volcano, for a cluster of its own (a RayJob's cluster is in its RayJob's PodGroup): the
// PodGroup before any Pod, its gang kept to the spec (KubeRay's syncPodGroup, every pass; here
// until the PodGroup is seen settled for the cluster's generation). Returns false when the
// PodGroup cannot be built (a malformed topology label): no Pod is made without it.
bool planPodGroup(const ClusterObserved& o, ClusterPlan& plan) {
  if (!o.podGroupRead) return true;
  const json& cluster = o.cluster.raw.get();
  Gang gang = clusterGang(objectAt(cluster, "spec"));
  if (!o.podGroup.isNull()) {
    json updated = podGroupWithGang(o.podGroup.get(), gang);
    if (!updated.is_null()) plan.podGroupUpdate = std::make_shared<json>(std::move(updated));
    return true;
  }
  std::string error;
  model::ApiObject created = volcanoPodGroupFor(cluster, gang, error);
  if (!created) {
    plan.warnings.push_back({"FailedToCreatePodGroup", error, "Create"});
    plan.why = "no PodGroup: " + error;
    return false;
  }
  plan.creates.push_back({"PodGroup", std::move(created)});
  return true;
}

// spec.suspend, as KubeRay's reconcilePods: with the RayClusterStatusConditions gate the status
// says RayClusterSuspending first, the next pass deletes every Pod, and once none is left the
// cluster is RayClusterSuspended; no Pod is created meanwhile, nor in the pass that resumes
// (RayClusterSuspended goes False, the next creates the Pods). Without the gate the Pods go at once.
// Returns true when the Pods are held; tally gets what the Pods show.
bool planSuspension(const ClusterObserved& o, ClusterPlan& plan, ClusterTally& tally) {
  const RayClusterView& cluster = o.cluster;
  const bool gate = o.statusConditions;
  const bool drop = cluster.suspendStatus == SuspendStatus::Suspending || (!gate && cluster.suspend);
  const bool hold = drop || (gate && (cluster.suspendStatus == SuspendStatus::Suspended || cluster.suspend));
  if (!hold) return false;
  const std::string head = model::headPodName(cluster.name);
  for (const auto& pod : o.pods) {
    if (drop && !pod.deleting) plan.deletePods.push_back(pod.name);
    if (pod.name == head) {
      tally.headFound = true;
      tally.headReady = pod.ready;
      tally.headIP = pod.ip;
    } else {
      tally.ready += pod.ready;
      tally.available += pod.running;
    }
  }
  for (const auto& group : cluster.groups) tally.desired += group.desired;
  tally.allReady = tally.headReady && tally.ready >= tally.desired;
  tally.changesPods = !plan.deletePods.empty();
  if (drop)
    plan.why = o.pods.empty() ? "suspended: no Pods left" : "suspended: deleting its Pods";
  else if (cluster.suspendStatus == SuspendStatus::None)
    plan.why = "suspend requested: RayClusterSuspending first, then the Pods go";
  else
    plan.why = cluster.suspend ? "suspended" : "resuming: RayClusterSuspended goes False before the Pods come";
  // The next step follows from this pass's own status write, which no watch event brings back
  // (KubeRay requeues when its status changed).
  const bool nextStepOnStatus = !drop && (cluster.suspendStatus == SuspendStatus::None || !cluster.suspend);
  if (nextStepOnStatus) plan.retryAfterMs = 0;
  return true;
}

// KubeRay's validation of a RayCluster: an invalid one gets a Warning and nothing else (an
// invalid status is looked at again, as KubeRay requeues it).
bool refuseInvalid(const RayClusterView& cluster, ClusterPlan& plan) {
  if (cluster.invalid.empty() || cluster.deleting) return false;
  const std::string what = cluster.invalidReason == "InvalidRayClusterMetadata" ? "metadata"
                           : cluster.invalidReason == "InvalidRayClusterSpec"   ? "spec"
                                                                                : "status";
  const std::string key = cluster.ns + "/" + cluster.name;
  plan.warnings.push_back({cluster.invalidReason,
                           "The RayCluster " + what + " is invalid " + key +
                               (what == "status" ? ", " : ": ") + cluster.invalid,
                           "Validate"});
  plan.why = "invalid " + what + ": " + cluster.invalid;
  if (what == "status") plan.retryAfterMs = kInvalidStatusRetryMs;
  return true;
}

// The Pods the plan deletes because a group's workersToDelete names them, " a b" ("" for none).
std::string namedDeletes(const RayClusterView& cluster, const std::vector<std::string>& deletes) {
  std::string named;
  for (const auto& pod : deletes)
    for (const auto& g : cluster.groups)
      if (g.workersToDelete.count(pod)) named += " " + pod;
  return named;
}

// The decision's one-line reason once the Pods are planned.
std::string explainPods(const RayClusterView& cluster, const ClusterTally& tally,
                        const std::vector<std::string>& deletes) {
  const std::string workers = std::to_string(tally.ready) + "/" + std::to_string(tally.desired);
  std::string why;
  if (tally.allReady && tally.ready < tally.desired)
    why = "ready; the autoscaler asked for " + std::to_string(tally.desired) + " workers, " +
          workers + " ready";
  else if (tally.allReady)
    why = "all " + std::to_string(tally.desired + 1) + " Pods ready";
  else
    why = "waiting for Pods: head " + std::string(tally.headReady ? "ready" : "not ready") +
          ", workers " + workers;
  const std::string named = namedDeletes(cluster, deletes);
  return named.empty() ? why : "the autoscaler named" + named + " in workersToDelete; " + why;
}

}  // namespace

bool specChangedSinceStatus(const RayClusterView& cluster) {
  return cluster.observedGeneration > 0 && cluster.generation > cluster.observedGeneration;
}

events::SpecChanged specChangedOf(const RayClusterView& cluster, std::string changedBy) {
  std::string workers;
  for (const auto& g : cluster.groups) {
    workers += (workers.empty() ? "" : "; ") + g.name + ": replicas " +
               (g.replicas.empty() ? "unset" : g.replicas);
    if (g.workersToDelete.empty()) continue;
    workers += ", workersToDelete";
    for (const auto& pod : g.workersToDelete) workers += " " + pod;
  }
  return {cluster.generation, std::move(changedBy), std::move(workers)};
}

ClusterPlan decideRayCluster(const ClusterObserved& o) {
  ClusterPlan plan;
  const RayClusterView& cluster = o.cluster;
  if (!cluster.managedByOther.empty()) {  // KubeRay's ManagedByExternalController
    plan.why = "managed by " + cluster.managedByOther + ": left to it";
    return plan;
  }
  if (refuseInvalid(cluster, plan)) return plan;
  if (planRedisCleanup(o, plan)) return plan;
  if (cluster.deleting) {
    plan.why = "being deleted; the garbage collector removes its Pods";
    return plan;
  }
  warnV1RestartPolicy(cluster, plan);
  PodsByName pods;
  for (const auto& p : o.pods) pods[p.name] = &p;
  // Token auth: the Secret first, since every Pod reads its token from it.
  if (cluster.createsAuthSecret && !o.authSecretExists)
    plan.creates.push_back({"Secret", authSecretFor(cluster)});
  if (cluster.autoscaling && !planAutoscalerRbac(o, plan)) return plan;
  if (!o.headServiceExists()) plan.creates.push_back({"Service", headServiceFor(cluster)});
  planGcsStorageClaim(o, plan);
  if (ClusterTally held; planSuspension(o, plan, held)) {
    plan.status = clusterStatusFor(o, held);
    return plan;
  }
  if (!planPodGroup(o, plan)) return plan;
  const std::string headName = model::headPodName(cluster.name);
  // SidecarMode: a head that ran its submitter must not run again (KubeRay's annotation).
  auto head = pods.find(headName);
  if (head == pods.end() && !(cluster.noHeadRestart && cluster.provisioned))
    plan.creates.push_back({"Pod", headPodFor(cluster)});
  // A failed head is deleted and, once gone, created again under its name (KubeRay).
  if (head != pods.end() && head->second->unhealthy && !head->second->deleting)
    plan.deletePods.push_back(headName);
  ClusterTally tally;
  for (const auto& group : cluster.groups) {
    GroupTally t = planGroup(o, group, pods, plan);
    tally.desired += t.desired;
    tally.ready += t.ready;
    tally.available += t.available;
  }
  tally.headFound = head != pods.end();
  tally.headReady = tally.headFound && head->second->ready;
  if (tally.headFound) tally.headIP = head->second->ip;
  // Under autoscaling the worker count follows the load: once provisioned, a cluster stays ready
  // while its head is, so a scale-up never stops the RayJob from reaching Ray (a surplus Pod the
  // autoscaler has not named yet may also stay, hence >=).
  tally.allReady = tally.headReady && (tally.ready >= tally.desired ||
                                       (cluster.autoscaling && cluster.provisioned));
  tally.changesPods = !plan.deletePods.empty() ||
                      std::any_of(plan.creates.begin(), plan.creates.end(),
                                  [](const auto& c) { return c.first == "Pod"; });
  plan.status = clusterStatusFor(o, tally);
  // A pass that creates the last Pods leaves the status to the next pass, which the Pods' own
  // watch events bring a moment later and which counts them: one status write instead of two
  // while a cluster starts. A failure to show, or the progress of a cluster created in several
  // batches, is written now.
  const bool createsPods = std::any_of(plan.creates.begin(), plan.creates.end(),
                                       [](const auto& c) { return c.first == "Pod"; });
  if (createsPods && !plan.more && o.replicaFailure.reason.empty()) plan.status = nullptr;
  plan.why = explainPods(cluster, tally, plan.deletePods);
  return plan;
}

}  // namespace rayjournal::controller
