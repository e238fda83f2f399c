#include "controller/Plan.h"

#include <array>
#include <utility>

#include "controller/JsonAccess.h"

namespace rayjournal::controller {
namespace {
constexpr std::array<std::pair<Action, const char*>, 16> kActions{{
    {Action::AddFinalizer, "AddFinalizer"},
    {Action::RemoveFinalizer, "RemoveFinalizer"},
    {Action::CreateRayCluster, "CreateRayCluster"},
    {Action::CreateSubmitterJob, "CreateSubmitterJob"},
    {Action::SubmitRayJob, "SubmitRayJob"},
    {Action::StopRayJob, "StopRayJob"},
    {Action::DeleteRayCluster, "DeleteRayCluster"},
    {Action::DeleteSubmitterJob, "DeleteSubmitterJob"},
    {Action::DeleteRayJob, "DeleteRayJob"},
    {Action::SuspendWorkerGroups, "SuspendWorkerGroups"},
    {Action::CreateHeadService, "CreateHeadService"},
    {Action::UpdateHeadService, "UpdateHeadService"},
    {Action::WriteStatus, "WriteStatus"},
    {Action::CreateService, "CreateService"},
    {Action::CreatePod, "CreatePod"},
    {Action::DeletePod, "DeletePod"},
}};
}  // namespace

std::string actionName(Action action) {
  for (const auto& [a, n] : kActions)
    if (a == action) return n;
  return "Unknown";
}

std::optional<Action> actionFromName(const std::string& name) {
  for (const auto& [a, n] : kActions)
    if (n == name) return a;
  return std::nullopt;
}

json Intent::journalBody() const {
  json body{{"action", actionName(action)}, {"target", target}};
  if (action == Action::WriteStatus) {
    for (const char* k : {"jobDeploymentStatus", "jobStatus", "rayClusterName", "jobId", "reason",
                          "failed", "succeeded", "startTime", "endTime", "state",
                          "readyWorkerReplicas", "desiredWorkerReplicas"}) {
      if (object.contains(k)) body["status"][k] = object[k];
    }
  } else if (action == Action::CreateSubmitterJob) {
    for (const auto& env : arrayAt(object["spec"]["template"]["spec"]["containers"][0], "env")) {
      if (env.value("name", "") == "RAY_JOB_SUBMISSION_ID")
        body["submission_id"] = env.value("value", "");
    }
  } else if (action == Action::SubmitRayJob || action == Action::StopRayJob) {
    body["dashboard"] = object.value("dashboard", "");
  }
  return body;
}

}  // namespace rayjournal::controller
