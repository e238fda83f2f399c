#include "operator/OperatorMetrics.h"

#include <string_view>

#include "adapters/TimeFormat.h"

namespace rayjournal::operator_ {

using Type = Metrics::Type;

namespace {

// controller-runtime's reconcile-time buckets (pkg/internal/controller/metrics).
const std::vector<double> kReconcileBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35,
                                            0.4,   0.45, 0.5,   0.6,  0.7, 0.8,  0.9, 1.0,  1.25, 1.5,
                                            1.75,  2.0,  2.5,   3.0,  3.5, 4.0,  4.5, 5,    6,    7,
                                            8,     9,    10,    15,   20,  25,   30,  40,   50,   60};

// The families KubeRay's operator exports and its Grafana dashboard reads (KubeRay's own
// kuberay_cluster_*, and controller-runtime's), same names, types and labels.
void describeKubeRayFamilies(Metrics& m) {
  m.describe("controller_runtime_reconcile_total", Type::Counter,
             "Total number of reconciliations per controller");
  m.describe("controller_runtime_reconcile_errors_total", Type::Counter,
             "Total number of reconciliation errors per controller");
  m.describe("controller_runtime_reconcile_time_seconds", Type::Histogram,
             "Length of time per reconciliation per controller", kReconcileBuckets);
  m.describe("workqueue_depth", Type::Gauge, "Current depth of workqueue");
  m.describe("kuberay_cluster_info", Type::Gauge, "Metadata information about RayCluster custom resources");
  m.describe("kuberay_cluster_condition_provisioned", Type::Gauge,
             "Indicates whether the RayCluster is provisioned");
  m.describe("kuberay_cluster_provisioned_duration_seconds", Type::Gauge,
             "The time, in seconds, when a RayCluster's `RayClusterProvisioned` status transitions "
             "from false (or unset) to true");
}

// controller-runtime's result label: error, requeue_after, requeue (an immediate retry), success.
const char* reconcileResult(const runtime::Result& r) {
  if (r.error) return "error";
  if (r.requeueAfterMs && *r.requeueAfterMs > 0) return "requeue_after";
  if (r.requeueAfterMs) return "requeue";
  return "success";
}

}  // namespace

StackReconcileHook describeOperatorMetrics(Metrics& m) {
  m.describe("rayjournal_reconciles_total", Type::Counter, "RayJob reconciles by result.");
  m.describe("rayjournal_reconcile_duration_seconds", Type::Histogram,
             "Time of one RayJob reconcile (decide, journal, execute).",
             {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  m.describe("rayjournal_workqueue_depth", Type::Gauge, "RayJob keys waiting in the queue.");
  m.describe("rayjournal_journal_appends_total", Type::Counter, "Records appended to the journal.");
  m.describe("rayjournal_journal_syncs_total", Type::Counter, "Synced journal writes.");
  m.describe("rayjournal_journal_bytes_total", Type::Counter, "Encoded bytes appended.");
  m.describe("rayjournal_journal_writable", Type::Gauge,
             "1 while the journal can be written; 0 while it cannot (a full disk): no side "
             "effect executes then.");
  m.describe("rayjournal_journal_disk_bytes", Type::Gauge,
             "Bytes the journal occupies on its volume.");
  m.describe("rayjournal_journal_first_seq", Type::Gauge,
             "Oldest seq still kept (retention prunes below it).");
  m.describe("rayjournal_journal_pruned_records_total", Type::Counter,
             "Records removed by retention.");
  m.describe("rayjournal_journal_scrubbed_records_total", Type::Counter,
             "Records the background scrub re-read and checked.");
  m.describe("rayjournal_journal_scrub_corrupt_records_total", Type::Counter,
             "Damaged or missing records the background scrub found (see the error log).");
  m.describe("rayjournal_journal_write_failures_total", Type::Counter,
             "Journal writes that failed (nothing of them was journaled or executed).");
  m.describe("rayjournal_journal_latest_seq", Type::Gauge, "Sequence number of the newest record.");
  m.describe("rayjournal_in_doubt_intents", Type::Gauge,
             "Journaled intents whose outcome is not known yet.");
  m.describe("rayjournal_recovery_duration_seconds", Type::Gauge, "Duration of the last recovery.");
  m.describe("rayjournal_recovery_replayed_records", Type::Gauge,
             "Records replayed by the last recovery.");
  m.describe("rayjournal_rayjobs", Type::Gauge, "RayJobs this process owns, by deployment status.");
  m.describe("rayjournal_kube_api_calls_total", Type::Counter,
             "Kubernetes API calls by verb, kind and HTTP code (0: unreachable).");
  m.describe("rayjournal_ray_api_calls_total", Type::Counter,
             "Ray Jobs API calls by verb, outcome.");
  m.describe("rayjournal_leader", Type::Gauge, "1 while this process may act (Leases held).");
  m.describe("rayjournal_fields_ignored_total", Type::Counter,
             "Warnings that an object sets a KubeRay field rayjournal does not implement, by kind "
             "and field (one per object and field).");
  m.describe("kuberay_job_info", Type::Gauge, "One series per RayJob (KubeRay's metric).");
  m.describe("kuberay_job_deployment_status", Type::Gauge,
             "The RayJob's current jobDeploymentStatus (KubeRay's metric).");
  m.describe("kuberay_job_execution_duration_seconds", Type::Gauge,
             "startTime to endTime of a finished RayJob; retry_count = failed before the last "
             "transition (KubeRay's metric, rebuilt from status).");
  describeKubeRayFamilies(m);
  return [&m](const char* controller, double seconds, const runtime::Result& result) {
    if (std::string_view(controller) == "rayjob") {
      m.inc("rayjournal_reconciles_total", {{"result", result.error ? "error" : "ok"}});
      m.observe("rayjournal_reconcile_duration_seconds", {}, seconds);
    }
    m.inc("controller_runtime_reconcile_total", {{"controller", controller}, {"result", reconcileResult(result)}});
    if (result.error) m.inc("controller_runtime_reconcile_errors_total", {{"controller", controller}});
    m.observe("controller_runtime_reconcile_time_seconds", {{"controller", controller}}, seconds);
  };
}

// KubeRay sets one series per Running -> Retrying transition, labelled with the failed count
// before it; they stay until the RayJob goes.
void addRetriedSeries(Metrics& m, const Labels& id, const std::vector<std::pair<int, int64_t>>& attempts) {
  for (const auto& [before, ms] : attempts) {
    Labels d = id;
    d["job_deployment_status"] = "Retrying";
    d["retry_count"] = std::to_string(before);
    m.set("kuberay_job_execution_duration_seconds", d, double(ms) / 1000.0);
  }
}

void collectJobMetrics(Metrics& m, const std::map<std::string, runtime::JobSummary>& jobs,
                       const RetriedAttempts& retried) {
  for (const char* f : {"rayjournal_rayjobs", "kuberay_job_info", "kuberay_job_deployment_status",
                        "kuberay_job_execution_duration_seconds"})
    m.clear(f);
  std::map<std::string, double> byStatus;
  for (const auto& [key, s] : jobs) {
    auto slash = key.find('/');
    Labels id{{"namespace", key.substr(0, slash)}, {"name", key.substr(slash + 1)}, {"uid", s.uid}};
    m.set("kuberay_job_info", id, 1);
    Labels withStatus = id;
    withStatus["deployment_status"] = s.deploymentStatus;
    m.set("kuberay_job_deployment_status", withStatus, 1);
    byStatus[s.deploymentStatus.empty() ? "New" : s.deploymentStatus] += 1;
    bool finished = s.deploymentStatus == "Complete" || s.deploymentStatus == "Failed";
    auto start = parseRfc3339(s.startTime), end = parseRfc3339(s.endTime);
    if (finished && start && end) {
      Labels d = id;
      d["job_deployment_status"] = s.deploymentStatus;
      int before = s.deploymentStatus == "Failed" ? std::max(0, s.failed - 1) : s.failed;
      d["retry_count"] = std::to_string(before);
      m.set("kuberay_job_execution_duration_seconds", d, double(*end - *start) / 1000.0);
    }
    if (retried) addRetriedSeries(m, id, retried(key));
  }
  for (const auto& [status, n] : byStatus)
    m.set("rayjournal_rayjobs", {{"deployment_status", status}}, n);
}

void collectClusterMetrics(Metrics& m, const std::vector<runtime::Stack::ClusterSummary>& clusters) {
  for (const char* f : {"kuberay_cluster_info", "kuberay_cluster_condition_provisioned",
                        "kuberay_cluster_provisioned_duration_seconds"})
    m.clear(f);
  for (const auto& c : clusters) {
    Labels id{{"name", c.name}, {"namespace", c.ns}, {"uid", c.uid}};
    Labels info = id;
    info["owner_kind"] = c.ownerKind;
    m.set("kuberay_cluster_info", info, 1);
    Labels provisioned = id;
    provisioned["condition"] = c.provisioned ? "true" : "false";
    m.set("kuberay_cluster_condition_provisioned", provisioned, 1);
    // Rebuilt from the status (KubeRay keeps it in memory and loses it on restart).
    if (c.provisionedSeconds) m.set("kuberay_cluster_provisioned_duration_seconds", id, *c.provisionedSeconds);
  }
}

void addOperatorCollectors(Metrics& m, MetricsSources src) {
  m.addCollector([src](Metrics& m) {
    if (src.stack) {
      m.set("rayjournal_workqueue_depth", {}, double(src.stack->queueDepth()));
      m.set("workqueue_depth", {{"name", "rayjob"}, {"controller", "rayjob"}},
            double(src.stack->rayJobQueueDepth()));
      m.set("workqueue_depth", {{"name", "raycluster"}, {"controller", "raycluster"}},
            double(src.stack->rayClusterQueueDepth()));
      collectClusterMetrics(m, src.stack->clusterSummaries());
      m.set("rayjournal_in_doubt_intents", {}, double(src.stack->projection().inDoubt().size()));
      const projection::JobProjection& projection = src.stack->projection();
      collectJobMetrics(m, src.stack->jobSummaries(), [&projection](const std::string& key) {
        return projection.retriedAttempts(key);
      });
      for (const auto& [field, n] : src.stack->ignoredFieldCounts())
        m.set("rayjournal_fields_ignored_total", {{"kind", field.first}, {"field", field.second}},
              double(n));
    }
    if (src.journal) {
      wal::JournalStats st = src.journal->stats();
      m.set("rayjournal_journal_appends_total", {}, double(st.appends));
      m.set("rayjournal_journal_syncs_total", {}, double(st.syncs));
      m.set("rayjournal_journal_bytes_total", {}, double(st.bytes));
      m.set("rayjournal_journal_latest_seq", {}, double(src.journal->latestSeq()));
      m.set("rayjournal_journal_writable", {}, src.journal->unwritable() ? 0.0 : 1.0);
      m.set("rayjournal_journal_disk_bytes", {}, double(src.journal->diskBytes()));
      m.set("rayjournal_journal_first_seq", {}, double(src.journal->firstSeq()));
      m.set("rayjournal_journal_pruned_records_total", {}, double(st.prunedRecords));
      m.set("rayjournal_journal_scrubbed_records_total", {}, double(st.scrubbedRecords));
      m.set("rayjournal_journal_scrub_corrupt_records_total", {}, double(st.scrubCorrupt));
      m.set("rayjournal_journal_write_failures_total", {}, double(st.failedWrites));
    }
    if (src.recovery) {
      m.set("rayjournal_recovery_duration_seconds", {}, src.recovery->seconds);
      m.set("rayjournal_recovery_replayed_records", {}, double(src.recovery->replayedRecords));
    }
    if (src.calls) {
      m.clear("rayjournal_kube_api_calls_total");
      m.clear("rayjournal_ray_api_calls_total");
      for (const auto& [key, n] : src.calls->byOutcome()) {
        const auto& [verb, kind, outcome] = key;
        if (verb.rfind("ray ", 0) == 0)
          m.set("rayjournal_ray_api_calls_total", {{"verb", verb.substr(4)}, {"outcome", outcome}},
                double(n));
        else
          m.set("rayjournal_kube_api_calls_total",
                {{"verb", verb}, {"kind", kind}, {"code", outcome}}, double(n));
      }
    }
    m.set("rayjournal_leader", {}, src.leader ? src.leader() : 1.0);
  });
}

}  // namespace rayjournal::operator_
