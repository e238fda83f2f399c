// A RayCluster and its Pods as the RayCluster state machine reads them: parsed once, at the
// boundary (RayClusterViews.cpp), into the facts the decision uses, with the documents kept
// beside them for the builders (RayClusterBuild). No JSON here.
#pragma once

#include <cstdint>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "controller/FeatureGates.h"
#include "controller/raycluster/PodDefaults.h"
#include "model/Document.h"

namespace rayjournal::controller {

// KubeRay's FindRayClusterSuspendStatus.
enum class SuspendStatus { None, Suspending, Suspended };

struct PodView {
  std::string name;
  std::string ip;  // status.podIP
  bool deleting = false;
  bool running = false;  // phase Running
  bool ready = false;  // phase Running and condition Ready=True
  // KubeRay's rule for a Pod to replace: phase Failed or Succeeded, or Running with its Ray
  // container (the first) terminated under restartPolicy Never.
  bool unhealthy = false;
};

struct WorkerGroupView {
  std::string name;
  int64_t desired = 0;  // desiredWorkers(): clamped, x numOfHosts, 0 when suspended
  int64_t hosts = 1;    // numOfHosts: Pods per replica
  model::Document spec;
  std::string replicas;       // spec.replicas as written ("" when unset), for the journal
  std::string restartPolicy;  // of the Pod template ("" when unset)
  // scaleStrategy.workersToDelete: Pods the autoscaler chose to remove (deleted whatever the
  // replica count, as KubeRay does; only this group's own Pods, unlike KubeRay).
  std::set<std::string, std::less<>> workersToDelete;
};

// What the operator's settings add to the Pods it builds (KubeRay's environment variables).
struct PodInjection {
  bool loginShell = false;     // ENABLE_LOGIN_SHELL: bash -cl for the Ray and init containers
  bool probes = true;          // ENABLE_PROBES_INJECTION: readiness and liveness probes
  bool waitGcsReady = true;    // ENABLE_INIT_CONTAINER_INJECTION: the workers' wait-gcs-ready
  // ENABLE_RANDOM_POD_DELETE: an autoscaling group with more Pods than desired loses some of
  // them; otherwise only the Pods the autoscaler names in workersToDelete go.
  bool randomPodDelete = false;
  // KubeRay's configuration file: sidecars, env, labels and annotations for every Ray Pod (null:
  // none).
  std::shared_ptr<const PodDefaults> defaults;
  // --batch-scheduler volcano: every Pod joins its PodGroup (KubeRay's AddMetadataToChildResource),
  // and a standalone cluster has one made for it.
  bool volcano = false;
  // --batch-scheduler yunikorn: every Pod gets YuniKorn's fields (no object of its own).
  bool yunikorn = false;
};

struct RayClusterView {
  model::Document raw;
  std::string ns;
  std::string name;
  bool deleting = false;
  bool noHeadRestart = false;  // annotation ray.io/disable-provisioned-head-restart=true
  bool provisioned = false;    // RayClusterProvisioned=True in the current status
  bool autoscaling = false;    // spec.enableInTreeAutoscaling: the Ray autoscaler sizes the groups
  // spec.suspend (Kueue's way to hold a cluster until admitted), and where the suspension stands
  // in the status: the RayClusterSuspending or RayClusterSuspended condition that is True.
  bool suspend = false;
  SuspendStatus suspendStatus = SuspendStatus::None;
  std::string autoscalerVersion;  // autoscalerOptions.version: "v1", "v2" or "" (Ray chooses)
  int64_t generation = 0;          // metadata.generation: bumped by every spec write
  int64_t observedGeneration = 0;  // status.observedGeneration: of the last status written
  // Autoscaling: the ServiceAccount the head Pod runs as, and whether the user named it in the
  // head template (then it must exist; otherwise the operator creates it).
  std::string autoscalerServiceAccount;
  bool userServiceAccount = false;
  std::string autoscalerRole;  // the Role and RoleBinding <cluster>, cut as KubeRay cuts it
  std::string clusterDomain = "cluster.local";  // of the head Service's FQDN
  PodInjection injection{};
  // Token auth: the Secret the Pods read their token from ("" when off), and whether this
  // operator creates it (KubeRay's reconcileAuthSecret; not when the user names their own).
  std::string authSecret;
  bool createsAuthSecret = false;
  // GCS fault tolerance with Redis, whose storage namespace KubeRay empties when the cluster is
  // deleted (raycluster_controller.go): whether it applies (FT on, Redis backend, and
  // ENABLE_GCS_FT_REDIS_CLEANUP not "false"), whether the cluster carries the finalizer, when
  // its deletion began (Unix ms; 0 when not deleting) and how long the cleanup may take before
  // the finalizer is dropped anyway (ray.io/gcs-ft-deletion-timeout seconds, else 300).
  // spec.managedBy naming another controller (Kueue's MultiKueue): KubeRay leaves the cluster
  // to it entirely. "" when unset or KubeRay's own.
  std::string managedByOther;
  bool redisCleanup = false;
  bool redisCleanupFinalizer = false;
  int64_t deletionMs = 0;
  int64_t redisCleanupTimeoutMs = 300000;
  std::string storageNamespaceAnnotation;  // the cluster's own, for the force-removal Event
  // GCS fault tolerance on the embedded RocksDB store: the claim the head mounts, and whether
  // the user brings it (storage.claimName) or the operator makes it ("<cluster>-gcs-pvc").
  bool gcsEmbedded = false;
  std::string gcsStorageClaim;
  bool gcsStorageClaimUsers = false;
  // KubeRay's ValidateRayClusterMetadata and ValidateRayClusterSpec: the first problem, "" when
  // valid. An invalid cluster is not reconciled (a Warning says why), as in KubeRay.
  std::string invalid;
  std::string invalidReason;  // InvalidRayClusterMetadata, InvalidRayClusterSpec or InvalidRayClusterStatus
  model::Document headGroup;
  std::vector<WorkerGroupView> groups;
};

// The last Pod create or delete of the cluster that failed, as the journal knows it, until a
// later one lands; empty reason: none.
struct ReplicaFailure {
  std::string reason;   // KubeRay's: FailedCreateHeadPod, FailedDeleteWorkerPod, ...
  std::string message;  // the reason, a newline, the API server's error
};

// Which of an autoscaling cluster's RBAC objects for the Ray autoscaler exist (all true when the
// cluster does not autoscale, or when they were seen once already).
struct AutoscalerRbac {
  bool serviceAccount = true;
  bool role = true;
  bool roleBinding = true;
  bool complete() const { return serviceAccount && role && roleBinding; }
};

// The embedded GCS store's claim as found (read only for a cluster on that backend).
struct GcsStorageClaim {
  bool exists = true;
  std::string drift;  // gcsStorageClaimDrift against the spec ("" when none or the user's)
};

// The Job that empties a deleted cluster's Redis storage namespace (KubeRay's "<cluster>-redis-cleanup").
struct RedisCleanupJob {
  bool exists = false;
  bool complete = false;  // condition Complete=True
  bool failed = false;    // condition Failed=True
  // The cluster's namespace is being deleted: the API server refuses every new object in it, so
  // no cleanup Job can ever be created (read only while there is no Job).
  bool namespaceTerminating = false;
};

struct ClusterObserved {
  RayClusterView cluster;
  std::vector<PodView> pods;  // Pods the cluster owns (by owner uid)
  model::Document headService;  // null when it does not exist
  int64_t nowMs = 0;            // from the Clock: stamps state transitions
  ReplicaFailure replicaFailure;  // from the projection
  // From the projection: per group, one past the highest worker index ever journaled for this
  // cluster; single-host groups name new workers from there on, never a predecessor's name.
  std::map<std::string, uint64_t, std::less<>> nextWorkerIndex;
  bool statusConditions = true;   // the RayClusterStatusConditions feature gate
  bool authSecretExists = false;  // cluster.authSecret exists (read only when it is set)
  AutoscalerRbac autoscalerRbac;  // read only for an autoscaling cluster
  RedisCleanupJob redisCleanupJob;  // read only while a cluster with the finalizer is deleted
  GcsStorageClaim gcsStorageClaim;  // read only for a cluster on the embedded GCS store
  // Volcano: the standalone cluster's PodGroup as found (null: none), read only when
  // podGroupRead (a volcano cluster of its own whose PodGroup was not seen settled for this
  // generation yet).
  bool podGroupRead = false;
  model::Document podGroup;
  bool headServiceExists() const { return !headService.isNull(); }
};

// What the operator knows beside the objects.
struct ClusterContext {
  std::string clusterDomain = "cluster.local";
  int64_t nowMs = 0;
  bool statusConditions = true;  // the RayClusterStatusConditions feature gate
  PodInjection injection{};
  bool redisCleanup = true;  // ENABLE_GCS_FT_REDIS_CLEANUP is not "false"
  FeatureGates gates{};      // for KubeRay's validation of the cluster
};

// What the decision reads of one Pod (a few bytes of a document of kilobytes).
PodView podView(const nlohmann::json& pod);

ClusterObserved clusterObserved(std::shared_ptr<const nlohmann::json> cluster,
                                std::vector<PodView> pods,
                                std::shared_ptr<const nlohmann::json> headService,
                                const ClusterContext& context = {});
ClusterObserved clusterObserved(std::shared_ptr<const nlohmann::json> cluster,
                                const std::vector<std::shared_ptr<const nlohmann::json>>& pods,
                                std::shared_ptr<const nlohmann::json> headService,
                                const ClusterContext& context = {});

// Above this a group's desired count saturates: no cluster needs more, and the arithmetic of
// replicas x numOfHosts stays far from overflow.
inline constexpr int64_t kMaxDesiredPodsPerGroup = 1'000'000;

// The head Service name of a RayCluster (the user's headGroupSpec.headService name when set).
std::string headServiceNameOf(const std::string& cluster, const nlohmann::json& clusterSpec);
int dashboardPort(const nlohmann::json& clusterSpec);
// A worker group's desired Pods: clamp(replicas, minReplicas, maxReplicas) x numOfHosts, 0 when
// suspended, never negative, saturating at kMaxDesiredPodsPerGroup.
int64_t desiredWorkers(const nlohmann::json& group);
// numOfHosts, at least 1 and at most kMaxDesiredPodsPerGroup.
int64_t hostsOf(const nlohmann::json& group);

}  // namespace rayjournal::controller
