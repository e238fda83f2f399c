// The rest of the simulated cluster, the part a cluster has without this operator, advanced by
// advance(): a kubelet (Pods become Running and Ready after podStartDelayMs; a SidecarMode
// submitter container runs in its head Pod) and a Job controller that runs submitter Jobs the
// way KubeRay's submitter shell does (status check, submit if absent, follow until the Ray job
// is terminal), and the Ray autoscaler of autoscaling clusters (SimAutoscaler). It runs no
// decision of the operator: RayClusters get their Pods and Services
// from the operator's own journaled RayCluster reconciler, in simulation as on a real cluster.
// Event-driven: it watches Pods and Jobs and each advance() visits only objects that changed or
// are waiting on time or Ray, so a round costs what is in flight, not what exists.
// Not thread-safe with itself: call advance() from one thread.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "adapters/sim/SimAutoscaler.h"
#include "adapters/sim/SimKube.h"
#include "adapters/sim/SimRay.h"

namespace rayjournal::sim {

struct SimWorldOptions {
  int64_t podStartDelayMs = 200;
  int64_t submitterStartDelayMs = 100;
};

class SimWorld {
 public:
  SimWorld(SimKube& kube, SimRay& ray, const Clock& clock, SimWorldOptions options = {});
  // Moves every simulated actor forward to the clock's now. Returns the number of changes made.
  int advance();
  void setOptions(SimWorldOptions options) { options_ = options; }
  // The submitter Job's Pod goes (a node loss) and the Job starts another at once, which runs
  // the shell from its status check again.
  void replaceSubmitterPod(const json& submitterJob);

 private:
  using Keys = std::set<std::string>;  // "namespace/name"
  std::string headDashboard(const json& pod);
  int runPod(const std::string& ns, const std::string& name, Keys& again);
  int runSidecar(json pod, const json& container, Keys& again);
  std::optional<std::pair<int, std::string>> sidecarStep(const json& pod, const json& container,
                                                         bool restarts);
  bool sidecarBroken(const json& pod);
  void mark(Keys& keys, const std::string& key);
  bool submitterBroken(const json& job);
  int runSubmitterJob(const json& job);
  void noteGcsStorage(const json& pod);
  void noteHeadLost(const json& pod);
  // A volume of the Pod names a PersistentVolumeClaim that does not exist.
  bool claimMissing(const json& pod);
  static bool isRedisCleanupJob(const json& job);
  std::string runRedisCleanup(const json& job);
  std::string submitterShell(const json& job, const std::string& uid);
  std::string tokenFromEnv(const json& container, const std::string& ns);

  SimKube& kube_;
  SimRay& ray_;
  const Clock& clock_;
  SimWorldOptions options_;
  SimAutoscaler autoscaler_;
  std::mutex dirtyMu_;
  Keys dirtyPods_, dirtyJobs_;
  std::set<std::pair<std::string, std::string>> lostHeads_;  // {namespace, cluster} without FT
  // Submitter Jobs and sidecar head Pods (by uid) whose submitter submitted and now follows the
  // job, and when a Job's next Pod may start after its last one failed.
  static constexpr int64_t kPodBackoffMs = 10000;  // the Job controller's first pod backoff
  std::set<std::string> following_;
  std::map<std::string, int64_t> nextPodAtMs_;
};

}  // namespace rayjournal::sim
