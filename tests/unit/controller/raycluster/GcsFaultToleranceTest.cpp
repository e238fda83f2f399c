// GCS fault tolerance on the Pods, as KubeRay v1.7.0 wires it (configureGCSFaultTolerance): the
// Redis address and credentials on the head, the storage namespace, the workers' reconnect
// timeout, and the legacy annotation form. A cluster built without them loses Ray's jobs and
// detached actors with its head, which the user believed safe.
#include "controller/raycluster/GcsFaultTolerance.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "controller/raycluster/RayClusterBuild.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

json ftCluster(json options, json annotations = json::object(), json headParams = json::object()) {
  json container = {{"name", "ray-head"}, {"image", "rayproject/ray:2.60.0"}};
  json spec = {{"headGroupSpec",
                {{"rayStartParams", headParams},
                 {"template", {{"spec", {{"containers", json::array({container})}}}}}}},
               {"workerGroupSpecs",
                json::array({{{"groupName", "small"},
                              {"replicas", 1},
                              {"template", {{"spec", {{"containers", json::array({container})}}}}}}})}};
  if (!options.is_null()) spec["gcsFaultToleranceOptions"] = options;
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", "rc"}, {"namespace", "ns"}, {"uid", "uid-1"}, {"annotations", annotations}}},
          {"spec", spec}};
}

ClusterObserved ftObserve(const json& cluster) {
  return clusterObserved(std::make_shared<const json>(cluster), std::vector<PodView>{}, nullptr, {});
}
json ftHeadOf(const json& cluster) { return *headPodFor(ftObserve(cluster).cluster); }
json ftWorkerOf(const json& cluster) {
  ClusterObserved o = ftObserve(cluster);
  return *workerPodFor(o.cluster, o.cluster.groups[0], "rc-small-worker-0", 0);
}

const json* ftEnvOf(const json& pod, const std::string& name) {
  for (const auto& e : pod["spec"]["containers"][0]["env"])
    if (e["name"] == name) return &e;
  return nullptr;
}
std::string ftEnvValue(const json& pod, const std::string& name) {
  const json* e = ftEnvOf(pod, name);
  return e ? e->value("value", "<valueFrom>") : "<absent>";
}

TEST(GcsFaultToleranceTest, OptionsPutRedisOnTheHeadAndTheStorageNamespaceIsTheUid) {
  json secret = {{"secretKeyRef", {{"name", "redis-password-secret"}, {"key", "password"}}}};
  json head = ftHeadOf(ftCluster({{"redisAddress", "redis:6379"}, {"redisPassword", {{"valueFrom", secret}}}}));
  EXPECT_EQ(head["metadata"]["annotations"]["ray.io/ft-enabled"], "true");
  EXPECT_EQ(head["metadata"]["annotations"]["ray.io/external-storage-namespace"], "uid-1");
  EXPECT_EQ(ftEnvValue(head, "RAY_external_storage_namespace"), "uid-1");
  EXPECT_EQ(ftEnvValue(head, "RAY_REDIS_ADDRESS"), "redis:6379");
  ASSERT_NE(ftEnvOf(head, "REDIS_PASSWORD"), nullptr);
  EXPECT_EQ((*ftEnvOf(head, "REDIS_PASSWORD"))["valueFrom"], secret);
  EXPECT_EQ(ftEnvValue(head, "REDIS_USERNAME"), "<absent>");
  EXPECT_NE(ftEnvValue(head, "KUBERAY_GEN_RAY_START_CMD").find("--redis-password=$REDIS_PASSWORD"),
            std::string::npos);
  EXPECT_EQ(ftEnvValue(head, "RAY_gcs_rpc_server_reconnect_timeout_s"), "<absent>") << "workers only";
}

TEST(GcsFaultToleranceTest, AUsernameAndANamespaceFromTheOptionsWin) {
  json cluster = ftCluster({{"redisAddress", "redis:6379"},
                            {"redisUsername", {{"value", "ray"}}},
                            {"redisPassword", {{"value", "5241590000000000"}}},
                            {"externalStorageNamespace", "shared-ns"}},
                           {{"ray.io/external-storage-namespace", "ignored"}});
  json head = ftHeadOf(cluster);
  EXPECT_EQ(ftEnvValue(head, "RAY_external_storage_namespace"), "shared-ns");
  EXPECT_EQ(ftEnvValue(head, "REDIS_USERNAME"), "ray");
  EXPECT_EQ(ftEnvValue(head, "REDIS_PASSWORD"), "5241590000000000");
  const std::string start = ftEnvValue(head, "KUBERAY_GEN_RAY_START_CMD");
  EXPECT_NE(start.find("--redis-username=$REDIS_USERNAME"), std::string::npos) << start;
}

TEST(GcsFaultToleranceTest, WorkersWaitTenMinutesForARestartedGcsUnlessTheySaidOtherwise) {
  json cluster = ftCluster({{"redisAddress", "redis:6379"}});
  json worker = ftWorkerOf(cluster);
  EXPECT_EQ(ftEnvValue(worker, "RAY_gcs_rpc_server_reconnect_timeout_s"), "600");
  EXPECT_EQ(ftEnvValue(worker, "RAY_REDIS_ADDRESS"), "<absent>");
  EXPECT_FALSE(worker["metadata"].value("annotations", json::object()).contains("ray.io/ft-enabled"));
  cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["env"] =
      json::array({{{"name", "RAY_gcs_rpc_server_reconnect_timeout_s"}, {"value", "30"}}});
  EXPECT_EQ(ftEnvValue(ftWorkerOf(cluster), "RAY_gcs_rpc_server_reconnect_timeout_s"), "30");
}

// KubeRay's legacy form: the annotation, with RAY_REDIS_ADDRESS in the head's own env and a
// password in rayStartParams, which KubeRay copies to REDIS_PASSWORD for the cleanup Job.
TEST(GcsFaultToleranceTest, TheLegacyAnnotationFormKeepsTheUsersEnvAndCopiesThePassword) {
  json cluster = ftCluster(nullptr, {{"ray.io/ft-enabled", "True"}, {"ray.io/external-storage-namespace", "ns-a"}},
                           {{"redis-password", "pw"}});
  cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["env"] =
      json::array({{{"name", "RAY_REDIS_ADDRESS"}, {"value", "redis:6379"}}});
  json head = ftHeadOf(cluster);
  EXPECT_EQ(head["metadata"]["annotations"]["ray.io/ft-enabled"], "true");
  EXPECT_EQ(ftEnvValue(head, "RAY_external_storage_namespace"), "ns-a");
  EXPECT_EQ(ftEnvValue(head, "REDIS_PASSWORD"), "pw");
  EXPECT_EQ(ftEnvValue(head, "RAY_REDIS_ADDRESS"), "redis:6379");
}

TEST(GcsFaultToleranceTest, WithoutFtTheHeadSaysSoAndGetsNothingElse) {
  json head = ftHeadOf(ftCluster(nullptr, {{"ray.io/ft-enabled", "false"}}, {{"redis-password", "pw"}}));
  EXPECT_EQ(head["metadata"]["annotations"]["ray.io/ft-enabled"], "false");
  EXPECT_FALSE(head["metadata"]["annotations"].contains("ray.io/external-storage-namespace"));
  EXPECT_EQ(ftEnvValue(head, "RAY_external_storage_namespace"), "<absent>");
  EXPECT_EQ(ftEnvValue(head, "REDIS_PASSWORD"), "<absent>");
  EXPECT_EQ(ftEnvValue(ftWorkerOf(ftCluster(nullptr)), "RAY_gcs_rpc_server_reconnect_timeout_s"), "<absent>");
}

// The embedded store (configureEmbeddedFT): the head's Ray container selects RocksDB at
// /data/gcs and mounts the claim there; no Redis setting leaks onto it, workers still wait for
// a restarted GCS.
TEST(GcsFaultToleranceTest, TheEmbeddedStoreMountsItsClaimOnTheHeadAtDataGcs) {
  json head = ftHeadOf(ftCluster({{"backend", "rocksdb"}}));
  EXPECT_EQ(head["metadata"]["annotations"]["ray.io/ft-enabled"], "true");
  EXPECT_FALSE(head["metadata"]["annotations"].contains("ray.io/external-storage-namespace"));
  EXPECT_EQ(ftEnvValue(head, "RAY_gcs_storage"), "rocksdb");
  EXPECT_EQ(ftEnvValue(head, "RAY_gcs_storage_path"), "/data/gcs");
  EXPECT_EQ(ftEnvOf(head, "RAY_REDIS_ADDRESS"), nullptr);
  EXPECT_EQ(ftEnvOf(head, "RAY_external_storage_namespace"), nullptr);
  EXPECT_EQ(head["spec"]["containers"][0]["volumeMounts"][0],
            json({{"name", "gcs-storage"}, {"mountPath", "/data/gcs"}}));
  EXPECT_EQ(head["spec"]["volumes"][0],
            json({{"name", "gcs-storage"}, {"persistentVolumeClaim", {{"claimName", "rc-gcs-pvc"}}}}));
  json worker = ftWorkerOf(ftCluster({{"backend", "rocksdb"}}));
  EXPECT_EQ(ftEnvValue(worker, "RAY_gcs_rpc_server_reconnect_timeout_s"), "600");
  EXPECT_EQ(ftEnvOf(worker, "RAY_gcs_storage"), nullptr);
  for (const auto& volume : worker["spec"]["volumes"]) EXPECT_NE(volume["name"], "gcs-storage");
}

TEST(GcsFaultToleranceTest, AUsersClaimIsMountedByItsNameWithTheSubPath) {
  json head = ftHeadOf(ftCluster({{"backend", "rocksdb"}, {"storage", {{"claimName", "kept"}, {"subPath", "gcs"}}}}));
  EXPECT_EQ(head["spec"]["containers"][0]["volumeMounts"][0]["subPath"], "gcs");
  EXPECT_EQ(head["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], "kept");
}

// BuildGCSStoragePVC: 1Gi ReadWriteOnce on the default class unless the spec says otherwise,
// labelled and owned by the cluster; Retain leaves the owner out so the store outlives it.
TEST(GcsFaultToleranceTest, TheOperatorsClaimIsOwnedByTheClusterUnlessRetained) {
  json claim = gcsStorageClaimFor(ftCluster({{"backend", "rocksdb"}}));
  EXPECT_EQ(claim["metadata"]["name"], "rc-gcs-pvc");
  EXPECT_EQ(claim["metadata"]["namespace"], "ns");
  EXPECT_EQ(claim["metadata"]["labels"], json({{"ray.io/cluster", "rc"}}));
  EXPECT_EQ(claim["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(claim["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(claim["spec"]["accessModes"], json::array({"ReadWriteOnce"}));
  EXPECT_EQ(claim["spec"]["resources"]["requests"]["storage"], "1Gi");
  EXPECT_FALSE(claim["spec"].contains("storageClassName"));
  json storage = {{"size", "5Gi"}, {"storageClassName", "fast"}, {"accessModes", {"ReadWriteMany"}},
                  {"deletionPolicy", "Retain"}};
  claim = gcsStorageClaimFor(ftCluster({{"backend", "rocksdb"}, {"storage", storage}}));
  EXPECT_FALSE(claim["metadata"].contains("ownerReferences"));
  EXPECT_EQ(claim["spec"]["accessModes"], json::array({"ReadWriteMany"}));
  EXPECT_EQ(claim["spec"]["resources"]["requests"]["storage"], "5Gi");
  EXPECT_EQ(claim["spec"]["storageClassName"], "fast");
}

// gcsStoragePVCDrift: quantities compare by value, an unset class is the default the API server
// filled in, access modes as a set.
TEST(GcsFaultToleranceTest, AClaimThatDiffersFromTheSpecIsDescribedInKubeRaysWords) {
  json wanted = gcsStorageClaimFor(ftCluster({{"backend", "rocksdb"}}));
  json existing = wanted;
  existing["spec"]["resources"]["requests"]["storage"] = "1024Mi";
  existing["spec"]["storageClassName"] = "local-path";
  EXPECT_EQ(gcsStorageClaimDrift(wanted, existing), "");
  existing["spec"]["resources"]["requests"]["storage"] = "2Gi";
  existing["spec"]["accessModes"] = {"ReadWriteMany"};
  EXPECT_EQ(gcsStorageClaimDrift(wanted, existing),
            "requested size 1Gi != current 2Gi; accessModes [ReadWriteOnce] != current [ReadWriteMany]");
  wanted["spec"]["storageClassName"] = "fast";
  existing = wanted;
  existing["spec"]["storageClassName"] = "local-path";
  EXPECT_EQ(gcsStorageClaimDrift(wanted, existing), "storageClassName fast != current local-path");
}

}  // namespace
}  // namespace rayjournal::controller
