#include "controller/raycluster/Autoscaler.h"

#include <algorithm>

#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterBuild.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "controller/raycluster/RayClusterViews.h"
#include "model/TokenAuth.h"

namespace rayjournal::controller {
namespace {

constexpr const char* kAutoscalerCommand =
    "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) --cluster-namespace "
    "$(RAY_CLUSTER_NAMESPACE)";
constexpr const char* kLogVolume = "ray-logs";
constexpr const char* kLogMountPath = "/tmp/ray";

// autoscalerOptions over the sidecar (mergeAutoscalerOverrides).
void mergeOverrides(json& container, const json& options) {
  for (const char* replaced : {"resources", "image", "imagePullPolicy", "securityContext", "command", "args"})
    if (!memberAt(options, replaced).is_null()) container[replaced] = options[replaced];
  for (const char* appended : {"env", "envFrom", "volumeMounts"}) {
    const json& more = arrayAt(options, appended);
    if (more.empty()) continue;
    json& list = container[appended];
    if (!list.is_array()) list = json::array();
    for (const auto& item : more) list.push_back(item);
  }
}

// An emptyDir mounted at path in the container, unless something is mounted there already
// (KubeRay's addEmptyDir); the volume is added once for both containers.
void addLogVolume(json& podSpec, json& container) {
  for (const auto& m : arrayAt(container, "volumeMounts"))
    if (stringAt(m, "mountPath") == kLogMountPath) return;
  json& volumes = podSpec["volumes"];
  if (!volumes.is_array()) volumes = json::array();
  bool exists = std::any_of(volumes.begin(), volumes.end(),
                            [](const json& v) { return stringAt(v, "name") == kLogVolume; });
  if (!exists) volumes.push_back({{"name", kLogVolume}, {"emptyDir", json::object()}});
  json& mounts = container["volumeMounts"];
  if (!mounts.is_array()) mounts = json::array();
  mounts.push_back({{"name", kLogVolume}, {"mountPath", kLogMountPath}});
}

std::string versionOf(const json& clusterSpec) {
  return stringAt(objectAt(clusterSpec, "autoscalerOptions"), "version");
}

json rbacMeta(const RayClusterView& cluster, const std::string& name) {
  return ownedMeta(name, cluster.raw.get(),
                   {{"ray.io/cluster", cluster.name},
                    {"app.kubernetes.io/name", "kuberay"},
                    {"app.kubernetes.io/created-by", "kuberay-operator"}});
}

model::ApiObject object(const char* apiVersion, const char* kind, json meta, json body) {
  json o = {{"apiVersion", apiVersion}, {"kind", kind}, {"metadata", std::move(meta)}};
  o.update(body);
  return std::make_shared<json>(std::move(o));
}

}  // namespace

model::ApiObject autoscalerServiceAccountFor(const RayClusterView& cluster) {
  return object("v1", "ServiceAccount", rbacMeta(cluster, cluster.autoscalerServiceAccount),
                json::object());
}

model::ApiObject autoscalerRoleFor(const RayClusterView& cluster) {
  auto rule = [](const char* group, const char* resource, json verbs) {
    return json{{"apiGroups", {group}}, {"resources", {resource}}, {"verbs", std::move(verbs)}};
  };
  json rules = json::array({rule("", "pods", {"get", "list", "watch", "patch"}),
                            rule("", "pods/resize", {"patch"}),
                            rule("ray.io", "rayclusters", {"get", "patch"})});
  return object("rbac.authorization.k8s.io/v1", "Role", rbacMeta(cluster, cluster.autoscalerRole),
                {{"rules", std::move(rules)}});
}

model::ApiObject autoscalerRoleBindingFor(const RayClusterView& cluster) {
  const std::string ns = stringAt(objectAt(cluster.raw.get(), "metadata"), "namespace");
  json subject = {{"kind", "ServiceAccount"}, {"name", cluster.autoscalerServiceAccount}, {"namespace", ns}};
  json roleRef = {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", cluster.autoscalerRole}};
  return object("rbac.authorization.k8s.io/v1", "RoleBinding", rbacMeta(cluster, cluster.autoscalerRole),
                {{"subjects", json::array({std::move(subject)})}, {"roleRef", std::move(roleRef)}});
}

std::string autoscalerRoleName(const json& cluster) {
  return model::checkName(stringAt(objectAt(cluster, "metadata"), "name"));
}

std::string autoscalerServiceAccountName(const json& cluster) {
  const json& head = objectAt(objectAt(cluster, "spec"), "headGroupSpec");
  std::string name = stringAt(objectAt(objectAt(head, "template"), "spec"), "serviceAccountName");
  if (name.empty()) name = stringAt(objectAt(cluster, "metadata"), "name");
  return model::checkName(std::move(name));
}

json autoscalerContainer(const RayClusterView& cluster, const json& rayContainer) {
  json fixed = {{"cpu", "500m"}, {"memory", "512Mi"}};
  json sidecar = {
      {"name", "autoscaler"},
      {"image", memberAt(rayContainer, "image")},
      {"imagePullPolicy", "IfNotPresent"},
      {"env", json::array({fieldEnv("RAY_CLUSTER_NAME", "metadata.labels['ray.io/cluster']"),
                           fieldEnv("RAY_CLUSTER_NAMESPACE", "metadata.namespace"),
                           fieldEnv("RAY_HEAD_POD_NAME", "metadata.name"),
                           {{"name", "KUBERAY_CRD_VER"}, {"value", "v1"}},
                           {{"name", "KUBERAY_GEN_AUTOSCALER_START_CMD"}, {"value", kAutoscalerCommand}}})},
      {"command", bashCommand("c", cluster.injection.loginShell)},
      {"args", json::array({kAutoscalerCommand})},
      {"resources", {{"limits", fixed}, {"requests", fixed}}}};
  if (!cluster.authSecret.empty()) model::addTokenAuthEnv(sidecar, cluster.authSecret);
  mergeOverrides(sidecar, objectAt(objectAt(cluster.raw.get(), "spec"), "autoscalerOptions"));
  return sidecar;
}

void addAutoscaling(const RayClusterView& cluster, bool head, json& podSpec) {
  const json& clusterSpec = objectAt(cluster.raw.get(), "spec");
  if (!cluster.autoscaling || arrayAt(podSpec, "containers").empty()) return;
  const std::string version = versionOf(clusterSpec);
  if (version == "v2") podSpec["restartPolicy"] = "Never";
  if (!head) return;
  podSpec["serviceAccountName"] = cluster.autoscalerServiceAccount;
  json& containers = podSpec["containers"];
  containers.push_back(autoscalerContainer(cluster, containers[0]));
  if (version == "v2" || version == "v1") {
    // Where KubeRay puts it: after the user's env, before the variables it injects itself.
    json& env = containers[0]["env"];
    if (!env.is_array()) env = json::array();
    auto injected = std::find_if(env.begin(), env.end(), [](const json& e) {
      return stringAt(e, "name") == "RAY_CLUSTER_NAME";
    });
    env.insert(injected, json{{"name", "RAY_enable_autoscaler_v2"}, {"value", version == "v2" ? "true" : "false"}});
  }
  addLogVolume(podSpec, containers[0]);
  addLogVolume(podSpec, containers.back());
}

}  // namespace rayjournal::controller
