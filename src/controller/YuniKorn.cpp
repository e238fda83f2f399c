#include "controller/YuniKorn.h"

#include <nlohmann/json.hpp>

#include "controller/JsonAccess.h"
#include "controller/raycluster/ClusterResources.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "controller/raycluster/RayClusterViews.h"

namespace rayjournal::controller {
namespace {

constexpr const char* kTaskGroupsAnnotation = "yunikorn.apache.org/task-groups";
constexpr const char* kTaskGroupNameAnnotation = "yunikorn.apache.org/task-group-name";

// One task group in the order Go's encoding writes TaskGroup's fields (empty ones omitted).
nlohmann::ordered_json taskGroup(const std::string& name, int64_t minMember, const json& podSpec) {
  nlohmann::ordered_json group;
  group["minResource"] = resourceList(podResources(podSpec));
  for (const char* key : {"nodeSelector", "affinity"})
    if (!objectAt(podSpec, key).empty()) group[key] = podSpec[key];
  group["name"] = name;
  if (!arrayAt(podSpec, "tolerations").empty()) group["tolerations"] = podSpec["tolerations"];
  group["minMember"] = minMember;
  return group;
}

void addClusterGroups(const json& clusterSpec, nlohmann::ordered_json& groups) {
  groups.push_back(taskGroup("headgroup", 1, groupPodSpec(objectAt(clusterSpec, "headGroupSpec"))));
  for (const auto& group : arrayAt(clusterSpec, "workerGroupSpecs")) {
    int64_t minWorkers = std::max<int64_t>(0, integerAt(group, "minReplicas", 0)) * hostsOf(group);
    groups.push_back(taskGroup(stringAt(group, "groupName"), minWorkers, groupPodSpec(group)));
  }
}

void copyLabel(const json& parentLabels, json& childMeta, const char* from, const char* to) {
  const std::string value = stringAt(parentLabels, from);
  if (!value.empty()) childMeta["labels"][to] = value;
}

}  // namespace

std::string yuniKornTaskGroups(const json& parent) {
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  const json& spec = objectAt(parent, "spec");
  if (stringAt(parent, "kind") == "RayJob") {
    addClusterGroups(objectAt(spec, "rayClusterSpec"), groups);
    groups.push_back(taskGroup("submittergroup", 1, submitterPodSpec(spec)));
  } else {
    addClusterGroups(spec, groups);
  }
  return groups.dump();
}

void addYuniKornMetadata(const json& parent, json& child, const std::string& taskGroupName, bool podLike) {
  const json& parentMeta = objectAt(parent, "metadata");
  const json& labels = objectAt(parentMeta, "labels");
  json& meta = child["metadata"];
  copyLabel(labels, meta, "yunikorn.apache.org/app-id", "applicationId");
  copyLabel(labels, meta, "yunikorn.apache.org/queue", "queue");
  if (podLike) child["spec"]["schedulerName"] = "yunikorn";
  if (!labels.contains("ray.io/gang-scheduling-enabled")) return;
  std::string groups = stringAt(objectAt(parentMeta, "annotations"), kTaskGroupsAnnotation);
  meta["annotations"][kTaskGroupsAnnotation] = groups.empty() ? yuniKornTaskGroups(parent) : groups;
  if (!taskGroupName.empty()) meta["annotations"][kTaskGroupNameAnnotation] = taskGroupName;
}

void joinYuniKorn(const model::Document& parent, model::ApiObject& child, const std::string& taskGroup,
                  bool podLike) {
  addYuniKornMetadata(parent.get(), *child, taskGroup, podLike);
}

void joinYuniKornAsSubmitter(const model::Document& parent, model::ApiObject& job) {
  addYuniKornMetadata(parent.get(), (*job)["spec"]["template"], "submittergroup", true);
}

}  // namespace rayjournal::controller
