// One reconcile of one RayJob key: read the RayJob and its children (and ask Ray where the
// state needs it) → decide() → Executor. Journals drift when Kubernetes' status differs from
// what the journal last wrote, and decides from Kubernetes. Thread-safe for distinct keys.
#pragma once

#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "controller/Executor.h"
#include "projection/JobProjection.h"
#include "runtime/PlannedReconciler.h"

namespace rayjournal::runtime {

// atRest: terminal, suspended, invalid, or waiting for the user.
using ReconcileResult = Result;

class RayJobReconciler : public PlannedReconciler {
 public:
  RayJobReconciler(kube::KubeClient& kube, ray::RayJobsClient& ray, controller::Executor& executor,
                   projection::JobProjection& projection, wal::Journal& journal,
                   const Clock& clock, controller::DecideConfig config)
      : PlannedReconciler(executor, "RayJob"),
        kube_(kube),
        ray_(ray),
        projection_(projection),
        journal_(journal),
        clock_(clock),
        config_(config) {}

  std::variant<Result, Decision> decideKey(const std::string& key) override;

 private:
  controller::Observed observe(controller::RayJob job);
  void observeHeadPods(controller::Observed& o, const nlohmann::json& cluster);
  void observePodGroup(controller::Observed& o);
  static constexpr size_t kMaxPodGroupsSeen = 100000;
  std::mutex podGroupsMu_;
  std::unordered_map<std::string, std::string> podGroupsSeen_;  // RayJob uid -> gang last seen
  // Token auth: hands the cluster's token (from its Secret) to the Ray client for this
  // dashboard, once per cluster uid.
  void useClusterToken(const nlohmann::json& cluster, const std::string& dashboard);
  std::mutex tokensMu_;
  std::set<std::string> tokenClusters_;  // cluster uids whose token the Ray client has
  void checkDrift(const controller::RayJob& job);
  // The dashboard's last answer for a Running RayJob, reused for DecideConfig::rayAnswerReuseMs.
  struct RecentAnswer {
    std::string jobId, dashboard;
    ray::JobInfo info;
    int64_t atMs = 0;
  };
  void askRay(const controller::RayJob& job, controller::RayProbe& probe);
  bool reuseAnswer(const controller::RayJob& job, controller::RayProbe& probe);
  void keepAnswer(const controller::RayJob& job, const controller::RayProbe& probe);
  void forgetAnswer(const std::string& key);
  std::mutex answersMu_;
  std::unordered_map<std::string, RecentAnswer> answers_;  // by RayJob key; Running ones only

  kube::KubeClient& kube_;
  ray::RayJobsClient& ray_;
  projection::JobProjection& projection_;
  wal::Journal& journal_;
  const Clock& clock_;
  controller::DecideConfig config_;
};

bool isAtRest(const controller::RayJob& job);

}  // namespace rayjournal::runtime
