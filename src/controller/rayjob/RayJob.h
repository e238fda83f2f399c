// Typed RayJob (ray.io/v1) as the decision logic sees it, parsed from the API document. The raw
// document is kept beside the struct so that write-backs preserve fields we do not model; the
// parts nobody models (the cluster spec, the submitter template) are Documents the builders read.
// No JSON here: parsing and serializing live in RayJob.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/Document.h"

namespace rayjournal::controller {

inline constexpr const char* kFinalizer = "ray.io/rayjob-finalizer";

// spec.submissionMode; Unknown keeps the written name for validation to report.
enum class SubmissionMode : uint8_t { K8sJobMode, HTTPMode, InteractiveMode, SidecarMode, Unknown };
// status.jobDeploymentStatus as KubeRay writes it (New is the empty string); Unknown is a value
// no controller of ours writes, kept as read.
enum class DeploymentStatus : uint8_t {
  New,
  Initializing,
  Waiting,
  Running,
  Complete,
  Failed,
  ValidationFailed,
  Suspending,
  Suspended,
  Retrying,
  Unknown,
};
const std::string& deploymentStatusName(DeploymentStatus status);  // New: ""
DeploymentStatus deploymentStatusFromName(const std::string& name);  // "" and "New": New
const std::string& submissionModeName(SubmissionMode mode);
SubmissionMode submissionModeFromName(const std::string& name);

// spec.deletionStrategy as the decision reads it (validation reads the raw document and reports
// what is wrong before the decision uses this).
struct DeletionRule {
  std::string policy = "DeleteNone";
  std::optional<std::string> jobStatus;  // the condition: this Ray job status ...
  std::optional<DeploymentStatus> jobDeploymentStatus;  // ... or this deployment status
  int64_t ttlSeconds = 0;
};
struct DeletionStrategy {
  bool set = false;       // spec.deletionStrategy is an object
  bool hasRules = false;  // deletionRules (else the legacy onSuccess / onFailure)
  std::vector<DeletionRule> rules;
  std::string onSuccessPolicy = "DeleteNone";
  std::string onFailurePolicy = "DeleteNone";
};

struct RayJobSpec {
  std::string entrypoint;
  std::string runtimeEnvYAML;
  std::string jobId;
  SubmissionMode submissionMode = SubmissionMode::K8sJobMode;
  std::string submissionModeText = "K8sJobMode";  // as written
  // Members of the raw document, shared with it (never copied); null when the field is absent.
  model::Document rayClusterSpec;
  std::map<std::string, std::string> clusterSelector;
  bool shutdownAfterJobFinishes = false;
  int32_t ttlSecondsAfterFinished = 0;
  std::optional<int32_t> activeDeadlineSeconds;
  std::optional<int32_t> preRunningDeadlineSeconds;
  std::optional<int32_t> backoffLimit;
  model::Document submitterPodTemplate;
  std::optional<int32_t> submitterBackoffLimit;
  bool hasSubmitterConfig = false;  // spec.submitterConfig present (of any shape)
  bool suspend = false;
  std::optional<std::string> managedBy;
  std::map<std::string, std::string> metadata;
  double entrypointNumCpus = 0;
  double entrypointNumGpus = 0;
  std::string entrypointResources;
  model::Document deletionStrategyDocument;  // as written, for validation
  DeletionStrategy deletionStrategy;
};

struct RayJobStatus {
  std::string jobId;
  std::string rayClusterName;
  std::string dashboardURL;
  std::string jobStatus;
  DeploymentStatus jobDeploymentStatus = DeploymentStatus::New;
  std::string unknownDeploymentStatus;  // the text, when jobDeploymentStatus is Unknown
  std::string reason;
  std::string message;
  std::string startTime;  // RFC 3339, empty when unset
  std::string endTime;
  int32_t succeeded = 0;
  int32_t failed = 0;
  model::Document rayClusterStatus;  // the RayCluster's status as last copied (null: none)
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
  std::string deletionTimestamp;  // RFC 3339, when deleting
  std::vector<std::string> finalizers;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  RayJobSpec spec;
  RayJobStatus status;
  std::shared_ptr<const nlohmann::json> raw;  // the document as read, shared with the cache
  // Spec fields of the wrong type ("spec.backoffLimit: must be an int32 integer, not 1.5"),
  // read as their defaults: validation fails the RayJob naming them.
  std::vector<std::string> specProblems;

  bool hasFinalizer() const;
  std::string key() const { return ns + "/" + name; }
};

// Throws std::invalid_argument naming the field when a metadata or status field has the wrong
// type; a spec field of the wrong type is recorded in specProblems instead.
RayJob parseRayJob(const nlohmann::json& document);
RayJob parseRayJob(std::shared_ptr<const nlohmann::json> document);
// The status document to write (a WriteStatus intent's object).
model::ApiObject statusObject(const RayJobStatus& status);
nlohmann::json statusToJson(const RayJobStatus& status);
RayJobStatus statusFromJson(const nlohmann::json& status);

bool isTerminalDeploymentStatus(DeploymentStatus status);  // Complete or Failed

}  // namespace rayjournal::controller
