#include "controller/rayjob/Views.h"

#include <nlohmann/json.hpp>

#include "controller/rayjob/Children.h"
#include "controller/JsonAccess.h"

namespace rayjournal::controller {
namespace {

bool deletingNow(const json& object) {
  return !memberAt(objectAt(object, "metadata"), "deletionTimestamp").is_null();
}

const json* conditionOf(const json& status, const char* type) {
  for (const auto& c : arrayAt(status, "conditions"))
    if (stringAt(c, "type") == type) return &c;
  return nullptr;
}

}  // namespace

ClusterView clusterView(std::shared_ptr<const json> cluster, const std::string& jobUid) {
  ClusterView v;
  const json& doc = *cluster;
  const json& status = objectAt(doc, "status");
  v.deleting = deletingNow(doc);
  v.ownedBy = ownedBy(doc, jobUid);
  v.state = stringAt(status, "state");
  if (const json* ready = conditionOf(status, "HeadPodReady"))
    v.headPodReady = stringAt(*ready, "status") == "True";
  // An empty status is no status: the RayJob's copy of it is omitted when written, and must
  // compare equal to what it reads back.
  if (!status.empty()) v.status = model::Document(std::shared_ptr<const json>(cluster, &status));
  for (const auto& g : arrayAt(objectAt(doc, "spec"), "workerGroupSpecs")) {
    const json& suspend = memberAt(g, "suspend");
    if (!(suspend.is_boolean() && suspend.get<bool>())) v.workersSuspended = false;
  }
  v.raw = model::Document(std::move(cluster));
  return v;
}

ServiceView serviceView(std::shared_ptr<const json> service) {
  ServiceView v;
  const json& doc = *service;
  v.name = stringAt(objectAt(doc, "metadata"), "name");
  for (const auto& p : arrayAt(objectAt(doc, "spec"), "ports")) {
    const json& port = memberAt(p, "port");
    if (stringAt(p, "name") == "dashboard" && port.is_number_integer()) v.dashboardPort = port;
  }
  v.selectorCluster = stringAt(objectAt(objectAt(doc, "spec"), "selector"), "ray.io/cluster");
  v.raw = model::Document(std::move(service));
  return v;
}

SubmitterView submitterView(const json& job) {
  SubmitterView v;
  v.deleting = deletingNow(job);
  const json& status = objectAt(job, "status");
  for (const auto& c : arrayAt(status, "conditions")) {
    if (stringAt(c, "status") != "True") continue;
    const std::string& type = stringAt(c, "type");
    if (type == "Failed" && !v.failed) {
      v.failed = true;
      v.finishedAt = stringAt(c, "lastTransitionTime");
      v.failedReason = stringAt(c, "reason");
      v.failedMessage = stringAt(c, "message");
    } else if (type == "Complete" && !v.complete) {
      v.complete = true;
      if (!v.failed) v.finishedAt = stringAt(c, "lastTransitionTime");
    }
  }
  return v;
}

HeadPodView headPodView(const json& pod) {
  HeadPodView v;
  for (const auto& cs : arrayAt(objectAt(pod, "status"), "containerStatuses")) {
    if (stringAt(cs, "name") != kSubmitterContainer) continue;
    const json& restarts = memberAt(cs, "restartCount");
    v.restartCount = restarts.is_number_integer() ? restarts.get<int>() : 0;
    v.terminatedBefore = !objectAt(objectAt(cs, "lastState"), "terminated").empty();
    const json& terminated = objectAt(objectAt(cs, "state"), "terminated");
    if (terminated.empty()) continue;
    v.submitterExited = true;
    v.finishedAt = stringAt(terminated, "finishedAt");
    v.terminatedReason = stringAt(terminated, "reason");
    const json& code = memberAt(terminated, "exitCode");
    v.exitCode = code.is_number_integer() ? code.get<int>() : 0;
  }
  return v;
}

}  // namespace rayjournal::controller
