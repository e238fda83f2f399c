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
#include "operator/StartupWatch.h"
#include "model/Version.h"

namespace rayjournal::operator_ {
namespace {

std::mutex gMu;
std::condition_variable gCv;
std::atomic<int> gSignal{0};  // lock-free, so async-signal-safe and readable from any thread
std::atomic<bool> gLostLeadership{false};

void onStopSignal(int signal) {
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
  return shardIndexFor(options.shardIndex, options.shardCount, std::getenv("HOSTNAME"));
}

// What one run against a cluster holds, from connection to shutdown.
struct KubeSession {
  kube::KubeConfig config;
  std::unique_ptr<kube::KubeRestClient> kube;
  std::unique_ptr<wal::Journal> journal;
  Metrics metrics;
  std::unique_ptr<ShardLeases> shards;
  std::unique_ptr<kube::LeaderElector> leader;
  runtime::Stack* stack = nullptr;
  controller::RecoveryReport recovery;
  std::atomic<bool> recovered{false};
  std::atomic<bool> journalOpen{false};  // s.journal may be read from other threads once true
  std::atomic<bool> waitingForJournalLock{false};
};

// The API server; returns the exit code of a failure, 0 when connected.
int connect(const KubeOptions& options, int shardIndex, KubeSession& s) {
  try {
    s.config = kube::KubeConfig::resolve(options.kubeconfig, options.context);
  } catch (const std::exception& e) {
    spdlog::error("cannot configure the Kubernetes client: {}", e.what());
    return 2;
  }
  if (options.shardCount < 1 || shardIndex >= options.shardCount) {
    spdlog::error("shard index {} is not below the shard count {}", shardIndex, options.shardCount);
    return 2;
  }
  kube::KubeRestOptions kubeOptions = options.kube;
  kubeOptions.watchSelectors["Job"] = "app.kubernetes.io/created-by=kuberay-operator";
  kubeOptions.watchSelectors["Pod"] = "ray.io/cluster";
  try {
    s.kube = std::make_unique<kube::KubeRestClient>(s.config, kubeOptions);
    const std::string version = s.kube->serverVersion();
    if (options.stack.decide.gates.sidecarSubmitterRestart && !model::versionAtLeast(version, 1, 35)) {
      // KubeRay's check: an older kubelet ignores the container restart policy, and a failed
      // sidecar would then fail the RayJob after the submitter-finished timeout.
      spdlog::error("SidecarSubmitterRestart feature gate requires K8s 1.35+: current version {} "
                    "is below 1.35",
                    version);
      return 2;
    }
    spdlog::info("Kubernetes API server {} ({}), {} from {}", s.config.server, version,
                 s.config.token.empty() && s.config.tokenFile.empty() ? "client certificate"
                                                                      : "token",
                 s.config.source);
  } catch (const std::exception& e) {
    spdlog::error("cannot use the Kubernetes API server {} from {}: {}", s.config.server,
                  s.config.source, e.what());
    return 5;
  }
  return 0;
}

// Opens the journal, waiting (not ready, and saying so) while another process holds it: the old
// container of a force-deleted Pod may still run on the same volume. The exit code of a failure.
int openJournal(const KubeOptions& options, KubeSession& s, StartupWatch& watch) {
  watch.phase("opening the journal " + options.journalDir);
  LockWait lockWait{[] { return gSignal == 0; },
                    [&s](bool waiting) { s.waitingForJournalLock = waiting; }};
  int code = 0;
  s.journal = openJournalOrLog(options.journalDir, options.salvageJournal, code, &lockWait);
  if (!s.journal) return gSignal ? 0 : code;
  s.journalOpen = true;
  return 0;
}

// With more than one shard, each replica holds the Leases of its shards and acts only for them.
void shardIfNeeded(const KubeOptions& options, int shardIndex,
                   const kube::LeaderElectionOptions& leaseOptions, KubeSession& s,
                   runtime::StackOptions& stackOptions) {
  if (options.shardCount <= 1) return;
  s.shards = std::make_unique<ShardLeases>(
      *s.kube, shardIndex, options.shardCount, leaseOptions,
      [&s] {
        if (s.stack) s.stack->resync();
      },
      onLeadershipLost);
  ShardLeases* shards = s.shards.get();
  stackOptions.owns = [shards](const std::string& key) { return shards->owns(key); };
  stackOptions.mayReconcile = [shards](const std::string& key) { return shards->holds(key); };
}

ray::RayHttpOptions rayOptionsFor(const KubeOptions& options, KubeSession& s) {
  ray::RayHttpOptions rayOptions = options.ray;
  if (options.useKubernetesProxy) {
    kube::KubeRestClient* kube = s.kube.get();
    rayOptions.kubernetesProxy = [kube](const std::string& method, const std::string& path,
                                        const std::string& body, const http::Headers& headers) {
      return kube->raw(method, path, body, headers);
    };
  }
  return rayOptions;
}

// Gates the Executor on leadership or the shard Leases and exports the operator's metrics.
void wireGates(KubeSession& s, runtime::Stack& stack, CallCounter& calls) {
  if (s.leader) {
    kube::LeaderElector* leader = s.leader.get();
    stack.executor().mayAct = [leader](const std::string&) { return leader->isLeader(); };
    leader->startRenewing(onLeadershipLost);
  }
  if (s.shards) {
    ShardLeases* shards = s.shards.get();
    stack.executor().mayAct = [shards](const std::string& key) { return shards->holds(key); };
  }
  addOperatorCollectors(s.metrics, {&stack, s.journal.get(), &calls, &s.recovery, [&s]() -> double {
                                      if (s.shards) return s.shards->held();
                                      return !s.leader || s.leader->isLeader() ? 1.0 : 0.0;
                                    }});
}

// Recovery and the cache sync, then work until a signal or lost leadership; the exit code.
int serve(const KubeOptions& options, KubeSession& s, runtime::Stack& stack, StartupWatch& watch) {
  watch.phase("recovering the journal and filling the informer caches from " + s.config.server);
  try {
    s.recovery = stack.start();
  } catch (const kube::ApiError& e) {
    spdlog::error("cannot fill the informer caches from {}: {}", s.config.server, e.what());
    return 5;
  }
  auto& cache = stack.cache();
  spdlog::info("informer caches synced: {} RayJobs, {} RayClusters, {} Jobs, {} Pods, {} Services",
               cache.size("RayJob"), cache.size("RayCluster"), cache.size("Job"), cache.size("Pod"),
               cache.size("Service"));
  s.recovered = true;
  watch.running();
  if (s.shards) s.shards->start();
  spdlog::info("running: {} RayJob and {} RayCluster workers{}, journal {}", options.stack.workers,
               options.stack.clusterWorkers,
               options.stack.manageRayClusters ? "" : " (RayClusters left to another operator)",
               s.journal->describe());
  SystemClock wallClock;
  JournalUpkeep upkeep(*s.journal, upkeepFor(options.upkeep, stack, wallClock));
  waitForStop(stack);
  if (gLostLeadership)
    spdlog::error("leadership lost: stopping (side effects were gated off when it was lost)");
  else
    spdlog::info("signal {} received: stopping (no new side effects after this line)",
                 int(gSignal));
  return gLostLeadership ? 1 : 0;
}

// Nothing in flight and the journal synced before another process may take over.
void shutDown(KubeSession& s, runtime::Stack& stack) {
  s.kube->stopWatches();
  stack.stop();
  stack.maybeCheckpoint(true);
  s.journal->sync();
  if (s.leader) s.leader->stop();
  if (s.shards) s.shards->stop();
  spdlog::info("stopped after {} RayJob and {} RayCluster reconciles; journal at seq {}",
               stack.reconciles(), stack.clusterReconciles(), s.journal->latestSeq());
}

}  // namespace

int runAgainstKubernetes(const KubeOptions& options) {
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  KubeSession s;
  StartupWatch watch([] { return int(gSignal); });
  watch.phase("connecting to the Kubernetes API server");
  int shardIndex = shardIndexOf(options);
  if (int failed = connect(options, shardIndex, s)) return failed;
  runtime::StackOptions stackOptions = options.stack;
  stackOptions.onReconcile = describeOperatorMetrics(s.metrics);
  stackOptions.cacheSyncTimeout = std::chrono::seconds(120);
  kube::LeaderElectionOptions leaseOptions = options.leader;
  if (leaseOptions.ns.empty()) leaseOptions.ns = s.config.defaultNamespace;
  shardIfNeeded(options, shardIndex, leaseOptions, s, stackOptions);
  bool serving = true;
  auto status = startStatusServer(
      options.metricsAddress, s.metrics,
      [&s] {
        return s.journalOpen && s.recovered && s.kube->synced() && !gLostLeadership &&
               !s.journal->unwritable();
      },
      serving,
      [&s, dir = options.journalDir]() -> std::string {
        if (!s.waitingForJournalLock) return "";
        return "waiting for the journal " + dir + ": another process holds its lock";
      });
  if (!serving) return 2;
  if (int failed = openJournal(options, s, watch)) return failed;
  if (!s.journal) return 0;  // stopped by a signal while waiting for the lock
  auto history = startHistoryUi(options.ui, *s.journal, serving);
  if (!serving) return 2;
  if (options.leaderElect && !s.shards) {
    s.leader = std::make_unique<kube::LeaderElector>(*s.kube, leaseOptions);
    watch.phase("waiting to become the leader (Lease " + leaseOptions.ns + "/" +
                    leaseOptions.name + ")",
                true);
    if (!becomeLeader(*s.leader)) {
      spdlog::info("stopped before becoming the leader");
      return 0;
    }
  }
  CallCounter calls;
  CountingKubeClient countedKube(*s.kube, calls);
  ray::RayHttpClient rayClient(rayOptionsFor(options, s));
  CountingRayClient countedRay(rayClient, calls);
  SystemClock clock;
  // Reads of the reconcile loops come from the Stack's watch-fed caches, not API calls.
  runtime::Stack stack(*s.journal, countedKube, countedRay, clock, stackOptions);
  s.stack = &stack;
  wireGates(s, stack, calls);
  int code = serve(options, s, stack, watch);
  if (s.recovered) shutDown(s, stack);
  if (status) status->stop();
  return code;
}

}  // namespace rayjournal::operator_
