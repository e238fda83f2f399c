#include "controller/RayJob.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "controller/JsonAccess.h"

namespace rayjournal::controller {
namespace {

template <typename T>
T field(const json& object, const char* name, const T& fallback, const std::string& path) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(path + "." + name + " has the wrong type (" +
                                std::string(it->type_name()) + ")");
  }
}

template <typename T>
std::optional<T> optionalField(const json& object, const char* name, const std::string& path) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::nullopt;
  return field<T>(object, name, T{}, path);
}

std::map<std::string, std::string> stringMap(const json& object, const char* name,
                                             const std::string& path) {
  return field<std::map<std::string, std::string>>(object, name, {}, path);
}

// The member as a Document that keeps the whole document alive (aliasing shared_ptr).
model::Document sharedMember(const std::shared_ptr<const json>& document, const json& object,
                             const char* name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return model::Document();
  return model::Document(std::shared_ptr<const json>(document, &*it));
}

std::optional<std::string> optionalText(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<DeploymentStatus> deploymentOf(const json& condition) {
  auto name = optionalText(condition, "jobDeploymentStatus");
  if (!name) return std::nullopt;
  return deploymentStatusFromName(*name);
}

// Lenient: a wrong type reads as the default, and validation names the field.
DeletionStrategy deletionStrategyOf(const json& d) {
  DeletionStrategy out;
  if (!d.is_object()) return out;
  out.set = true;
  out.hasRules = d.contains("deletionRules");
  for (const auto& rule : arrayAt(d, "deletionRules")) {
    const json& cond = objectAt(rule, "condition");
    const json& ttl = memberAt(cond, "ttlSeconds");
    out.rules.push_back({optionalText(rule, "policy").value_or("DeleteNone"),
                         optionalText(cond, "jobStatus"), deploymentOf(cond),
                         ttl.is_number_integer() ? ttl.get<int64_t>() : 0});
  }
  out.onSuccessPolicy = optionalText(objectAt(d, "onSuccess"), "policy").value_or("DeleteNone");
  out.onFailurePolicy = optionalText(objectAt(d, "onFailure"), "policy").value_or("DeleteNone");
  return out;
}

}  // namespace

bool RayJob::hasFinalizer() const {
  return std::find(finalizers.begin(), finalizers.end(), kFinalizer) != finalizers.end();
}

namespace {
const std::array<std::string, 11> kDeploymentNames{
    "",       "Initializing",     "Waiting",    "Running",   "Complete", "Failed",
    "ValidationFailed", "Suspending", "Suspended", "Retrying", "Unknown"};
const std::array<std::string, 5> kModeNames{"K8sJobMode", "HTTPMode", "InteractiveMode",
                                            "SidecarMode", "Unknown"};
}  // namespace

const std::string& deploymentStatusName(DeploymentStatus status) {
  return kDeploymentNames.at(size_t(status));
}

DeploymentStatus deploymentStatusFromName(const std::string& name) {
  if (name == "New") return DeploymentStatus::New;  // older rayjournal versions wrote it
  for (size_t i = 0; i + 1 < kDeploymentNames.size(); ++i)
    if (kDeploymentNames[i] == name) return DeploymentStatus(i);
  return DeploymentStatus::Unknown;
}

const std::string& submissionModeName(SubmissionMode mode) {
  return kModeNames.at(size_t(mode));
}

SubmissionMode submissionModeFromName(const std::string& name) {
  for (size_t i = 0; i + 1 < kModeNames.size(); ++i)
    if (kModeNames[i] == name) return SubmissionMode(i);
  return SubmissionMode::Unknown;
}

bool isTerminalDeploymentStatus(DeploymentStatus s) {
  return s == DeploymentStatus::Complete || s == DeploymentStatus::Failed;
}

RayJobStatus statusFromJson(const json& s) {
  RayJobStatus st;
  if (!s.is_object()) return st;
  const std::string p = "status";
  st.jobId = field<std::string>(s, "jobId", "", p);
  st.rayClusterName = field<std::string>(s, "rayClusterName", "", p);
  st.dashboardURL = field<std::string>(s, "dashboardURL", "", p);
  st.jobStatus = field<std::string>(s, "jobStatus", "", p);
  const std::string deployment = field<std::string>(s, "jobDeploymentStatus", "", p);
  st.jobDeploymentStatus = deploymentStatusFromName(deployment);
  if (st.jobDeploymentStatus == DeploymentStatus::Unknown) st.unknownDeploymentStatus = deployment;
  st.reason = field<std::string>(s, "reason", "", p);
  st.message = field<std::string>(s, "message", "", p);
  st.startTime = field<std::string>(s, "startTime", "", p);
  st.endTime = field<std::string>(s, "endTime", "", p);
  st.succeeded = field<int32_t>(s, "succeeded", 0, p);
  st.failed = field<int32_t>(s, "failed", 0, p);
  if (!objectAt(s, "rayClusterStatus").empty())
    st.rayClusterStatus = model::Document(s["rayClusterStatus"]);
  const json& info = objectAt(s, "rayJobInfo");
  st.rayJobInfoStartTime = field<std::string>(info, "startTime", "", p + ".rayJobInfo");
  st.rayJobInfoEndTime = field<std::string>(info, "endTime", "", p + ".rayJobInfo");
  st.jobStatusCheckFailureStartTime =
      field<std::string>(s, "jobStatusCheckFailureStartTime", "", p);
  st.observedGeneration = field<int64_t>(s, "observedGeneration", 0, p);
  return st;
}

RayJob parseRayJob(const json& doc) {
  return parseRayJob(std::make_shared<const json>(doc));
}

RayJob parseRayJob(std::shared_ptr<const json> document) {
  RayJob job;
  job.raw = std::move(document);
  const json& doc = *job.raw;
  const json& meta = doc.at("metadata");
  job.ns = meta.value("namespace", "default");
  job.name = meta.value("name", "");
  job.uid = meta.value("uid", "");
  job.generation = meta.value("generation", int64_t(0));
  job.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  job.finalizers = field<std::vector<std::string>>(meta, "finalizers", {}, "metadata");
  job.labels = stringMap(meta, "labels", "metadata");
  job.annotations = stringMap(meta, "annotations", "metadata");
  const json& spec = objectAt(doc, "spec");
  const std::string p = "spec";
  RayJobSpec& s = job.spec;
  s.entrypoint = field<std::string>(spec, "entrypoint", "", p);
  s.runtimeEnvYAML = field<std::string>(spec, "runtimeEnvYAML", "", p);
  s.jobId = field<std::string>(spec, "jobId", "", p);
  s.submissionModeText = field<std::string>(spec, "submissionMode", "K8sJobMode", p);
  s.submissionMode = submissionModeFromName(s.submissionModeText);
  s.rayClusterSpec = sharedMember(job.raw, spec, "rayClusterSpec");
  s.clusterSelector = stringMap(spec, "clusterSelector", p);
  s.shutdownAfterJobFinishes = field<bool>(spec, "shutdownAfterJobFinishes", false, p);
  s.ttlSecondsAfterFinished = field<int32_t>(spec, "ttlSecondsAfterFinished", 0, p);
  s.activeDeadlineSeconds = optionalField<int32_t>(spec, "activeDeadlineSeconds", p);
  s.preRunningDeadlineSeconds = optionalField<int32_t>(spec, "preRunningDeadlineSeconds", p);
  s.backoffLimit = optionalField<int32_t>(spec, "backoffLimit", p);
  s.submitterPodTemplate = sharedMember(job.raw, spec, "submitterPodTemplate");
  if (spec.contains("submitterConfig")) {
    s.submitterBackoffLimit = optionalField<int32_t>(objectAt(spec, "submitterConfig"),
                                                     "backoffLimit", p + ".submitterConfig");
  }
  s.suspend = field<bool>(spec, "suspend", false, p);
  s.managedBy = optionalField<std::string>(spec, "managedBy", p);
  s.metadata = stringMap(spec, "metadata", p);
  s.entrypointNumCpus = field<double>(spec, "entrypointNumCpus", 0, p);
  s.entrypointNumGpus = field<double>(spec, "entrypointNumGpus", 0, p);
  s.entrypointResources = field<std::string>(spec, "entrypointResources", "", p);
  s.deletionStrategyDocument = sharedMember(job.raw, spec, "deletionStrategy");
  s.deletionStrategy = deletionStrategyOf(s.deletionStrategyDocument.get());
  job.status = statusFromJson(objectAt(doc, "status"));
  return job;
}

model::ApiObject statusObject(const RayJobStatus& status) {
  return std::make_shared<json>(statusToJson(status));
}

json statusToJson(const RayJobStatus& st) {
  json s = json::object();
  auto put = [&](const char* k, const std::string& v) {
    if (!v.empty()) s[k] = v;
  };
  put("jobId", st.jobId);
  put("rayClusterName", st.rayClusterName);
  put("dashboardURL", st.dashboardURL);
  put("jobStatus", st.jobStatus);
  put("jobDeploymentStatus", st.jobDeploymentStatus == DeploymentStatus::Unknown
                                 ? st.unknownDeploymentStatus
                                 : deploymentStatusName(st.jobDeploymentStatus));
  put("reason", st.reason);
  put("message", st.message);
  put("startTime", st.startTime);
  put("endTime", st.endTime);
  s["succeeded"] = st.succeeded;
  s["failed"] = st.failed;
  const json& clusterStatus = st.rayClusterStatus.get();
  if (clusterStatus.is_object() && !clusterStatus.empty()) s["rayClusterStatus"] = clusterStatus;
  json info = json::object();
  if (!st.rayJobInfoStartTime.empty()) info["startTime"] = st.rayJobInfoStartTime;
  if (!st.rayJobInfoEndTime.empty()) info["endTime"] = st.rayJobInfoEndTime;
  if (!info.empty()) s["rayJobInfo"] = info;
  put("jobStatusCheckFailureStartTime", st.jobStatusCheckFailureStartTime);
  s["observedGeneration"] = st.observedGeneration;
  return s;
}

}  // namespace rayjournal::controller
