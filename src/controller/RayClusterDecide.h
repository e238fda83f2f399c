// The RayCluster part a RayJob depends on, as one pure decision per cluster: which head Pod,
// head Service and worker Pods should exist, which Pods of suspended groups must go, and the
// status (state, conditions, replica counts) the cluster should show.
// Pods get deterministic names (<cluster>-head, <cluster>-<group>-worker-<i>), so a lost
// create response can never produce a second head Pod (W14); readiness is recomputed from the
// Pods every time, so a head Pod that stops being ready turns the cluster back to not-ready
// (W15); the RayClusterProvisioned condition stays True once reached, as in KubeRay, and with
// the ray.io/disable-provisioned-head-restart annotation a provisioned cluster's head Pod is
// not recreated (SidecarMode). Pure: no I/O, no clock.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rayjournal::controller {

using nlohmann::json;

struct ClusterObserved {
  const json& cluster;     // the RayCluster as last read (outlives the decision)
  std::vector<json> pods;  // Pods labelled ray.io/cluster=<name> in its namespace
  bool headServiceExists = false;
};

struct ClusterPlan {
  std::vector<std::pair<std::string, json>> creates;  // (kind, object)
  std::vector<std::string> deletePods;
  json status;  // the status to write; null when unchanged
  std::string why;
};

ClusterPlan decideRayCluster(const ClusterObserved& observed);

// The head Service name and the dashboard port of a RayCluster spec.
std::string headServiceName(const std::string& cluster);
int dashboardPort(const json& clusterSpec);

}  // namespace rayjournal::controller
