// The status a RayCluster should show, computed as KubeRay v1.7.0's calculateStatus does, with
// one deliberate difference: `state: ready` is not sticky (W15), so a head that stops being
// ready turns the cluster back to not ready and the RayJob waits instead of submitting to it.
#include <limits>
#include <map>

#include "adapters/TimeFormat.h"
#include "controller/JsonAccess.h"
#include "controller/raycluster/ClusterResources.h"
#include "controller/raycluster/RayClusterBuild.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "model/Names.h"
#include "model/Quantity.h"

namespace rayjournal::controller {
namespace {

void writeResources(json& status, const json& clusterSpec) {
  Resources r = desiredResources(clusterSpec);  // CalculateDesiredResources
  model::Quantity gpu;
  for (const auto& [k, q] : r)
    if (isGpuResourceKey(k)) gpu.value += q.value;
  auto at = [&r](const char* k) { return r.count(k) ? r.at(k) : model::Quantity{}; };
  status["desiredCPU"] = model::formatQuantity(at("cpu"));
  status["desiredMemory"] = model::formatQuantity(at("memory"));
  status["desiredGPU"] = model::formatQuantity(gpu);
  status["desiredTPU"] = model::formatQuantity(at("google.com/tpu"));
}

// Sums over the groups that are not suspended, each times numOfHosts; max as an int32.
void writeReplicaBounds(json& status, const json& clusterSpec) {
  int64_t min = 0, max = 0;
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  for (const auto& group : arrayAt(clusterSpec, "workerGroupSpecs")) {
    if (groupSuspended(group)) continue;
    int64_t hosts = hostsOf(group);
    min = std::min(kInt32Max, min + std::clamp<int64_t>(integerAt(group, "minReplicas", 0), 0, kInt32Max) * hosts);
    max = std::min(kInt32Max, max + std::clamp<int64_t>(integerAt(group, "maxReplicas", kInt32Max), 0, kInt32Max) * hosts);
  }
  status["minWorkerReplicas"] = min;
  status["maxWorkerReplicas"] = max;
}

// endpoints[port name] from the head Service: nodePort, else targetPort, else port.
void writeHead(json& status, const ClusterObserved& o, const ClusterTally& t) {
  const json& spec = objectAt(o.cluster.raw.get(), "spec");
  json head = {{"podName", t.headFound ? model::headPodName(o.cluster.name) : ""},
               {"podIP", t.headIP},
               {"serviceName", headServiceNameOf(o.cluster.name, spec)}};
  if (!o.headServiceExists()) {
    status["head"] = std::move(head);
    return;
  }
  const json& svcSpec = objectAt(o.headService.get(), "spec");
  const std::string& clusterIP = stringAt(svcSpec, "clusterIP");
  head["serviceIP"] = clusterIP.empty() || clusterIP == "None" ? t.headIP : clusterIP;
  json endpoints = json::object();
  for (const auto& p : arrayAt(svcSpec, "ports")) {
    const std::string& name = stringAt(p, "name");
    if (name.empty()) continue;
    int64_t nodePort = integerAt(p, "nodePort", 0);
    const json& target = memberAt(p, "targetPort");
    if (nodePort != 0)
      endpoints[name] = std::to_string(nodePort);
    else if (target.is_number_integer() && target.get<int64_t>() != 0)
      endpoints[name] = std::to_string(target.get<int64_t>());
    else if (target.is_string() && !target.get<std::string>().empty())
      endpoints[name] = target;
    else if (memberAt(p, "port").is_number_integer())
      endpoints[name] = std::to_string(p["port"].get<int64_t>());
  }
  status["head"] = std::move(head);
  status["endpoints"] = std::move(endpoints);
}

json condition(const std::string& type, bool ok, const std::string& reason,
               const std::string& message, const json& previous, int64_t nowMs) {
  std::string status = ok ? "True" : "False";
  for (const auto& c : previous) {
    // As meta.SetStatusCondition: the transition time moves only when the status does.
    if (stringAt(c, "type") == type && stringAt(c, "status") == status) {
      json kept = c;
      kept["reason"] = reason;
      kept["message"] = message;
      return kept;
    }
  }
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", toRfc3339(nowMs)}};
}

// The suspension's conditions as KubeRay's calculateStatus moves them: requested -> Suspending;
// Suspending with no Pod left -> Suspended (and Provisioned False, to be reached again);
// Suspended and no longer asked for -> not suspended. Unset counts as false here (KubeRay keeps
// a cluster whose suspend field was removed suspended for good).
struct SuspendConditions {
  bool suspending = false;
  bool suspended = false;
  bool unprovision = false;  // Provisioned goes False: "RayCluster has been suspended"
  bool keepProvisioned = false;  // while suspended, Provisioned is not recomputed
};

SuspendConditions suspendConditions(const ClusterObserved& o) {
  SuspendConditions s;
  switch (o.cluster.suspendStatus) {
    case SuspendStatus::Suspending:
      s.suspending = !o.pods.empty();
      s.suspended = s.unprovision = o.pods.empty();
      break;
    case SuspendStatus::Suspended:
      s.suspended = o.cluster.suspend;
      s.keepProvisioned = true;
      break;
    case SuspendStatus::None:
      s.suspending = o.cluster.suspend;
      break;
  }
  return s;
}

void writeConditions(json& status, const ClusterObserved& o, const ClusterTally& t,
                     const json& old) {
  if (!o.statusConditions) return;  // KubeRay with the gate off leaves conditions alone
  std::string headReason = t.headReady ? "HeadPodRunningAndReady"
                           : t.headFound ? "HeadPodNotReady"
                                         : "HeadPodNotFound";
  const SuspendConditions s = suspendConditions(o);
  bool provisioned = s.keepProvisioned ? o.cluster.provisioned : t.allReady || o.cluster.provisioned;
  if (s.unprovision) provisioned = false;
  status["conditions"] = json::array(
      {condition("HeadPodReady", t.headReady, headReason,
                 t.headFound ? "" : "Head Pod not found", old, o.nowMs),
       condition("RayClusterProvisioned", provisioned,
                 provisioned ? "AllPodRunningAndReadyFirstTime" : "RayClusterPodsProvisioning",
                 provisioned       ? "All Ray Pods are ready for the first time"
                 : s.unprovision ? "RayCluster has been suspended"
                                   : "RayCluster Pods are being provisioned for first time",
                 old, o.nowMs),
       condition("RayClusterSuspended", s.suspended, "RayClusterSuspended", "", old, o.nowMs),
       condition("RayClusterSuspending", s.suspending, "RayClusterSuspending", "", old, o.nowMs)});
  const ReplicaFailure& failure = o.replicaFailure;
  if (t.changesPods && !failure.reason.empty())
    status["conditions"].push_back(condition("ReplicaFailure", true, failure.reason,
                                             failure.message, old, o.nowMs));
}

}  // namespace

model::ApiObject clusterStatusFor(const ClusterObserved& o, const ClusterTally& t) {
  const json& doc = o.cluster.raw.get();
  const json& spec = objectAt(doc, "spec");
  const json& previous = objectAt(doc, "status");
  json status = previous;
  status["desiredWorkerReplicas"] = t.desired;
  status["readyWorkerReplicas"] = t.ready;
  status["availableWorkerReplicas"] = t.available;
  writeReplicaBounds(status, spec);
  writeResources(status, spec);
  writeHead(status, o, t);
  writeConditions(status, o, t, arrayAt(previous, "conditions"));
  if (t.allReady) {
    status["state"] = "ready";
    status.erase("reason");
  } else {
    status.erase("state");  // not sticky (W15): a head that stops being ready is not ready
  }
  if (o.cluster.suspend && o.pods.empty()) status["state"] = "suspended";
  const std::string& state = stringAt(status, "state");
  if (!state.empty() && state != stringAt(previous, "state"))
    status["stateTransitionTimes"][state] = toRfc3339(o.nowMs);
  const json& generation = memberAt(objectAt(doc, "metadata"), "generation");
  status["observedGeneration"] = generation.is_number_integer() ? generation.get<int64_t>() : 0;
  json comparable = previous;
  comparable.erase("lastUpdateTime");
  status.erase("lastUpdateTime");
  if (status == comparable) return nullptr;
  status["lastUpdateTime"] = toRfc3339(o.nowMs);
  return std::make_shared<json>(std::move(status));
}

}  // namespace rayjournal::controller
