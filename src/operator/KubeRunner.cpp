#include "operator/KubeRunner.h"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>

#include "controller/RayClusterController.h"
#include "wal/JournalError.h"

namespace rayjournal::operator_ {
namespace {

std::mutex gMu;
std::condition_variable gCv;
volatile std::sig_atomic_t gSignal = 0;
std::atomic<bool> gLostLeadership{false};

void onSignal(int signal) {
  gSignal = signal;
}

// Waits for SIGTERM/SIGINT or lost leadership: the handler only sets a flag, this thread polls
// it each second (or is woken) and runs the periodic checkpoint.
void waitForStop(controller::Manager& manager) {
  std::unique_lock lock(gMu);
  while (!gSignal && !gLostLeadership) {
    gCv.wait_for(lock, std::chrono::seconds(1));
    manager.maybeCheckpoint();
  }
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
  std::unique_ptr<wal::Journal> journal;
  try {
    wal::JournalOptions jo;
    jo.salvage = options.salvageJournal;
    journal = wal::Journal::open(options.journalDir, jo);
  } catch (const wal::JournalError& e) {
    spdlog::error("cannot open the journal: {}", e.what());
    return 3;
  }
  std::unique_ptr<kube::LeaderElector> leader;
  if (options.leaderElect) {
    kube::LeaderElectionOptions lo = options.leader;
    if (lo.ns.empty()) lo.ns = config.defaultNamespace;
    leader = std::make_unique<kube::LeaderElector>(*kube, lo);
    std::thread waiter([&] {
      while (!gSignal && !leader->isLeader())
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (gSignal) leader->stop();
    });
    bool won = leader->acquire();
    waiter.join();
    if (!won) {
      spdlog::info("stopped before becoming the leader");
      return 0;
    }
  }
  ray::RayHttpClient ray(options.ray);
  SystemClock clock;
  controller::Manager manager(*journal, *kube, ray, clock, options.manager);
  if (leader) {
    manager.executor().mayAct = [&leader] { return leader->isLeader(); };
    leader->startRenewing([] {
      gLostLeadership = true;
      gCv.notify_all();
    });
  }
  std::unique_ptr<controller::RayClusterController> clusters;
  if (options.manageRayClusters) {
    clusters = std::make_unique<controller::RayClusterController>(*kube, clock);
    clusters->start();
  }
  manager.start();
  spdlog::info("running: {} workers, journal {}", options.manager.workers, journal->describe());
  waitForStop(manager);
  if (gLostLeadership)
    spdlog::error("leadership lost: stopping (side effects were gated off when it was lost)");
  else
    spdlog::info("signal {} received: stopping (no new side effects after this line)",
                 int(gSignal));
  kube->stopWatches();
  manager.stop();
  if (clusters) clusters->stop();
  manager.maybeCheckpoint(true);
  if (leader) leader->stop();
  spdlog::info("stopped after {} reconciles; journal at seq {}", manager.reconciles(),
               journal->latestSeq());
  return gLostLeadership ? 1 : 0;
}

}  // namespace rayjournal::operator_
