// The head and worker Pods of a RayCluster, built as KubeRay v1.7.0 builds them
// (common/pod.go: DefaultHeadPodTemplate, DefaultWorkerPodTemplate, BuildPod): the group's
// template with KubeRay's labels, the generated `ray start` command, KubeRay's env vars, the
// /dev/shm volume, the metrics port, the probes by Ray version and the workers' wait-gcs-ready
// init container. What differs from KubeRay is named where it happens: deterministic names (W14).
#include <algorithm>
#include <cstdio>

#include "controller/Volcano.h"
#include "controller/YuniKorn.h"
#include "controller/JsonAccess.h"
#include "controller/raycluster/Autoscaler.h"
#include "controller/raycluster/GcsFaultTolerance.h"
#include "controller/raycluster/RayClusterBuild.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "controller/raycluster/RayStart.h"
#include "model/Names.h"
#include "model/Quantity.h"
#include "model/TokenAuth.h"
#include "model/Version.h"

namespace rayjournal::controller {
namespace {

std::optional<model::Quantity> quantityAt(const json& list, const char* key) {
  return quantityOf(memberAt(list, key));
}

// A float as Go's encoding/json writes it: integral values without a fraction.
json goNumber(long double v) {
  if (v == static_cast<long double>(static_cast<int64_t>(v))) return static_cast<int64_t>(v);
  return static_cast<double>(v);
}

// The group's top-level `resources` and `labels` fields override rayStartParams
// (updateRayStartParamsResources, updateRayStartParamsLabels).
void applyGroupFields(StartParams& p, const json& groupSpec) {
  json custom = json::object();
  for (const auto& [name, value] : objectAt(groupSpec, "resources").items()) {
    auto q = quantityOf(value);
    if (!q) continue;  // KubeRay skips an unparseable quantity too
    std::string key = asciiLower(name);
    if (key == "cpu")
      p["num-cpus"] = std::to_string(q->ceilValue());
    else if (key == "memory")
      p["memory"] = std::to_string(q->ceilValue());
    else if (isGpuResourceKey(key))
      p["num-gpus"] = std::to_string(q->ceilValue());
    else
      custom[name] = goNumber(q->value);
  }
  if (!custom.empty()) p["resources"] = "'" + custom.dump() + "'";
  std::string labels;
  for (const auto& [k, v] : objectAt(groupSpec, "labels").items())
    labels += (labels.empty() ? "" : ",") + k + "=" + textOf(v);
  if (!labels.empty()) p["labels"] = labels;
}

// GPUs and the first custom accelerator (Neuron cores, TPUs) from the limits
// (addWellKnownAcceleratorResources).
void applyAccelerators(StartParams& p, const json& limits) {
  if (limits.empty()) return;
  json resources = json::object();
  if (auto it = p.find("resources"); it != p.end()) {
    std::string text = it->second;
    auto trim = [](char c) { return c == '\'' || c == '"' || c == '`' || c == ' '; };
    while (!text.empty() && trim(text.front())) text.erase(text.begin());
    while (!text.empty() && trim(text.back())) text.pop_back();
    resources = json::parse(text, nullptr, false);
    if (!resources.is_object()) return;  // KubeRay logs this and adds nothing
  }
  bool customPresent = resources.contains("neuron_cores") || resources.contains("TPU");
  for (const auto& [key, value] : limits.items()) {  // sorted by name, as KubeRay
    auto q = quantityOf(value);
    if (!q || q->isZero()) continue;
    if (!p.count("num-gpus") && isGpuResourceKey(key)) p["num-gpus"] = std::to_string(q->ceilValue());
    if (customPresent) continue;
    std::string rayName = key == "aws.amazon.com/neuroncore" ? "neuron_cores"
                          : key == "google.com/tpu"          ? "TPU"
                                                             : "";
    if (rayName.empty()) continue;
    if (!resources.contains(rayName)) {
      resources[rayName] = goNumber(q->value);
      p["resources"] = "'" + resources.dump() + "'";
    }
    customPresent = true;
  }
}

// num-cpus (limit, else request), memory (limit) and accelerators from the Ray container.
void applyContainerResources(StartParams& p, const json& container) {
  const json& resources = objectAt(container, "resources");
  const json& limits = objectAt(resources, "limits");
  if (!p.count("num-cpus")) {
    auto cpu = quantityAt(limits, "cpu");
    if (!cpu || cpu->isZero()) cpu = quantityAt(objectAt(resources, "requests"), "cpu");
    if (cpu && !cpu->isZero()) p["num-cpus"] = std::to_string(cpu->ceilValue());
  }
  if (!p.count("memory")) {
    auto memory = quantityAt(limits, "memory");
    if (memory && !memory->isZero()) p["memory"] = std::to_string(memory->ceilValue());
  }
  applyAccelerators(p, limits);
}

StartParams startParamsOf(const json& groupSpec) {
  StartParams p;
  for (const auto& [k, v] : objectAt(groupSpec, "rayStartParams").items()) p[k] = textOf(v);
  applyGroupFields(p, groupSpec);
  return p;
}

// The template's labels (and the group's `labels`) over KubeRay's, except the three that say
// which cluster, node type and group a Pod is (labelPod).
json podLabels(const RayClusterView& c, const json& groupSpec, bool head, const std::string& group) {
  std::string nodeType = head ? "head" : "worker";
  json labels = {{"ray.io/is-ray-node", "yes"},
                 {"ray.io/cluster", c.name},
                 {"ray.io/node-type", nodeType},
                 {"ray.io/group", group},
                 {"ray.io/identifier", identifierLabel(c.name, nodeType)},
                 {"app.kubernetes.io/name", "kuberay"},
                 {"app.kubernetes.io/created-by", "kuberay-operator"}};
  json overrides = objectAt(objectAt(objectAt(groupSpec, "template"), "metadata"), "labels");
  for (const auto& [k, v] : objectAt(groupSpec, "labels").items()) overrides[k] = v;
  for (const auto& [k, v] : overrides.items()) {
    if (k == "ray.io/cluster" || k == "ray.io/node-type" || k == "ray.io/group") continue;
    labels[k] = v;
  }
  return labels;
}

std::string joinedCommand(const json& container) {
  std::string joined;
  for (const char* part : {"command", "args"})
    for (const auto& v : arrayAt(container, part))
      if (v.is_string()) joined += " " + v.get<std::string>() + " ";
  return joined;
}

// The Ray container runs `ray start` unless the user opted out (ray.io/overwrite-container-cmd)
// or already starts Ray in the command.
void setRayCommand(json& container, const std::string& rayStart, bool overwrite, bool loginShell) {
  std::string user = joinedCommand(container);
  if (overwrite || user.find("ray start") != std::string::npos) return;
  container["command"] = bashCommand("c", loginShell);
  container["args"] = json::array({containerScript(user, rayStart)});
}

bool hasEnv(const json& env, const std::string& name) {
  for (const auto& e : env)
    if (stringAt(e, "name") == name) return true;
  return false;
}

// KubeRay's env vars on the Ray container (setContainerEnvVars). The ones KubeRay appends
// unconditionally are appended here too, so a user's own value is overridden as in KubeRay.
void setRayEnv(json& container, bool head, const std::string& fqdn, const std::string& port,
               const std::string& rayStart, const PodDefaults* defaults) {
  json env = arrayAt(container, "env");
  if (defaults && !defaults->containerEnvs.isNull())
    for (const auto& e : defaults->containerEnvs.get())
      if (!hasEnv(env, stringAt(e, "name"))) env.push_back(e);
  auto addMissing = [&env](const std::string& name, const std::string& value) {
    if (!hasEnv(env, name)) env.push_back({{"name", name}, {"value", value}});
  };
  if (!head) {
    env.push_back({{"name", "FQ_RAY_IP"}, {"value", fqdn}});
    env.push_back({{"name", "RAY_IP"}, {"value", fqdn.substr(0, fqdn.find('.'))}});
  }
  env.push_back(fieldEnv("RAY_CLUSTER_NAME", "metadata.labels['ray.io/cluster']"));
  env.push_back(fieldEnv("RAY_CLUSTER_NAMESPACE", "metadata.namespace"));
  env.push_back(fieldEnv("RAY_CLOUD_INSTANCE_ID", "metadata.name"));
  env.push_back(fieldEnv("RAY_NODE_TYPE_NAME", "metadata.labels['ray.io/group']"));
  env.push_back({{"name", "KUBERAY_GEN_RAY_START_CMD"}, {"value", rayStart}});
  addMissing("RAY_PORT", port);
  addMissing("RAY_ADDRESS", (head ? std::string("127.0.0.1") : fqdn) + ":" + port);
  addMissing("RAY_USAGE_STATS_KUBERAY_IN_USE", "1");
  addMissing("RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE", "1");
  container["env"] = std::move(env);
}

// The object store wants shared memory: an emptyDir in memory at /dev/shm, sized by the Ray
// container's memory, unless the user mounted one or chose a plasma-directory.
void addSharedMemory(json& spec, json& container, const StartParams& p) {
  if (p.count("plasma-directory")) return;
  for (const auto& m : arrayAt(container, "volumeMounts"))
    if (stringAt(m, "mountPath") == "/dev/shm") return;
  json& volumes = spec["volumes"];
  if (!volumes.is_array()) volumes = json::array();
  bool exists = std::any_of(volumes.begin(), volumes.end(),
                            [](const json& v) { return stringAt(v, "name") == "shared-mem"; });
  if (!exists) {
    json emptyDir = {{"medium", "Memory"}};
    const json& resources = objectAt(container, "resources");
    const json& limit = memberAt(objectAt(resources, "limits"), "memory");
    const json& request = memberAt(objectAt(resources, "requests"), "memory");
    if (!limit.is_null())
      emptyDir["sizeLimit"] = limit;
    else if (!request.is_null())
      emptyDir["sizeLimit"] = request;
    volumes.push_back({{"name", "shared-mem"}, {"emptyDir", std::move(emptyDir)}});
  }
  json& mounts = container["volumeMounts"];
  if (!mounts.is_array()) mounts = json::array();
  mounts.push_back({{"name", "shared-mem"}, {"mountPath", "/dev/shm"}});
}

void addMetricsPort(json& container) {
  for (const auto& port : arrayAt(container, "ports"))
    if (stringAt(port, "name") == "metrics") return;
  json& ports = container["ports"];
  if (!ports.is_array()) ports = json::array();
  ports.push_back({{"name", "metrics"}, {"containerPort", kDefaultMetricsPort}});
}

// Ray 2.53.0 and later answer one HTTP health endpoint on the dashboard agent.
bool supportsUnifiedHealthCheck(const std::string& rayVersion) {
  return model::versionAtLeast(rayVersion, 2, 53, 0);
}

json probeAction(bool head, const StartParams& p, const std::string& rayVersion) {
  int agent = portParam(p, "dashboard-agent-listen-port", kDefaultAgentListenPort);
  if (supportsUnifiedHealthCheck(rayVersion))
    return {{"httpGet", {{"path", "/api/healthz"}, {"port", agent}}}};
  auto wget = [](int timeout, int port, const char* path) {
    return "wget --tries 1 -T " + std::to_string(timeout) + " -q -O- http://localhost:" +
           std::to_string(port) + "/" + path + " | grep success";
  };
  std::string check = wget(2, agent, "api/local_raylet_healthz");
  if (head)
    check += " && " + wget(10, portParam(p, "dashboard-port", kDefaultDashboardPort),
                           "api/gcs_healthz");
  return {{"exec", {{"command", json::array({"bash", "-c", check})}}}};
}

// Readiness and liveness probes, each unless the user wrote one (initLivenessAndReadinessProbe):
// the same check, KubeRay's delays and thresholds.
void addProbes(json& container, bool head, const StartParams& p, const std::string& rayVersion) {
  json action = probeAction(head, p, rayVersion);
  struct Kind {
    const char* field;
    int initialDelay, failureThreshold;
  };
  for (const Kind& k : {Kind{"livenessProbe", 30, 120}, Kind{"readinessProbe", 10, 10}}) {
    if (!memberAt(container, k.field).is_null()) continue;
    json probe = {{"initialDelaySeconds", k.initialDelay}, {"timeoutSeconds", head ? 5 : 2},
                  {"periodSeconds", 5}, {"successThreshold", 1},
                  {"failureThreshold", k.failureThreshold}};
    probe.update(action);
    container[k.field] = std::move(probe);
  }
}

// A worker waits for the head's GCS before its Ray starts (KubeRay's wait-gcs-ready).
json waitGcsReady(const json& rayContainer, const std::string& fqdn, const std::string& port,
                  bool loginShell) {
  std::string address = fqdn + ":" + port;
  // KubeRay's text to the byte (tabs and all): a user comparing Pods sees the same script.
  std::string script =
      "\n\t\t\t\t\tSECONDS=0\n"
      "\t\t\t\t\twhile true; do\n"
      "\t\t\t\t\t\tif (( SECONDS <= 120 )); then\n"
      "\t\t\t\t\t\t\tif ray health-check --address " + address + " > /dev/null 2>&1; then\n"
      "\t\t\t\t\t\t\t\techo \"GCS is ready.\"\n"
      "\t\t\t\t\t\t\t\tbreak\n"
      "\t\t\t\t\t\t\tfi\n"
      "\t\t\t\t\t\t\techo \"$SECONDS seconds elapsed: Waiting for GCS to be ready.\"\n"
      "\t\t\t\t\t\telse\n"
      "\t\t\t\t\t\t\tif ray health-check --address " + address + "; then\n"
      "\t\t\t\t\t\t\t\techo \"GCS is ready. Any error messages above can be safely ignored.\"\n"
      "\t\t\t\t\t\t\t\tbreak\n"
      "\t\t\t\t\t\t\tfi\n"
      "\t\t\t\t\t\t\techo \"$SECONDS seconds elapsed: Still waiting for GCS to be ready. For "
      "troubleshooting, refer to the FAQ at "
      "https://docs.ray.io/en/master/cluster/kubernetes/troubleshooting.html.\"\n"
      "\t\t\t\t\t\tfi\n"
      "\t\t\t\t\t\tsleep 5\n"
      "\t\t\t\t\tdone\n"
      "\t\t\t\t";
  json fixed = {{"cpu", "200m"}, {"memory", "256Mi"}};
  json init = {{"name", "wait-gcs-ready"},
               {"image", memberAt(rayContainer, "image")},
               {"command", bashCommand("c", loginShell)},
               {"args", json::array({script})},
               {"resources", {{"limits", fixed}, {"requests", fixed}}}};
  for (const char* copied : {"imagePullPolicy", "securityContext", "env", "volumeMounts"})
    if (!memberAt(rayContainer, copied).is_null()) init[copied] = rayContainer[copied];
  return init;
}

struct PodRole {
  bool head = false;
  std::string group;
  std::string name;
  int64_t index = 0;  // a worker's index in its group
  int64_t hosts = 1;  // the group's numOfHosts
};

// The configuration file's sidecars, after every container KubeRay builds.
void addSidecars(json& spec, const PodDefaults* defaults, bool head) {
  if (!defaults) return;
  const model::Document& sidecars = head ? defaults->headSidecars : defaults->workerSidecars;
  if (sidecars.isNull()) return;
  for (const auto& container : sidecars.get()) spec["containers"].push_back(container);
}

json podMetadata(const RayClusterView& c, const json& groupSpec, const PodRole& role) {
  const json& tmplMeta = objectAt(objectAt(groupSpec, "template"), "metadata");
  json meta = ownedMeta(role.name, c.raw.get(), podLabels(c, groupSpec, role.head, role.group));
  if (!role.head) {  // KubeRay's RayMultiHostIndexing labels (Beta, on by default)
    meta["labels"]["ray.io/worker-group-replica-index"] = std::to_string(role.index / role.hosts);
    if (role.hosts > 1) {
      meta["labels"]["ray.io/worker-group-replica-name"] =
          role.group + "-" + std::to_string(role.index / role.hosts);
      meta["labels"]["ray.io/replica-host-index"] = std::to_string(role.index % role.hosts);
    }
  }
  json annotations = objectAt(tmplMeta, "annotations");
  const json& clusterAnnotations = objectAt(objectAt(c.raw.get(), "metadata"), "annotations");
  if (asciiLower(stringAt(clusterAnnotations, "ray.io/overwrite-container-cmd")) == "true")
    annotations["ray.io/overwrite-container-cmd"] = "true";
  annotateGcsFaultTolerance(c.raw.get(), role.head, annotations);
  if (c.injection.defaults) {  // the configuration file's, where the Pod has no such key
    for (const auto& [k, v] : c.injection.defaults->annotations) annotations.emplace(k, v);
    for (const auto& [k, v] : c.injection.defaults->labels) meta["labels"].emplace(k, v);
  }
  if (!annotations.empty()) meta["annotations"] = std::move(annotations);
  // KubeRay builds the Pod on the template's ObjectMeta: another controller's finalizers there
  // hold a deleted Pod until that controller lets it go.
  const json& finalizers = arrayAt(tmplMeta, "finalizers");
  if (!finalizers.empty()) meta["finalizers"] = finalizers;
  return meta;
}

model::ApiObject rayPod(const RayClusterView& c, const json& groupSpec, const PodRole& role) {
  json meta = podMetadata(c, groupSpec, role);
  json spec = objectAt(objectAt(groupSpec, "template"), "spec");
  auto pod = [&] {
    return std::make_shared<json>(json{
        {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(meta)}, {"spec", std::move(spec)}});
  };
  if (arrayAt(spec, "containers").empty()) return pod();  // the API server says what is wrong
  const json& headSpec = c.headGroup.get();
  std::string port = headPortOf(startParamsOf(headSpec));
  std::string fqdn = headServiceFqdn(c);
  StartParams params = startParamsOf(groupSpec);
  completeStartParams(params, role.head, fqdn + ":" + port);
  json& container = spec["containers"][0];
  const PodInjection& inject = c.injection;
  // In KubeRay's order (DefaultWorkerPodTemplate, then BuildPod): the init container copies the
  // user's env before fault tolerance and token auth add theirs.
  if (!role.head && inject.waitGcsReady)
    spec["initContainers"].push_back(waitGcsReady(container, fqdn, port, inject.loginShell));
  configureGcsFaultTolerance(c.raw.get(), role.head, spec, params);
  if (!c.authSecret.empty()) {  // KubeRay's configureTokenAuth
    model::addTokenAuthEnv(container, c.authSecret);
    for (auto& init : spec["initContainers"])
      if (stringAt(init, "name") == "wait-gcs-ready") model::addTokenAuthEnv(init, c.authSecret);
  }
  applyContainerResources(params, container);
  // The Ray autoscaler runs in its sidecar, not as Ray's own monitor.
  if (role.head && c.autoscaling) params["no-monitor"] = "true";
  std::string rayStart = rayStartCommand(role.head, params);
  setRayCommand(container, rayStart,
                stringAt(objectAt(meta, "annotations"), "ray.io/overwrite-container-cmd") == "true",
                inject.loginShell);
  if (spec.contains("initContainers") && spec["initContainers"].is_array()) {
    for (auto& init : spec["initContainers"]) {
      init["env"].push_back({{"name", "FQ_RAY_IP"}, {"value", fqdn}});
      init["env"].push_back({{"name", "RAY_IP"}, {"value", fqdn.substr(0, fqdn.find('.'))}});
    }
  }
  setRayEnv(container, role.head, fqdn, port, rayStart, inject.defaults.get());
  addSharedMemory(spec, container, params);
  addMetricsPort(container);
  if (inject.probes)
    addProbes(container, role.head, params, stringAt(objectAt(c.raw.get(), "spec"), "rayVersion"));
  addAutoscaling(c, role.head, spec);  // it appends a container, moving `container`
  addSidecars(spec, inject.defaults.get(), role.head);
  model::ApiObject built = pod();
  const std::string taskGroup = role.head ? "headgroup" : role.group;
  if (inject.volcano) addVolcanoMetadata(c.raw.get(), *built, taskGroup, true);
  if (inject.yunikorn) addYuniKornMetadata(c.raw.get(), *built, taskGroup, true);
  return built;
}

}  // namespace

model::ApiObject headPodFor(const RayClusterView& cluster) {
  return rayPod(cluster, cluster.headGroup.get(),
                {true, "headgroup", model::headPodName(cluster.name), 0, 1});
}

model::ApiObject workerPodFor(const RayClusterView& cluster, const WorkerGroupView& group,
                              const std::string& podName, int64_t index) {
  return rayPod(cluster, group.spec.get(), {false, group.name, podName, index, group.hosts});
}

}  // namespace rayjournal::controller
