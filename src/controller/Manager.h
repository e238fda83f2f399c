// Wires the controller: recovery first, then watches (RayJob, and RayCluster / Job mapped to
// their owning RayJob), the workqueue and N workers, and periodic checkpoints (every N records
// or T seconds). Thread-safe; start() blocks through recovery, stop() drains the workers.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "controller/Reconciler.h"
#include "controller/Recovery.h"
#include "controller/WorkQueue.h"

namespace rayjournal::controller {

struct ManagerOptions {
  int workers = 2;
  uint64_t checkpointEveryRecords = 10000;
  int64_t checkpointEveryMs = 60000;
  DecideConfig decide;
  bool recordLatencies = false;  // keep every reconcile's duration (benchmarks)
  // Called after every reconcile (metrics); must be cheap and thread-safe.
  std::function<void(double seconds, bool error)> onReconcile;
  // Which RayJobs ("ns/name") this process owns (sharding); empty: all.
  std::function<bool(const std::string& key)> owns;
  // Whether it may act on an owned RayJob now (its shard's Lease is held); empty: always.
  // A RayJob it may not act on yet is looked at again a second later.
  std::function<bool(const std::string& key)> mayReconcile;
};

// What the RayJob watch last showed of one RayJob (metrics read it at scrape time).
struct JobSummary {
  std::string uid, deploymentStatus, startTime, endTime;
  int failed = 0;
};

class Manager {
 public:
  Manager(wal::Journal& journal, kube::KubeClient& kube, ray::RayJobsClient& ray,
          const Clock& clock, ManagerOptions options);
  ~Manager();

  RecoveryReport start();
  void stop();
  // Every known RayJob is at rest and nothing is queued, in progress or scheduled.
  bool idle() const;
  WorkQueue& queue() { return queue_; }
  projection::JobProjection& projection() { return projection_; }
  Executor& executor() { return executor_; }
  uint64_t reconciles() const { return reconciles_; }
  std::map<std::string, JobSummary> jobSummaries() const;
  // Recovery finished and the RayJob watch delivered its first list.
  bool started() const { return started_; }
  // Queues every known RayJob again (a shard was just acquired).
  void resync();
  std::vector<uint32_t> latenciesUs() const;
  void maybeCheckpoint(bool force = false);

 private:
  void worker();
  void onOwned(const json& object);

  wal::Journal& journal_;
  kube::KubeClient& kube_;
  ray::RayJobsClient& ray_;
  const Clock& clock_;
  ManagerOptions options_;
  projection::JobProjection projection_;
  WorkQueue queue_;
  Executor executor_;
  Reconciler reconciler_;
  std::vector<std::thread> workers_;
  mutable std::mutex restMu_;
  std::map<std::string, bool> atRest_;
  std::map<std::string, JobSummary> summaries_;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> reconciles_{0};
  mutable std::mutex latencyMu_;
  std::vector<uint32_t> latenciesUs_;
  std::mutex checkpointMu_;
  uint64_t lastCheckpointSeq_ = 0;
  int64_t lastCheckpointMs_ = 0;
};

}  // namespace rayjournal::controller
