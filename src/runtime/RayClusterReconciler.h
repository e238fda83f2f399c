// The RayCluster reconciler: for one RayCluster key it reads the cluster, the Pods it owns (the
// cache's owner index) and its head Service, asks decideRayCluster what should change, and hands
// every Pod and Service create/delete and the status write to the Executor as intents, so each
// is durable in the journal before it runs and is resolved after a restart like a RayJob's.
// Its records are about the RayCluster and name the RayJob attempt it belongs to.
// Thread-safe for distinct keys.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "controller/Executor.h"
#include "controller/raycluster/RayClusterViews.h"
#include "projection/JobProjection.h"
#include "runtime/PlannedReconciler.h"

namespace rayjournal::runtime {

class RayClusterReconciler : public PlannedReconciler {
 public:
  RayClusterReconciler(kube::KubeClient& kube, controller::Executor& executor,
                       const projection::JobProjection& projection, const Clock& clock,
                       controller::ClusterContext context = {})
      : PlannedReconciler(executor, "RayCluster"),
        kube_(kube),
        projection_(projection),
        clock_(clock),
        context_(std::move(context)) {}

  std::variant<Result, Decision> decideKey(const std::string& key) override;

 private:
  controller::Subject subjectOf(const kube::Snapshot& cluster) const;
  // A deleted GCS FT cluster's Redis cleanup Job; with headGone, whether its namespace is going.
  controller::RedisCleanupJob cleanupJobOf(const std::string& ns, const std::string& cluster,
                                           const std::string& uid, bool headGone);
  // An autoscaling cluster's RBAC objects, read from the API server until seen complete once.
  controller::AutoscalerRbac autoscalerRbacOf(const controller::RayClusterView& cluster,
                                              const std::string& uid);
  // The embedded GCS store's claim, read from the API server (claims are not watched) until
  // found, then once per generation of the cluster (for the drift a spec change may bring).
  controller::GcsStorageClaim gcsStorageClaimOf(const controller::RayClusterView& cluster,
                                                const std::string& uid);

  // Volcano: a standalone cluster's PodGroup into `observed` (podGroupRead), unless it was seen
  // with this generation's gang already.
  void podGroupOf(controller::ClusterObserved& observed, const std::string& uid);

  // A spec change (generation past the status's observedGeneration) not journaled yet by this
  // process, with who made it; nullopt otherwise. Once per generation: the status that records
  // the generation may come a pass later. After a restart it is journaled again, as seen again.
  std::optional<events::SpecChanged> specChangeToJournal(const controller::RayClusterView& cluster,
                                                         const std::string& uid);

  static constexpr size_t kMaxRbacSeen = 100000;
  static constexpr size_t kMaxSpecSeen = 100000;
  static constexpr size_t kMaxClaimSeen = 100000;
  static constexpr size_t kMaxPodGroupSeen = 100000;
  kube::KubeClient& kube_;
  const projection::JobProjection& projection_;
  const Clock& clock_;
  controller::ClusterContext context_;
  std::mutex rbacMu_;
  std::set<std::string> rbacSeen_;  // cluster uids whose RBAC was complete once
  std::mutex claimMu_;
  std::map<std::string, std::pair<int64_t, std::string>> claimSeen_;  // uid -> generation, drift
  std::mutex podGroupMu_;
  std::map<std::string, int64_t> podGroupSeen_;  // uid -> generation whose gang it had
  std::mutex specMu_;
  std::map<std::string, int64_t> specSeen_;  // cluster uid -> last generation journaled
};

// The RayJob key ("ns/name") that controls a RayCluster, or its own key when none does (a
// cluster a user made for clusterSelector RayJobs): whose shard acts for it.
std::string shardKeyOfCluster(const nlohmann::json& cluster);

}  // namespace rayjournal::runtime
