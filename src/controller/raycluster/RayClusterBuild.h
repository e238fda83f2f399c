// The objects the RayCluster state machine asks for, built from the cluster's templates as
// KubeRay v1.7.0 builds them (the templates carry fields nobody models, so these units work on
// documents: RayClusterPods.cpp builds the Pods, RayClusterBuild.cpp the head Service and the
// status). No JSON in this header. Pure functions.
#pragma once

#include <string>

#include "controller/raycluster/RayClusterViews.h"

namespace rayjournal::controller {

// The head Service (common/service.go BuildServiceForHeadPod): headGroupSpec.headService when
// given (name, type, labels, annotations kept, KubeRay's selector and ports added), otherwise
// "<cluster>-head-svc", headless when its type is ClusterIP; ports from the head container's
// named ports (or KubeRay's five defaults), metrics always, appProtocol tcp, sorted by name.
model::ApiObject headServiceFor(const RayClusterView& cluster);
// The token-auth Secret (KubeRay's createAuthSecret), owned by the cluster; its auth_token is
// left empty here and drawn at execution (the Executor), so no decision or journal holds it.
model::ApiObject authSecretFor(const RayClusterView& cluster);
// An autoscaling cluster's RBAC for the Ray autoscaler (KubeRay's common/rbac.go), each owned by
// the cluster and labelled with it: the ServiceAccount the head Pod runs as; Role <cluster>
// (pods get/list/watch/patch, pods/resize patch, rayclusters get/patch); RoleBinding <cluster>.
model::ApiObject autoscalerServiceAccountFor(const RayClusterView& cluster);
model::ApiObject autoscalerRoleFor(const RayClusterView& cluster);
model::ApiObject autoscalerRoleBindingFor(const RayClusterView& cluster);
// The head Pod and worker Pod `index` of a group, with the generated `ray start` command.
model::ApiObject headPodFor(const RayClusterView& cluster);
model::ApiObject workerPodFor(const RayClusterView& cluster, const WorkerGroupView& group,
                              const std::string& podName, int64_t index);

// The Job that empties a GCS fault-tolerant cluster's Redis storage namespace after its head is
// gone (KubeRay's buildRedisCleanupJob): the head Pod's Ray container alone, labelled
// ray.io/node-type=redis-cleanup, running Ray's cleanup_redis_storage with the head's Redis env,
// no probes, 200m/256Mi, restartPolicy Never, backoffLimit 0, activeDeadlineSeconds 300; named
// redisCleanupJobName, owned by the cluster.
model::ApiObject redisCleanupJobFor(const RayClusterView& cluster);
// "<cluster>-redis-cleanup", cut to 63 characters as KubeRay's TrimJobName cuts it.
std::string redisCleanupJobName(const std::string& cluster);

// The embedded GCS store's claim "<cluster>-gcs-pvc" (GcsFaultTolerance.h gcsStorageClaimFor).
model::ApiObject gcsStorageClaimObjectFor(const RayClusterView& cluster);

// What one pass counted, for the status.
struct ClusterTally {
  bool headFound = false;
  bool headReady = false;
  bool allReady = false;
  std::string headIP;
  int64_t desired = 0;
  int64_t ready = 0;      // worker Pods Running and Ready
  int64_t available = 0;  // worker Pods Running
  bool changesPods = false;  // this pass creates or deletes Pods
};
// The status to write (state, replica counts, desired resources, head, endpoints, conditions,
// state transition times, observedGeneration), or null when it equals the cluster's current
// status apart from lastUpdateTime. RayClusterReplicaFailure is True while the last Pod create
// or delete failed and Pods still have to change; with nothing left to change it goes, as
// KubeRay removes it after a reconcile without error.
model::ApiObject clusterStatusFor(const ClusterObserved& observed, const ClusterTally& tally);

}  // namespace rayjournal::controller
