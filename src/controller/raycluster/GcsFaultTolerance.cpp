#include "controller/raycluster/GcsFaultTolerance.h"

#include <algorithm>
#include <vector>

#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "model/Quantity.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

const json& optionsOf(const json& cluster) {
  return memberAt(objectAt(cluster, "spec"), "gcsFaultToleranceOptions");
}

bool hasOptions(const json& cluster) {
  const json& options = optionsOf(cluster);
  return options.is_object();
}

// A RedisCredential ({value} or {valueFrom}) as an env var; Go's omitempty drops an empty value.
json credentialEnv(const std::string& name, const json& credential) {
  json env{{"name", name}};
  if (!stringAt(credential, "value").empty()) env["value"] = stringAt(credential, "value");
  if (credential.contains("valueFrom") && !credential["valueFrom"].is_null())
    env["valueFrom"] = credential["valueFrom"];
  return env;
}

void configureRedis(const json& cluster, json& container, StartParams& params) {
  json& env = container["env"];
  if (!env.is_array()) env = json::array();
  if (!containerHasEnv(container, "RAY_external_storage_namespace"))
    env.push_back({{"name", "RAY_external_storage_namespace"}, {"value", gcsStorageNamespace(cluster)}});
  const json& options = optionsOf(cluster);
  if (!options.is_object()) {
    // The legacy form: a password written in rayStartParams reaches the cleanup Job as env.
    auto password = params.find("redis-password");
    if (!containerHasEnv(container, "REDIS_PASSWORD") && password != params.end())
      env.push_back({{"name", "REDIS_PASSWORD"}, {"value", password->second}});
    return;
  }
  env.push_back({{"name", "RAY_REDIS_ADDRESS"}, {"value", stringAt(options, "redisAddress")}});
  if (options.contains("redisUsername") && !options["redisUsername"].is_null()) {
    params["redis-username"] = "$REDIS_USERNAME";
    env.push_back(credentialEnv("REDIS_USERNAME", options["redisUsername"]));
  }
  if (options.contains("redisPassword") && !options["redisPassword"].is_null()) {
    params["redis-password"] = "$REDIS_PASSWORD";
    env.push_back(credentialEnv("REDIS_PASSWORD", options["redisPassword"]));
  }
}

const json& storageOf(const json& cluster) { return objectAt(optionsOf(cluster), "storage"); }

void appendEnvUnlessSet(json& container, const char* name, const char* value) {
  if (containerHasEnv(container, name)) return;
  if (!container["env"].is_array()) container["env"] = json::array();
  container["env"].push_back({{"name", name}, {"value", value}});
}

void configureEmbedded(const json& cluster, json& podSpec) {
  json& container = podSpec["containers"][0];
  appendEnvUnlessSet(container, "RAY_gcs_storage", "rocksdb");
  appendEnvUnlessSet(container, "RAY_gcs_storage_path", kGcsStorageMountPath);
  json mount{{"name", kGcsStorageVolume}, {"mountPath", kGcsStorageMountPath}};
  if (std::string subPath = stringAt(storageOf(cluster), "subPath"); !subPath.empty())
    mount["subPath"] = subPath;
  if (!container["volumeMounts"].is_array()) container["volumeMounts"] = json::array();
  container["volumeMounts"].push_back(std::move(mount));
  if (!podSpec["volumes"].is_array()) podSpec["volumes"] = json::array();
  podSpec["volumes"].push_back(
      {{"name", kGcsStorageVolume},
       {"persistentVolumeClaim", {{"claimName", gcsStorageClaimName(cluster)}}}});
}

json accessModesOf(const json& storage) {
  const json& modes = arrayAt(storage, "accessModes");
  return modes.empty() ? json::array({"ReadWriteOnce"}) : modes;
}

std::string sizeOf(const json& storage) {
  const json& size = memberAt(storage, "size");
  if (size.is_string()) return size.get<std::string>();
  if (size.is_number()) return size.dump();
  return "1Gi";  // KubeRay's GCSStorageDefaultSize
}

bool sameQuantity(const std::string& a, const std::string& b) {
  auto qa = model::parseQuantity(a), qb = model::parseQuantity(b);
  return qa && qb ? qa->value == qb->value : a == b;
}

// As a set with multiplicity, as KubeRay's equalAccessModes.
bool sameModes(json a, json b) {
  if (!a.is_array() || !b.is_array()) return a == b;
  std::vector<std::string> x, y;
  for (const auto& m : a) x.push_back(m.is_string() ? m.get<std::string>() : m.dump());
  for (const auto& m : b) y.push_back(m.is_string() ? m.get<std::string>() : m.dump());
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

// Go's %v of a []PersistentVolumeAccessMode: [ReadWriteOnce ReadOnlyMany].
std::string goList(const json& modes) {
  std::string out = "[";
  for (const auto& m : modes) out += (out.size() > 1 ? " " : "") + (m.is_string() ? m.get<std::string>() : m.dump());
  return out + "]";
}

}  // namespace

bool gcsFaultToleranceEnabled(const json& cluster) {
  const json& annotations = objectAt(objectAt(cluster, "metadata"), "annotations");
  return asciiLower(stringAt(annotations, kFtEnabledAnnotation)) == "true" || hasOptions(cluster);
}

bool gcsFaultToleranceEmbedded(const json& cluster) {
  return hasOptions(cluster) && stringAt(optionsOf(cluster), "backend") == "rocksdb";
}

std::string gcsStorageNamespace(const json& cluster) {
  const json& meta = objectAt(cluster, "metadata");
  std::string ns = stringAt(meta, "uid");
  const json& annotations = objectAt(meta, "annotations");
  if (annotations.contains(kStorageNamespaceAnnotation))
    ns = stringAt(annotations, kStorageNamespaceAnnotation);
  std::string option = stringAt(optionsOf(cluster), "externalStorageNamespace");
  return option.empty() ? ns : option;
}

void annotateGcsFaultTolerance(const json& cluster, bool head, json& annotations) {
  if (!head) return;
  const bool enabled = gcsFaultToleranceEnabled(cluster);
  annotations[kFtEnabledAnnotation] = enabled ? "true" : "false";
  if (enabled && !gcsFaultToleranceEmbedded(cluster))
    annotations[kStorageNamespaceAnnotation] = gcsStorageNamespace(cluster);
}

void configureGcsFaultTolerance(const json& cluster, bool head, json& podSpec, StartParams& params) {
  if (!gcsFaultToleranceEnabled(cluster)) return;
  json& container = podSpec["containers"][0];
  if (!head) {
    if (!containerHasEnv(container, "RAY_gcs_rpc_server_reconnect_timeout_s")) {
      if (!container["env"].is_array()) container["env"] = json::array();
      container["env"].push_back(
          {{"name", "RAY_gcs_rpc_server_reconnect_timeout_s"}, {"value", kWorkerGcsReconnectTimeoutS}});
    }
    return;
  }
  if (gcsFaultToleranceEmbedded(cluster))
    configureEmbedded(cluster, podSpec);
  else
    configureRedis(cluster, container, params);
}

std::string gcsStorageClaimName(const json& cluster) {
  if (gcsStorageClaimIsUsers(cluster)) return stringAt(storageOf(cluster), "claimName");
  return stringAt(objectAt(cluster, "metadata"), "name") + "-gcs-pvc";
}

bool gcsStorageClaimIsUsers(const json& cluster) {
  return !stringAt(storageOf(cluster), "claimName").empty();
}

json gcsStorageClaimFor(const json& cluster) {
  const json& storage = storageOf(cluster);
  const std::string name = stringAt(objectAt(cluster, "metadata"), "name");
  json meta = ownedMeta(gcsStorageClaimName(cluster), cluster, {{"ray.io/cluster", name}});
  // Retain: no owner, so the claim and Ray's store outlive the cluster (KubeRay's
  // gcsStorageRetainOnDeletion); a cluster of the same name adopts it later.
  if (stringAt(storage, "deletionPolicy") == "Retain") meta.erase("ownerReferences");
  json spec{{"accessModes", accessModesOf(storage)},
            {"resources", {{"requests", {{"storage", sizeOf(storage)}}}}}};
  const json& storageClass = memberAt(storage, "storageClassName");
  if (storageClass.is_string()) spec["storageClassName"] = storageClass;
  return {{"apiVersion", "v1"}, {"kind", "PersistentVolumeClaim"}, {"metadata", std::move(meta)},
          {"spec", std::move(spec)}};
}

std::string gcsStorageClaimDrift(const json& wanted, const json& existing) {
  const json& want = objectAt(wanted, "spec");
  const json& have = objectAt(existing, "spec");
  auto size = [](const json& spec) {
    return stringAt(objectAt(objectAt(spec, "resources"), "requests"), "storage");
  };
  std::vector<std::string> diffs;
  if (!sameQuantity(size(want), size(have)))
    diffs.push_back("requested size " + size(want) + " != current " + size(have));
  // Unset asks for the default class, which the API server writes into the claim: not a drift.
  const json& wantClass = memberAt(want, "storageClassName");
  const json& haveClass = memberAt(have, "storageClassName");
  if (wantClass.is_string() && wantClass != haveClass)
    diffs.push_back("storageClassName " + wantClass.get<std::string>() + " != current " +
                    (haveClass.is_string() ? haveClass.get<std::string>() : "<default>"));
  if (!sameModes(memberAt(want, "accessModes"), memberAt(have, "accessModes")))
    diffs.push_back("accessModes " + goList(arrayAt(want, "accessModes")) + " != current " +
                    goList(arrayAt(have, "accessModes")));
  std::string out;
  for (const auto& d : diffs) out += (out.empty() ? "" : "; ") + d;
  return out;
}

}  // namespace rayjournal::controller
