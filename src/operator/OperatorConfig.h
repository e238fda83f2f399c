// KubeRay's configuration file (`--config FILE`): the kind Configuration of apiVersion
// config.ray.io/v1alpha1 (ray-operator/apis/config/v1alpha1/configuration_types.go), as platform
// teams write it and KubeRay's Helm chart renders it into a ConfigMap. Parsing is pure: the
// text in, the settings it names out, or an error naming the file, the field and the cause.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/raycluster/PodDefaults.h"

namespace rayjournal::operator_ {

// The fields the file sets (unset: std::nullopt or empty), each beside the flag it replaces.
struct OperatorConfig {
  std::optional<std::string> metricsAddr;             // --metrics-bind-address
  std::optional<std::string> probeAddr;               // (served on the metrics address)
  std::optional<bool> enableLeaderElection;           // --leader-elect
  std::optional<std::string> leaderElectionNamespace;  // --leader-elect-namespace
  std::optional<int64_t> reconcileConcurrency;        // --workers and --raycluster-workers
  std::optional<std::string> watchNamespace;          // --watch-namespace
  std::optional<std::string> logFile;                 // a log file beside stderr
  std::optional<std::string> logFileEncoder;          // json or console
  std::optional<std::string> logStdoutEncoder;        // --log-format (console: text)
  std::optional<std::string> batchScheduler;          // --batch-scheduler
  std::optional<bool> enableBatchScheduler;           // --enable-batch-scheduler (deprecated)
  std::optional<bool> useKubernetesProxy;             // --use-kubernetes-proxy
  std::optional<bool> deleteRayJobAfterJobFinishes;   // DELETE_RAYJOB_CR_AFTER_JOB_FINISHES
  std::optional<bool> enableMetrics;                  // the kuberay_* metric families
  std::optional<double> qps;                          // --kube-api-qps
  std::optional<int64_t> burst;                       // --kube-api-burst
  controller::PodDefaults podDefaults;                // sidecars, env, labels, annotations
  std::vector<std::string> warnings;  // fields read but not acted on, one line each
};

struct OperatorConfigParse {
  OperatorConfig config;
  std::string error;  // non-empty: the file is refused; names the file and the field
};

// `source` names the file in errors ("config.yaml: headSidecarContainers[1]: ...").
OperatorConfigParse parseOperatorConfig(const std::string& text, const std::string& source);

}  // namespace rayjournal::operator_
