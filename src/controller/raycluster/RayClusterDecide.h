// The RayCluster part a RayJob depends on, as one pure decision per cluster: which head Pod,
// head Service and worker Pods should exist (and, under autoscaling, the Ray autoscaler's
// ServiceAccount, Role and RoleBinding, before any Pod), which Pods of suspended or shrunk groups must go,
// and the status (state, conditions, replica counts) the cluster should show. The
// RayClusterReconciler journals each of these as an intent before the Executor carries it out.
// Pods get deterministic names (model/Names), so a lost create response can never produce a
// second head Pod (W14); readiness is recomputed from the Pods every time, so a head Pod that
// stops being ready turns the cluster back to not-ready (W15); the RayClusterProvisioned
// condition stays True once reached, as in KubeRay, and with the
// ray.io/disable-provisioned-head-restart annotation a provisioned cluster's head Pod is not
// recreated (SidecarMode). Bounded whatever the spec asks: desired replicas are clamped and
// saturate instead of overflowing, and at most kMaxPodCreatesPerReconcile Pods are planned per
// call (the rest on the next). Pure: no I/O, no clock; reads views (RayClusterViews.h), asks
// RayClusterBuild for the objects.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "controller/raycluster/RayClusterViews.h"
#include "events/Events.h"

namespace rayjournal::controller {

inline constexpr size_t kMaxPodCreatesPerReconcile = 256;

// A Warning Event for the cluster that no intent carries (KubeRay's wording).
struct ClusterWarning {
  std::string reason;
  std::string message;
  std::string action = "Reconcile";  // KubeRay's K8sEventAction
};

// Under autoscaling the reconciler asks again after this long while the head's named
// ServiceAccount is missing (it is not watched, so no event would bring the cluster back).
inline constexpr int64_t kMissingServiceAccountRetryMs = 10000;

// A cluster whose status another writer left invalid is looked at again after this long
// (KubeRay's DefaultRequeueDuration).
inline constexpr int64_t kInvalidStatusRetryMs = 2000;

// The cluster's Redis cleanup finalizer (ray.io/gcs-ft-redis-cleanup-finalizer).
enum class FinalizerChange { None, Add, Remove };

struct ClusterPlan {
  std::vector<std::pair<std::string, model::ApiObject>> creates;  // (kind, object)
  FinalizerChange finalizer = FinalizerChange::None;  // added first, removed last
  std::vector<ClusterWarning> warnings;
  int64_t retryAfterMs = -1;  // >= 0: look again then, whatever the watches bring
  std::vector<std::string> deletePods;
  model::ApiObject podGroupUpdate;  // Volcano: the PodGroup with the gang changed (null: none)
  model::ApiObject status;  // the status to write; null when unchanged
  std::string why;
  bool more = false;  // Pods still to create beyond this plan's batch
};

ClusterPlan decideRayCluster(const ClusterObserved& observed);

// The spec changed since the operator last wrote the status (generation past observedGeneration,
// once a status was written at all): a fact the reconciler journals, with who changed it, before
// the intents that follow from it.
bool specChangedSinceStatus(const RayClusterView& cluster);
events::SpecChanged specChangedOf(const RayClusterView& cluster, std::string changedBy);

}  // namespace rayjournal::controller
