#include "controller/rayjob/RayJob.h"

#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "controller/JsonAccess.h"

namespace rayjournal::controller {
namespace {

// What a value is, for an error message: `the string "three"`, `1.5`, `an object`.
std::string describe(const json& v) {
  if (v.is_string()) {
    std::string text = v.get<std::string>();
    return "the string " + json(text.size() > 40 ? text.substr(0, 40) + "..." : text).dump();
  }
  if (v.is_number() || v.is_boolean()) return v.dump();
  return std::string("an ") + v.type_name();  // an array, an object
}

bool allStrings(const json& v) {
  return std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); });
}

// Why v cannot be read as a T, as an API server with the CRD's schema would say it; nullopt
// when it can. Integers must be integral and in range (nlohmann would truncate 1.5 and wrap
// 2147483648 silently).
template <typename T>
std::optional<std::string> typeProblem(const json& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return "must be a string";
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return "must be true or false";
  } else if constexpr (std::is_integral_v<T>) {
    const char* kind = sizeof(T) == 4 ? "an int32" : "an int64";
    if (!v.is_number_integer()) return std::string("must be ") + kind + " integer";
    bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())
                                       : v.get<int64_t>() >= std::numeric_limits<T>::min() &&
                                             v.get<int64_t>() <= std::numeric_limits<T>::max();
    if (!fits) return std::string("must be ") + kind + " integer (out of range)";
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) return "must be a number";
  } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
    if (!v.is_object() || !allStrings(v)) return "must be a map of strings";
  } else {
    static_assert(std::is_same_v<T, std::vector<std::string>>);
    if (!v.is_array() || !allStrings(v)) return "must be a list of strings";
  }
  return std::nullopt;
}

// Reads object[name] as a T, or the fallback when absent. A wrong type is recorded in
// `problems` (and the fallback used) when given, else thrown as std::invalid_argument.
template <typename T>
T field(const json& object, const char* name, const T& fallback, const std::string& path,
        std::vector<std::string>* problems = nullptr) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return fallback;
  if (auto problem = typeProblem<T>(*it)) {
    std::string text = path + "." + name + ": " + *problem + ", not " + describe(*it);
    if (!problems) throw std::invalid_argument(text);
    problems->push_back(std::move(text));
    return fallback;
  }
  return it->get<T>();
}

template <typename T>
std::optional<T> optionalField(const json& object, const char* name, const std::string& path,
                               std::vector<std::string>* problems = nullptr) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (typeProblem<T>(*it)) {
    field<T>(object, name, T{}, path, problems);  // records or throws
    return std::nullopt;
  }
  return it->get<T>();
}

std::map<std::string, std::string> stringMap(const json& object, const char* name,
                                             const std::string& path,
                                             std::vector<std::string>* problems = nullptr) {
  return field<std::map<std::string, std::string>>(object, name, {}, path, problems);
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
  if (job.deleting && meta["deletionTimestamp"].is_string())
    job.deletionTimestamp = meta["deletionTimestamp"].get<std::string>();
  job.finalizers = field<std::vector<std::string>>(meta, "finalizers", {}, "metadata");
  job.labels = stringMap(meta, "labels", "metadata");
  job.annotations = stringMap(meta, "annotations", "metadata");
  const json& spec = objectAt(doc, "spec");
  const std::string p = "spec";
  RayJobSpec& s = job.spec;
  std::vector<std::string>* e = &job.specProblems;
  if (doc.contains("spec") && !doc["spec"].is_object())
    e->push_back("spec: must be an object, not " + describe(doc["spec"]));
  s.entrypoint = field<std::string>(spec, "entrypoint", "", p, e);
  s.runtimeEnvYAML = field<std::string>(spec, "runtimeEnvYAML", "", p, e);
  s.jobId = field<std::string>(spec, "jobId", "", p, e);
  s.submissionModeText = field<std::string>(spec, "submissionMode", "K8sJobMode", p, e);
  s.submissionMode = submissionModeFromName(s.submissionModeText);
  s.rayClusterSpec = sharedMember(job.raw, spec, "rayClusterSpec");
  s.clusterSelector = stringMap(spec, "clusterSelector", p, e);
  s.shutdownAfterJobFinishes = field<bool>(spec, "shutdownAfterJobFinishes", false, p, e);
  s.ttlSecondsAfterFinished = field<int32_t>(spec, "ttlSecondsAfterFinished", 0, p, e);
  s.activeDeadlineSeconds = optionalField<int32_t>(spec, "activeDeadlineSeconds", p, e);
  s.preRunningDeadlineSeconds = optionalField<int32_t>(spec, "preRunningDeadlineSeconds", p, e);
  s.backoffLimit = optionalField<int32_t>(spec, "backoffLimit", p, e);
  s.submitterPodTemplate = sharedMember(job.raw, spec, "submitterPodTemplate");
  s.hasSubmitterConfig = spec.contains("submitterConfig") && !spec["submitterConfig"].is_null();
  if (spec.contains("submitterConfig")) {
    s.submitterBackoffLimit = optionalField<int32_t>(objectAt(spec, "submitterConfig"),
                                                     "backoffLimit", p + ".submitterConfig", e);
  }
  s.suspend = field<bool>(spec, "suspend", false, p, e);
  s.managedBy = optionalField<std::string>(spec, "managedBy", p, e);
  s.metadata = stringMap(spec, "metadata", p, e);
  s.entrypointNumCpus = field<double>(spec, "entrypointNumCpus", 0, p, e);
  s.entrypointNumGpus = field<double>(spec, "entrypointNumGpus", 0, p, e);
  s.entrypointResources = field<std::string>(spec, "entrypointResources", "", p, e);
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
