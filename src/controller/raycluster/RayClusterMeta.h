// Metadata shared by the objects a RayCluster owns (its head Service and Pods), for the builders'
// .cpp files only: this header includes the JSON library, which the decision must not see.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/Quantity.h"

namespace rayjournal::controller {

// name, namespace (the cluster's), labels and the controller ownerReference to the cluster.
nlohmann::json ownedMeta(const std::string& name, const nlohmann::json& cluster,
                         nlohmann::json labels);
// KubeRay's ray.io/identifier value "<cluster>-<nodeType>", cut to a label's 63 characters from
// the front and never starting with punctuation (utils.CheckLabel).
std::string identifierLabel(const std::string& cluster, const std::string& nodeType);
// KubeRay's utils.CheckLabel: the last 63 characters, a leading punctuation mark replaced by 'r'.
std::string checkLabel(std::string value);
// "<head Service>.<namespace>.svc.<cluster domain>": how workers and drivers reach the head.
std::string headServiceFqdn(const struct RayClusterView& cluster);

// Whether the container's env names this variable.
bool containerHasEnv(const nlohmann::json& container, const std::string& name);
// An env var from the downward API: {name, valueFrom.fieldRef.fieldPath}.
nlohmann::json fieldEnv(const std::string& name, const std::string& fieldPath);
// KubeRay's GetContainerCommand: bash with the flags ("c", "ce"), "l" added for a login shell
// (ENABLE_LOGIN_SHELL), then "--".
nlohmann::json bashCommand(const std::string& flags, bool loginShell);

// An integer member, else the fallback (absent, or of another type).
int64_t integerAt(const nlohmann::json& object, const char* key, int64_t fallback);
// A value the CRD types as a string (a rayStartParams value, a quantity); a number or boolean a
// lenient writer left in is rendered as YAML would have quoted it.
std::string textOf(const nlohmann::json& value);
// A resource quantity written as a string or a number; nullopt when it is not one.
std::optional<model::Quantity> quantityOf(const nlohmann::json& value);
// KubeRay's IsGPUResourceKey: "<vendor>/gpu" style names and NVIDIA MIG slices.
bool isGpuResourceKey(const std::string& key);

}  // namespace rayjournal::controller
