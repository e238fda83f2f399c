// rayjournal-operator: the RayJob operator. With no --kubeconfig (and not in a pod) it runs
// against the embedded simulated cluster.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "operator/EmbeddedRunner.h"

int main(int argc, char** argv) {
  CLI::App app{
      "rayjournal-operator: an event-sourced Kubernetes operator for Ray jobs (KubeRay RayJob "
      "semantics)"};
  rayjournal::operator_::EmbeddedOptions options;
  std::string kubeconfig, logFormat = "text", logLevel = "info";
  int64_t requeueMs = 3000;
  app.add_option("--journal-dir", options.journalDir, "write-ahead journal directory (RocksDB)")
      ->capture_default_str();
  app.add_option("--cluster-dir", options.clusterDir, "embedded simulated cluster store")
      ->capture_default_str();
  app.add_option(
      "--apply", options.apply,
      "RayJob manifest file or directory of YAML to create/update in the embedded cluster");
  app.add_flag("--exit-when-idle", options.exitWhenIdle,
               "exit 0 once every RayJob is at rest and no work is scheduled");
  app.add_option("--summary-json", options.summaryJson,
                 "write one JSON object per RayJob to this file at exit");
  app.add_option("--workers", options.manager.workers, "reconcile workers")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_flag("--salvage-journal", options.salvageJournal,
               "on a corrupt journal, keep the readable prefix and continue");
  app.add_option("--timeout", options.timeoutSeconds,
                 "with --exit-when-idle: give up (exit 4) after this many seconds");
  app.add_option("--requeue-ms", requeueMs, "RayJob poll interval (KubeRay: 3000)")
      ->capture_default_str();
  app.add_option("--checkpoint-every", options.manager.checkpointEveryRecords,
                 "checkpoint every N journal records")
      ->capture_default_str();
  app.add_option("--kubeconfig", kubeconfig, "run against a real cluster (not in this build yet)");
  app.add_option("--log-format", logFormat, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--log-level", logLevel, "trace, debug, info, warn, error")->capture_default_str();
  app.add_flag("!--no-progress", options.progress,
               "do not print the live progress table on a terminal");
  CLI11_PARSE(app, argc, argv);

  auto logger = spdlog::stderr_color_mt("rayjournal");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(logLevel));
  if (logFormat == "json") {
    spdlog::set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","msg":"%v"})",
                        spdlog::pattern_time_type::utc);
  }
  if (!kubeconfig.empty() || std::getenv("KUBERNETES_SERVICE_HOST")) {
    spdlog::error(
        "a real Kubernetes cluster was requested (--kubeconfig or in-cluster), but the real "
        "Kubernetes adapter "
        "is not part of this build yet; run without --kubeconfig to use the embedded simulated "
        "cluster");
    return 2;
  }
  options.manager.decide.requeueMs = requeueMs;
  if (const char* v = std::getenv("DELETE_RAYJOB_CR_AFTER_JOB_FINISHES")) {
    std::string s(v);
    for (auto& ch : s) ch = char(std::tolower(ch));
    options.manager.decide.deleteRayJobAfterJobFinishes = s == "true";
  }
  return rayjournal::operator_::runEmbedded(options);
}
