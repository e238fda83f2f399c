// `rayjournal-bench throughput`: N RayJobs through their whole lifecycle (create -> Complete ->
// deletion) on the simulated cluster with zero simulated durations, the real controller and the
// real journal on disk (or in memory with --durability off). Blocking.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::bench {

struct ThroughputOptions {
  int jobs = 1000;
  int workers = 2;
  int maxBatch = 16;  // keys a worker reconciles with one journal flush
  std::string durability = "sync";  // sync | lazy | off
  std::string mode = "k8sjob";      // k8sjob | http
  std::string dir;                  // scratch directory for the journal
  double timeoutSeconds = 600;
  int64_t requeueMs = 3000;  // KubeRay's poll interval; watch events drive everything else
};

nlohmann::json runThroughput(const ThroughputOptions& options);

}  // namespace rayjournal::bench
