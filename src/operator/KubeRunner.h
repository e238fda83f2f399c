// Runs the operator against a real Kubernetes API server and real Ray dashboards: opens the
// journal, checks the API server answers (a clear error naming the server otherwise), recovers,
// starts the Stack (RayJob and, unless disabled, RayCluster controllers), and runs until
// SIGTERM/SIGINT, then stops the workers, checkpoints and closes the journal. With leader
// election it first waits for the Lease; losing it stops every side effect at once (the
// executor's gate) and ends the process with exit code 1. Blocking.
#pragma once

#include <string>

#include "adapters/kube/KubeRestClient.h"
#include "adapters/kube/LeaderElector.h"
#include "adapters/ray/RayHttpClient.h"
#include "operator/HistoryUi.h"
#include "operator/JournalUpkeep.h"
#include "runtime/Stack.h"

namespace rayjournal::operator_ {

struct KubeOptions {
  std::string kubeconfig;  // empty: in-cluster, or $KUBECONFIG / ~/.kube/config
  std::string context;
  std::string journalDir = "./rayjournal-data/journal";
  bool salvageJournal = false;
  UpkeepOptions upkeep;  // retention and scrub (the clock and in-doubt source are the runner's)
  bool useKubernetesProxy = false;
  bool leaderElect = false;
  kube::LeaderElectionOptions leader;
  std::string metricsAddress = ":8080";  // empty: no /metrics, /healthz, /readyz
  HistoryUiAddress ui;
  int shardCount = 1;
  int shardIndex = -1;  // -1: the ordinal of the pod name (HOSTNAME), or 0
  kube::KubeRestOptions kube;
  ray::RayHttpOptions ray;
  runtime::StackOptions stack;
};

// Returns the process exit code.
int runAgainstKubernetes(const KubeOptions& options);

}  // namespace rayjournal::operator_
