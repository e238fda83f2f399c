// The objects the RayCluster state machine asks for, built from the cluster's templates (which
// carry fields nobody models, so this unit works on documents; RayClusterBuild.cpp). No JSON in
// this header. Pure functions.
#pragma once

#include <string>

#include "controller/RayClusterViews.h"

namespace rayjournal::controller {

model::ApiObject headServiceFor(const RayClusterView& cluster);
model::ApiObject headPodFor(const RayClusterView& cluster);
model::ApiObject workerPodFor(const RayClusterView& cluster, const WorkerGroupView& group,
                              const std::string& podName);

// What one pass counted, for the status.
struct ClusterTally {
  bool headReady = false;
  bool allReady = false;
  int64_t desired = 0;
  int64_t ready = 0;
};
// The status to write (state, replica counts, head, conditions, observedGeneration), or null
// when it equals the cluster's current status.
model::ApiObject clusterStatusFor(const RayClusterView& cluster, const ClusterTally& tally);

}  // namespace rayjournal::controller
