#include "controller/RayClusterDecide.h"

#include <map>

#include "controller/RayClusterBuild.h"
#include "model/Names.h"

namespace rayjournal::controller {
namespace {

using PodsByName = std::map<std::string, const PodView*>;

struct GroupTally {
  int64_t desired = 0;
  int64_t ready = 0;
  int64_t available = 0;
};

// One worker group: plans the missing Pods (within the batch) and the surplus deletions.
GroupTally planGroup(const RayClusterView& cluster, const WorkerGroupView& group,
                     const PodsByName& pods, ClusterPlan& plan) {
  GroupTally tally{group.desired, 0, 0};
  int64_t present = 0;
  for (const auto& [podName, pod] : pods) {
    auto index = model::workerPodIndex(podName, cluster.name, group.name);
    if (!index) continue;  // the head, another group's, or a foreign Pod: not this group's
    if (int64_t(*index) >= tally.desired) {
      if (!pod->deleting) plan.deletePods.push_back(podName);
      continue;
    }
    ++present;  // an unhealthy Pod still holds its name until it is gone
    if (pod->unhealthy && !pod->deleting) plan.deletePods.push_back(podName);
    if (pod->ready) ++tally.ready;
    if (pod->running) ++tally.available;
  }
  for (int64_t i = 0; present < tally.desired && i < tally.desired; ++i) {
    std::string podName = model::workerPodName(cluster.name, group.name, uint64_t(i));
    if (pods.count(podName)) continue;
    if (plan.creates.size() >= kMaxPodCreatesPerReconcile) {
      plan.more = true;
      break;
    }
    plan.creates.push_back({"Pod", workerPodFor(cluster, group, podName, i)});
    ++present;
  }
  return tally;
}

}  // namespace

ClusterPlan decideRayCluster(const ClusterObserved& o) {
  ClusterPlan plan;
  const RayClusterView& cluster = o.cluster;
  if (cluster.deleting) {
    plan.why = "being deleted; the garbage collector removes its Pods";
    return plan;
  }
  PodsByName pods;
  for (const auto& p : o.pods) pods[p.name] = &p;
  if (!o.headServiceExists()) plan.creates.push_back({"Service", headServiceFor(cluster)});
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
    GroupTally t = planGroup(cluster, group, pods, plan);
    tally.desired += t.desired;
    tally.ready += t.ready;
    tally.available += t.available;
  }
  tally.headFound = head != pods.end();
  tally.headReady = tally.headFound && head->second->ready;
  if (tally.headFound) tally.headIP = head->second->ip;
  tally.allReady = tally.headReady && tally.ready == tally.desired;
  plan.status = clusterStatusFor(o, tally);
  plan.why = tally.allReady ? "all " + std::to_string(tally.desired + 1) + " Pods ready"
                            : "waiting for Pods: head " +
                                  std::string(tally.headReady ? "ready" : "not ready") +
                                  ", workers " + std::to_string(tally.ready) + "/" +
                                  std::to_string(tally.desired);
  return plan;
}

}  // namespace rayjournal::controller
