#include "adapters/ClusterToken.h"

#include "model/JsonAccess.h"
#include "model/TokenAuth.h"

namespace rayjournal::adapters {

ClusterTokenUse useClusterToken(kube::KubeClient& kube, ray::RayJobsClient& ray,
                                const nlohmann::json& cluster, const std::string& dashboard) {
  const nlohmann::json& meta = model::objectAt(cluster, "metadata");
  ClusterTokenUse use;
  use.secretName = model::tokenAuthSecretName(model::objectAt(cluster, "spec"),
                                              model::stringAt(meta, "name"));
  if (use.secretName.empty()) return use;
  auto secret = kube.getSnapshot("Secret", model::stringAt(meta, "namespace"), use.secretName);
  const std::string token = secret ? model::tokenOfSecret(*secret) : "";
  if (token.empty()) {
    use.result = ClusterTokenUse::Result::Missing;
    return use;
  }
  ray.useAuthToken(dashboard, token);
  use.result = ClusterTokenUse::Result::Used;
  return use;
}

}  // namespace rayjournal::adapters
