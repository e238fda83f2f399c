#include "controller/raycluster/RedisCleanup.h"

#include <cstdio>

#include "controller/raycluster/RayClusterBuild.h"
#include "model/Names.h"

namespace rayjournal::controller {
namespace {

// Go's time.Duration text for the force-removal Event ("5m0.25s").
std::string goDuration(int64_t ms) {
  char text[64];
  const int64_t minutes = ms / 60000;
  const double seconds = double(ms % 60000) / 1000.0;
  if (minutes > 0)
    std::snprintf(text, sizeof text, "%lldm%gs", static_cast<long long>(minutes), seconds);
  else
    std::snprintf(text, sizeof text, "%gs", seconds);
  return text;
}

void removeFinalizer(ClusterPlan& plan, std::string why) {
  plan.finalizer = FinalizerChange::Remove;
  plan.why = std::move(why);
}

// The cluster is being deleted and holds the finalizer: Pods first, then the Job, then the
// finalizer.
void planDeletion(const ClusterObserved& o, ClusterPlan& plan) {
  const RayClusterView& c = o.cluster;
  if (c.deletionMs > 0 && o.nowMs - c.deletionMs >= c.redisCleanupTimeoutMs) {
    plan.warnings.push_back(
        {"ForceDeletedStuckCluster",
         "Force-removed GCS FT finalizer after " + goDuration(o.nowMs - c.deletionMs) +
             " due to Redis cleanup timeout; Redis storage namespace \"" +
             c.storageNamespaceAnnotation + "\" may need manual cleanup",
         "Cleanup"});
    return removeFinalizer(plan, "the Redis cleanup did not finish within " +
                                     goDuration(c.redisCleanupTimeoutMs) + ": finalizer removed");
  }
  bool headPresent = false;
  for (const auto& pod : o.pods) {
    if (!pod.deleting) plan.deletePods.push_back(pod.name);
    headPresent = headPresent || pod.name == model::headPodName(c.name);
  }
  if (headPresent) {
    plan.why = "being deleted: waiting for the head Pod to terminate before emptying the Redis "
               "storage namespace (its GCS could still write to it)";
    plan.retryAfterMs = kHeadTerminationPollMs;
    return;
  }
  const RedisCleanupJob& job = o.redisCleanupJob;
  if (job.complete) return removeFinalizer(plan, "the Redis cleanup Job completed: storage namespace emptied");
  if (job.failed)
    return removeFinalizer(plan, "the Redis cleanup Job failed: empty the storage namespace by hand "
                                 "(https://docs.ray.io/en/master/cluster/kubernetes/user-guides/kuberay-gcs-ft.html)");
  if (!job.exists && job.namespaceTerminating) {
    // KubeRay retries the create until its deadline; the namespace's deletion waits 5 minutes
    // on a Job that cannot be made.
    plan.warnings.push_back(
        {"RedisCleanupSkipped",
         "Namespace " + c.ns + " is being deleted, so no Redis cleanup Job can be created in it; "
         "removed the GCS FT finalizer; Redis storage namespace \"" + c.storageNamespaceAnnotation +
             "\" may need manual cleanup",
         "Cleanup"});
    return removeFinalizer(plan, "being deleted with its namespace: no Redis cleanup Job can be "
                                 "created there; finalizer removed");
  }
  plan.retryAfterMs = kRedisCleanupPollMs;
  if (job.exists) {
    plan.why = "being deleted: waiting for Redis cleanup Job " + redisCleanupJobName(c.name);
    return;
  }
  plan.creates.push_back({"Job", redisCleanupJobFor(c)});
  plan.why = "being deleted: the head Pod is gone; emptying the Redis storage namespace";
}

}  // namespace

bool planRedisCleanup(const ClusterObserved& o, ClusterPlan& plan) {
  const RayClusterView& c = o.cluster;
  if (!c.deleting) {
    if (!c.redisCleanup || c.redisCleanupFinalizer) return false;
    // Only then are Pods built: a cluster deleted at once still gets its Redis emptied.
    plan.finalizer = FinalizerChange::Add;
    plan.why = "GCS fault tolerance with Redis: adding the Redis cleanup finalizer before any Pod";
    plan.retryAfterMs = kRedisCleanupPollMs;
    return true;
  }
  if (!c.redisCleanupFinalizer) return false;
  if (!c.redisCleanup) {
    // FT turned off, the embedded backend chosen or the cleanup disabled since the finalizer was
    // added: nothing will ever remove it otherwise, and the cluster would stay Terminating.
    removeFinalizer(plan, "being deleted with a Redis cleanup finalizer that no longer applies: removed");
    return true;
  }
  planDeletion(o, plan);
  return true;
}

}  // namespace rayjournal::controller
