// What a RayCluster's Pods ask of the scheduler, summed as KubeRay's utils do
// (CalculatePodResource, CalculateDesiredResources, CalculateMinResources): the RayCluster
// status's desired resources and a gang scheduler's minimum resources. Pure functions.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "model/Quantity.h"

namespace rayjournal::controller {

// Resource name to quantity, each written as the first quantity of that name was (binary or
// decimal suffixes), as apimachinery's Quantity.Add keeps the receiver's format.
using Resources = std::map<std::string, model::Quantity>;

// A worker group with suspend: true (it has, and counts, no Pods).
bool groupSuspended(const nlohmann::json& group);
// A group's (headGroupSpec or a worker group's) Pod template spec.
const nlohmann::json& groupPodSpec(const nlohmann::json& group);
// A RayJob's submitter Pod spec as KubeRay's GetSubmitterTemplate makes it: the user's
// submitterPodTemplate, else its default container (requests 500m/200Mi, limits 1/1Gi).
nlohmann::json submitterPodSpec(const nlohmann::json& rayJobSpec);

// `times` x each of `more` added into `into`.
void addResources(Resources& into, const Resources& more, long double times = 1);
// A Pod's resources: each container's requests, with limits standing in for missing requests.
Resources podResources(const nlohmann::json& podSpec);
// The head's resources plus replicas (as written, not clamped) x numOfHosts of each group's;
// suspended groups count nothing.
Resources desiredResources(const nlohmann::json& clusterSpec);
// The same with minReplicas.
Resources minResources(const nlohmann::json& clusterSpec);
// Worker Pods wanted: each group's replicas clamped to [min, max] x numOfHosts (KubeRay's
// CalculateDesiredReplicas), or minReplicas x numOfHosts (CalculateMinReplicas); suspended
// groups count nothing.
int64_t desiredWorkerPods(const nlohmann::json& clusterSpec);
int64_t minWorkerPods(const nlohmann::json& clusterSpec);
// {"cpu": "3", "memory": "4Gi", ...}: a Kubernetes ResourceList.
nlohmann::json resourceList(const Resources& resources);

}  // namespace rayjournal::controller
