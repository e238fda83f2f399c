#include "controller/raycluster/ClusterResources.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "controller/raycluster/RayClusterViews.h"

namespace rayjournal::controller {
namespace {

Resources groupSum(const json& clusterSpec, const char* replicasKey) {
  Resources total = podResources(groupPodSpec(objectAt(clusterSpec, "headGroupSpec")));
  for (const auto& group : arrayAt(clusterSpec, "workerGroupSpecs")) {
    if (groupSuspended(group)) continue;
    long double times =
        static_cast<long double>(std::max<int64_t>(0, integerAt(group, replicasKey, 0))) * hostsOf(group);
    addResources(total, podResources(groupPodSpec(group)), times);
  }
  return total;
}

}  // namespace

bool groupSuspended(const json& group) {
  const json& s = memberAt(group, "suspend");
  return s.is_boolean() && s.get<bool>();
}

const json& groupPodSpec(const json& group) { return objectAt(objectAt(group, "template"), "spec"); }

json submitterPodSpec(const json& rayJobSpec) {
  const json& tmpl = memberAt(rayJobSpec, "submitterPodTemplate");
  if (tmpl.is_object()) return objectAt(tmpl, "spec");
  json resources = {{"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}, {"requests", {{"cpu", "500m"}, {"memory", "200Mi"}}}};
  return {{"containers", json::array({{{"name", "ray-job-submitter"}, {"resources", resources}}})}};
}

void addResources(Resources& into, const Resources& more, long double times) {
  for (const auto& [name, q] : more) {
    auto [it, fresh] = into.try_emplace(name, model::Quantity{0, q.binary});
    it->second.value += q.value * times;
  }
}

Resources podResources(const json& podSpec) {
  Resources total;
  for (const auto& c : arrayAt(podSpec, "containers")) {
    const json& r = objectAt(c, "resources");
    json merged = objectAt(r, "requests");
    for (const auto& [k, v] : objectAt(r, "limits").items())
      if (!merged.contains(k)) merged[k] = v;
    for (const auto& [k, v] : merged.items())
      if (auto q = quantityOf(v)) addResources(total, {{k, *q}});
  }
  return total;
}

Resources desiredResources(const json& clusterSpec) { return groupSum(clusterSpec, "replicas"); }

Resources minResources(const json& clusterSpec) { return groupSum(clusterSpec, "minReplicas"); }

int64_t desiredWorkerPods(const json& clusterSpec) {
  int64_t total = 0;
  for (const auto& group : arrayAt(clusterSpec, "workerGroupSpecs")) total += desiredWorkers(group);
  return total;
}

int64_t minWorkerPods(const json& clusterSpec) {
  int64_t total = 0;
  for (const auto& group : arrayAt(clusterSpec, "workerGroupSpecs"))
    if (!groupSuspended(group))
      total += std::max<int64_t>(0, integerAt(group, "minReplicas", 0)) * hostsOf(group);
  return total;
}

json resourceList(const Resources& resources) {
  json list = json::object();
  for (const auto& [name, q] : resources) list[name] = model::formatQuantity(q);
  return list;
}

}  // namespace rayjournal::controller
