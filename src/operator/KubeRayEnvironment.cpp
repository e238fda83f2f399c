#include "operator/KubeRayEnvironment.h"

#include <cctype>
#include <charconv>
#include <optional>

namespace rayjournal::operator_ {
namespace {

// Go's strconv.Atoi: an optional sign and decimal digits, nothing else.
std::optional<int64_t> goAtoi(const std::string& text) {
  std::string_view digits = text;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return std::nullopt;
  return value;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<std::string> applyKubeRayEnvironment(controller::DecideConfig& decide,
                                                 const EnvLookup& env) {
  std::vector<std::string> applied;
  auto read = [&](const char* name) -> std::optional<std::string> {
    const char* v = env(name);
    if (!v) return std::nullopt;
    applied.push_back(std::string(name) + "=" + v);
    return std::string(v);
  };
  constexpr int64_t kDefaultSeconds = 300;
  if (auto v = read("RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS")) {
    auto s = goAtoi(*v);  // KubeRay: not an integer, or <= 0, is the default
    decide.statusCheckTimeoutMs = (s && *s > 0 ? *s : kDefaultSeconds) * 1000;
  }
  if (auto v = read("RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS")) {
    auto s = goAtoi(*v);  // KubeRay: only a parse error is the default
    decide.transitionGracePeriodMs = (s ? *s : kDefaultSeconds) * 1000;
  }
  if (auto v = read("CLUSTER_DOMAIN"); v && !v->empty()) decide.clusterDomain = *v;
  if (auto v = read("DELETE_RAYJOB_CR_AFTER_JOB_FINISHES"))
    decide.deleteRayJobAfterJobFinishes = *v == "true";  // KubeRay compares exactly
  // These four KubeRay compares case-insensitively, each against the value that flips it.
  if (auto v = read("ENABLE_LOGIN_SHELL")) decide.loginShell = lower(*v) == "true";
  if (auto v = read("ENABLE_PROBES_INJECTION")) decide.injectProbes = lower(*v) != "false";
  if (auto v = read("ENABLE_INIT_CONTAINER_INJECTION"))
    decide.injectWaitGcsReady = lower(*v) != "false";
  if (auto v = read("ENABLE_RANDOM_POD_DELETE")) decide.randomPodDelete = lower(*v) == "true";
  if (auto v = read("ENABLE_GCS_FT_REDIS_CLEANUP")) decide.redisCleanup = lower(*v) != "false";
  return applied;
}

}  // namespace rayjournal::operator_
