#include "controller/RayClusterDecide.h"

#include <algorithm>
#include <map>

#include "controller/JsonAccess.h"
#include "model/Names.h"

namespace rayjournal::controller {
namespace {

json ownedMeta(const std::string& name, const json& cluster, json labels) {
  return {{"name", name},
          {"namespace", cluster["metadata"].value("namespace", "default")},
          {"labels", std::move(labels)},
          {"ownerReferences", json::array({{{"apiVersion", "ray.io/v1"},
                                            {"kind", "RayCluster"},
                                            {"name", cluster["metadata"].value("name", "")},
                                            {"uid", cluster["metadata"].value("uid", "")},
                                            {"controller", true},
                                            {"blockOwnerDeletion", true}}})}};
}

json baseLabels(const std::string& cluster, const std::string& nodeType, const std::string& group) {
  return {{"ray.io/cluster", cluster},
          {"ray.io/node-type", nodeType},
          {"ray.io/group", group},
          {"app.kubernetes.io/name", "kuberay"},
          {"app.kubernetes.io/created-by", "kuberay-operator"}};
}

// A Pod from a group's template: the template's labels and annotations kept, ours on top.
json podFrom(const json& groupSpec, const std::string& name, const json& cluster, json labels) {
  const json& tmpl = objectAt(groupSpec, "template");
  json meta = ownedMeta(name, cluster, labels);
  json tmplLabels = objectAt(objectAt(tmpl, "metadata"), "labels");
  tmplLabels.update(labels);
  meta["labels"] = std::move(tmplLabels);
  const json& annotations = objectAt(objectAt(tmpl, "metadata"), "annotations");
  if (!annotations.empty()) meta["annotations"] = annotations;
  json spec = objectAt(tmpl, "spec");
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Never";
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", std::move(meta)},
          {"spec", std::move(spec)}};
}

bool podReady(const json& pod) {
  const json& status = objectAt(pod, "status");
  if (stringAt(status, "phase") != "Running") return false;
  for (const auto& c : arrayAt(status, "conditions")) {
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

bool deleting(const json& object) {
  return objectAt(object, "metadata").contains("deletionTimestamp");
}

json condition(const std::string& type, bool ok, const std::string& reason,
               const std::string& message, const json& previous) {
  std::string status = ok ? "True" : "False";
  for (const auto& c : previous) {
    // Keep lastTransitionTime when the status did not change.
    if (c.value("type", "") == type && c.value("status", "") == status) return c;
  }
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", message}};
}

int64_t integerAt(const json& object, const char* key, int64_t fallback) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

using PodsByName = std::map<std::string, const json*>;

struct GroupTally {
  int64_t desired = 0;
  int64_t ready = 0;
};

// One worker group: plans the missing Pods (within the batch) and the surplus deletions.
GroupTally planGroup(const json& group, const json& cluster, const PodsByName& pods,
                     ClusterPlan& plan) {
  const std::string name = cluster["metadata"].value("name", "");
  const std::string groupName = group.value("groupName", "workers");
  GroupTally tally;
  tally.desired = desiredWorkers(group);
  int64_t present = 0;
  for (const auto& [podName, pod] : pods) {
    auto index = model::workerPodIndex(podName, name, groupName);
    if (!index) continue;  // the head, another group's, or a foreign Pod: not this group's
    if (int64_t(*index) >= tally.desired) {
      if (!deleting(*pod)) plan.deletePods.push_back(podName);
      continue;
    }
    ++present;
    if (podReady(*pod)) ++tally.ready;
  }
  for (int64_t i = 0; present < tally.desired && i < tally.desired; ++i) {
    std::string podName = model::workerPodName(name, groupName, uint64_t(i));
    if (pods.count(podName)) continue;
    if (plan.creates.size() >= kMaxPodCreatesPerReconcile) {
      plan.more = true;
      break;
    }
    plan.creates.push_back(
        {"Pod", podFrom(group, podName, cluster, baseLabels(name, "worker", groupName))});
    ++present;
  }
  return tally;
}

json headService(const std::string& name, const json& cluster, const json& spec) {
  json labels = baseLabels(name, "head", "headgroup");
  int port = dashboardPort(spec);
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", ownedMeta(headServiceNameOf(name, spec), cluster, labels)},
          {"spec",
           {{"selector", labels},
            {"ports", json::array({{{"name", "dashboard"}, {"port", port}, {"targetPort", port}},
                                   {{"name", "gcs-server"}, {"port", 6379}},
                                   {{"name", "client"}, {"port", 10001}}})}}}};
}

bool wasProvisioned(const json& previousStatus) {
  for (const auto& c : arrayAt(previousStatus, "conditions")) {
    if (c.value("type", "") == "RayClusterProvisioned" && c.value("status", "") == "True")
      return true;
  }
  return false;
}

json nextStatus(const json& cluster, bool headReady, bool allReady, int64_t desired,
                int64_t ready) {
  const std::string name = cluster["metadata"].value("name", "");
  const json& previous = objectAt(cluster, "status");
  bool provisioned = wasProvisioned(previous);
  json status = previous;
  const json& oldConditions = arrayAt(previous, "conditions");
  status["desiredWorkerReplicas"] = desired;
  status["readyWorkerReplicas"] = ready;
  status["availableWorkerReplicas"] = ready;
  status["head"] = {{"podName", model::headPodName(name)},
                    {"serviceName", headServiceNameOf(name, objectAt(cluster, "spec"))}};
  if (allReady)
    status["state"] = "ready";
  else
    status.erase("state");  // not sticky (W15): a head that stops being ready is not ready
  status["conditions"] = json::array(
      {condition("HeadPodReady", headReady,
                 headReady ? "HeadPodRunningAndReady" : "HeadPodNotReady",
                 headReady ? "" : "the head Pod is not running and ready", oldConditions),
       condition("RayClusterProvisioned", allReady || provisioned,
                 allReady || provisioned ? "AllPodRunningAndReadyFirstTime"
                                         : "RayClusterPodsProvisioning",
                 "", oldConditions)});
  status["observedGeneration"] = cluster["metadata"].value("generation", 0);
  return status;
}

}  // namespace

std::string headServiceNameOf(const std::string& cluster, const json& clusterSpec) {
  const json& meta =
      objectAt(objectAt(objectAt(clusterSpec, "headGroupSpec"), "headService"), "metadata");
  return model::headServiceName(cluster, stringAt(meta, "name"));
}

int dashboardPort(const json& clusterSpec) {
  const json& containers = arrayAt(
      objectAt(objectAt(objectAt(clusterSpec, "headGroupSpec"), "template"), "spec"), "containers");
  for (const auto& c : containers) {
    for (const auto& p : arrayAt(c, "ports")) {
      if (p.value("name", "") == "dashboard" && p.value("containerPort", json()).is_number_integer())
        return p["containerPort"].get<int>();
    }
  }
  return 8265;
}

int64_t desiredWorkers(const json& group) {
  if (group.value("suspend", json(false)) == json(true)) return 0;
  int64_t minReplicas = std::max<int64_t>(0, integerAt(group, "minReplicas", 0));
  int64_t replicas = integerAt(group, "replicas", minReplicas);
  replicas = std::max(replicas, minReplicas);
  if (group.contains("maxReplicas"))
    replicas = std::min(replicas, std::max<int64_t>(0, integerAt(group, "maxReplicas", replicas)));
  int64_t hosts = std::max<int64_t>(1, integerAt(group, "numOfHosts", 1));
  replicas = std::clamp<int64_t>(replicas, 0, kMaxDesiredPodsPerGroup);
  hosts = std::min<int64_t>(hosts, kMaxDesiredPodsPerGroup);
  return std::min<int64_t>(replicas * hosts, kMaxDesiredPodsPerGroup);
}

ClusterPlan decideRayCluster(const ClusterObserved& o) {
  ClusterPlan plan;
  const json& cluster = o.cluster;
  const std::string name = cluster["metadata"].value("name", "");
  const json& spec = objectAt(cluster, "spec");
  if (deleting(cluster)) {
    plan.why = "being deleted; the garbage collector removes its Pods";
    return plan;
  }
  PodsByName pods;
  for (const auto& p : o.pods) pods[stringAt(objectAt(*p, "metadata"), "name")] = p.get();
  if (!o.headServiceExists) plan.creates.push_back({"Service", headService(name, cluster, spec)});
  const std::string headName = model::headPodName(name);
  // SidecarMode: a head that ran its submitter must not run again (KubeRay's annotation).
  bool noHeadRestart = stringAt(objectAt(objectAt(cluster, "metadata"), "annotations"),
                                "ray.io/disable-provisioned-head-restart") == "true";
  if (!pods.count(headName) && !(noHeadRestart && wasProvisioned(objectAt(cluster, "status"))))
    plan.creates.push_back(
        {"Pod", podFrom(objectAt(spec, "headGroupSpec"), headName, cluster,
                        baseLabels(name, "head", "headgroup"))});
  int64_t desired = 0, ready = 0;
  for (const auto& group : arrayAt(spec, "workerGroupSpecs")) {
    GroupTally t = planGroup(group, cluster, pods, plan);
    desired += t.desired;
    ready += t.ready;
  }
  auto head = pods.find(headName);
  bool headReady = head != pods.end() && podReady(*head->second);
  bool allReady = headReady && ready == desired;
  json status = nextStatus(cluster, headReady, allReady, desired, ready);
  if (status != objectAt(cluster, "status")) plan.status = std::move(status);
  plan.why = allReady ? "all " + std::to_string(desired + 1) + " Pods ready"
                      : "waiting for Pods: head " + std::string(headReady ? "ready" : "not ready") +
                            ", workers " + std::to_string(ready) + "/" + std::to_string(desired);
  return plan;
}

}  // namespace rayjournal::controller
