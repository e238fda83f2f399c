#include "controller/raycluster/CachedPod.h"

#include "controller/JsonAccess.h"

namespace rayjournal::controller {
namespace {

// Of the labels, those KubeRay and rayjournal select Ray Pods by; of each owner reference,
// what finds the owner (keyOfControllerOwner and the owner index).
json slimMetadata(const json& meta) {
  json slim = json::object();
  for (const char* kept : {"name", "namespace", "uid", "resourceVersion", "deletionTimestamp"})
    if (meta.contains(kept)) slim[kept] = meta[kept];
  json labels = json::object();
  const json& all = objectAt(meta, "labels");
  for (const char* kept : {"ray.io/cluster", "ray.io/node-type", "ray.io/group"})
    if (all.contains(kept)) labels[kept] = all[kept];
  if (!labels.empty()) slim["labels"] = std::move(labels);
  json owners = json::array();
  for (const auto& ref : arrayAt(meta, "ownerReferences")) {
    json kept = json::object();
    for (const char* field : {"kind", "name", "uid", "controller"})
      if (ref.contains(field)) kept[field] = ref[field];
    owners.push_back(std::move(kept));
  }
  if (!owners.empty()) slim["ownerReferences"] = std::move(owners);
  return slim;
}

json slimSpec(const json& spec) {
  json slim = json::object();
  if (spec.contains("restartPolicy")) slim["restartPolicy"] = spec["restartPolicy"];
  json containers = json::array();
  for (const auto& c : arrayAt(spec, "containers")) containers.push_back({{"name", memberAt(c, "name")}});
  slim["containers"] = std::move(containers);
  return slim;
}

// Phase, IP, the Ready condition and how each container ended: what podView and headPodView
// read. Timestamps of running containers, images and the other conditions are not kept.
json slimEnd(const json& terminated) {
  json end = json::object();
  for (const char* field : {"exitCode", "finishedAt", "reason"})
    if (terminated.contains(field)) end[field] = terminated[field];
  return end;
}

json slimStatus(const json& status) {
  json slim = json::object();
  for (const char* kept : {"phase", "podIP"})
    if (status.contains(kept)) slim[kept] = status[kept];
  for (const auto& c : arrayAt(status, "conditions"))
    if (stringAt(c, "type") == "Ready")
      slim["conditions"] = json::array({{{"type", "Ready"}, {"status", memberAt(c, "status")}}});
  json containers = json::array();
  for (const auto& cs : arrayAt(status, "containerStatuses")) {
    json kept = {{"name", memberAt(cs, "name")}};
    const json& terminated = objectAt(objectAt(cs, "state"), "terminated");
    if (!terminated.empty()) kept["state"] = {{"terminated", slimEnd(terminated)}};
    // A restarted container (the SidecarSubmitterRestart sidecar): how often, and that it ended.
    const json& restarts = memberAt(cs, "restartCount");
    if (restarts.is_number_integer() && restarts.get<int64_t>() > 0) kept["restartCount"] = restarts;
    const json& before = objectAt(objectAt(cs, "lastState"), "terminated");
    if (!before.empty()) kept["lastState"] = {{"terminated", slimEnd(before)}};
    containers.push_back(std::move(kept));
  }
  if (!containers.empty()) slim["containerStatuses"] = std::move(containers);
  return slim;
}

}  // namespace

std::shared_ptr<const json> podAsCached(const std::shared_ptr<const json>& pod) {
  if (!pod || !pod->is_object()) return pod;
  json slim = {{"apiVersion", memberAt(*pod, "apiVersion")},
               {"kind", memberAt(*pod, "kind")},
               {"metadata", slimMetadata(objectAt(*pod, "metadata"))},
               {"spec", slimSpec(objectAt(*pod, "spec"))}};
  if (pod->contains("status")) slim["status"] = slimStatus(objectAt(*pod, "status"));
  return std::make_shared<const json>(std::move(slim));
}

}  // namespace rayjournal::controller
