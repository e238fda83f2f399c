#include "controller/raycluster/ValidateCluster.h"

#include <cctype>
#include <vector>

#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "model/Syntax.h"
#include "model/Version.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

const json& podSpec(const json& group) { return objectAt(objectAt(group, "template"), "spec"); }

// The Ray container is the first one (KubeRay's RayContainerIndex).
const json& rayContainer(const json& cluster) {
  const json& containers = arrayAt(podSpec(objectAt(cluster, "headGroupSpec")), "containers");
  static const json none = json::object();
  return containers.empty() ? none : containers[0];
}

const json* envVar(const json& container, const char* name) {
  for (const auto& e : arrayAt(container, "env"))
    if (stringAt(e, "name") == name) return &e;
  return nullptr;
}

std::string param(const json& group, const char* key) {
  const json& v = memberAt(objectAt(group, "rayStartParams"), key);
  return v.is_string() ? v.get<std::string>() : "";
}

bool autoscalerV2Env(const json& cluster) {
  const json* e = envVar(rayContainer(cluster), "RAY_enable_autoscaler_v2");
  return e && (stringAt(*e, "value") == "1" || stringAt(*e, "value") == "true");
}

bool autoscalerV2(const json& cluster) {
  return stringAt(objectAt(cluster, "autoscalerOptions"), "version") == "v2";
}

// apimachinery's IsQualifiedName and IsValidLabelValue, with their messages.
constexpr const char* kQualifiedName =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

std::vector<std::string> qualifiedNameErrors(const std::string& key) {
  size_t slash = key.find('/');
  if (slash != std::string::npos && key.find('/', slash + 1) != std::string::npos)
    return {std::string("a qualified name ") + kQualifiedName +
            " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"};
  std::vector<std::string> errs;
  std::string part = slash == std::string::npos ? key : key.substr(slash + 1);
  if (slash != std::string::npos) {
    std::string prefix = key.substr(0, slash);
    if (prefix.empty()) errs.push_back("prefix part must be non-empty");
    else if (prefix.size() > 253) errs.push_back("prefix part must be no more than 253 characters");
    else if (!model::isDns1123Subdomain(prefix))
      errs.push_back("prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                     "alphanumeric characters, '-' or '.', and must start and end with an "
                     "alphanumeric character (e.g. 'example.com', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  }
  if (part.empty()) errs.push_back("name part must be non-empty");
  else if (part.size() > 63) errs.push_back("name part must be no more than 63 characters");
  if (!part.empty() && !model::isQualifiedNamePart(part))
    errs.push_back(std::string("name part ") + kQualifiedName);
  return errs;
}

std::vector<std::string> labelValueErrors(const std::string& value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back("must be no more than 63 characters");
  if (!model::isLabelValue(value))
    errs.push_back("a valid label must be an empty string or consist of alphanumeric characters, "
                   "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                   "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                   "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  return errs;
}

// The rest of validateRayGroupLabels: the group's Ray labels as Kubernetes label syntax, every
// problem joined by "; " (in key order; KubeRay's follows Go's map order).
std::string labelSyntaxProblem(const std::string& group, const json& labels) {
  std::string all;
  auto add = [&all](const std::string& problem) { all += (all.empty() ? "" : "; ") + problem; };
  for (const auto& [key, value] : labels.items()) {
    for (const auto& e : qualifiedNameErrors(key))
      add("invalid label key for " + group + " group: '" + key + "', error: " + e);
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    for (const auto& e : labelValueErrors(text))
      add("invalid label value for key '" + key + "' in " + group + " group: '" + text +
          "', error: " + e);
  }
  return all;
}

// validateRayGroupResources and validateRayGroupLabels.
std::string groupProblem(const std::string& group, const json& spec) {
  const json& resources = objectAt(spec, "resources");
  bool startResources = !param(spec, "num-cpus").empty() || !param(spec, "num-gpus").empty() ||
                        !param(spec, "memory").empty() || !param(spec, "resources").empty();
  if (startResources && !resources.empty())
    return "resource fields should not be set in both rayStartParams and Resources for " + group +
           " group; please use only one";
  if (objectAt(spec, "rayStartParams").contains("labels"))
    return "rayStartParams['labels'] is not supported for " + group +
           " group; please use the top-level Labels field instead";
  return labelSyntaxProblem(group, objectAt(spec, "labels"));
}

// KubeRay's validateWorkerGroupPriority: Ray's worker-group priority needs Ray 2.56 and
// autoscaler v2.
std::string priorityProblem(const std::string& name, const json& g, const json& cluster) {
  const json& priority = memberAt(g, "priority");
  if (!priority.is_number_integer() || priority.get<int64_t>() == 0) return "";
  const std::string prefix = "worker group " + name + ": priority is set";
  const std::string& version = stringAt(cluster, "rayVersion");
  if (version.empty())
    return prefix + ", but RayVersion was not specified. Ray version 2.56.0 or later is required";
  if (!model::parseVersion(version))
    return prefix + ", but RayVersion format is invalid: " + version + ", could not parse \"" +
           version + "\" as version";
  if (!model::versionAtLeast(version, 2, 56, 0))
    return prefix + ", but minimum Ray version is 2.56.0, got " + version;
  if (autoscalerV2(cluster) || autoscalerV2Env(cluster)) return "";
  return prefix + " to " + std::to_string(priority.get<int64_t>()) +
         ", but autoscaler v2 is not enabled. Priority is only supported with autoscaler v2 enabled";
}

std::string workerProblem(const json& g, const json& cluster) {
  const std::string name = stringAt(g, "groupName");
  if (arrayAt(podSpec(g), "containers").empty())
    return "workerGroupSpec should have at least one container";
  int64_t min = integerAt(g, "minReplicas", 0), max = integerAt(g, "maxReplicas", 2147483647);
  if (min < 0) return "worker group " + name + " has negative minReplicas " + std::to_string(min);
  if (max < 0) return "worker group " + name + " has negative maxReplicas " + std::to_string(max);
  if (min > max)
    return "worker group " + name + " has minReplicas " + std::to_string(min) +
           " greater than maxReplicas " + std::to_string(max);
  if (std::string p = groupProblem(name, g); !p.empty()) return p;
  if (std::string p = priorityProblem(name, g, cluster); !p.empty()) return p;
  const json& idle = memberAt(g, "idleTimeoutSeconds");
  if (idle.is_number_integer()) {
    if (idle.get<int64_t>() < 0)
      return "worker group " + name + ": idleTimeoutSeconds must be non-negative, got " +
             std::to_string(idle.get<int64_t>());
    if (!autoscalerV2(cluster) && !autoscalerV2Env(cluster))
      return "worker group " + name +
             ": idleTimeoutSeconds is set, but autoscaler v2 is not enabled. Please set "
             ".spec.autoscalerOptions.version to 'v2' (or set RAY_enable_autoscaler_v2 "
             "environment variable to 'true' in the head pod if using KubeRay < 1.4.0)";
  }
  return "";
}

// KubeRay's validateGcsFaultToleranceBackend for the embedded store: Redis settings refused, a
// user's claim exclusive with the operator-made claim's settings, and KubeRay's own env, volume
// and mount for the store not the user's to set.
std::string embeddedBackendProblem(const json& options, const json& cluster) {
  for (const char* redis : {"redisAddress", "redisUsername", "redisPassword", "externalStorageNamespace"}) {
    const json& v = memberAt(options, redis);
    if (v.is_null() || (v.is_string() && v.get<std::string>().empty())) continue;
    std::string field(redis);
    field[0] = char(std::toupper(static_cast<unsigned char>(field[0])));
    return "cannot set GcsFaultToleranceOptions." + field + " when backend is 'rocksdb'";
  }
  const json& storage = objectAt(options, "storage");
  if (!stringAt(storage, "claimName").empty() &&
      (!memberAt(storage, "size").is_null() || !memberAt(storage, "storageClassName").is_null() ||
       !arrayAt(storage, "accessModes").empty()))
    return "GcsFaultToleranceOptions.Storage.ClaimName is mutually exclusive with size, "
           "storageClassName, and accessModes";
  const json& head = rayContainer(cluster);
  if (envVar(head, "RAY_gcs_storage") || envVar(head, "RAY_gcs_storage_path"))
    return "cannot set `RAY_gcs_storage` or `RAY_gcs_storage_path` env var in head Pod when the "
           "embedded GCS FT backend is used - these are managed by KubeRay";
  for (const auto& mount : arrayAt(head, "volumeMounts"))
    if (stringAt(mount, "mountPath") == "/data/gcs" || stringAt(mount, "name") == "gcs-storage")
      return "cannot set a volume mount named \"gcs-storage\" or mounted at /data/gcs in the head "
             "container when the embedded GCS FT backend is used - it is managed by KubeRay";
  for (const auto& volume : arrayAt(podSpec(objectAt(cluster, "headGroupSpec")), "volumes"))
    if (stringAt(volume, "name") == "gcs-storage")
      return "cannot set a volume named \"gcs-storage\" in the head Pod when the embedded GCS FT "
             "backend is used - it is managed by KubeRay";
  return "";
}

// KubeRay's validateGcsFaultToleranceBackend: the embedded backend needs the
// GCSFaultToleranceEmbeddedStorage gate; storage belongs to it alone.
std::string gcsBackendProblem(const json& options, const json& cluster, const FeatureGates& gates) {
  const std::string& backend = stringAt(options, "backend");
  if (backend == "rocksdb" && !gates.gcsFaultToleranceEmbeddedStorage)
    return "the embedded RocksDB GCS fault tolerance backend (GcsFaultToleranceOptions.Backend: "
           "'rocksdb') requires the GCSFaultToleranceEmbeddedStorage feature gate to be enabled";
  if (backend == "rocksdb") return embeddedBackendProblem(options, cluster);
  if (options.contains("storage") && !options["storage"].is_null())
    return "cannot set GcsFaultToleranceOptions.Storage when backend is 'redis' - it only applies "
           "to the 'rocksdb' backend";
  return "";
}

std::string gcsProblem(const json& cluster, const std::map<std::string, std::string>& ann,
                       const FeatureGates& gates) {
  auto annotation = [&](const char* key) {
    auto it = ann.find(key);
    return it == ann.end() ? std::string() : it->second;
  };
  const bool options = cluster.contains("gcsFaultToleranceOptions") &&
                       !memberAt(cluster, "gcsFaultToleranceOptions").is_null();
  std::string ft = annotation("ray.io/ft-enabled");
  for (auto& ch : ft) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (!annotation("ray.io/ft-enabled").empty() && options)
    return "ray.io/ft-enabled annotation and GcsFaultToleranceOptions are both set. Please use "
           "only GcsFaultToleranceOptions to configure GCS fault tolerance";
  const json& head = rayContainer(cluster);
  if (ft != "true" && !options && envVar(head, "RAY_REDIS_ADDRESS"))
    return "RAY_REDIS_ADDRESS is set which implicitly enables GCS fault tolerance, but "
           "GcsFaultToleranceOptions is not set. Please set GcsFaultToleranceOptions to enable "
           "GCS fault tolerance";
  if (options) {
    const std::string use = " when GcsFaultToleranceOptions is enabled - use GcsFaultToleranceOptions.";
    if (!param(objectAt(cluster, "headGroupSpec"), "redis-password").empty())
      return "cannot set `redis-password` in rayStartParams" + use + "RedisPassword instead";
    if (envVar(head, "REDIS_PASSWORD"))
      return "cannot set `REDIS_PASSWORD` env var in head Pod" + use + "RedisPassword instead";
    if (envVar(head, "RAY_REDIS_ADDRESS"))
      return "cannot set `RAY_REDIS_ADDRESS` env var in head Pod" + use + "RedisAddress instead";
    if (!annotation("ray.io/external-storage-namespace").empty())
      return "cannot set `ray.io/external-storage-namespace` annotation" + use +
             "ExternalStorageNamespace instead";
    if (std::string problem = gcsBackendProblem(objectAt(cluster, "gcsFaultToleranceOptions"), cluster, gates);
        !problem.empty())
      return problem;
  }
  if (!param(objectAt(cluster, "headGroupSpec"), "redis-username").empty() ||
      envVar(head, "REDIS_USERNAME"))
    return "cannot set redis username in rayStartParams or environment variables - use "
           "GcsFaultToleranceOptions.RedisUsername instead";
  return "";
}

bool suspended(const json& g) { return memberAt(g, "suspend") == true; }

std::string autoscalerProblem(const json& cluster, const FeatureGates& gates) {
  const bool autoscaling = memberAt(cluster, "enableInTreeAutoscaling") == true;
  const json& groups = arrayAt(cluster, "workerGroupSpecs");
  for (const auto& g : groups)
    if (!gates.rayJobDeletionPolicy && suspended(g))
      return "worker group " + stringAt(g, "groupName") +
             " can be suspended only when the RayJobDeletionPolicy feature gate is enabled";
  const json* v2 = envVar(rayContainer(cluster), "RAY_enable_autoscaler_v2");
  if (!autoscaling && v2 && (stringAt(*v2, "value") == "1" || stringAt(*v2, "value") == "true"))
    return "environment variable RAY_enable_autoscaler_v2 cannot be set to '" +
           stringAt(*v2, "value") +
           "' when enableInTreeAutoscaling is false. Please set enableInTreeAutoscaling: true to "
           "use autoscaler v2";
  const json& options = objectAt(cluster, "autoscalerOptions");
  if (autoscaling) {
    for (const auto& g : groups)
      if (suspended(g))
        return "worker group " + stringAt(g, "groupName") +
               " cannot be suspended with Autoscaler enabled";
    if (options.contains("version") && v2)
      return "both .spec.autoscalerOptions.version and head Pod env var RAY_enable_autoscaler_v2 "
             "are set, please only use the former";
    if (autoscalerV2(cluster)) {
      auto restarts = [](const json& g) {
        const std::string& p = stringAt(podSpec(g), "restartPolicy");
        return !p.empty() && p != "Never";
      };
      if (restarts(objectAt(cluster, "headGroupSpec")))
        return "restartPolicy for head Pod should be Never or unset when using autoscaler V2";
      for (const auto& g : groups)
        if (restarts(g))
          return "restartPolicy for worker group " + stringAt(g, "groupName") +
                 " should be Never or unset when using autoscaler V2";
    }
  }
  const json& idle = memberAt(options, "idleTimeoutSeconds");
  if (idle.is_number_integer() && idle.get<int64_t>() < 0)
    return "autoscalerOptions.idleTimeoutSeconds must be non-negative, got " +
           std::to_string(idle.get<int64_t>());
  if (envVar(options, "KUBERAY_GEN_AUTOSCALER_START_CMD"))
    return "autoscalerOptions.env must not contain KUBERAY_GEN_AUTOSCALER_START_CMD: it is "
           "managed by KubeRay and injected automatically into the autoscaler container";
  return "";
}

std::string authProblem(const json& cluster) {
  const json& auth = objectAt(cluster, "authOptions");
  const bool k8sAuth = memberAt(auth, "enableK8sTokenAuth") == true;
  if (stringAt(auth, "mode") != "token") {
    if (k8sAuth)
      return "authOptions.enableK8sTokenAuth is enabled but authOptions.mode not set to 'token'";
    return "";
  }
  const std::string& version = stringAt(cluster, "rayVersion");
  if (version.empty())
    return "authOptions.mode is 'token' but RayVersion was not specified. Ray version 2.52.0 or "
           "later is required";
  if (!model::parseVersion(version))
    return "authOptions.mode is 'token' but RayVersion format is invalid: " + version +
           ", could not parse \"" + version + "\" as version";
  if (!model::versionAtLeast(version, 2, 52, 0))
    return "authOptions.mode is 'token' but minimum Ray version is 2.52.0, got " + version;
  if (k8sAuth && !model::versionAtLeast(version, 2, 55, 0))
    return "authOptions.enableK8sTokenAuth is enabled but minimum Ray version is 2.55.0, got " +
           version;
  if (k8sAuth && !stringAt(auth, "secretName").empty())
    return "authOptions.enableK8sTokenAuth is enabled and authOptions.secretName is also set";
  return "";
}

}  // namespace

std::string rayClusterSpecProblem(const json& cluster,
                                  const std::map<std::string, std::string>& annotations,
                                  const FeatureGates& gates) {
  const json& head = objectAt(cluster, "headGroupSpec");
  if (arrayAt(podSpec(head), "containers").empty())
    return "headGroupSpec should have at least one container";
  if (std::string p = groupProblem("Head", head); !p.empty()) return p;
  for (const auto& g : arrayAt(cluster, "workerGroupSpecs"))
    if (std::string p = workerProblem(g, cluster); !p.empty()) return p;
  if (std::string p = gcsProblem(cluster, annotations, gates); !p.empty()) return p;
  if (std::string p = autoscalerProblem(cluster, gates); !p.empty()) return p;
  return authProblem(cluster);
}

std::string rayClusterMetadataProblem(const std::string& name) {
  if (name.size() > 53) return "RayCluster name should be no more than 53 characters";
  if (!model::isDns1035Label(name))
    return "RayCluster name should be a valid DNS1035 label: [a DNS-1035 label must consist of "
           "lower case alphanumeric characters or '-', start with an alphabetic character, and "
           "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')]";
  return "";
}

}  // namespace rayjournal::controller
