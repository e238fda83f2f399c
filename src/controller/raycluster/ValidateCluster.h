// KubeRay v1.7.0's ValidateRayClusterSpec, the part that applies to a RayJob's rayClusterSpec:
// the same rules in the same order, KubeRay's message texts word for word (a RayJob prefixes
// them with "The RayJob spec is invalid: "). Pure.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "controller/FeatureGates.h"

namespace rayjournal::controller {

// The first problem of the cluster spec, or "" when it is valid. `annotations` are the owning
// object's (the RayJob's): ray.io/ft-enabled and ray.io/external-storage-namespace live there.
std::string rayClusterSpecProblem(const nlohmann::json& cluster,
                                  const std::map<std::string, std::string>& annotations,
                                  const FeatureGates& gates);

// KubeRay's ValidateRayClusterMetadata: the name at most 53 characters and a DNS-1035 label
// (its Pods' and Services' names are built from it). "" when valid.
std::string rayClusterMetadataProblem(const std::string& name);

}  // namespace rayjournal::controller
