#include "operator/KubeRunner.h"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "adapters/CountingClients.h"
#include "operator/OperatorMetrics.h"
#include "operator/RunnerSupport.h"
#include "operator/ShardLeases.h"

namespace rayjournal::operator_ {
namespace {

std::mutex gMu;
std::condition_variable gCv;
volatile std::sig_atomic_t gSignal = 0;
std::atomic<bool> gLostLeadership{false};

void onSignal(int signal) {
  gSignal = signal;
}

void onLeadershipLost() {
  gLostLeadership = true;
  gCv.notify_all();
}

// Waits for SIGTERM/SIGINT or lost leadership: the handler only sets a flag, this thread polls
// it each second (or is woken) and runs the periodic checkpoint.
void waitForStop(runtime::Stack& stack) {
  std::unique_lock lock(gMu);
  while (!gSignal && !gLostLeadership) {
    gCv.wait_for(lock, std::chrono::seconds(1));
    stack.maybeCheckpoint();
  }
}

// Blocks until the single leader Lease is held; false if a signal came first.
bool becomeLeader(kube::LeaderElector& leader) {
  std::thread waiter([&] {
    while (!gSignal && !leader.isLeader())
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (gSignal) leader.stop();
  });
  bool won = leader.acquire();
  waiter.join();
  return won;
}

int shardIndexOf(const KubeOptions& options) {
  if (options.shardIndex >= 0) return options.shardIndex;
  const char* host = std::getenv("HOSTNAME");
  int ordinal = host ? ordinalOf(host) : -1;
  return ordinal >= 0 ? ordinal : 0;
}

}  // namespace

int runAgainstKubernetes(const KubeOptions& options) {
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  kube::KubeConfig config;
  try {
    config = kube::KubeConfig::resolve(options.kubeconfig, options.context);
  } catch (const std::exception& e) {
    spdlog::error("cannot configure the Kubernetes client: {}", e.what());
    return 2;
  }
  int shardIndex = shardIndexOf(options);
  if (options.shardCount < 1 || shardIndex >= options.shardCount) {
    spdlog::error("shard index {} is not below the shard count {}", shardIndex, options.shardCount);
    return 2;
  }
  kube::KubeRestOptions kubeOptions = options.kube;
  kubeOptions.watchSelectors["Job"] = "app.kubernetes.io/created-by=kuberay-operator";
  kubeOptions.watchSelectors["Pod"] = "ray.io/cluster";
  std::unique_ptr<kube::KubeRestClient> kube;
  try {
    kube = std::make_unique<kube::KubeRestClient>(config, kubeOptions);
    spdlog::info("Kubernetes API server {} ({}), {} from {}", config.server, kube->serverVersion(),
                 config.token.empty() && config.tokenFile.empty() ? "client certificate" : "token",
                 config.source);
  } catch (const std::exception& e) {
    spdlog::error("cannot use the Kubernetes API server {} from {}: {}", config.server,
                  config.source, e.what());
    return 5;
  }
  std::unique_ptr<wal::Journal> journal =
      openJournalOrLog(options.journalDir, options.salvageJournal);
  if (!journal) return 3;

  Metrics metrics;
  runtime::StackOptions stackOptions = options.stack;
  stackOptions.onReconcile = describeOperatorMetrics(metrics);
  stackOptions.cacheSyncTimeout = std::chrono::seconds(120);
  runtime::Stack* stackPtr = nullptr;
  kube::LeaderElectionOptions leaseOptions = options.leader;
  if (leaseOptions.ns.empty()) leaseOptions.ns = config.defaultNamespace;
  std::unique_ptr<ShardLeases> shards;
  if (options.shardCount > 1) {
    shards = std::make_unique<ShardLeases>(
        *kube, shardIndex, options.shardCount, leaseOptions,
        [&stackPtr] {
          if (stackPtr) stackPtr->resync();
        },
        onLeadershipLost);
    stackOptions.owns = [&shards](const std::string& key) { return shards->owns(key); };
    stackOptions.mayReconcile = [&shards](const std::string& key) { return shards->holds(key); };
  }

  controller::RecoveryReport recovery;
  std::atomic<bool> recovered{false};
  bool serving = true;
  auto status = startStatusServer(
      options.metricsAddress, metrics,
      [&] { return recovered && kube->synced() && !gLostLeadership; }, serving);
  if (!serving) return 2;

  std::unique_ptr<kube::LeaderElector> leader;
  if (options.leaderElect && !shards) {
    leader = std::make_unique<kube::LeaderElector>(*kube, leaseOptions);
    if (!becomeLeader(*leader)) {
      spdlog::info("stopped before becoming the leader");
      return 0;
    }
  }
  CallCounter calls;
  CountingKubeClient countedKube(*kube, calls);
  ray::RayHttpOptions rayOptions = options.ray;
  if (options.useKubernetesProxy) {
    rayOptions.kubernetesProxy = [&kube](const std::string& method, const std::string& path,
                                         const std::string& body, const http::Headers& headers) {
      return kube->raw(method, path, body, headers);
    };
  }
  ray::RayHttpClient rayClient(rayOptions);
  CountingRayClient countedRay(rayClient, calls);
  SystemClock clock;
  // Reads of the reconcile loops come from the Stack's watch-fed caches, not API calls.
  runtime::Stack stack(*journal, countedKube, countedRay, clock, stackOptions);
  stackPtr = &stack;
  if (leader) {
    stack.executor().mayAct = [&leader](const std::string&) { return leader->isLeader(); };
    leader->startRenewing(onLeadershipLost);
  }
  if (shards) {
    stack.executor().mayAct = [&shards](const std::string& key) { return shards->holds(key); };
  }
  addOperatorCollectors(metrics, {&stack, journal.get(), &calls, &recovery, [&]() -> double {
                                    if (shards) return shards->held();
                                    return !leader || leader->isLeader() ? 1.0 : 0.0;
                                  }});
  try {
    recovery = stack.start();
  } catch (const kube::ApiError& e) {
    spdlog::error("cannot fill the informer caches from {}: {}", config.server, e.what());
    return 5;
  }
  auto& cache = stack.cache();
  spdlog::info("informer caches synced: {} RayJobs, {} RayClusters, {} Jobs, {} Pods, {} Services",
               cache.size("RayJob"), cache.size("RayCluster"), cache.size("Job"), cache.size("Pod"),
               cache.size("Service"));
  recovered = true;
  if (shards) shards->start();
  spdlog::info("running: {} RayJob and {} RayCluster workers{}, journal {}", options.stack.workers,
               options.stack.clusterWorkers,
               options.stack.manageRayClusters ? "" : " (RayClusters left to another operator)",
               journal->describe());
  waitForStop(stack);
  if (gLostLeadership)
    spdlog::error("leadership lost: stopping (side effects were gated off when it was lost)");
  else
    spdlog::info("signal {} received: stopping (no new side effects after this line)",
                 int(gSignal));
  kube->stopWatches();
  stack.stop();
  stack.maybeCheckpoint(true);
  journal->sync();
  // Only now, with nothing in flight and the journal synced, may another process take over.
  if (leader) leader->stop();
  if (shards) shards->stop();
  if (status) status->stop();
  spdlog::info("stopped after {} RayJob and {} RayCluster reconciles; journal at seq {}",
               stack.reconciles(), stack.clusterReconciles(), journal->latestSeq());
  return gLostLeadership ? 1 : 0;
}

}  // namespace rayjournal::operator_
