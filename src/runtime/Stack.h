// The one assembly of the operator's controller, built the same way by every program (the real
// and embedded runners, the benchmark, the scenario harness, the deterministic simulator): the
// projection fed from the journal, an informer cache over the given Kubernetes client, one
// Executor, the RayJob and RayCluster reconcilers, one generic Controller each, the watch
// handlers that map events to keys, recovery, and periodic checkpoints. The programs differ
// only in the adapters they pass (a real API server and Ray dashboards, or the simulated ones)
// and in whether the controllers run threads or are stepped.
// start() blocks through recovery and the cache sync; stop() drains the workers. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "adapters/kube/InformerCache.h"
#include "controller/Recovery.h"
#include "runtime/Controller.h"
#include "runtime/RayClusterReconciler.h"
#include "runtime/RayJobReconciler.h"

namespace rayjournal::runtime {

struct StackOptions {
  int workers = 2;         // RayJob workers; 0: stepped by step() (deterministic simulation)
  int clusterWorkers = 2;  // RayCluster workers (0 as well when stepped)
  bool normalEvents = true;  // false: only Warning Events are posted (--events warnings)
  // Ready keys one worker reconciles together, their intents made durable by one journal flush.
  size_t maxBatch = 16;
  bool manageRayClusters = true;  // false: leave RayClusters to another controller (KubeRay)
  uint64_t checkpointEveryRecords = 10000;
  int64_t checkpointEveryMs = 60000;
  std::chrono::milliseconds cacheSyncTimeout{120000};
  controller::DecideConfig decide;
  bool recordLatencies = false;  // keep every RayJob reconcile's duration (benchmarks)
  // Called after every reconcile of either controller ("rayjob", "raycluster": controller-runtime's
  // names for KubeRay's) for metrics; must be cheap and thread-safe.
  std::function<void(const char* controller, double seconds, const Result& result)> onReconcile;
  // Which RayJobs ("ns/name") this process owns (sharding); empty: all. A RayCluster belongs to
  // the RayJob that controls it.
  std::function<bool(const std::string& key)> owns;
  // Whether it may act for an owned RayJob now (its shard's Lease is held); empty: always.
  std::function<bool(const std::string& key)> mayReconcile;
  // Called with every record appended, after the projection saw it (the simulator's checkers).
  std::function<void(const wal::Record&)> onJournaled;
  // Runs after each in-doubt intent is resolved at start (the simulator crashes from it).
  std::function<void()> afterResolve;
};

// What the RayJob watch last showed of one RayJob (metrics read it at scrape time).
struct JobSummary {
  std::string uid, deploymentStatus, startTime, endTime;
  int failed = 0;
};

class Stack {
 public:
  Stack(wal::Journal& journal, kube::KubeClient& kube, ray::RayJobsClient& ray,
        const Clock& clock, StackOptions options);
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  // Rebuilds the projection, resolves in-doubt intents, fills the caches, starts the watches and
  // the workers. Throws what recovery or the cache sync throws.
  controller::RecoveryReport start();
  void stop();
  // Stepped mode: runs one ready key of either controller (pick chooses among the ready ones),
  // batched with up to count - 1 more ready keys of the same controller; false when no key is
  // ready.
  bool step(const std::function<size_t(size_t)>& pick = {}, size_t count = 1);
  // Makes delayed keys whose (simulated) time has come ready.
  void wake();
  // Every known RayJob is at rest and nothing is queued, in progress or scheduled.
  bool idle() const;
  size_t queueDepth() const;
  size_t rayJobQueueDepth() const;
  size_t rayClusterQueueDepth() const;
  // What KubeRay's kuberay_cluster_* families show of each RayCluster in the cache.
  struct ClusterSummary {
    std::string ns, name, uid;
    std::string ownerKind;  // label ray.io/originated-from-crd, "None" without it
    bool provisioned = false;
    // creationTimestamp to the RayClusterProvisioned=True transition, when provisioned
    std::optional<double> provisionedSeconds;
  };
  std::vector<ClusterSummary> clusterSummaries();
  // Why idle() is false, in one line for a log ("RayJobs not at rest: a, b; RayCluster queue 2").
  std::string busyReason() const;
  projection::JobProjection& projection() { return projection_; }
  controller::Executor& executor() { return executor_; }
  kube::InformerCache& cache() { return cache_; }
  // The reconcilers themselves (a test that needs one exact interleaving calls them directly).
  Reconciler& rayJobReconciler() { return rayJobReconciler_; }
  Reconciler& rayClusterReconciler() { return clusterReconciler_; }
  // The unimplemented KubeRay fields warned about, by {kind, field path} (for /metrics).
  std::map<std::pair<std::string, std::string>, uint64_t> ignoredFieldCounts() const {
    return fieldWarnings_.counts();
  }
  uint64_t reconciles() const { return rayJobs_.reconciles(); }
  uint64_t clusterReconciles() const { return clusters_.reconciles(); }
  std::map<std::string, JobSummary> jobSummaries() const;
  bool started() const { return started_; }
  // Queues every known RayJob and RayCluster again (a shard was just acquired).
  void resync();
  std::vector<uint32_t> latenciesUs() const;
  void maybeCheckpoint(bool force = false);

 private:
  void watchRayJobs();
  void watchChildren();
  void onRayJobResult(const std::string& key, const Result& result, double seconds);
  bool ownsCluster(const nlohmann::json& cluster) const;
  // KubeRay's RayCluster predicate: a change of generation, labels, annotations or deletion; a
  // status-only write (most often our own) does not need another reconcile.
  bool clusterChanged(kube::WatchEventType type, const nlohmann::json& cluster);
  bool mayReconcileCluster(const std::string& key);

  wal::Journal& journal_;
  ray::RayJobsClient& ray_;
  const Clock& clock_;
  StackOptions options_;
  projection::JobProjection projection_;
  FieldWarnings fieldWarnings_{projection_};
  kube::InformerCache cache_;
  controller::Executor executor_;
  // Events off the reconcile path when workers run on threads; the stepped simulation posts them
  // inline, in order. Destroyed before the cache it posts through.
  std::unique_ptr<kube::EventRecorder> events_;
  RayJobReconciler rayJobReconciler_;
  RayClusterReconciler clusterReconciler_;
  Controller rayJobs_;
  Controller clusters_;
  mutable std::mutex restMu_;
  std::map<std::string, bool> atRest_;
  std::map<std::string, JobSummary> summaries_;
  std::mutex clusterSeenMu_;
  std::map<std::string, std::string> clusterSeen_;  // key -> what the predicate compares
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  mutable std::mutex latencyMu_;
  std::vector<uint32_t> latenciesUs_;
  std::mutex checkpointMu_;
  uint64_t lastCheckpointSeq_ = 0;
  int64_t lastCheckpointMs_ = 0;
};

}  // namespace rayjournal::runtime
