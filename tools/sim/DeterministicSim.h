// The deterministic crash simulator. One seed fixes everything: the workload (RayJobs over all
// submission modes, retries, suspends, deletions, deadlines, clusterSelector, autoscaling
// clusters), the simulated
// clock, the order in which RayJobs are reconciled, the injected faults and the crash points.
// A run with crashes is compared with the same seed's run without them, and invariants are
// checked. Single-threaded per run; runs of different seeds are independent.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rayjournal::simtool {

struct SimConfig {
  uint64_t seed = 1;
  int maxCrashes = 6;
  double crashProbability = 0.03;  // per journal boundary
  bool faults = true;              // API and Ray faults
  uint32_t jobMask = 0xffffffff;   // which generated RayJobs take part (shrinking)
  // Of the RayJobs with a worker group, the share whose cluster autoscales (the simulated Ray
  // autoscaler grows it for the job's sim-demand, then shrinks it). Drawn from a stream of its
  // own, so the rest of a seed's workload is the same at any share (0 keeps pinned seeds as
  // they were found).
  double autoscalingShare = 0.25;
  // Of the RayJobs with a cluster of their own, the share whose cluster has GCS fault tolerance
  // (Redis): its deletion goes through the Redis cleanup finalizer and Job. A stream of its own,
  // as above (0 keeps seeds pinned before it as they were found).
  double gcsFtShare = 0.25;
  bool verbose = false;
};

struct SimResult {
  uint64_t seed = 0;
  int crashes = 0;
  int faults = 0;
  std::vector<std::string> violations;
  nlohmann::json finalStates;           // name -> summary
  std::vector<nlohmann::json> journal;  // with SimConfig::verbose: every record of the crash run
};

// Runs the seed twice (without and with crashes) and checks every invariant.
SimResult runSeed(const SimConfig& config);
// Smaller failing configuration for a failing seed (fewer RayJobs, fewer crashes), or the
// input when nothing smaller still fails.
SimConfig shrink(const SimConfig& failing);
// The seed's workload: RayJob manifests and scheduled user actions.
nlohmann::json describeWorkload(const SimConfig& config);

}  // namespace rayjournal::simtool
