// Runs the operator against the embedded simulated cluster: opens the journal and the cluster
// store, applies manifests, runs the operator's Stack and the simulated world until stopped (or idle,
// with exitWhenIdle), prints progress, and writes the summary JSON. Blocking.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "operator/HistoryUi.h"
#include "operator/JournalUpkeep.h"
#include "operator/LiveTable.h"
#include "runtime/Stack.h"

namespace rayjournal::operator_ {

struct EmbeddedOptions {
  std::string journalDir = "./rayjournal-data/journal";
  std::string clusterDir = "./rayjournal-data/cluster";
  std::vector<std::string> apply;
  bool exitWhenIdle = false;
  std::string summaryJson;
  bool salvageJournal = false;
  UpkeepOptions upkeep;  // retention and scrub (the clock and in-doubt source are the runner's)
  double timeoutSeconds = 0;  // 0: none
  bool progress = true;
  std::string metricsAddress;  // empty: no /metrics, /healthz, /readyz
  HistoryUiAddress ui;
  runtime::StackOptions stack;
  // On a terminal: the live table is drawn here (null: progress lines as log lines), in
  // colour unless --no-color or NO_COLOR; the decision log went to logFile.
  LiveScreen* screen = nullptr;
  bool colour = true;
  std::string logFile;
};

// Returns the process exit code.
int runEmbedded(const EmbeddedOptions& options);

// A RayJob's progress line (namespace, name, jobStatus, jobDeploymentStatus, attempt,
// rayClusterName, reason of its summary), printed when it changes.
std::string progressLine(const nlohmann::json& summary);

}  // namespace rayjournal::operator_
