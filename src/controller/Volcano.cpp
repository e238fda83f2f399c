#include "controller/Volcano.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "controller/JsonAccess.h"

namespace rayjournal::controller {
namespace {

constexpr const char* kPriorityClassLabel = "ray.io/priority-class-name";
constexpr const char* kTopologyModeLabel = "volcano.sh/network-topology-mode";
constexpr const char* kTopologyTierLabel = "volcano.sh/network-topology-highest-tier-allowed";

const json& labelsOf(const json& object) { return objectAt(objectAt(object, "metadata"), "labels"); }

bool autoscales(const json& clusterSpec) {
  const json& v = memberAt(clusterSpec, "enableInTreeAutoscaling");
  return v.is_boolean() && v.get<bool>();
}

// getSubmitterResource: the submitter's Pod in K8sJobMode, the default submitter container in
// SidecarMode (the same requests: they win over its limits), nothing otherwise.
Resources submitterResources(const json& spec) {
  const std::string mode = stringAt(spec, "submissionMode");
  if (mode == "SidecarMode") return podResources(submitterPodSpec(json::object()));
  if (mode != "K8sJobMode" && !mode.empty()) return {};
  return podResources(submitterPodSpec(spec));
}

json controllerReference(const json& owner) {
  const json& meta = objectAt(owner, "metadata");
  return {{"apiVersion", "ray.io/v1"},
          {"kind", stringAt(owner, "kind")},
          {"name", stringAt(meta, "name")},
          {"uid", stringAt(meta, "uid")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

// volcano.sh/network-topology-*: the mode, and the highest tier as an integer (strconv.Atoi).
std::string addNetworkTopology(const json& labels, json& spec, const std::string& name, const std::string& ns) {
  if (!labels.contains(kTopologyModeLabel)) return "";
  spec["networkTopology"] = {{"mode", stringAt(labels, kTopologyModeLabel)}};
  if (!labels.contains(kTopologyTierLabel)) return "";
  const std::string tier = stringAt(labels, kTopologyTierLabel);
  int value = 0;
  auto [end, ec] = std::from_chars(tier.data(), tier.data() + tier.size(), value);
  if (ec != std::errc() || end != tier.data() + tier.size() || tier.empty())
    return "failed to convert " + std::string(kTopologyTierLabel) + " label to int: strconv.Atoi: parsing \"" +
           tier + "\": invalid syntax for podgroup " + name + " in namespace " + ns;
  spec["networkTopology"]["highestTierAllowed"] = value;
  return "";
}

bool sameResources(const json& written, const Resources& wanted) {
  if (!written.is_object() || written.size() != wanted.size()) return false;
  for (const auto& [name, q] : wanted) {
    auto have = model::parseQuantity(stringAt(written, name.c_str()));
    if (!have || have->value != q.value) return false;
  }
  return true;
}

}  // namespace

std::string volcanoPodGroupName(const json& owner) {
  const json& labels = labelsOf(owner);
  std::string name = stringAt(objectAt(owner, "metadata"), "name");
  if (stringAt(labels, "ray.io/originated-from-crd") == "RayJob" &&
      !stringAt(labels, "ray.io/originated-from-cr-name").empty())
    name = stringAt(labels, "ray.io/originated-from-cr-name");
  return "ray-" + name + "-pg";
}

Gang clusterGang(const json& clusterSpec) {
  if (!autoscales(clusterSpec)) return {desiredWorkerPods(clusterSpec) + 1, desiredResources(clusterSpec)};
  return {minWorkerPods(clusterSpec) + 1, minResources(clusterSpec)};
}

Gang rayJobGang(const json& rayJob) {
  const json& spec = objectAt(rayJob, "spec");
  Gang gang = clusterGang(objectAt(spec, "rayClusterSpec"));
  addResources(gang.minResources, submitterResources(spec));
  return gang;
}

Gang leftoverGang(const json* cluster) {
  if (!cluster || objectAt(*cluster, "metadata").contains("deletionTimestamp")) return {};
  return clusterGang(objectAt(*cluster, "spec"));
}

model::ApiObject volcanoPodGroupFor(const json& owner, const Gang& gang, std::string& error) {
  const json& meta = objectAt(owner, "metadata");
  const json& labels = labelsOf(owner);
  const std::string name = volcanoPodGroupName(owner), ns = stringAt(meta, "namespace");
  json spec = {{"minMember", gang.minMember}, {"minResources", resourceList(gang.minResources)}};
  error = addNetworkTopology(labels, spec, name, ns);
  if (!error.empty()) return nullptr;
  if (labels.contains(kVolcanoQueueLabel)) spec["queue"] = stringAt(labels, kVolcanoQueueLabel);
  if (labels.contains(kPriorityClassLabel)) spec["priorityClassName"] = stringAt(labels, kPriorityClassLabel);
  json podMeta = {{"name", name}, {"namespace", ns}, {"ownerReferences", json::array({controllerReference(owner)})}};
  if (!objectAt(meta, "annotations").empty()) podMeta["annotations"] = meta["annotations"];
  return std::make_shared<json>(json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                                     {"kind", "PodGroup"},
                                     {"metadata", std::move(podMeta)},
                                     {"spec", std::move(spec)},
                                     {"status", {{"phase", "Pending"}}}});
}

json podGroupWithGang(const json& podGroup, const Gang& gang) {
  const json& spec = objectAt(podGroup, "spec");
  const json& minMember = memberAt(spec, "minMember");
  if (minMember.is_number_integer() && minMember.get<int64_t>() == gang.minMember &&
      sameResources(memberAt(spec, "minResources"), gang.minResources))
    return nullptr;
  json updated = podGroup;
  updated["spec"]["minMember"] = gang.minMember;
  updated["spec"]["minResources"] = resourceList(gang.minResources);
  return updated;
}

void addVolcanoMetadata(const json& parent, json& child, const std::string& taskGroup, bool podLike) {
  json& meta = child["metadata"];
  const json& parentLabels = labelsOf(parent);
  for (const char* key : {kVolcanoQueueLabel, kPriorityClassLabel}) {
    if (!stringAt(parentLabels, key).empty()) meta["labels"][key] = parentLabels[key];
  }
  meta["annotations"][kVolcanoGroupNameAnnotation] = volcanoPodGroupName(parent);
  meta["annotations"][kVolcanoTaskSpecAnnotation] = taskGroup;
  if (podLike) child["spec"]["schedulerName"] = "volcano";
}

std::string volcanoPodGroupNameOf(const model::Document& owner) { return volcanoPodGroupName(owner.get()); }

Gang rayJobGangOf(const model::Document& rayJob) { return rayJobGang(rayJob.get()); }

Gang leftoverGangOf(const model::Document* cluster) {
  return leftoverGang(cluster && !cluster->isNull() ? &cluster->get() : nullptr);
}

model::ApiObject podGroupCreateFor(const model::Document& owner, const Gang& gang, std::string& error) {
  return volcanoPodGroupFor(owner.get(), gang, error);
}

model::ApiObject podGroupUpdateFor(const model::Document& podGroup, const Gang& gang) {
  json updated = podGroupWithGang(podGroup.get(), gang);
  return updated.is_null() ? nullptr : std::make_shared<json>(std::move(updated));
}

void joinVolcanoGang(const model::Document& parent, model::ApiObject& child, const std::string& taskGroup,
                     bool podLike) {
  addVolcanoMetadata(parent.get(), *child, taskGroup, podLike);
}

void joinVolcanoGangAsSubmitter(const model::Document& parent, model::ApiObject& job) {
  addVolcanoMetadata(parent.get(), (*job)["spec"]["template"], "submittergroup", true);
}

}  // namespace rayjournal::controller
