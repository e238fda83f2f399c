#include "controller/rayjob/Children.h"

#include <cstdio>
#include <stdexcept>

#include "adapters/YamlJson.h"
#include "model/Names.h"
#include "model/TokenAuth.h"
#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterMeta.h"

namespace rayjournal::controller {
namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string goQuote(const std::string& s) {
  return json(s).dump();
}

std::string formatFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%f", v);
  return buf;
}

// Go's strings.TrimSpace for ASCII: KubeRay trims the entrypoint before it goes after `--`.
std::string trimmed(const std::string& s) {
  constexpr const char* kSpace = " \t\n\v\f\r";
  size_t first = s.find_first_not_of(kSpace);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

json originLabels(const RayJob& job) {
  return {{"ray.io/originated-from-cr-name", job.name}, {"ray.io/originated-from-crd", "RayJob"}};
}

std::string headImage(const json& clusterSpec) {
  try {
    return clusterSpec.at("headGroupSpec")
        .at("template")
        .at("spec")
        .at("containers")
        .at(0)
        .value("image", "rayproject/ray:2.46.0");
  } catch (const json::exception&) {
    return "rayproject/ray:2.46.0";
  }
}

}  // namespace

std::string generatedName(const RayJob& job, uint32_t incarnation, const std::string& salt) {
  static const std::string alphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = fnv1a(job.uid + "/" + std::to_string(incarnation) + "/" + salt);
  std::string suffix;
  for (int i = 0; i < 5; ++i) {
    suffix.push_back(alphabet[h % alphabet.size()]);
    h /= alphabet.size();
  }
  return job.name + "-" + suffix;
}

json ownerReference(const RayJob& job) {
  return {{"apiVersion", "ray.io/v1"}, {"kind", "RayJob"},
          {"name", job.name},          {"uid", job.uid},
          {"controller", true},        {"blockOwnerDeletion", true}};
}

bool ownedBy(const json& child, const std::string& uid) {
  for (const auto& ref : arrayAt(objectAt(child, "metadata"), "ownerReferences")) {
    if (ref.value("uid", "") == uid && ref.value("controller", false)) return true;
  }
  return false;
}

json buildRayCluster(const RayJob& job, const std::string& clusterName,
                     const SubmitterShell& shell) {
  json labels(job.labels);
  labels.update(originLabels(job));
  labels["ray.io/job-submission-mode"] = job.spec.submissionModeText;
  json annotations(job.annotations);
  if (annotations.is_null()) annotations = json::object();
  json cluster{{"apiVersion", "ray.io/v1"},
               {"kind", "RayCluster"},
               {"metadata",
                {{"name", clusterName},
                 {"namespace", job.ns},
                 {"labels", labels},
                 {"annotations", annotations},
                 {"ownerReferences", json::array({ownerReference(job)})}}},
               {"spec", job.spec.rayClusterSpec.get()}};
  if (job.spec.submissionMode == SubmissionMode::SidecarMode) {
    cluster["metadata"]["annotations"]["ray.io/disable-provisioned-head-restart"] = "true";
    json& podSpec = cluster["spec"]["headGroupSpec"]["template"]["spec"];
    podSpec["restartPolicy"] = "Never";
    int port = 8265;
    for (const auto& p : podSpec["containers"][0].value("ports", json::array())) {
      if (p.value("name", "") == "dashboard") port = p.value("containerPort", 8265);
    }
    json container{
        {"name", kSubmitterContainer},
        {"image", headImage(job.spec.rayClusterSpec.get())},
        {"command", bashCommand("ce", shell.loginShell)},
        {"args", json::array({buildSidecarCommand(job, port, shell.sidecarRestarts)})},
        {"env",
         json::array(
             {{{"name", "PYTHONUNBUFFERED"}, {"value", "1"}},
              {{"name", "RAY_DASHBOARD_ADDRESS"}, {"value", "127.0.0.1:" + std::to_string(port)}},
              {{"name", "RAY_JOB_SUBMISSION_ID"}, {"value", job.status.jobId}}})},
        {"resources",
         {{"limits", {{"cpu", "1"}, {"memory", "1Gi"}}},
          {"requests", {{"cpu", "500m"}, {"memory", "200Mi"}}}}}};
    if (shell.sidecarRestarts) container["restartPolicy"] = "OnFailure";
    const std::string secret = model::tokenAuthSecretName(job.spec.rayClusterSpec.get(), clusterName);
    if (!secret.empty()) model::addTokenAuthEnv(container, secret);
    podSpec["containers"].push_back(container);
  }
  return cluster;
}

// The optional `ray job submit` flags, in KubeRay's order (reference 3.3).
static std::string submitFlags(const RayJob& job, const std::string& id) {
  std::string flags;
  if (!job.spec.runtimeEnvYAML.empty())
    flags += " --runtime-env-json " + goQuote(runtimeEnvJson(job.spec.runtimeEnvYAML).dump());
  if (auto metadata = submissionMetadata(job, job.status); !metadata.empty())
    flags += " --metadata-json " + goQuote(json(metadata).dump());
  if (!id.empty()) flags += " --submission-id " + id;
  if (job.spec.entrypointNumCpus > 0)
    flags += " --entrypoint-num-cpus " + formatFloat(job.spec.entrypointNumCpus);
  if (job.spec.entrypointNumGpus > 0)
    flags += " --entrypoint-num-gpus " + formatFloat(job.spec.entrypointNumGpus);
  if (!job.spec.entrypointResources.empty())
    flags += " --entrypoint-resources " + goQuote(job.spec.entrypointResources);
  return flags;
}

// The loop that waits for the dashboard's GCS health endpoint (reference 3.3, step 1).
static std::string healthWait(const std::string& healthUrl, const std::string& addr) {
  return "until python -c \"import urllib.request,sys; sys.exit(0 if b'success' in "
         "urllib.request.urlopen('" +
         healthUrl +
         "', timeout=10).read() else 1)\" >/dev/null 2>&1 ; do echo \"Waiting for Ray "
         "Dashboard GCS to become healthy at " +
         addr + " ...\" ; sleep 2 ; done ; ";
}

// Submit unless Ray has the id, then follow its logs: idempotent for a retried submitter.
static std::string checkedSubmit(const RayJob& job, const std::string& addr) {
  const std::string& id = job.status.jobId;
  std::string cmd = "if ! ray job status --address " + addr + " " + id +
                    " >/dev/null 2>&1 ; then ray job submit --address " + addr + " --no-wait";
  cmd += submitFlags(job, id);
  // W17: a transient failure of the status check must not burn a submitter retry: when the
  // submit then fails (Ray answers "already exists"), a second status check decides.
  return cmd + " -- " + trimmed(job.spec.entrypoint) + " || ray job status --address " + addr +
         " " + id + " >/dev/null 2>&1 ; fi ; ray job logs --address " + addr + " --follow " + id;
}

std::string buildSubmitCommand(const RayJob& job) {
  std::string addr = job.status.dashboardURL;
  if (addr.rfind("http://", 0) != 0) addr = "http://" + addr;
  return healthWait(addr + "/api/gcs_healthz", addr) + checkedSubmit(job, addr);
}

std::string buildSidecarCommand(const RayJob& job, int dashboardPort, bool restarts) {
  const std::string port = std::to_string(dashboardPort);
  const std::string addr = "http://127.0.0.1:" + port;
  std::string cmd = healthWait("http://localhost:" + port + "/api/gcs_healthz", addr);
  if (restarts) return cmd + checkedSubmit(job, addr);
  cmd += "ray job submit --address " + addr + submitFlags(job, job.status.jobId);
  return cmd + " -- " + trimmed(job.spec.entrypoint) + " ;";
}

// The RayJob's own head Service: the cluster head Service's ports, type, selector and
// headlessness (KubeRay builds both from one function), under the RayJob's name and labels.
// Node ports and a virtual IP belong to the cluster's Service and are not copied.
json buildJobHeadService(const RayJob& job, const json& clusterHeadService,
                         const std::string& clusterName) {
  const json& from = objectAt(clusterHeadService, "spec");
  json ports = arrayAt(from, "ports");
  for (auto& p : ports) p.erase("nodePort");
  json selector = objectAt(from, "selector");
  if (selector.empty()) selector["ray.io/node-type"] = "head";
  selector["ray.io/cluster"] = clusterName;
  json spec = {{"ports", std::move(ports)}, {"selector", std::move(selector)}};
  if (from.contains("type")) spec["type"] = from["type"];
  if (stringAt(from, "clusterIP") == "None") {
    spec["clusterIP"] = "None";
    spec["publishNotReadyAddresses"] = memberAt(from, "publishNotReadyAddresses").is_boolean()
                                           ? from["publishNotReadyAddresses"]
                                           : json(true);
  }
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata",
           {{"name", model::rayJobHeadServiceName(job.name)},
            {"namespace", job.ns},
            {"labels",
             {{"ray.io/originated-from-cr-name", job.name},
              {"ray.io/originated-from-crd", "RayJob"},
              {"ray.io/node-type", "head"},
              {"ray.io/identifier", model::headPodName(job.name)}}},
            {"ownerReferences", json::array({ownerReference(job)})}}},
          {"spec", std::move(spec)}};
}

json buildSubmitterJob(const RayJob& job, const json& cluster, bool loginShell) {
  json labels = originLabels(job);
  labels["app.kubernetes.io/created-by"] = "kuberay-operator";
  json tmpl = job.spec.submitterPodTemplate.get();
  if (tmpl.is_null()) {
    tmpl = {{"spec",
             {{"restartPolicy", "Never"},
              {"containers",
               json::array({{{"name", "ray-job-submitter"},
                             {"image", headImage(objectAt(cluster, "spec"))},
                             {"resources",
                              {{"limits", {{"cpu", "1"}, {"memory", "1Gi"}}},
                               {"requests", {{"cpu", "500m"}, {"memory", "200Mi"}}}}}}})}}}};
  }
  json& container = tmpl["spec"]["containers"][0];
  if (container.value("command", json::array()).empty()) {
    container["command"] = bashCommand("ce", loginShell);
    container["args"] = json::array({buildSubmitCommand(job)});
  }
  json env = container.value("env", json::array());
  env.push_back({{"name", "PYTHONUNBUFFERED"}, {"value", "1"}});
  env.push_back({{"name", "RAY_DASHBOARD_ADDRESS"}, {"value", job.status.dashboardURL}});
  env.push_back({{"name", "RAY_JOB_SUBMISSION_ID"}, {"value", job.status.jobId}});
  container["env"] = env;
  const std::string secret = model::tokenAuthSecretName(
      objectAt(cluster, "spec"), stringAt(objectAt(cluster, "metadata"), "name"));
  if (!secret.empty()) model::addTokenAuthEnv(container, secret);
  tmpl["metadata"]["labels"].update(labels);
  return {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", job.name},
        {"namespace", job.ns},
        {"labels", labels},
        {"ownerReferences", json::array({ownerReference(job)})}}},
      {"spec", {{"backoffLimit", job.spec.submitterBackoffLimit.value_or(2)}, {"template", tmpl}}}};
}

json runtimeEnvJson(const std::string& yaml) {
  if (yaml.empty()) return json::object();
  try {
    return parseYaml(yaml);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("runtimeEnvYAML is not valid YAML: ") + e.what());
  }
}

model::ApiObject rayClusterFor(const RayJob& job, const std::string& clusterName,
                               const SubmitterShell& shell) {
  return std::make_shared<json>(buildRayCluster(job, clusterName, shell));
}

model::ApiObject submitterJobFor(const RayJob& job, const model::Document& cluster,
                                 bool loginShell) {
  return std::make_shared<json>(buildSubmitterJob(job, cluster.get(), loginShell));
}

model::ApiObject jobHeadServiceFor(const RayJob& job, const model::Document& clusterHeadService,
                                   const std::string& clusterName) {
  return std::make_shared<json>(buildJobHeadService(job, clusterHeadService.get(), clusterName));
}

model::ApiObject withClusterSelector(const model::Document& jobHeadService,
                                     const std::string& clusterName) {
  auto updated = std::make_shared<json>(jobHeadService.get());
  (*updated)["spec"]["selector"]["ray.io/cluster"] = clusterName;
  return updated;
}

model::ApiObject withWorkersSuspended(const model::Document& cluster) {
  auto updated = std::make_shared<json>(cluster.get());
  json& groups = (*updated)["spec"]["workerGroupSpecs"];
  if (groups.is_array())
    for (auto& g : groups) g["suspend"] = true;
  return updated;
}

bool attemptInSubmissionMetadata(const RayJob& job) {
  auto it = job.annotations.find(kAttemptMetadataAnnotation);
  return it != job.annotations.end() && it->second == "true";
}

std::map<std::string, std::string> submissionMetadata(const RayJob& job,
                                                      const RayJobStatus& status) {
  std::map<std::string, std::string> metadata = job.spec.metadata;
  if (attemptInSubmissionMetadata(job))
    metadata[kAttemptMetadataKey] = std::to_string(int64_t{status.failed} + 1);
  return metadata;
}

model::ApiObject submitRequestFor(const RayJob& job, const RayJobStatus& status) {
  const std::map<std::string, std::string> metadata = submissionMetadata(job, status);
  json runtimeEnv;
  if (!job.spec.runtimeEnvYAML.empty()) runtimeEnv = runtimeEnvJson(job.spec.runtimeEnvYAML);
  return std::make_shared<json>(json{{"dashboard", status.dashboardURL},
                                     {"submissionId", status.jobId},
                                     {"entrypoint", job.spec.entrypoint},
                                     {"runtimeEnv", runtimeEnv},
                                     {"metadata", metadata},
                                     {"entrypointNumCpus", job.spec.entrypointNumCpus},
                                     {"entrypointNumGpus", job.spec.entrypointNumGpus},
                                     {"entrypointResources", job.spec.entrypointResources}});
}

model::ApiObject stopRequestFor(const std::string& dashboard) {
  return std::make_shared<json>(json{{"dashboard", dashboard}});
}

}  // namespace rayjournal::controller
