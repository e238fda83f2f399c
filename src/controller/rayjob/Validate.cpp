#include "controller/rayjob/Validate.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "controller/rayjob/Children.h"
#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "controller/raycluster/ValidateCluster.h"
#include "model/Syntax.h"
#include "model/Version.h"

namespace rayjournal::controller {
namespace {

constexpr const char* kInvalid = "The RayJob spec is invalid: ";

std::optional<ValidationError> spec(const std::string& message) {
  return ValidationError{"InvalidRayJobSpec", message};
}

// apimachinery's IsDNS1035Label message, as KubeRay prints the list of problems.
constexpr const char* kDns1035Problem =
    "[a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')]";

// rayjournal's own annotation: a typo must not silently leave a job without its per-attempt key.
std::optional<ValidationError> validateAttemptAnnotation(const RayJob& job) {
  const char* prefix = "The RayJob metadata is invalid: ";
  auto it = job.annotations.find(kAttemptMetadataAnnotation);
  if (it == job.annotations.end()) return std::nullopt;
  if (it->second != "true" && it->second != "false")
    return ValidationError{"InvalidRayJobMetadata",
                           std::string(prefix) + "annotation " + kAttemptMetadataAnnotation +
                               " must be \"true\" or \"false\", not \"" + it->second + "\""};
  if (it->second == "true" && job.spec.metadata.contains(kAttemptMetadataKey))
    return ValidationError{"InvalidRayJobMetadata",
                           std::string(prefix) + "spec.metadata sets " + kAttemptMetadataKey +
                               ", which annotation " + kAttemptMetadataAnnotation +
                               " asks the operator to set"};
  return std::nullopt;
}

std::optional<ValidationError> validateMetadata(const RayJob& job) {
  const char* prefix = "The RayJob metadata is invalid: ";
  if (job.name.size() > 47)
    return ValidationError{"InvalidRayJobMetadata",
                           std::string(prefix) + "RayJob name should be no more than 47 characters"};
  if (!model::isDns1035Label(job.name))
    return ValidationError{"InvalidRayJobMetadata", std::string(prefix) +
                                                        "RayJob name should be a valid DNS1035 "
                                                        "label: " + kDns1035Problem};
  return validateAttemptAnnotation(job);
}

// What the CRD's schema refuses at admission (KubeRay relies on it): wrong types, enums.
std::optional<ValidationError> validateSchema(const RayJob& job) {
  std::string all;
  for (const auto& p : job.specProblems) all += (all.empty() ? "" : "; ") + p;
  if (!all.empty()) return spec(kInvalid + all);
  if (job.spec.submissionMode == SubmissionMode::Unknown)
    return spec(std::string(kInvalid) + "spec.submissionMode: unknown mode \"" +
                job.spec.submissionModeText + "\"");
  return std::nullopt;
}

bool autoscaling(const RayJobSpec& s) {
  return s.rayClusterSpec.get().value("enableInTreeAutoscaling", false);
}

bool knownPolicy(const std::string& policy) {
  static const std::set<std::string> known{"DeleteCluster", "DeleteWorkers", "DeleteSelf",
                                           "DeleteNone"};
  return known.count(policy) > 0;
}

std::optional<ValidationError> validateLegacyPolicies(const RayJobSpec& s, const json& d) {
  if (!d.contains("onSuccess") || !d.contains("onFailure"))
    return spec(
        "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set when using "
        "the legacy deletion policy fields of DeletionStrategy");
  for (const char* k : {"onSuccess", "onFailure"}) {
    if (!objectAt(d, k).contains("policy"))
      return spec(std::string("the DeletionPolicyType field of DeletionStrategy.") +
                  (k[2] == 'S' ? "OnSuccess" : "OnFailure") +
                  " cannot be unset when DeletionStrategy is enabled");
    std::string policy = stringAt(objectAt(d, k), "policy");
    if (!knownPolicy(policy))
      return spec(std::string(kInvalid) + "spec.deletionStrategy." + k +
                  ".policy: unknown policy \"" + policy + "\"");
  }
  const std::string onSuccess = stringAt(d["onSuccess"], "policy");
  const std::string onFailure = stringAt(d["onFailure"], "policy");
  auto heavy = [](const std::string& p) { return p == "DeleteCluster" || p == "DeleteWorkers"; };
  if (!s.clusterSelector.empty() && heavy(onSuccess))
    return spec("the ClusterSelector mode doesn't support DeletionStrategy=" + onSuccess +
                " on success");
  if (!s.clusterSelector.empty() && heavy(onFailure))
    return spec("the ClusterSelector mode doesn't support DeletionStrategy=" + onFailure +
                " on failure");
  if ((onSuccess == "DeleteWorkers" || onFailure == "DeleteWorkers") && autoscaling(s))
    return spec(
        "DeletionStrategy=DeleteWorkers currently does not support RayCluster with autoscaling "
        "enabled");
  if (s.shutdownAfterJobFinishes && (onSuccess == "DeleteNone" || onFailure == "DeleteNone"))
    return spec(std::string(kInvalid) +
                "shutdownAfterJobFinshes is set to 'true' while deletion policy is 'DeleteNone'");
  return std::nullopt;
}

// TTLs by policy for one condition value; the two condition kinds are kept apart.
using TtlsByCondition = std::map<std::string, std::map<std::string, int64_t>>;

// Workers <= Cluster <= Self: a policy of wider effect never runs before a narrower one.
void checkTtlOrder(const TtlsByCondition& byValue, const char* kind,
                   std::vector<std::string>& errors) {
  for (const auto& [value, ttls] : byValue) {
    const std::string* previous = nullptr;
    int64_t previousTtl = 0;
    for (const std::string policy : {"DeleteWorkers", "DeleteCluster", "DeleteSelf"}) {
      auto it = ttls.find(policy);
      if (it == ttls.end()) continue;
      if (previous && it->second < previousTtl)
        errors.push_back(std::string("for ") + kind + " '" + value + "': " + policy + " TTL (" +
                         std::to_string(it->second) + ") must be >= " + *previous + " TTL (" +
                         std::to_string(previousTtl) + ")");
      previous = &it->first;
      previousTtl = it->second;
    }
  }
}

// One rule's own problem (KubeRay's validateDeletionCondition and the contextual checks).
std::string ruleProblem(const RayJobSpec& s, const json& rule) {
  const json& cond = objectAt(rule, "condition");
  bool status = cond.contains("jobStatus"), deployment = cond.contains("jobDeploymentStatus");
  if (status && deployment) return "cannot set both JobStatus and JobDeploymentStatus at the same time";
  if (!status && !deployment) return "exactly one of JobStatus and JobDeploymentStatus must be set";
  if (integerAt(cond, "ttlSeconds", 0) < 0) return "TTLSeconds must be non-negative";
  const std::string policy = stringAt(rule, "policy");
  if (!knownPolicy(policy)) return "unknown DeletionPolicyType '" + policy + "'";
  if (!s.clusterSelector.empty() && (policy == "DeleteCluster" || policy == "DeleteWorkers"))
    return "DeletionPolicyType '" + policy + "' not supported when ClusterSelector is set";
  if (autoscaling(s) && policy == "DeleteWorkers")
    return "DeletionPolicyType 'DeleteWorkers' not supported with autoscaling enabled";
  return "";
}

// Every problem, joined by newlines as Go's errors.Join.
std::optional<ValidationError> validateDeletionRules(const RayJobSpec& s, const json& rules) {
  std::vector<std::string> errors;
  TtlsByCondition byStatus, byDeployment;
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string where = "deletionRules[" + std::to_string(i) + "]: ";
    if (std::string problem = ruleProblem(s, rules[i]); !problem.empty()) {
      errors.push_back(where + problem);
      continue;
    }
    const json& cond = rules[i]["condition"];
    const bool status = cond.contains("jobStatus");
    const std::string value = stringAt(cond, status ? "jobStatus" : "jobDeploymentStatus");
    const std::string policy = stringAt(rules[i], "policy");
    auto& ttls = (status ? byStatus : byDeployment)[value];
    if (!ttls.emplace(policy, integerAt(cond, "ttlSeconds", 0)).second)
      errors.push_back(where + "duplicate rule for DeletionPolicyType '" + policy + "' and " +
                       (status ? "JobStatus '" : "JobDeploymentStatus '") + value + "'");
  }
  checkTtlOrder(byStatus, "JobStatus", errors);
  checkTtlOrder(byDeployment, "JobDeploymentStatus", errors);
  if (errors.empty()) return std::nullopt;
  std::string joined;
  for (const auto& e : errors) joined += (joined.empty() ? "" : "\n") + e;
  return spec(joined);
}

// KubeRay's validateDeletionConfiguration.
std::optional<ValidationError> validateDeletion(const RayJobSpec& s, const FeatureGates& gates) {
  if (!s.shutdownAfterJobFinishes && s.ttlSecondsAfterFinished > 0)
    return spec(std::string(kInvalid) +
                "a RayJob with shutdownAfterJobFinishes set to false cannot have "
                "TTLSecondsAfterFinished");
  const json& d = s.deletionStrategyDocument.get();
  if (d.is_null()) return std::nullopt;
  if (!gates.rayJobDeletionPolicy)
    return spec("RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy");
  const bool legacy = d.contains("onSuccess") || d.contains("onFailure");
  const json& rules = memberAt(d, "deletionRules");
  const bool hasRules = rules.is_array() && !rules.empty();
  if (hasRules && s.shutdownAfterJobFinishes)
    return spec(std::string(kInvalid) +
                "spec.shutdownAfterJobFinishes and spec.deletionStrategy.deletionRules are "
                "mutually exclusive");
  if (hasRules && legacy)
    return spec(std::string(kInvalid) +
                "Cannot use both legacy onSuccess/onFailure fields and deletionRules "
                "simultaneously");
  if (legacy) return validateLegacyPolicies(s, d);
  if (hasRules) return validateDeletionRules(s, rules);
  return spec(std::string(kInvalid) +
              "DeletionStrategy requires either BOTH onSuccess and onFailure, OR the "
              "deletionRules field (cannot be empty)");
}

std::optional<ValidationError> validateClusterSelector(const RayJobSpec& s) {
  const bool selector = !s.clusterSelector.empty();
  if (s.suspend && selector)
    return spec(std::string(kInvalid) +
                "the ClusterSelector mode doesn't support the suspend operation");
  if (s.rayClusterSpec.get().is_null() && !selector)
    return spec(std::string(kInvalid) + "one of RayClusterSpec or ClusterSelector must be set");
  if (!selector) return std::nullopt;
  auto it = s.clusterSelector.find("ray.io/cluster");
  if (it == s.clusterSelector.end() || it->second.empty())
    return spec("cluster name in ClusterSelector should not be empty");
  if (s.submissionMode == SubmissionMode::SidecarMode)
    return spec("ClusterSelector is not supported in SidecarMode");
  if (s.backoffLimit.value_or(0) > 0)
    return spec(std::string(kInvalid) + "BackoffLimit is incompatible with ClusterSelector mode");
  return std::nullopt;
}

std::optional<ValidationError> validateModes(const RayJobSpec& s) {
  if (s.submissionMode == SubmissionMode::InteractiveMode && s.backoffLimit.value_or(0) > 0)
    return spec(std::string(kInvalid) + "BackoffLimit is incompatible with InteractiveMode");
  if (s.submissionMode != SubmissionMode::SidecarMode) return std::nullopt;
  if (!s.submitterPodTemplate.get().is_null())
    return spec("Currently, SidecarMode doesn't support SubmitterPodTemplate");
  if (s.hasSubmitterConfig) return spec("Currently, SidecarMode doesn't support SubmitterConfig");
  std::string restart = stringAt(
      objectAt(objectAt(objectAt(s.rayClusterSpec.get(), "headGroupSpec"), "template"), "spec"),
      "restartPolicy");
  if (!restart.empty() && restart != "Never")
    return spec("restartPolicy for head Pod should be Never or unset when using SidecarMode");
  return std::nullopt;
}

std::optional<ValidationError> validateClusterSpec(const RayJob& job, const FeatureGates& gates) {
  const json& cluster = job.spec.rayClusterSpec.get();
  if (cluster.is_null()) return std::nullopt;
  if (objectAt(cluster, "authOptions").value("enableK8sTokenAuth", false))
    return spec(std::string(kInvalid) + "K8s token auth mode is currently not supported for RayJob");
  if (std::string problem = rayClusterSpecProblem(cluster, job.annotations, gates); !problem.empty())
    return spec(kInvalid + problem);
  return std::nullopt;
}

// As KubeRay's UnmarshalRuntimeEnvYAML: YAML whose value is a mapping (or nothing).
std::optional<ValidationError> validateRuntimeEnv(const RayJobSpec& s) {
  const std::string prefix = "failed to unmarshal RuntimeEnvYAML: " + s.runtimeEnvYAML + ": ";
  try {
    json env = runtimeEnvJson(s.runtimeEnvYAML);
    if (env.is_object() || env.is_null()) return std::nullopt;
    const char* type = env.is_array() ? "array" : env.is_string() ? "string"
                       : env.is_boolean()                         ? "bool"
                                                                  : "number";
    return spec(prefix + "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal " +
                type + " into Go value of type utiltypes.RuntimeEnvType");
  } catch (const std::invalid_argument& e) {
    return spec(prefix + e.what());
  }
}

// KubeRay's submit command refuses `metadata` for a cluster older than Ray 2.6.0 (its
// --metadata-json flag is newer); there the reconcile fails on every pass, here the RayJob
// fails once with the reason. HTTPMode sends metadata in the request and is not checked.
std::optional<ValidationError> validateMetadataField(const RayJob& job) {
  const RayJobSpec& s = job.spec;
  bool submitCommand = s.submissionMode == SubmissionMode::K8sJobMode ||
                       s.submissionMode == SubmissionMode::SidecarMode;
  const json& version = memberAt(s.rayClusterSpec.get(), "rayVersion");
  if (!submitCommand || !version.is_string()) return std::nullopt;
  if (s.metadata.empty() && !attemptInSubmissionMetadata(job)) return std::nullopt;
  std::string text = version.get<std::string>();
  if (text.empty() || model::versionAtLeast(text, 2, 6, 0)) return std::nullopt;
  if (!model::parseVersion(text))
    return spec(std::string(kInvalid) + "failed to parse Ray version: " + text);
  return spec(std::string(kInvalid) +
              "the Ray version must be at least 2.6.0 to use the metadata field");
}

std::optional<ValidationError> validateNumbers(const RayJobSpec& s) {
  if (s.activeDeadlineSeconds && *s.activeDeadlineSeconds <= 0)
    return spec(std::string(kInvalid) + "activeDeadlineSeconds must be a positive integer");
  if (s.preRunningDeadlineSeconds && *s.preRunningDeadlineSeconds <= 0)
    return spec(std::string(kInvalid) + "preRunningDeadlineSeconds must be a positive integer");
  if (s.backoffLimit && *s.backoffLimit < 0)
    return spec(std::string(kInvalid) + "backoffLimit must be a positive integer");
  return std::nullopt;
}

// ValidateRayJobSpec, rule by rule in KubeRay's order.
std::optional<ValidationError> validateSpec(const RayJob& job, const FeatureGates& gates) {
  const RayJobSpec& s = job.spec;
  if (s.suspend && !s.shutdownAfterJobFinishes)
    return spec(std::string(kInvalid) +
                "a RayJob with shutdownAfterJobFinishes set to false is not allowed to be "
                "suspended");
  if (s.ttlSecondsAfterFinished < 0)
    return spec(std::string(kInvalid) + "TTLSecondsAfterFinished must be a non-negative integer");
  if (auto e = validateDeletion(s, gates)) return e;
  if (auto e = validateClusterSelector(s)) return e;
  if (auto e = validateModes(s)) return e;
  if (auto e = validateClusterSpec(job, gates)) return e;
  if (auto e = validateRuntimeEnv(s)) return e;
  if (auto e = validateMetadataField(job)) return e;
  return validateNumbers(s);
}

}  // namespace

std::optional<ValidationError> validateRayJob(const RayJob& job, const FeatureGates& gates) {
  if (auto e = validateMetadata(job)) return e;
  if (auto e = validateSchema(job)) return e;
  if (auto e = validateSpec(job, gates)) return e;
  if (job.status.jobDeploymentStatus == DeploymentStatus::Waiting &&
      job.spec.submissionMode != SubmissionMode::InteractiveMode) {
    return ValidationError{"InvalidRayJobStatus",
                           "The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` "
                           "when SubmissionMode is not InteractiveMode"};
  }
  return std::nullopt;
}

}  // namespace rayjournal::controller
