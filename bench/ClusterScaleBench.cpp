#include "ClusterScaleBench.h"

#include <malloc.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "adapters/sim/SimWorld.h"
#include "events/JournalBodies.h"
#include "runtime/Stack.h"

namespace rayjournal::bench {
namespace {

using nlohmann::json;

// Resident memory now (not the peak): /proc/self/statm's second field, in pages.
double rssMb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// Heap bytes in use now (glibc's count of live allocations): unlike RSS it is not blurred by
// pages the allocator keeps or shares between the operator and the simulated cluster.
double heapInUseMb() { return double(mallinfo2().uordblks) / (1024.0 * 1024.0); }

json bigCluster(int64_t replicas) {
  json container = {{"name", "ray-worker"},
                    {"image", "rayproject/ray:2.60.0"},
                    {"resources", {{"limits", {{"cpu", "1"}, {"memory", "2Gi"}}}}}};
  json head = container;
  head["name"] = "ray-head";
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", "big"}, {"namespace", "default"}}},
          {"spec",
           {{"rayVersion", "2.60.0"},
            {"headGroupSpec",
             {{"rayStartParams", json::object()},
              {"template", {{"spec", {{"containers", json::array({head})}}}}}}},
            {"workerGroupSpecs",
             json::array({{{"groupName", "workers"},
                           {"replicas", replicas},
                           {"maxReplicas", replicas},
                           {"rayStartParams", json::object()},
                           {"template", {{"spec", {{"containers", json::array({container})}}}}}}})}}}};
}

// Counted under the simulated server's lock without copying a Pod (a list would copy every one
// and the copies' allocator slack would be counted as the operator's).
size_t podCount(sim::SimKube& kube) {
  size_t pods = 0;
  kube.listWhere("Pod", [&](const json&) { return ++pods, false; });
  return pods;
}

}  // namespace

json runClusterScale(const ClusterScaleOptions& o) {
  spdlog::set_level(spdlog::level::warn);
  SystemClock clock;
  sim::SimKube kube(clock);
  sim::SimRay ray(kube, clock);
  sim::SimWorld world(kube, ray, clock, {0, 0});
  std::filesystem::remove_all(o.dir);
  wal::JournalOptions jo;
  jo.syncAsLazy = true;
  auto journal = wal::Journal::open(o.dir + "/journal", events::journalOptions(jo));
  runtime::StackOptions so;
  so.cacheSyncTimeout = std::chrono::seconds(10);
  auto stack = std::make_unique<runtime::Stack>(*journal, kube, ray, clock, so);
  stack->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  double idle = rssMb();
  auto start = std::chrono::steady_clock::now();
  kube.create("RayCluster", bigCluster(o.replicas));
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (podCount(kube) < 1000 && elapsed() < o.timeoutSeconds)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  double firstThousand = rssMb();
  double firstThousandSeconds = elapsed();
  size_t want = size_t(o.replicas) + 1;
  while (podCount(kube) < want && elapsed() < o.timeoutSeconds) {
    world.advance();  // the simulated kubelet starts the Pods, as it would the real ones
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  double seconds = elapsed();
  size_t pods = podCount(kube);
  double all = rssMb();
  double heapAll = heapInUseMb();
  stack->stop();
  // What remains without the operator is the simulated cluster holding the Pods: the
  // difference is the operator's own share (cache index, queues, journal, allocator slack).
  stack.reset();
  journal.reset();
  malloc_trim(0);
  double worldOnly = rssMb();
  double heapWorldOnly = heapInUseMb();
  std::filesystem::remove_all(o.dir);
  if (pods < want)
    throw std::runtime_error("only " + std::to_string(pods) + " of " + std::to_string(want) +
                             " Pods after " + std::to_string(seconds) + " s");
  return {{"replicas", o.replicas},
          {"idle_rss_mb", idle},
          {"rss_above_idle_mb_at_1000_pods", firstThousand - idle},
          {"seconds_to_1000_pods", firstThousandSeconds},
          {"rss_above_idle_mb_all_pods", all - idle},
          {"seconds_to_all_pods", seconds},
          {"pods", pods},
          {"kb_per_pod_all_pods", 1024.0 * (all - idle) / double(pods)},
          {"operator_rss_mb_all_pods", all - worldOnly},
          {"operator_heap_mb_all_pods", heapAll - heapWorldOnly},
          {"simulated_cluster_rss_mb_all_pods", worldOnly - idle},
          {"note",
           "one process: rss_above_idle counts the simulated API server's Pods too; "
           "operator_rss is what is freed when the operator (stack, cache, journal) is gone"}};
}

}  // namespace rayjournal::bench
