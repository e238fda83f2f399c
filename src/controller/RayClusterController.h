// Runs decideRayCluster for every RayCluster through a KubeClient: watches RayClusters and
// their Pods, reads the Pods and the head Service, creates what is missing (AlreadyExists is
// fine: names are deterministic), deletes surplus Pods, writes the status. Used where no KubeRay
// runs (real clusters without KubeRay, the e2e tier). Its side effects are idempotent by name
// and level-triggered, so they are not journaled. Thread-safe; start() returns at once, stop()
// joins the workers.
#pragma once

#include <thread>
#include <vector>

#include "adapters/Clock.h"
#include "adapters/kube/KubeClient.h"
#include "controller/RayClusterDecide.h"
#include "controller/WorkQueue.h"

namespace rayjournal::controller {

class RayClusterController {
 public:
  RayClusterController(kube::KubeClient& kube, const Clock& clock, int workers = 1);
  ~RayClusterController();
  void start();
  void stop();
  // Reconciles one cluster now ("ns/name"); returns false when it must be retried.
  bool reconcile(const std::string& key);

 private:
  void worker();
  kube::KubeClient& kube_;
  WorkQueue queue_;
  int workers_;
  std::vector<std::thread> threads_;
};

}  // namespace rayjournal::controller
