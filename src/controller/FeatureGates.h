// KubeRay's feature gates (`--feature-gates Name=true,Other=false`), the ones that change what a
// RayJob or its RayCluster does. Parsing is pure; the operator reads the flag.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rayjournal::controller {

struct FeatureGates {
  bool rayJobDeletionPolicy = true;        // spec.deletionStrategy allowed (KubeRay: beta, on)
  bool rayClusterStatusConditions = true;  // RayCluster status.conditions written (beta, on)
  // SidecarMode's submitter container restarts on failure (restartPolicy OnFailure, Kubernetes
  // 1.35's container restart rules) up to a restart limit (alpha, off).
  bool sidecarSubmitterRestart = false;
  // GCS fault tolerance may use the embedded RocksDB store on a claim of the head Pod
  // (gcsFaultToleranceOptions.backend: rocksdb; alpha, off): refused while off, as in KubeRay.
  bool gcsFaultToleranceEmbeddedStorage = false;
};

struct FeatureGateParse {
  FeatureGates gates;
  std::vector<std::string> withoutEffect;  // KubeRay gates of controllers rayjournal lacks
  std::string error;                       // non-empty: the flag is refused, this says why
};

// Go's featuregate rules: comma-separated Name=bool (strconv.ParseBool), an unknown name is an
// error.
FeatureGateParse parseFeatureGates(std::string_view text);

}  // namespace rayjournal::controller
