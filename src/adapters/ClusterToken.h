// The one step from a token-auth RayCluster to an authenticated Ray client: the cluster's Secret
// (model/TokenAuth.h names it) read through Kubernetes, its token handed to the Ray client for
// that cluster's dashboard. The operator and rayjournal-replay's live sources both take it.
// Blocks on one Kubernetes read when the cluster uses token auth.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "adapters/kube/KubeClient.h"
#include "adapters/ray/RayJobsClient.h"

namespace rayjournal::adapters {

struct ClusterTokenUse {
  enum class Result {
    NotNeeded,  // the cluster does not use a Secret's token
    Used,       // the Ray client now sends the token to that dashboard
    Missing,    // the Secret is absent or holds no token: Ray will refuse the calls
  };
  Result result = Result::NotNeeded;
  std::string secretName;
};

// cluster: the RayCluster document (its metadata names the Secret's namespace).
ClusterTokenUse useClusterToken(kube::KubeClient& kube, ray::RayJobsClient& ray,
                                const nlohmann::json& cluster, const std::string& dashboard);

}  // namespace rayjournal::adapters
