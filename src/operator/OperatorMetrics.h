// The operator's metric families and the collectors that fill them at scrape time from the
// manager (reconciles, queue, RayJobs by status), the journal (appends, syncs, bytes, in-doubt
// intents), recovery, the API/Ray call counters, and leadership; plus KubeRay's kuberay_job_*
// families, rebuilt from the RayJobs' status (so a restart never loses or duplicates them, W11).
#pragma once

#include <functional>

#include "adapters/CountingClients.h"
#include "runtime/Stack.h"
#include "operator/Metrics.h"
#include "wal/Journal.h"

namespace rayjournal::operator_ {

struct MetricsSources {
  runtime::Stack* stack = nullptr;
  wal::Journal* journal = nullptr;
  CallCounter* calls = nullptr;
  controller::RecoveryReport* recovery = nullptr;
  std::function<double()> leader;  // 1 when this process may act (or holds N shard Leases)
};

// Describes every family; the onReconcile hook it returns goes into StackOptions.
using StackReconcileHook = std::function<void(const char*, double, const runtime::Result&)>;
StackReconcileHook describeOperatorMetrics(Metrics& metrics);
void addOperatorCollectors(Metrics& metrics, MetricsSources sources);
// A RayJob's attempts that ended Retrying: {failed count before, duration ms} (the journal's).
using RetriedAttempts = std::function<std::vector<std::pair<int, int64_t>>(const std::string&)>;
// The per-RayJob families (kuberay_job_*, rayjournal_rayjobs) from what the watch last showed,
// and the Retrying series of kuberay_job_execution_duration_seconds from retried.
void collectJobMetrics(Metrics& metrics, const std::map<std::string, runtime::JobSummary>& jobs,
                       const RetriedAttempts& retried = {});
// KubeRay's kuberay_cluster_* families from the RayClusters the cache holds.
void collectClusterMetrics(Metrics& metrics, const std::vector<runtime::Stack::ClusterSummary>& clusters);

}  // namespace rayjournal::operator_
