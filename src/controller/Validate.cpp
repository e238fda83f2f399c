#include "controller/Validate.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>

#include "controller/Children.h"
#include "controller/JsonAccess.h"

namespace rayjournal::controller {
namespace {

std::optional<ValidationError> spec(const std::string& message) {
  return ValidationError{"InvalidRayJobSpec", message};
}

std::optional<ValidationError> validateMetadata(const RayJob& job) {
  static const std::regex dns1035("^[a-z]([-a-z0-9]*[a-z0-9])?$");
  if (job.name.size() > 47) {
    return ValidationError{"InvalidRayJobMetadata",
                           "metadata.name: RayJob name should be no more than 47 characters (got " +
                               std::to_string(job.name.size()) + ")"};
  }
  if (!std::regex_match(job.name, dns1035)) {
    return ValidationError{"InvalidRayJobMetadata",
                           "metadata.name: \"" + job.name + "\" is not a valid DNS-1035 label"};
  }
  return std::nullopt;
}

std::optional<ValidationError> validateClusterSource(const RayJobSpec& s) {
  bool selector = !s.clusterSelector.empty();
  if (s.rayClusterSpec.get().is_null() && !selector)
    return spec("spec.rayClusterSpec: one of rayClusterSpec or clusterSelector must be set");
  if (selector) {
    auto it = s.clusterSelector.find("ray.io/cluster");
    if (it == s.clusterSelector.end() || it->second.empty())
      return spec("spec.clusterSelector: the ray.io/cluster value must be non-empty");
    if (s.submissionMode == SubmissionMode::SidecarMode)
      return spec("spec.clusterSelector: cannot be used with SidecarMode");
    if (s.backoffLimit.value_or(0) > 0)
      return spec("spec.backoffLimit: must be 0 with clusterSelector");
    if (s.suspend) return spec("spec.suspend: cannot be used with clusterSelector");
  }
  if (!s.rayClusterSpec.get().is_null()) {
    const json& head = objectAt(s.rayClusterSpec.get(), "headGroupSpec");
    if (arrayAt(objectAt(objectAt(head, "template"), "spec"), "containers").empty()) {
      return spec(
          "spec.rayClusterSpec.headGroupSpec.template.spec.containers: the head group needs at "
          "least one container");
    }
    if (objectAt(s.rayClusterSpec.get(), "authOptions").value("enableK8sTokenAuth", false)) {
      return spec("spec.rayClusterSpec.authOptions.enableK8sTokenAuth: not supported for RayJob");
    }
    for (const auto& g : arrayAt(s.rayClusterSpec.get(), "workerGroupSpecs")) {
      int min = g.value("minReplicas", 0), max = g.value("maxReplicas", 2147483647);
      if (min < 0 || min > max)
        return spec("spec.rayClusterSpec.workerGroupSpecs[" + g.value("groupName", "") +
                    "]: need 0 <= minReplicas <= maxReplicas");
    }
  }
  return std::nullopt;
}

std::optional<ValidationError> validateModes(const RayJobSpec& s) {
  if (s.submissionMode == SubmissionMode::Unknown)
    return spec("spec.submissionMode: unknown mode \"" + s.submissionModeText + "\"");
  if (s.submissionMode == SubmissionMode::InteractiveMode && s.backoffLimit.value_or(0) > 0)
    return spec("spec.backoffLimit: must be 0 in InteractiveMode");
  if (s.submissionMode == SubmissionMode::SidecarMode) {
    if (!s.submitterPodTemplate.get().is_null())
      return spec("spec.submitterPodTemplate: not allowed in SidecarMode");
    if (s.submitterBackoffLimit) return spec("spec.submitterConfig: not allowed in SidecarMode");
    std::string restart = stringAt(
        objectAt(objectAt(objectAt(s.rayClusterSpec.get(), "headGroupSpec"), "template"), "spec"),
        "restartPolicy");
    if (!restart.empty() && restart != "Never")
      return spec(
          "spec.rayClusterSpec.headGroupSpec.template.spec.restartPolicy: must be empty or Never "
          "in SidecarMode");
  }
  return std::nullopt;
}

std::optional<ValidationError> validateNumbers(const RayJobSpec& s) {
  if (s.suspend && !s.shutdownAfterJobFinishes)
    return spec("spec.suspend: a suspended RayJob requires spec.shutdownAfterJobFinishes=true");
  if (s.ttlSecondsAfterFinished < 0) return spec("spec.ttlSecondsAfterFinished: must be >= 0");
  if (s.ttlSecondsAfterFinished > 0 && !s.shutdownAfterJobFinishes &&
      s.deletionStrategyDocument.get().is_null()) {
    return spec(
        "spec.ttlSecondsAfterFinished: only meaningful with spec.shutdownAfterJobFinishes=true");
  }
  if (s.activeDeadlineSeconds && *s.activeDeadlineSeconds <= 0)
    return spec("spec.activeDeadlineSeconds: must be > 0");
  if (s.preRunningDeadlineSeconds && *s.preRunningDeadlineSeconds <= 0)
    return spec("spec.preRunningDeadlineSeconds: must be > 0");
  if (s.backoffLimit && *s.backoffLimit < 0) return spec("spec.backoffLimit: must be >= 0");
  return std::nullopt;
}

std::optional<ValidationError> checkPolicy(const RayJobSpec& s, const std::string& policy,
                                          const std::string& where) {
  static const std::set<std::string> known{"DeleteCluster", "DeleteWorkers", "DeleteSelf",
                                           "DeleteNone"};
  if (!known.count(policy)) return spec(where + ": unknown policy \"" + policy + "\"");
  if (!s.clusterSelector.empty() && (policy == "DeleteCluster" || policy == "DeleteWorkers"))
    return spec(where + ": " + policy + " is not allowed with clusterSelector");
  if (policy == "DeleteWorkers" && s.rayClusterSpec.get().value("enableInTreeAutoscaling", false))
    return spec(where + ": DeleteWorkers is not allowed with autoscaling");
  return std::nullopt;
}

std::optional<ValidationError> validateLegacyPolicies(const RayJobSpec& s, const json& d) {
  if (!d.contains("onSuccess") || !d.contains("onFailure"))
    return spec("spec.deletionStrategy: onSuccess and onFailure must be set together");
  for (const char* k : {"onSuccess", "onFailure"}) {
    std::string policy = d[k].value("policy", "");
    if (auto e = checkPolicy(s, policy, std::string("spec.deletionStrategy.") + k + ".policy"))
      return e;
    if (policy == "DeleteNone" && s.shutdownAfterJobFinishes)
      return spec(std::string("spec.deletionStrategy.") + k +
                  ": DeleteNone conflicts with shutdownAfterJobFinishes=true");
  }
  return std::nullopt;
}

// For each condition the TTLs must not shrink as the policy's impact grows.
std::optional<ValidationError> checkTtlOrder(
    const std::map<std::string, std::map<int, int>>& ttlByCondition) {
  for (const auto& [condition, byImpact] : ttlByCondition) {
    int previous = -1;
    for (const auto& [impact, ttl] : byImpact) {
      if (ttl < previous)
        return spec("spec.deletionStrategy.deletionRules: for " + condition +
                    " the TTLs must grow Workers <= Cluster <= Self");
      previous = ttl;
    }
  }
  return std::nullopt;
}

std::optional<ValidationError> validateDeletionRules(const RayJobSpec& s, const json& list) {
  if (!list.is_array() || list.empty())
    return spec("spec.deletionStrategy.deletionRules: needs at least one rule");
  std::set<std::string> seen;
  std::map<std::string, std::map<int, int>> ttlByCondition;  // condition -> impact -> ttl
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = "spec.deletionStrategy.deletionRules[" + std::to_string(i) + "]";
    std::string policy = list[i].value("policy", "");
    if (auto e = checkPolicy(s, policy, where + ".policy")) return e;
    json cond = list[i].value("condition", json::object());
    if (cond.contains("jobStatus") == cond.contains("jobDeploymentStatus"))
      return spec(where + ".condition: set exactly one of jobStatus and jobDeploymentStatus");
    int ttl = cond.value("ttlSeconds", 0);
    if (ttl < 0) return spec(where + ".condition.ttlSeconds: must be >= 0");
    std::string condition =
        cond.contains("jobStatus")
            ? "jobStatus=" + cond["jobStatus"].get<std::string>()
            : "jobDeploymentStatus=" + cond["jobDeploymentStatus"].get<std::string>();
    if (!seen.insert(condition + "/" + policy).second)
      return spec(where + ": duplicate rule for " + condition + " and " + policy);
    int impact = policy == "DeleteWorkers"   ? 1
                 : policy == "DeleteCluster" ? 2
                 : policy == "DeleteSelf"    ? 3
                                             : 0;
    if (impact) ttlByCondition[condition][impact] = ttl;
  }
  return checkTtlOrder(ttlByCondition);
}

std::optional<ValidationError> validateDeletionStrategy(const RayJobSpec& s) {
  const json& d = s.deletionStrategyDocument.get();
  if (d.is_null()) return std::nullopt;
  if (!d.is_object() || d.empty())
    return spec("spec.deletionStrategy: must set deletionRules or onSuccess/onFailure");
  bool rules = d.contains("deletionRules");
  bool legacy = d.contains("onSuccess") || d.contains("onFailure");
  if (rules && legacy)
    return spec("spec.deletionStrategy: deletionRules cannot be combined with onSuccess/onFailure");
  if (legacy) return validateLegacyPolicies(s, d);
  if (s.shutdownAfterJobFinishes)
    return spec(
        "spec.deletionStrategy.deletionRules: cannot be combined with "
        "shutdownAfterJobFinishes=true");
  return validateDeletionRules(s, d["deletionRules"]);
}

}  // namespace

std::optional<ValidationError> validateRayJob(const RayJob& job) {
  if (auto e = validateMetadata(job)) return e;
  if (!job.specProblems.empty()) {
    std::string all;
    for (const auto& p : job.specProblems) all += (all.empty() ? "" : "; ") + p;
    return spec(all);
  }
  if (auto e = validateNumbers(job.spec)) return e;
  if (auto e = validateClusterSource(job.spec)) return e;
  if (auto e = validateModes(job.spec)) return e;
  if (auto e = validateDeletionStrategy(job.spec)) return e;
  try {
    runtimeEnvJson(job.spec.runtimeEnvYAML);
  } catch (const std::invalid_argument& e) {
    return spec(std::string("spec.") + e.what());
  }
  if (job.status.jobDeploymentStatus == DeploymentStatus::Waiting &&
      job.spec.submissionMode != SubmissionMode::InteractiveMode) {
    return ValidationError{"InvalidRayJobStatus",
                           "status.jobDeploymentStatus: Waiting is only valid in InteractiveMode"};
  }
  return std::nullopt;
}

}  // namespace rayjournal::controller
