#include "LiveSources.h"

#include <filesystem>
#include <stdexcept>

#include "adapters/Clock.h"
#include "adapters/kube/KubeConfig.h"
#include "adapters/kube/KubeRestClient.h"
#include "adapters/ray/RayHttpClient.h"
#include "adapters/sim/SimKube.h"
#include "adapters/sim/SimRay.h"
#include "model/JsonAccess.h"
#include "adapters/ClusterToken.h"

namespace rayjournal::replay {
namespace {

Sources embedded(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw std::runtime_error("cluster directory " + dir +
                             " does not exist; pass the --cluster-dir the operator ran with");
  if (!std::filesystem::exists(sim::SimKube::storeFile(dir), ec))
    throw std::runtime_error("cluster directory " + dir +
                             " holds no embedded cluster store (objects.jsonl is missing); pass "
                             "the --cluster-dir the operator ran with");
  auto clock = std::make_shared<SystemClock>();
  auto kube = std::make_shared<sim::SimKube>(*clock, dir, true);
  auto ray = std::make_shared<sim::SimRay>(*kube, *clock);
  return {kube, ray, "embedded store " + dir, clock};
}

Sources live(const LiveOptions& o) {
  kube::KubeConfig config;
  try {
    config = kube::KubeConfig::resolve(o.kubeconfig, o.context);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cannot configure the Kubernetes client: ") + e.what());
  }
  auto rest = std::make_shared<kube::KubeRestClient>(config, kube::KubeRestOptions{});
  ray::RayHttpOptions rayOptions;
  rayOptions.dashboardOverride = o.rayDashboardAddress;
  if (o.useKubernetesProxy) {
    kube::KubeRestClient* k = rest.get();
    rayOptions.kubernetesProxy = [k](const std::string& method, const std::string& path,
                                     const std::string& body, const http::Headers& headers) {
      return k->raw(method, path, body, headers);
    };
  }
  auto ray = std::make_shared<ray::RayHttpClient>(rayOptions);
  return {rest, ray, "Kubernetes " + config.server + " (" + config.source + ")", nullptr};
}

}  // namespace

Sources openSources(const LiveOptions& options) {
  return options.clusterDir.empty() ? live(options) : embedded(options.clusterDir);
}

void useClusterToken(Sources& s, const std::string& ns, const std::string& cluster,
                     const std::string& dashboard) {
  if (auto doc = s.kube->get("RayCluster", ns, cluster))
    adapters::useClusterToken(*s.kube, *s.ray, *doc, dashboard);
}

}  // namespace rayjournal::replay
