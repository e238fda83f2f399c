// Where diagnose and diff --against-kube read the world: a live cluster (the operator's own
// client and TLS rules, read-only calls: get and list; the Ray dashboard through the operator's
// address rules) or the embedded cluster's store. Lifetimes: the clients live as long as the
// Sources.
#pragma once

#include <memory>
#include <string>

#include "adapters/kube/KubeClient.h"
#include "adapters/ray/RayJobsClient.h"

namespace rayjournal::replay {

struct LiveOptions {
  std::string kubeconfig, context;  // empty: in-cluster in a pod, else ~/.kube/config
  std::string clusterDir;           // set: the embedded cluster's store instead
  std::string rayDashboardAddress;  // host:port for every dashboard (as the operator's flag)
  bool useKubernetesProxy = false;  // dashboards through the API server's service proxy
};

struct Sources {
  std::shared_ptr<kube::KubeClient> kube;
  std::shared_ptr<ray::RayJobsClient> ray;
  std::string describe;  // "Kubernetes https://... (kubeconfig ...)" or "embedded store DIR"
  std::shared_ptr<void> keepAlive;  // what the clients borrow from
};

// The real cluster unless options.clusterDir is set. Throws std::runtime_error naming the
// kubeconfig or the directory when the source cannot be set up.
Sources openSources(const LiveOptions& options);
// A token-auth cluster's dashboard calls need its token (the Secret named by its authOptions).
void useClusterToken(Sources& sources, const std::string& ns, const std::string& cluster,
                     const std::string& dashboard);

}  // namespace rayjournal::replay
