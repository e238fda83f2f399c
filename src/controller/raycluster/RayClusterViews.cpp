#include "controller/raycluster/RayClusterViews.h"

#include "model/TokenAuth.h"

#include <algorithm>
#include <map>
#include <charconv>
#include <nlohmann/json.hpp>

#include "adapters/TimeFormat.h"
#include "controller/JsonAccess.h"
#include "controller/raycluster/Autoscaler.h"
#include "controller/raycluster/GcsFaultTolerance.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "controller/raycluster/ValidateCluster.h"
#include "model/Names.h"

namespace rayjournal::controller {
namespace {

bool conditionTrue(const json& status, const char* type) {
  for (const auto& c : arrayAt(status, "conditions"))
    if (stringAt(c, "type") == type && stringAt(c, "status") == "True") return true;
  return false;
}

bool deletingNow(const json& object) {
  return !memberAt(objectAt(object, "metadata"), "deletionTimestamp").is_null();
}

void observeRedisCleanup(const json& cluster, const ClusterContext& context, RayClusterView& v) {
  const json& meta = objectAt(cluster, "metadata");
  v.redisCleanup = context.redisCleanup && gcsFaultToleranceEnabled(cluster) &&
                   !gcsFaultToleranceEmbedded(cluster);
  for (const auto& f : arrayAt(meta, "finalizers"))
    v.redisCleanupFinalizer = v.redisCleanupFinalizer || f == kRedisCleanupFinalizer;
  if (v.deleting) v.deletionMs = parseRfc3339(stringAt(meta, "deletionTimestamp")).value_or(0);
  const json& annotations = objectAt(meta, "annotations");
  // KubeRay's strconv.Atoi: a positive integer of seconds, anything else the default.
  const std::string& timeout = stringAt(annotations, "ray.io/gcs-ft-deletion-timeout");
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(timeout.data(), timeout.data() + timeout.size(), seconds);
  if (!timeout.empty() && ec == std::errc() && end == timeout.data() + timeout.size() &&
      seconds > 0 && seconds < int64_t(1) << 40)
    v.redisCleanupTimeoutMs = seconds * 1000;
  v.storageNamespaceAnnotation = stringAt(annotations, kStorageNamespaceAnnotation);
}

bool rayContainerTerminated(const json& pod) {
  const json& containers = arrayAt(objectAt(pod, "spec"), "containers");
  if (containers.empty()) return false;
  const std::string& ray = stringAt(containers[0], "name");
  for (const auto& cs : arrayAt(objectAt(pod, "status"), "containerStatuses"))
    if (stringAt(cs, "name") == ray) return !objectAt(objectAt(cs, "state"), "terminated").empty();
  return false;
}


// A member as a Document that keeps the whole cluster alive (aliasing shared_ptr).
model::Document part(const std::shared_ptr<const json>& whole, const json& member) {
  return model::Document(std::shared_ptr<const json>(whole, &member));
}

void observeGcsStorage(const json& cluster, RayClusterView& v) {
  v.gcsEmbedded = gcsFaultToleranceEnabled(cluster) && gcsFaultToleranceEmbedded(cluster);
  if (!v.gcsEmbedded) return;
  v.gcsStorageClaim = gcsStorageClaimName(cluster);
  v.gcsStorageClaimUsers = gcsStorageClaimIsUsers(cluster);
}

void validate(const json& cluster, const FeatureGates& gates, RayClusterView& v) {
  const json& meta = objectAt(cluster, "metadata");
  v.invalid = rayClusterMetadataProblem(v.name);
  v.invalidReason = "InvalidRayClusterMetadata";
  if (!v.invalid.empty()) return;
  std::map<std::string, std::string> annotations;
  for (const auto& [k, value] : objectAt(meta, "annotations").items())
    if (value.is_string()) annotations[k] = value.get<std::string>();
  v.invalid = rayClusterSpecProblem(objectAt(cluster, "spec"), annotations, gates);
  v.invalidReason = "InvalidRayClusterSpec";
  if (!v.invalid.empty()) return;
  // KubeRay's ValidateRayClusterStatus: another writer left both suspension conditions True.
  const json& status = objectAt(cluster, "status");
  if (conditionTrue(status, "RayClusterSuspending") && conditionTrue(status, "RayClusterSuspended")) {
    v.invalid = "invalid RayCluster State: rayv1.RayClusterSuspending and rayv1.RayClusterSuspended "
                "conditions should not be both true";
    v.invalidReason = "InvalidRayClusterStatus";
  }
}

}  // namespace

PodView podView(const json& pod) {
  PodView v;
  v.name = stringAt(objectAt(pod, "metadata"), "name");
  v.deleting = deletingNow(pod);
  const json& status = objectAt(pod, "status");
  v.ip = stringAt(status, "podIP");
  const std::string& phase = stringAt(status, "phase");
  v.running = phase == "Running";
  v.unhealthy = phase == "Failed" || phase == "Succeeded" ||
                (phase == "Running" && stringAt(objectAt(pod, "spec"), "restartPolicy") == "Never" &&
                 rayContainerTerminated(pod));
  if (phase != "Running" || v.unhealthy) return v;
  for (const auto& c : arrayAt(status, "conditions"))
    if (stringAt(c, "type") == "Ready") v.ready = stringAt(c, "status") == "True";
  return v;
}

ClusterObserved clusterObserved(std::shared_ptr<const json> cluster,
                                const std::vector<std::shared_ptr<const json>>& pods,
                                std::shared_ptr<const json> headService,
                                const ClusterContext& context) {
  std::vector<PodView> views;
  for (const auto& p : pods) views.push_back(podView(*p));
  return clusterObserved(std::move(cluster), std::move(views), std::move(headService), context);
}

ClusterObserved clusterObserved(std::shared_ptr<const json> cluster, std::vector<PodView> pods,
                                std::shared_ptr<const json> headService,
                                const ClusterContext& context) {
  ClusterObserved o;
  RayClusterView& v = o.cluster;
  const json& meta = objectAt(*cluster, "metadata");
  const json& spec = objectAt(*cluster, "spec");
  v.name = stringAt(meta, "name");
  v.ns = stringAt(meta, "namespace");
  v.deleting = deletingNow(*cluster);
  v.noHeadRestart =
      stringAt(objectAt(meta, "annotations"), "ray.io/disable-provisioned-head-restart") == "true";
  v.provisioned = conditionTrue(objectAt(*cluster, "status"), "RayClusterProvisioned");
  v.autoscaling = memberAt(spec, "enableInTreeAutoscaling") == true;
  v.suspend = memberAt(spec, "suspend") == true;
  const json& status = objectAt(*cluster, "status");
  v.suspendStatus = conditionTrue(status, "RayClusterSuspending")  ? SuspendStatus::Suspending
                    : conditionTrue(status, "RayClusterSuspended") ? SuspendStatus::Suspended
                                                                   : SuspendStatus::None;
  v.generation = integerAt(meta, "generation", 0);
  v.observedGeneration = integerAt(objectAt(*cluster, "status"), "observedGeneration", 0);
  if (v.autoscaling) {
    v.autoscalerVersion = stringAt(objectAt(spec, "autoscalerOptions"), "version");
    v.autoscalerServiceAccount = autoscalerServiceAccountName(*cluster);
    v.autoscalerRole = autoscalerRoleName(*cluster);
    const json& headPod = objectAt(objectAt(objectAt(spec, "headGroupSpec"), "template"), "spec");
    v.userServiceAccount = stringAt(headPod, "serviceAccountName") == v.autoscalerServiceAccount;
  }
  v.clusterDomain = context.clusterDomain;
  v.injection = context.injection;
  v.authSecret = model::tokenAuthSecretName(spec, v.name);
  v.createsAuthSecret = !v.authSecret.empty() && model::operatorCreatesTokenSecret(spec);
  observeRedisCleanup(*cluster, context, v);
  observeGcsStorage(*cluster, v);
  validate(*cluster, context.gates, v);
  if (const std::string& manager = stringAt(spec, "managedBy"); manager != "ray.io/kuberay-operator")
    v.managedByOther = manager;
  v.headGroup = part(cluster, objectAt(spec, "headGroupSpec"));
  for (const auto& group : arrayAt(spec, "workerGroupSpecs")) {
    const json& name = memberAt(group, "groupName");
    const json& replicas = memberAt(group, "replicas");
    v.groups.push_back({name.is_string() ? name.get<std::string>() : "workers",
                        desiredWorkers(group), hostsOf(group), part(cluster, group),
                        replicas.is_null() ? "" : replicas.dump(),
                        stringAt(objectAt(objectAt(group, "template"), "spec"), "restartPolicy"),
                        {}});
    for (const auto& pod : arrayAt(objectAt(group, "scaleStrategy"), "workersToDelete"))
      if (pod.is_string()) v.groups.back().workersToDelete.insert(pod.get<std::string>());
  }
  v.raw = model::Document(std::move(cluster));
  o.pods = std::move(pods);
  if (headService) o.headService = model::Document(std::move(headService));
  o.nowMs = context.nowMs;
  o.statusConditions = context.statusConditions;
  return o;
}

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
      const json& port = memberAt(p, "containerPort");
      if (stringAt(p, "name") == "dashboard" && port.is_number_integer()) return port.get<int>();
    }
  }
  return 8265;
}

int64_t desiredWorkers(const json& group) {
  const json& suspend = memberAt(group, "suspend");
  if (suspend.is_boolean() && suspend.get<bool>()) return 0;
  int64_t minReplicas = std::max<int64_t>(0, integerAt(group, "minReplicas", 0));
  int64_t replicas = integerAt(group, "replicas", minReplicas);
  replicas = std::max(replicas, minReplicas);
  if (group.contains("maxReplicas"))
    replicas = std::min(replicas, std::max<int64_t>(0, integerAt(group, "maxReplicas", replicas)));
  replicas = std::clamp<int64_t>(replicas, 0, kMaxDesiredPodsPerGroup);
  return std::min<int64_t>(replicas * hostsOf(group), kMaxDesiredPodsPerGroup);
}

int64_t hostsOf(const json& group) {
  return std::clamp<int64_t>(integerAt(group, "numOfHosts", 1), 1, kMaxDesiredPodsPerGroup);
}

}  // namespace rayjournal::controller
