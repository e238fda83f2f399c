#include "controller/FeatureGates.h"

#include <array>
#include <optional>

namespace rayjournal::controller {
namespace {

// KubeRay v1.7.0's gates for CRDs or features rayjournal does not have: accepted, logged.
constexpr std::array<std::string_view, 7> kWithoutEffect{
    "RayMultiHostIndexing",    "RayServiceIncrementalUpgrade", "RayCronJob",
    "RayClusterNetworkPolicy", "RayClusterMTLS",               "RayClusterHistoryServer",
    "KubernetesWAS"};

std::optional<bool> parseGoBool(std::string_view v) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"})
    if (v == t) return true;
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"})
    if (v == f) return false;
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Applies one "Name=value"; returns the error, or "".
std::string applyGate(std::string_view pair, FeatureGateParse& out) {
  size_t eq = pair.find('=');
  if (eq == std::string_view::npos)
    return "missing bool value for " + std::string(pair);
  std::string_view name = trim(pair.substr(0, eq));
  std::string_view text = trim(pair.substr(eq + 1));
  std::optional<bool> value = parseGoBool(text);
  if (!value)
    return "invalid value of " + std::string(name) + "=" + std::string(text) +
           ", err: strconv.ParseBool: parsing \"" + std::string(text) + "\": invalid syntax";
  if (name == "RayJobDeletionPolicy") {
    out.gates.rayJobDeletionPolicy = *value;
  } else if (name == "RayClusterStatusConditions") {
    out.gates.rayClusterStatusConditions = *value;
  } else if (name == "SidecarSubmitterRestart") {
    out.gates.sidecarSubmitterRestart = *value;
  } else if (name == "GCSFaultToleranceEmbeddedStorage") {
    out.gates.gcsFaultToleranceEmbeddedStorage = *value;
  } else {
    bool known = false;
    for (std::string_view k : kWithoutEffect) known = known || k == name;
    if (!known) return "unrecognized feature gate: " + std::string(name);
    out.withoutEffect.emplace_back(name);
  }
  return "";
}

}  // namespace

FeatureGateParse parseFeatureGates(std::string_view text) {
  FeatureGateParse out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view pair = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (pair.empty()) continue;
    out.error = applyGate(pair, out);
    if (!out.error.empty()) return out;
  }
  return out;
}

}  // namespace rayjournal::controller
