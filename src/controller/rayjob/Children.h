// Builds the child objects a RayJob owns, as KubeRay names and labels them (reference 2.6,
// 2.16, 3.1-3.4). Pure functions.
#pragma once

#include "model/Names.h"

#include <string>

#include <nlohmann/json.hpp>

#include "controller/rayjob/Builders.h"
#include "controller/rayjob/RayJob.h"

namespace rayjournal::controller {

using nlohmann::json;

json ownerReference(const RayJob& job);
bool ownedBy(const json& child, const std::string& uid);

json buildRayCluster(const RayJob& job, const std::string& clusterName,
                     const SubmitterShell& shell = {});
// The K8sJobMode submitter batch Job.
json buildSubmitterJob(const RayJob& job, const json& cluster, bool loginShell = false);

// KubeRay's `ray job submit` shell line (reference 3.3).
std::string buildSubmitCommand(const RayJob& job);

// The RayJob-level head Service <rayjob>-head-svc, selecting the cluster's head (reference 2.17).
json buildJobHeadService(const RayJob& job, const json& clusterHeadService,
                         const std::string& clusterName);
// The SidecarMode submitter command (reference 3.6); with restarts (the SidecarSubmitterRestart
// gate) it checks `ray job status` first and follows the logs, as the K8sJobMode one does.
std::string buildSidecarCommand(const RayJob& job, int dashboardPort, bool restarts = false);
using model::kSubmitterContainer;

// runtimeEnvYAML as a JSON object; throws std::invalid_argument when it is not valid YAML.
json runtimeEnvJson(const std::string& yaml);

}  // namespace rayjournal::controller
