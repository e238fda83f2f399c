// `rayjournal-bench cluster-scale`: one RayCluster asking for N worker replicas on the simulated
// cluster, the real controller and journal on disk (lazy sync): how the operator's memory
// grows while it plans in bounded batches, and with every Pod created and cached. Blocking.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::bench {

struct ClusterScaleOptions {
  int64_t replicas = 100000;
  std::string dir;  // scratch directory for the journal
  double timeoutSeconds = 900;
};

nlohmann::json runClusterScale(const ClusterScaleOptions& options);

}  // namespace rayjournal::bench
