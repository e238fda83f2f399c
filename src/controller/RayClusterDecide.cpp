#include "controller/RayClusterDecide.h"

#include <map>

#include "controller/JsonAccess.h"

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

json condition(const std::string& type, bool ok, const std::string& reason,
               const std::string& message, const json& previous) {
  std::string status = ok ? "True" : "False";
  for (const auto& c : previous) {
    // Keep lastTransitionTime when the status did not change.
    if (c.value("type", "") == type && c.value("status", "") == status) return c;
  }
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", message}};
}

}  // namespace

std::string headServiceName(const std::string& cluster) {
  return cluster + "-head-svc";
}

int dashboardPort(const json& clusterSpec) {
  const json& containers = arrayAt(
      objectAt(objectAt(objectAt(clusterSpec, "headGroupSpec"), "template"), "spec"), "containers");
  for (const auto& c : containers) {
    for (const auto& p : arrayAt(c, "ports")) {
      if (p.value("name", "") == "dashboard") return p.value("containerPort", 8265);
    }
  }
  return 8265;
}

ClusterPlan decideRayCluster(const ClusterObserved& o) {
  ClusterPlan plan;
  const json& cluster = o.cluster;
  const std::string name = cluster["metadata"].value("name", "");
  const json& spec = objectAt(cluster, "spec");
  if (cluster["metadata"].contains("deletionTimestamp")) {
    plan.why = "being deleted; the garbage collector removes its Pods";
    return plan;
  }
  std::map<std::string, const json*> pods;
  for (const auto& p : o.pods) pods[p["metadata"].value("name", "")] = &p;

  json headLabels = baseLabels(name, "head", "headgroup");
  if (!o.headServiceExists) {
    int port = dashboardPort(spec);
    plan.creates.push_back(
        {"Service",
         {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", ownedMeta(headServiceName(name), cluster, headLabels)},
          {"spec",
           {{"selector", headLabels},
            {"ports", json::array({{{"name", "dashboard"}, {"port", port}, {"targetPort", port}},
                                   {{"name", "gcs-server"}, {"port", 6379}},
                                   {{"name", "client"}, {"port", 10001}}})}}}}});
  }
  std::vector<std::string> wanted{name + "-head"};
  const json& previous = objectAt(cluster, "status");
  bool provisioned = false;  // KubeRay's RayClusterProvisioned: sticky, unlike `state`
  for (const auto& c : arrayAt(previous, "conditions")) {
    if (c.value("type", "") == "RayClusterProvisioned" && c.value("status", "") == "True")
      provisioned = true;
  }
  // SidecarMode: a head that ran its submitter must not run again (KubeRay's annotation).
  bool noHeadRestart = stringAt(objectAt(objectAt(cluster, "metadata"), "annotations"),
                                "ray.io/disable-provisioned-head-restart") == "true";
  if (!pods.count(name + "-head") && !(noHeadRestart && provisioned))
    plan.creates.push_back(
        {"Pod", podFrom(objectAt(spec, "headGroupSpec"), name + "-head", cluster, headLabels)});
  int desiredWorkers = 0, readyWorkers = 0;
  for (const auto& group : arrayAt(spec, "workerGroupSpecs")) {
    std::string groupName = group.value("groupName", "workers");
    int replicas =
        group.value("suspend", false)
            ? 0
            : group.value("replicas", group.value("minReplicas", 0)) * group.value("numOfHosts", 1);
    desiredWorkers += replicas;
    std::string prefix = name + "-" + groupName + "-worker-";
    for (int i = 0; i < replicas; ++i) {
      std::string podName = prefix + std::to_string(i);
      wanted.push_back(podName);
      auto it = pods.find(podName);
      if (it == pods.end()) {
        plan.creates.push_back(
            {"Pod", podFrom(group, podName, cluster, baseLabels(name, "worker", groupName))});
      } else if (podReady(*it->second)) {
        ++readyWorkers;
      }
    }
    // Pods of this group beyond the replica count (scale down, suspended group).
    for (const auto& [podName, pod] : pods) {
      if (podName.rfind(prefix, 0) != 0) continue;
      const std::string index = podName.substr(prefix.size());
      if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) continue;
      if (std::stoi(index) >= replicas && !(*pod)["metadata"].contains("deletionTimestamp"))
        plan.deletePods.push_back(podName);
    }
  }
  auto head = pods.find(name + "-head");
  bool headReady = head != pods.end() && podReady(*head->second);
  bool allReady = headReady && readyWorkers == desiredWorkers;

  json status = previous;
  const json& oldConditions = arrayAt(previous, "conditions");
  status["desiredWorkerReplicas"] = desiredWorkers;
  status["readyWorkerReplicas"] = readyWorkers;
  status["availableWorkerReplicas"] = readyWorkers;
  status["head"] = {{"podName", name + "-head"}, {"serviceName", headServiceName(name)}};
  if (allReady) {
    status["state"] = "ready";
  } else {
    status.erase("state");  // not sticky (W15): a head that stops being ready is not ready
  }
  status["conditions"] = json::array(
      {condition("HeadPodReady", headReady,
                 headReady ? "HeadPodRunningAndReady" : "HeadPodNotReady",
                 headReady ? "" : "the head Pod is not running and ready", oldConditions),
       condition("RayClusterProvisioned", allReady || provisioned,
                 allReady || provisioned ? "AllPodRunningAndReadyFirstTime"
                                         : "RayClusterPodsProvisioning",
                 "", oldConditions)});
  status["observedGeneration"] = cluster["metadata"].value("generation", 0);
  if (status != previous) plan.status = status;
  plan.why = allReady ? "all " + std::to_string(wanted.size()) + " Pods ready"
                      : "waiting for Pods: head " + std::string(headReady ? "ready" : "not ready") +
                            ", workers " + std::to_string(readyWorkers) + "/" +
                            std::to_string(desiredWorkers);
  return plan;
}

}  // namespace rayjournal::controller
