// Typed RayJob (ray.io/v1) as the decision logic sees it, parsed from the API document. The raw
// document is kept beside the struct so that write-backs preserve fields we do not model.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rayjournal::controller {

using nlohmann::json;

inline constexpr const char* kFinalizer = "ray.io/rayjob-finalizer";

// A shared null document: what an absent field of RayJobSpec points to.
const std::shared_ptr<const json>& nullDocument();

struct RayJobSpec {
  std::string entrypoint;
  std::string runtimeEnvYAML;
  std::string jobId;
  std::string submissionMode = "K8sJobMode";
  // Members of the raw document, shared with it (never copied); they point to a null value when
  // the field is absent.
  std::shared_ptr<const json> rayClusterSpec = nullDocument();
  std::map<std::string, std::string> clusterSelector;
  bool shutdownAfterJobFinishes = false;
  int32_t ttlSecondsAfterFinished = 0;
  std::optional<int32_t> activeDeadlineSeconds;
  std::optional<int32_t> preRunningDeadlineSeconds;
  std::optional<int32_t> backoffLimit;
  std::shared_ptr<const json> submitterPodTemplate = nullDocument();
  std::optional<int32_t> submitterBackoffLimit;
  bool suspend = false;
  std::optional<std::string> managedBy;
  std::map<std::string, std::string> metadata;
  double entrypointNumCpus = 0;
  double entrypointNumGpus = 0;
  std::string entrypointResources;
  std::shared_ptr<const json> deletionStrategy = nullDocument();
};

struct RayJobStatus {
  std::string jobId;
  std::string rayClusterName;
  std::string dashboardURL;
  std::string jobStatus;
  std::string jobDeploymentStatus;
  std::string reason;
  std::string message;
  std::string startTime;  // RFC 3339, empty when unset
  std::string endTime;
  int32_t succeeded = 0;
  int32_t failed = 0;
  json rayClusterStatus = json::object();
  std::string rayJobInfoStartTime;
  std::string rayJobInfoEndTime;
  std::string jobStatusCheckFailureStartTime;
  int64_t observedGeneration = 0;

  bool operator==(const RayJobStatus&) const = default;
};

struct RayJob {
  std::string ns;
  std::string name;
  std::string uid;
  int64_t generation = 0;
  bool deleting = false;
  std::vector<std::string> finalizers;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  RayJobSpec spec;
  RayJobStatus status;
  std::shared_ptr<const json> raw;  // the document as read, shared with the cache

  bool hasFinalizer() const;
  std::string key() const { return ns + "/" + name; }
};

// Throws std::invalid_argument naming the field when a field has the wrong type.
RayJob parseRayJob(const json& document);
RayJob parseRayJob(std::shared_ptr<const json> document);
json statusToJson(const RayJobStatus& status);
RayJobStatus statusFromJson(const json& status);

bool isTerminalDeploymentStatus(const std::string& status);  // Complete or Failed

}  // namespace rayjournal::controller
