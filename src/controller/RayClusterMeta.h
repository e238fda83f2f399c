// Metadata shared by the objects a RayCluster owns (its head Service and Pods), for the builders'
// .cpp files only: this header includes the JSON library, which the decision must not see.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::controller {

// name, namespace (the cluster's), labels and the controller ownerReference to the cluster.
nlohmann::json ownedMeta(const std::string& name, const nlohmann::json& cluster,
                         nlohmann::json labels);
// KubeRay's ray.io/identifier value "<cluster>-<nodeType>", cut to a label's 63 characters from
// the front and never starting with punctuation (utils.CheckLabel).
std::string identifierLabel(const std::string& cluster, const std::string& nodeType);
// "<head Service>.<namespace>.svc.<cluster domain>": how workers and drivers reach the head.
std::string headServiceFqdn(const struct RayClusterView& cluster);

}  // namespace rayjournal::controller
