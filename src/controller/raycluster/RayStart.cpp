#include "controller/raycluster/RayStart.h"

#include <algorithm>
#include <charconv>

namespace rayjournal::controller {
std::string asciiLower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

namespace {

// Flags Ray reads as `--flag=true|false`: their "false" must reach ray start.
bool takesExplicitBoolean(const std::string& flag) {
  return flag == "log-color" || flag == "include-dashboard" || flag == "include-log-monitor";
}

}  // namespace

std::string rayStartFlags(const StartParams& params) {
  std::string flags;
  for (const auto& [flag, value] : params) {  // std::map: sorted by name, as KubeRay sorts
    std::string v = asciiLower(value);
    if ((v == "true" || v == "false") && !takesExplicitBoolean(flag)) {
      if (v == "true") flags += " --" + flag + " ";
    } else {
      flags += " --" + flag + "=" + value + " ";
    }
  }
  return flags;
}

std::string rayStartCommand(bool head, const StartParams& params) {
  return std::string(head ? "ray start --head " : "ray start ") + rayStartFlags(params);
}

void completeStartParams(StartParams& params, bool head, const std::string& headAddress) {
  if (head)
    params.try_emplace("dashboard-host", "0.0.0.0");
  else
    params.try_emplace("address", headAddress);
  params.try_emplace("metrics-export-port", std::to_string(kDefaultMetricsPort));
  params["block"] = "true";
  params.try_emplace("dashboard-agent-listen-port", std::to_string(kDefaultAgentListenPort));
}

std::string headPortOf(const StartParams& headParams) {
  auto it = headParams.find("port");
  return it == headParams.end() ? std::to_string(kDefaultGcsPort) : it->second;
}

std::string containerScript(const std::string& userCommand, const std::string& rayStart) {
  std::string generated = "ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; " + rayStart;
  // `ray start --block` never returns, so the user's command has to run before it.
  return userCommand.empty() ? generated : userCommand + " && " + generated;
}

int portParam(const StartParams& params, const std::string& key, int fallback) {
  auto it = params.find(key);
  if (it == params.end()) return fallback;
  int port = 0;
  const std::string& v = it->second;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), port);
  return ec == std::errc() && end == v.data() + v.size() ? port : fallback;
}

}  // namespace rayjournal::controller
