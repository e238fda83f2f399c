#include "controller/RayClusterBuild.h"

#include <nlohmann/json.hpp>

#include "controller/JsonAccess.h"
#include "model/Names.h"

namespace rayjournal::controller {
namespace {

json ownedMeta(const std::string& name, const json& cluster, json labels) {
  const json& meta = objectAt(cluster, "metadata");
  const std::string& ns = stringAt(meta, "namespace");
  return {{"name", name},
          {"namespace", ns.empty() ? "default" : ns},
          {"labels", std::move(labels)},
          {"ownerReferences", json::array({{{"apiVersion", "ray.io/v1"},
                                            {"kind", "RayCluster"},
                                            {"name", stringAt(meta, "name")},
                                            {"uid", stringAt(meta, "uid")},
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
model::ApiObject podFrom(const json& groupSpec, const std::string& name, const json& cluster,
                         json labels) {
  const json& tmpl = objectAt(groupSpec, "template");
  json meta = ownedMeta(name, cluster, labels);
  json tmplLabels = objectAt(objectAt(tmpl, "metadata"), "labels");
  tmplLabels.update(labels);
  meta["labels"] = std::move(tmplLabels);
  const json& annotations = objectAt(objectAt(tmpl, "metadata"), "annotations");
  if (!annotations.empty()) meta["annotations"] = annotations;
  json spec = objectAt(tmpl, "spec");
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Never";
  return std::make_shared<json>(json{
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(meta)}, {"spec", std::move(spec)}});
}

json condition(const std::string& type, bool ok, const std::string& reason,
               const std::string& message, const json& previous) {
  std::string status = ok ? "True" : "False";
  for (const auto& c : previous) {
    // Keep lastTransitionTime when the status did not change.
    if (stringAt(c, "type") == type && stringAt(c, "status") == status) return c;
  }
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", message}};
}

}  // namespace

model::ApiObject headServiceFor(const RayClusterView& cluster) {
  const json& doc = cluster.raw.get();
  const json& spec = objectAt(doc, "spec");
  json labels = baseLabels(cluster.name, "head", "headgroup");
  int port = dashboardPort(spec);
  return std::make_shared<json>(json{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", ownedMeta(headServiceNameOf(cluster.name, spec), doc, labels)},
      {"spec",
       {{"selector", labels},
        {"ports", json::array({{{"name", "dashboard"}, {"port", port}, {"targetPort", port}},
                               {{"name", "gcs-server"}, {"port", 6379}},
                               {{"name", "client"}, {"port", 10001}}})}}}});
}

model::ApiObject headPodFor(const RayClusterView& cluster) {
  return podFrom(cluster.headGroup.get(), model::headPodName(cluster.name), cluster.raw.get(),
                 baseLabels(cluster.name, "head", "headgroup"));
}

model::ApiObject workerPodFor(const RayClusterView& cluster, const WorkerGroupView& group,
                              const std::string& podName) {
  return podFrom(group.spec.get(), podName, cluster.raw.get(),
                 baseLabels(cluster.name, "worker", group.name));
}

model::ApiObject clusterStatusFor(const RayClusterView& cluster, const ClusterTally& t) {
  const json& doc = cluster.raw.get();
  const json& previous = objectAt(doc, "status");
  json status = previous;
  const json& oldConditions = arrayAt(previous, "conditions");
  status["desiredWorkerReplicas"] = t.desired;
  status["readyWorkerReplicas"] = t.ready;
  status["availableWorkerReplicas"] = t.ready;
  status["head"] = {{"podName", model::headPodName(cluster.name)},
                    {"serviceName", headServiceNameOf(cluster.name, objectAt(doc, "spec"))}};
  if (t.allReady)
    status["state"] = "ready";
  else
    status.erase("state");  // not sticky (W15): a head that stops being ready is not ready
  bool provisioned = t.allReady || cluster.provisioned;
  status["conditions"] = json::array(
      {condition("HeadPodReady", t.headReady,
                 t.headReady ? "HeadPodRunningAndReady" : "HeadPodNotReady",
                 t.headReady ? "" : "the head Pod is not running and ready", oldConditions),
       condition("RayClusterProvisioned", provisioned,
                 provisioned ? "AllPodRunningAndReadyFirstTime" : "RayClusterPodsProvisioning", "",
                 oldConditions)});
  const json& generation = memberAt(objectAt(doc, "metadata"), "generation");
  status["observedGeneration"] = generation.is_number_integer() ? generation.get<int64_t>() : 0;
  if (status == previous) return nullptr;
  return std::make_shared<json>(std::move(status));
}

}  // namespace rayjournal::controller
