// The Ray autoscaler of the simulated cluster (Ray's kuberay node provider, in small), run for
// every RayCluster whose head Pod runs the `autoscaler` sidecar the operator built. It does what
// the real one does to the RayCluster and nothing else: a JSON patch of the spec. While Ray jobs of
// the cluster ask for more CPUs than its ready Ray nodes offer (the RayJob annotation
// rayjournal.io/sim-demand: "cpu=N", recorded with the submission), it raises the worker groups'
// replicas, up to maxReplicas; a job starts its simulated run once the CPUs are there. When no job
// wants CPUs for the idle timeout (the group's idleTimeoutSeconds, else
// autoscalerOptions.idleTimeoutSeconds, else 60 s), it lowers replicas to minReplicas and names the
// Pods to remove in scaleStrategy.workersToDelete, and clears that list once they are gone.
// A Ray node's CPUs are what its `ray start` says (--num-cpus), else its CPU limit, else 1.
// Not thread-safe: SimWorld::advance() drives it from one thread.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>

#include "adapters/sim/SimKube.h"

namespace rayjournal::sim {

inline constexpr const char* kSimDemandAnnotation = "rayjournal.io/sim-demand";
inline constexpr int64_t kDefaultIdleTimeoutMs = 60000;

// "cpu=8" -> 8; 0 for anything else (no demand).
int64_t parseCpuDemand(const std::string& annotation);

class SimAutoscaler {
 public:
  SimAutoscaler(SimKube& kube, const Clock& clock);
  // One round over the autoscaling clusters; returns the number of changes made.
  int advance();

 private:
  struct Capacity {
    int64_t readyCpus = 0;  // of ready, not deleting, Ray nodes
    std::map<std::string, std::set<std::string>> workers;  // group -> live worker Pod names
  };
  int step(const std::string& ns, const std::string& name);
  Capacity capacityOf(const std::string& ns, const std::string& name);
  int64_t startWaitingJobs(const std::string& ns, const std::string& name, int64_t readyCpus);
  bool scaleUp(json& cluster, int64_t demand, int64_t headCpus);
  bool scaleDown(json& cluster, const Capacity& capacity);
  bool clearDeleted(json& cluster, const Capacity& capacity);

  SimKube& kube_;
  const Clock& clock_;
  std::mutex mu_;                         // clusters_: the watch adds from writers' threads
  std::set<std::string> clusters_;        // "ns/name" of autoscaling RayClusters
  std::map<std::string, int64_t> idleSinceMs_;  // no job wanted CPUs since then
};

}  // namespace rayjournal::sim
