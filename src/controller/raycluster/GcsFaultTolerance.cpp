#include "controller/raycluster/GcsFaultTolerance.h"

#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterMeta.h"

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

void configureGcsFaultTolerance(const json& cluster, bool head, json& container, StartParams& params) {
  if (!gcsFaultToleranceEnabled(cluster)) return;
  if (!head) {
    if (!containerHasEnv(container, "RAY_gcs_rpc_server_reconnect_timeout_s")) {
      if (!container["env"].is_array()) container["env"] = json::array();
      container["env"].push_back(
          {{"name", "RAY_gcs_rpc_server_reconnect_timeout_s"}, {"value", kWorkerGcsReconnectTimeoutS}});
    }
    return;
  }
  if (!gcsFaultToleranceEmbedded(cluster)) configureRedis(cluster, container, params);
}

}  // namespace rayjournal::controller
