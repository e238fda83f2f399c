// A GCS fault-tolerant RayCluster's Redis storage namespace, emptied when the cluster is deleted,
// as KubeRay v1.7.0 does it (raycluster_controller.go): the finalizer
// ray.io/gcs-ft-redis-cleanup-finalizer is added before anything else is built; on deletion the
// Pods are deleted, and once the head Pod is gone (its GCS could still write) the cleanup Job
// runs; when it has finished, Complete or Failed, the finalizer goes. After
// ray.io/gcs-ft-deletion-timeout seconds (300) the finalizer goes anyway, with a Warning. Each
// step is one journaled intent (AddFinalizer, DeletePod, CreateRedisCleanupJob,
// RemoveFinalizer) with a deterministic target, so a crash anywhere repeats none and leaks none.
// Pure: views in, plan out.
#pragma once

#include "controller/raycluster/RayClusterDecide.h"

namespace rayjournal::controller {

// KubeRay's requeue while the cleanup runs, and while the head Pod terminates.
inline constexpr int64_t kRedisCleanupPollMs = 2000;
inline constexpr int64_t kHeadTerminationPollMs = 10000;

// True when the Redis cleanup decides this pass (the plan then holds only its steps): the
// finalizer is missing on a live cluster, or a cluster holding it is being deleted.
bool planRedisCleanup(const ClusterObserved& observed, ClusterPlan& plan);

}  // namespace rayjournal::controller
