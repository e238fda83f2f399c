// The `ray start` command line KubeRay generates for a head or worker Pod, from the group's
// rayStartParams (KubeRay v1.7.0 common/pod.go, generateRayStartCommand and convertParamMap):
// flags sorted by name; "true" renders as a bare `--flag`, "false" drops it, except the flags
// Ray reads as explicit booleans; everything else as `--flag=value`. The spacing is KubeRay's
// own, so the command (and KUBERAY_GEN_RAY_START_CMD) reads byte for byte as KubeRay's. Pure;
// no JSON.
#pragma once

#include <map>
#include <string>

namespace rayjournal::controller {

using StartParams = std::map<std::string, std::string>;

inline constexpr int kDefaultGcsPort = 6379;
inline constexpr int kDefaultDashboardPort = 8265;
inline constexpr int kDefaultMetricsPort = 8080;
inline constexpr int kDefaultAgentListenPort = 52365;

// ASCII lower case (KubeRay compares "true", flag values and annotations case-insensitively).
std::string asciiLower(std::string s);
// The flags as KubeRay renders them (each " --flag " or " --flag=value ").
std::string rayStartFlags(const StartParams& params);
// "ray start --head <flags>" or "ray start <flags>".
std::string rayStartCommand(bool head, const StartParams& params);
// KubeRay's setMissingRayStartParams: the worker's address (headAddress, "<fqdn>:<port>"), the
// head's dashboard-host, metrics-export-port, block (always) and dashboard-agent-listen-port.
void completeStartParams(StartParams& params, bool head, const std::string& headAddress);
// The GCS port workers and drivers connect to: rayStartParams.port, else 6379.
std::string headPortOf(const StartParams& headParams);
// The bash argument of the Ray container: the user's command (when it does not run ray start
// itself) then KubeRay's ulimit and the generated `ray start`.
std::string containerScript(const std::string& userCommand, const std::string& rayStart);
// A port from the params (dashboard-agent-listen-port, dashboard-port), else the fallback.
int portParam(const StartParams& params, const std::string& key, int fallback);

}  // namespace rayjournal::controller
