// The Redis cleanup Job of a GCS fault-tolerant RayCluster, built from its head Pod as KubeRay
// v1.7.0's buildRedisCleanupJob does (raycluster_controller.go).
#include <nlohmann/json.hpp>

#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterBuild.h"
#include "controller/raycluster/RayClusterMeta.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

constexpr const char* kCleanupScriptHead =
    "echo \"To get more information about manually deleting the storage namespace in Redis and "
    "removing the RayCluster's finalizer, please check "
    "https://docs.ray.io/en/master/cluster/kubernetes/user-guides/kuberay-gcs-ft.html for more "
    "details.\" && python -c \"from ray._private.gcs_utils import cleanup_redis_storage; "
    "from urllib.parse import urlparse; import os; import sys; "
    "redis_address = os.getenv('RAY_REDIS_ADDRESS', '').split(',')[0]; "
    "redis_address = redis_address if '://' in redis_address else 'redis://' + redis_address; "
    "parsed = urlparse(redis_address); ";
constexpr const char* kCleanupCallStart =
    "sys.exit(1) if not cleanup_redis_storage(host=parsed.hostname, port=parsed.port, ";
constexpr const char* kCleanupUsername = "username=os.getenv('REDIS_USERNAME', parsed.username), ";
constexpr const char* kCleanupCallEnd =
    "password=os.getenv('REDIS_PASSWORD', parsed.password or ''), use_ssl=parsed.scheme=='rediss', "
    "storage_namespace=os.getenv('RAY_external_storage_namespace')) else None\"";

// The head's Ray container turned into the cleanup: Ray's own cleanup_redis_storage, with the
// head's Redis address, credentials and storage namespace from its env.
json cleanupContainer(json ray, bool loginShell) {
  ray["command"] = bashCommand("c", loginShell);
  ray["args"] = json::array({std::string(kCleanupScriptHead) + kCleanupCallStart +
                             (containerHasEnv(ray, "REDIS_USERNAME") ? kCleanupUsername : "") +
                             kCleanupCallEnd});
  ray.erase("livenessProbe");
  ray.erase("readinessProbe");
  if (!ray["env"].is_array()) ray["env"] = json::array();
  // At least 60 s for Redis to answer (120 tries, 500 ms apart).
  ray["env"].push_back({{"name", "RAY_redis_db_connect_retries"}, {"value", "120"}});
  ray["env"].push_back({{"name", "RAY_redis_db_connect_wait_milliseconds"}, {"value", "500"}});
  json fixed = {{"cpu", "200m"}, {"memory", "256Mi"}};
  ray["resources"] = {{"limits", fixed}, {"requests", fixed}};
  return ray;
}

}  // namespace

std::string redisCleanupJobName(const std::string& cluster) {
  return checkLabel(cluster + "-redis-cleanup");
}

model::ApiObject redisCleanupJobFor(const RayClusterView& cluster) {
  json pod = *headPodFor(cluster);
  json& meta = pod["metadata"];
  meta["labels"]["ray.io/node-type"] = "redis-cleanup";
  json& spec = pod["spec"];
  json ray = arrayAt(spec, "containers").empty() ? json::object() : spec["containers"][0];
  spec["containers"] = json::array({cleanupContainer(std::move(ray), cluster.injection.loginShell)});
  spec["restartPolicy"] = "Never";
  json templateMeta = meta;  // the Job controller names and owns its Pod
  for (const char* k : {"name", "namespace", "ownerReferences"}) templateMeta.erase(k);
  json jobMeta = ownedMeta(redisCleanupJobName(cluster.name), cluster.raw.get(), meta["labels"]);
  if (meta.contains("annotations")) jobMeta["annotations"] = meta["annotations"];
  return std::make_shared<json>(json{
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", std::move(jobMeta)},
      {"spec",
       {{"backoffLimit", 0},
        {"activeDeadlineSeconds", 300},  // best effort, for five minutes
        {"template", {{"metadata", std::move(templateMeta)}, {"spec", std::move(spec)}}}}}});
}

}  // namespace rayjournal::controller
