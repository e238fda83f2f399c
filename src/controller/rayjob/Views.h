// The RayJob's children as its state machine reads them: each parsed once, at the boundary,
// into the few facts the decision uses, with the document kept beside it (the builders and the
// Executor write back from it; fields nobody models survive). Built by Views.cpp from the
// informer cache's snapshots; no JSON here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/Document.h"

namespace rayjournal::controller {

struct ClusterView {
  model::Document raw;
  bool deleting = false;
  bool ownedBy = false;  // controlled by the RayJob being decided (its uid)
  std::string state;     // status.state ("ready", "suspended", ...)
  std::optional<bool> headPodReady;  // the HeadPodReady condition, when the cluster has one
  model::Document status;            // copied into the RayJob's status.rayClusterStatus
  bool workersSuspended = true;      // every worker group has suspend: true
};

struct ServiceView {
  model::Document raw;
  std::string name;
  int dashboardPort = 8265;     // the port named "dashboard"
  std::string selectorCluster;  // spec.selector["ray.io/cluster"]
};

// The K8sJobMode submitter (a batch Job).
struct SubmitterView {
  bool deleting = false;
  bool complete = false;  // condition Complete=True
  bool failed = false;    // condition Failed=True
  std::string finishedAt;  // lastTransitionTime of that condition
  std::string failedReason, failedMessage;
};

// A SidecarMode head Pod: how its submitter container ended, if it did.
struct HeadPodView {
  bool submitterExited = false;  // the submitter container's state is terminated
  std::string finishedAt;
  int exitCode = 0;
  std::string terminatedReason;  // state.terminated.reason ("Error", "OOMKilled", ...)
  // SidecarSubmitterRestart: the container's restarts, and whether it terminated before
  // (lastState.terminated, set once the kubelet restarted it).
  int restartCount = 0;
  bool terminatedBefore = false;
};

// The boundary: views of snapshots as the informer cache holds them (never modified).
ClusterView clusterView(std::shared_ptr<const nlohmann::json> cluster, const std::string& jobUid);
ServiceView serviceView(std::shared_ptr<const nlohmann::json> service);
SubmitterView submitterView(const nlohmann::json& job);
HeadPodView headPodView(const nlohmann::json& pod);

}  // namespace rayjournal::controller
