// The RayCluster part a RayJob depends on, as one pure decision per cluster: which head Pod,
// head Service and worker Pods should exist, which Pods of suspended or shrunk groups must go,
// and the status (state, conditions, replica counts) the cluster should show. The
// RayClusterReconciler journals each of these as an intent before the Executor carries it out.
// Pods get deterministic names (model/Names), so a lost create response can never produce a
// second head Pod (W14); readiness is recomputed from the Pods every time, so a head Pod that
// stops being ready turns the cluster back to not-ready (W15); the RayClusterProvisioned
// condition stays True once reached, as in KubeRay, and with the
// ray.io/disable-provisioned-head-restart annotation a provisioned cluster's head Pod is not
// recreated (SidecarMode). Bounded whatever the spec asks: desired replicas are clamped and
// saturate instead of overflowing, and at most kMaxPodCreatesPerReconcile Pods are planned per
// call (the rest on the next). Pure: no I/O, no clock.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rayjournal::controller {

using nlohmann::json;

inline constexpr size_t kMaxPodCreatesPerReconcile = 64;
// Above this a group's desired count saturates: no cluster needs more, and the arithmetic of
// replicas x numOfHosts stays far from overflow.
inline constexpr int64_t kMaxDesiredPodsPerGroup = 1'000'000;

struct ClusterObserved {
  const json& cluster;                             // the RayCluster as last read
  std::vector<std::shared_ptr<const json>> pods;  // Pods the cluster owns (by owner uid)
  bool headServiceExists = false;
};

struct ClusterPlan {
  std::vector<std::pair<std::string, json>> creates;  // (kind, object)
  std::vector<std::string> deletePods;
  json status;  // the status to write; null when unchanged
  std::string why;
  bool more = false;  // Pods still to create beyond this plan's batch
};

ClusterPlan decideRayCluster(const ClusterObserved& observed);

// The head Service name of a RayCluster (the user's headGroupSpec.headService name when set).
std::string headServiceNameOf(const std::string& cluster, const json& clusterSpec);
int dashboardPort(const json& clusterSpec);
// A worker group's desired Pods: clamp(replicas, minReplicas, maxReplicas) x numOfHosts, 0 when
// suspended, never negative, saturating at kMaxDesiredPodsPerGroup.
int64_t desiredWorkers(const json& group);

}  // namespace rayjournal::controller
