// GCS fault tolerance on the Pods of a RayCluster, as KubeRay v1.7.0 wires it
// (common/pod.go: configureGCSFaultTolerance, configureRedisFT; utils: IsGCSFaultToleranceEnabled):
// with the Redis backend the head keeps Ray's cluster metadata in Redis under a storage namespace,
// so a new head process (or Pod) finds the jobs and detached actors its predecessor had. Pure:
// documents in, documents out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "controller/raycluster/RayStart.h"

namespace rayjournal::controller {

inline constexpr const char* kFtEnabledAnnotation = "ray.io/ft-enabled";
inline constexpr const char* kStorageNamespaceAnnotation = "ray.io/external-storage-namespace";
inline constexpr const char* kRedisCleanupFinalizer = "ray.io/gcs-ft-redis-cleanup-finalizer";
// A worker's raylet waits this long for a restarted GCS before it exits (Ray's default is 60 s).
inline constexpr const char* kWorkerGcsReconnectTimeoutS = "600";

// FT is on when the cluster carries ray.io/ft-enabled=true (any case; KubeRay's legacy form) or
// spec.gcsFaultToleranceOptions is set.
bool gcsFaultToleranceEnabled(const nlohmann::json& cluster);
// The embedded RocksDB backend (gcsFaultToleranceOptions.backend: rocksdb) instead of Redis.
bool gcsFaultToleranceEmbedded(const nlohmann::json& cluster);
// Redis keys of the cluster live under this: gcsFaultToleranceOptions.externalStorageNamespace,
// else the ray.io/external-storage-namespace annotation, else the cluster's uid.
std::string gcsStorageNamespace(const nlohmann::json& cluster);

// The head's ray.io/ft-enabled (always, "true" or "false") and, with Redis FT, the storage
// namespace annotation. annotations: the Pod's.
void annotateGcsFaultTolerance(const nlohmann::json& cluster, bool head, nlohmann::json& annotations);
// The Ray container's FT env: the workers' GCS reconnect timeout unless set; on the head the
// storage namespace, RAY_REDIS_ADDRESS and REDIS_USERNAME/REDIS_PASSWORD (value or valueFrom,
// referred to as $REDIS_USERNAME/$REDIS_PASSWORD in `ray start`), or, in the legacy form, a
// REDIS_PASSWORD from rayStartParams for the cleanup Job. Appended before KubeRay's own env, as
// KubeRay does. params: the Pod's ray start params (the head's gain redis-username/-password).
// With the embedded backend the head's Ray container gets RAY_gcs_storage=rocksdb and
// RAY_gcs_storage_path=/data/gcs instead, and the Pod the claim mounted there
// (common/pod.go configureEmbeddedFT). podSpec: the Pod's spec, its first container the Ray one.
void configureGcsFaultTolerance(const nlohmann::json& cluster, bool head, nlohmann::json& podSpec,
                                StartParams& params);

// The embedded backend's store (gcs_ft.go, utils GetGCSStoragePVCName): the user's claim
// (storage.claimName), else the operator-made "<cluster>-gcs-pvc".
inline constexpr const char* kGcsStorageVolume = "gcs-storage";
inline constexpr const char* kGcsStorageMountPath = "/data/gcs";
std::string gcsStorageClaimName(const nlohmann::json& cluster);
// The user brings the claim (storage.claimName): the operator never creates, changes or deletes it.
bool gcsStorageClaimIsUsers(const nlohmann::json& cluster);
// The operator-made claim (BuildGCSStoragePVC): labelled ray.io/cluster, accessModes (default
// [ReadWriteOnce]), storageClassName when given, the size requested (default 1Gi); owned by the
// cluster (garbage-collected with it) unless storage.deletionPolicy is Retain.
nlohmann::json gcsStorageClaimFor(const nlohmann::json& cluster);
// What differs between the claim the spec asks for and the one that exists, in KubeRay's words
// (gcsStoragePVCDrift: size, storageClassName when asked for, accessModes), "" when nothing
// does. A claim is not changed in place: the difference is reported, not applied.
std::string gcsStorageClaimDrift(const nlohmann::json& wanted, const nlohmann::json& existing);

}  // namespace rayjournal::controller
