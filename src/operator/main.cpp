// rayjournal-operator: the RayJob operator. With --kubeconfig (or in a pod) it runs against
// that Kubernetes cluster; otherwise against the embedded simulated cluster.
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/Allocator.h"
#include "adapters/CrashReport.h"
#include "operator/EmbeddedRunner.h"
#include "operator/KubeRayEnvironment.h"
#include "operator/KubeRunner.h"
#include "operator/LiveTable.h"
#include "operator/OperatorConfig.h"
#include "model/Syntax.h"

namespace {

using rayjournal::operator_::EmbeddedOptions;
using rayjournal::operator_::KubeOptions;

// Everything the command line sets, before it is split into the two runners' options.
struct Flags {
  EmbeddedOptions embedded;
  KubeOptions kube;
  std::string kubeconfig, logFormat = "text", logLevel = "info", metricsAddress, featureGates,
      watchNamespace, events = "all";
  bool verbose = false, noColor = false;
  bool forceEmbedded = false;
  int64_t kubeTimeoutMs = 30000, rayTimeoutMs = 5000, requeueMs = 3000, rayAnswerReuseMs = 1000;
  int64_t stopConfirmSeconds = 60;
  double leaseS = 15, renewS = 10, retryS = 2, retentionHours = 168;
  CLI::Option* metricsOption = nullptr;
  std::string uiAddress = "127.0.0.1:8090";
  CLI::Option* uiOption = nullptr;
  std::string configFile, batchScheduler, logFile, logFileFormat = "json";
  bool enableBatchScheduler = false, metricsFromConfig = false;
  std::optional<rayjournal::operator_::OperatorConfig> config;
};

void addJournalFlags(CLI::App& app, Flags& f) {
  EmbeddedOptions& options = f.embedded;
  app.add_flag("--salvage-journal", options.salvageJournal,
               "on a damaged journal, rebuild it from every readable record (the original is "
               "kept beside it, what was lost is logged and journaled) and continue");
  app.add_option("--journal-retention-hours", f.retentionHours,
                 "prune journal history older than this (never what the newest checkpoint or an "
                 "intent in doubt needs); 0 keeps all")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--journal-max-bytes", options.upkeep.maxBytes,
                 "also prune the oldest history while the journal is larger than this (0: no "
                 "limit)")
      ->capture_default_str();
  app.add_option("--journal-scrub-rate", options.upkeep.scrubRecordsPerSecond,
                 "records per second the background scrub re-reads to find damaged history "
                 "early (0: off)")
      ->capture_default_str();
  app.add_option("--checkpoint-every", options.stack.checkpointEveryRecords,
                 "checkpoint every N journal records")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

void addOperatorFlags(CLI::App& app, Flags& f) {
  EmbeddedOptions& options = f.embedded;
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
  app.add_option("--workers", options.stack.workers, "RayJob reconcile workers")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--raycluster-workers", options.stack.clusterWorkers,
                 "RayCluster reconcile workers")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--events", f.events,
                 "all: the Events KubeRay posts; warnings: only Warning Events (the Normal ones, a "
                 "child created or deleted as planned, stay in the journal; a third of the API "
                 "requests of a RayJob's lifecycle)")
      ->capture_default_str()
      ->check(CLI::IsMember({"all", "warnings"}));
  app.add_option("--max-batch", options.stack.maxBatch,
                 "ready keys one worker reconciles together; one journal fsync makes all their "
                 "intents durable (1: one key at a time)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--timeout", options.timeoutSeconds,
                 "with --exit-when-idle: give up (exit 4) after this many seconds")
      ->check(CLI::PositiveNumber);
  // Zero or negative intervals would be a busy loop: refused, as every count and duration.
  app.add_option("--stop-confirm-timeout-seconds", f.stopConfirmSeconds,
                 "how long a deleted RayJob's Ray job stop is retried until Ray confirms it "
                 "(at least 3 attempts; KubeRay tries once)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--requeue-ms", f.requeueMs, "RayJob poll interval (KubeRay: 3000)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--ray-answer-reuse-ms", f.rayAnswerReuseMs,
                 "a Running RayJob's dashboard is asked at most once in this many ms: a reconcile "
                 "sooner (the echo of its own status write) decides from the last answer (0: ask "
                 "on every reconcile, as KubeRay does)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("!--no-raycluster-controller", options.stack.manageRayClusters,
               "do not reconcile RayClusters (Pods, head Service, status), in either mode: "
               "another operator (KubeRay) does");
  app.add_flag("!--no-progress", options.progress,
               "do not print the live progress table on a terminal");
  app.add_option("--feature-gates", f.featureGates,
                 "KubeRay's feature gates, Name=bool,...: RayJobDeletionPolicy (default true), "
                 "RayClusterStatusConditions (true), SidecarSubmitterRestart (false; true needs "
                 "Kubernetes >= 1.35), GCSFaultToleranceEmbeddedStorage (false; the embedded "
                 "RocksDB GCS store, Ray >= 2.60); KubeRay's other gates are accepted and have "
                 "no effect");
}

void addClusterFlags(CLI::App& app, Flags& f) {
  KubeOptions& kubeOptions = f.kube;
  app.add_option("--kubeconfig", f.kubeconfig,
                 "run against this Kubernetes cluster (default: in-cluster when in a pod, else "
                 "the embedded simulated cluster)");
  app.add_option("--context", kubeOptions.context, "kubeconfig context (default: current)");
  app.add_flag("--embedded", f.forceEmbedded, "use the embedded simulated cluster even in a pod");
  app.add_option("--kube-api-qps", kubeOptions.kube.qps, "client-side rate limit per resource kind, as KubeRay's --qps (<= 0: none)")
      ->capture_default_str();
  app.add_option("--kube-api-burst", kubeOptions.kube.burst, "client-side burst per resource kind, as KubeRay's --burst")
      ->capture_default_str();
  app.add_option("--kube-api-timeout-ms", f.kubeTimeoutMs, "timeout of each API request")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--ray-dashboard-address", kubeOptions.ray.dashboardOverride,
                 "host:port of the Ray dashboard for every RayJob, instead of the head Service "
                 "(out-of-cluster runs, tests)");
  app.add_flag("--use-kubernetes-proxy", kubeOptions.useKubernetesProxy,
               "reach Ray dashboards through the API server's service proxy (the operator runs "
               "outside the cluster network)");
  app.add_option("--ray-timeout-ms", f.rayTimeoutMs, "timeout of each Ray Jobs API request")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  f.metricsOption =
      app.add_option(
             "--metrics-bind-address", f.metricsAddress,
             "host:port or :port serving /metrics, /healthz, /readyz (default :8080 against a real "
             "cluster, off in embedded mode; 0 disables; the last one given wins)")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  f.uiOption = app.add_option("--ui-bind-address", f.uiAddress,
                              "host:port of the read-only history UI and its JSON API (0 "
                              "disables; a taken default port only warns)")
                   ->capture_default_str();
  app.add_option("--watch-namespace", f.watchNamespace,
                 "namespaces to watch, separated by commas, as KubeRay's flag (default: all)");
  app.add_option("--shard-count", kubeOptions.shardCount,
                 "replicas sharing the RayJobs (StatefulSet replicas)")
      ->capture_default_str()
      ->check(CLI::Range(1, 32));
  app.add_option("--shard-index", kubeOptions.shardIndex,
                 "this replica's shard (default: the ordinal of the pod name in $HOSTNAME)");
}

void addSharedClusterFlags(CLI::App& app, Flags& f) {
  app.add_option("--config", f.configFile,
                 "KubeRay's configuration file (apiVersion config.ray.io/v1alpha1, kind "
                 "Configuration): its fields replace the flags they name (docs/compatibility.md)");
  app.add_option("--batch-scheduler", f.batchScheduler,
                 "KubeRay's gang scheduler integration: volcano or yunikorn (scheduler-plugins and "
                 "kai-scheduler are not built yet: refused)");
  app.add_flag("--enable-batch-scheduler", f.enableBatchScheduler,
               "KubeRay's deprecated form of --batch-scheduler volcano");
}

void addLeaderAndLogFlags(CLI::App& app, Flags& f) {
  KubeOptions& kubeOptions = f.kube;
  app.add_flag("--leader-elect", kubeOptions.leaderElect,
               "hold a coordination.k8s.io/v1 Lease before acting (run several replicas safely)");
  app.add_option("--leader-elect-namespace", kubeOptions.leader.ns,
                 "namespace of the Lease (default: the pod's / kubeconfig context's namespace)");
  app.add_option("--leader-elect-id", kubeOptions.leader.name, "name of the Lease")
      ->capture_default_str();
  app.add_option("--leader-elect-identity", kubeOptions.leader.identity,
                 "this candidate's identity (default: hostname_ and 16 random hex digits)");
  app.add_option("--leader-elect-lease-duration", f.leaseS, "seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--leader-elect-renew-deadline", f.renewS, "seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--leader-elect-retry-period", f.retryS, "seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--log-format", f.logFormat, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--log-level", f.logLevel, "trace, debug, info, warn, error")->capture_default_str();
  app.add_flag("--verbose", f.verbose,
               "embedded mode on a terminal: decision log lines on the screen instead of the "
               "live table (they go to <data dir>/operator.log otherwise)");
  app.add_flag("--no-color", f.noColor, "no colour in the live table (also: NO_COLOR set)");
}

// The terminal of the live table. Built before main, so it outlives spdlog's registry (built on
// first use, in main) and the sink that writes to it.
rayjournal::operator_::LiveScreen gScreen(std::cout);

// Warnings and errors reach the screen above the live table; the rest goes to the log file.
class ScreenSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit ScreenSink(rayjournal::operator_::LiveScreen& screen) : screen_(screen) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t text;
    formatter_->format(msg, text);
    std::string line = fmt::to_string(text);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    screen_.above(line);
  }
  void flush_() override {}

 private:
  rayjournal::operator_::LiveScreen& screen_;
};

// The embedded demo on a terminal, text logs and no --verbose: the live table, and the decision
// log in a file beside the journal (its path printed once).
bool setUpLiveTable(Flags& f, rayjournal::operator_::LiveScreen& screen) {
  const bool embedded = f.forceEmbedded || (f.kubeconfig.empty() && !std::getenv("KUBERNETES_SERVICE_HOST"));
  if (!embedded || !f.embedded.progress || f.verbose || f.logFormat != "text" ||
      !isatty(STDOUT_FILENO))
    return false;
  std::filesystem::path data = std::filesystem::path(f.embedded.journalDir).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(data.empty() ? "." : data, ec);
  const std::string logFile = (data.empty() ? std::filesystem::path(".") : data) / "operator.log";
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(logFile);
  auto warnings = std::make_shared<ScreenSink>(screen);
  warnings->set_level(spdlog::level::warn);
  auto logger = std::make_shared<spdlog::logger>("rayjournal", spdlog::sinks_init_list{file, warnings});
  logger->set_level(spdlog::level::from_str(f.logLevel));
  spdlog::set_default_logger(logger);
  f.embedded.screen = &screen;
  f.embedded.colour = !f.noColor && !std::getenv("NO_COLOR");
  f.embedded.logFile = logFile;
  std::cout << "rayjournal: the decision log goes to " << logFile << " (--verbose shows it here)\n";
  return true;
}

// Every flag can also come from the environment: --journal-dir is RAYJOURNAL_JOURNAL_DIR.
void bindEnvironment(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    std::string name = option->get_single_name();
    if (name.empty() || name == "help") continue;
    std::string env = "RAYJOURNAL_";
    for (char ch : name)
      env += ch == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(ch)));
    option->envname(env);
  }
}

constexpr const char* kJsonLogPattern = R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","msg":"%v"})";

// stderr, and the configuration file's logFile beside it (each in its own encoding).
void setUpLogging(const Flags& f) {
  auto logger = spdlog::stderr_color_mt("rayjournal");
  if (!f.logFile.empty()) {
    try {
      auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(f.logFile);
      logger->sinks().push_back(file);
    } catch (const spdlog::spdlog_ex& e) {
      std::cerr << "rayjournal-operator: logFile " << f.logFile << ": " << e.what()
                << " (logging to stderr only)\n";
    }
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(f.logLevel));
  auto& sinks = logger->sinks();
  for (size_t i = 0; i < sinks.size(); ++i) {
    const std::string& format = i == 0 ? f.logFormat : f.logFileFormat;
    if (format == "json")
      sinks[i]->set_formatter(std::make_unique<spdlog::pattern_formatter>(
          kJsonLogPattern, spdlog::pattern_time_type::utc));
  }
}

rayjournal::operator_::HistoryUiAddress historyUiAddress(const Flags& f) {
  return {f.uiAddress == "0" ? "" : f.uiAddress, f.uiOption->count() > 0};
}

// KubeRay's --watch-namespace: a comma-separated list, "" for all namespaces.
bool parseWatchNamespaces(const std::string& flag, std::vector<std::string>& out) {
  if (flag.empty()) return true;
  for (size_t start = 0;;) {
    size_t comma = flag.find(',', start);
    std::string ns = flag.substr(start, comma == std::string::npos ? comma : comma - start);
    if (ns.size() > 63 || !rayjournal::model::isDns1123Label(ns)) {
      spdlog::error("--watch-namespace {}: \"{}\" is not a namespace name (a DNS-1123 label)",
                    flag, ns);
      return false;
    }
    out.push_back(ns);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  spdlog::info("watching RayJobs, RayClusters and their children in namespaces: {}", flag);
  return true;
}

int runAgainstKubernetes(Flags& f) {
  KubeOptions& kubeOptions = f.kube;
  kubeOptions.kubeconfig = f.kubeconfig;
  kubeOptions.journalDir = f.embedded.journalDir;
  kubeOptions.salvageJournal = f.embedded.salvageJournal;
  kubeOptions.upkeep = f.embedded.upkeep;
  kubeOptions.stack = f.embedded.stack;
  kubeOptions.kube.timeout = std::chrono::milliseconds(f.kubeTimeoutMs);
  if (!parseWatchNamespaces(f.watchNamespace, kubeOptions.kube.watchNamespaces)) return 2;
  kubeOptions.ui = historyUiAddress(f);
  if (f.metricsOption->count() > 0 || f.metricsFromConfig)
    kubeOptions.metricsAddress = f.metricsAddress == "0" ? "" : f.metricsAddress;
  kubeOptions.leader.leaseDuration = std::chrono::milliseconds(int64_t(f.leaseS * 1000));
  kubeOptions.leader.renewDeadline = std::chrono::milliseconds(int64_t(f.renewS * 1000));
  kubeOptions.leader.retryPeriod = std::chrono::milliseconds(int64_t(f.retryS * 1000));
  if (f.renewS >= f.leaseS || f.retryS >= f.renewS) {
    spdlog::error("leader election needs retry period < renew deadline < lease duration");
    return 2;
  }
  kubeOptions.ray.timeout = std::chrono::milliseconds(f.rayTimeoutMs);
  if (const char* token = std::getenv("RAY_AUTH_TOKEN")) kubeOptions.ray.authToken = token;
  return rayjournal::operator_::runAgainstKubernetes(kubeOptions);
}

// KubeRay reads its flags or its configuration file, not both: a flag given beside a file that
// sets the same thing is ignored (KubeRay ignores it silently; this says so).
void noteOverride(const CLI::App& app, bool set, const char* flag, const char* field,
                  std::vector<std::string>& notes) {
  if (set && app.count(flag) > 0)
    notes.push_back(std::string(flag) + " is ignored: the configuration file sets " + field);
}

void applyServingConfig(const rayjournal::operator_::OperatorConfig& c, Flags& f) {
  if (c.metricsAddr) f.metricsAddress = *c.metricsAddr, f.metricsFromConfig = true;
  // KubeRay defaults the file's enableLeaderElection to true (SetDefaults_Configuration).
  f.kube.leaderElect = c.enableLeaderElection.value_or(true);
  if (c.leaderElectionNamespace) f.kube.leader.ns = *c.leaderElectionNamespace;
  if (c.reconcileConcurrency.value_or(0) > 0)
    f.embedded.stack.workers = f.embedded.stack.clusterWorkers = int(*c.reconcileConcurrency);
  if (c.watchNamespace) f.watchNamespace = *c.watchNamespace;
  if (c.logFile) f.logFile = *c.logFile;
  if (c.logFileEncoder) f.logFileFormat = *c.logFileEncoder == "console" ? "text" : "json";
  if (c.logStdoutEncoder) f.logFormat = *c.logStdoutEncoder == "console" ? "text" : "json";
  if (c.batchScheduler) f.batchScheduler = *c.batchScheduler;
  if (c.enableBatchScheduler) f.enableBatchScheduler = *c.enableBatchScheduler;
  if (c.useKubernetesProxy) f.kube.useKubernetesProxy = *c.useKubernetesProxy;
  if (c.qps) f.kube.kube.qps = *c.qps;
  if (c.burst) f.kube.kube.burst = int(*c.burst);
}

std::vector<std::string> applyConfig(const CLI::App& app, const rayjournal::operator_::OperatorConfig& c,
                                     Flags& f) {
  std::vector<std::string> notes = c.warnings;
  noteOverride(app, bool(c.metricsAddr), "--metrics-bind-address", "metricsAddr", notes);
  noteOverride(app, true, "--leader-elect", "enableLeaderElection (default true)", notes);
  noteOverride(app, bool(c.leaderElectionNamespace), "--leader-elect-namespace", "leaderElectionNamespace", notes);
  noteOverride(app, c.reconcileConcurrency.value_or(0) > 0, "--workers", "reconcileConcurrency", notes);
  noteOverride(app, c.reconcileConcurrency.value_or(0) > 0, "--raycluster-workers", "reconcileConcurrency", notes);
  noteOverride(app, bool(c.watchNamespace), "--watch-namespace", "watchNamespace", notes);
  noteOverride(app, bool(c.logStdoutEncoder), "--log-format", "logStdoutEncoder", notes);
  noteOverride(app, bool(c.batchScheduler), "--batch-scheduler", "batchScheduler", notes);
  noteOverride(app, bool(c.enableBatchScheduler), "--enable-batch-scheduler", "enableBatchScheduler", notes);
  noteOverride(app, bool(c.useKubernetesProxy), "--use-kubernetes-proxy", "useKubernetesProxy", notes);
  noteOverride(app, bool(c.qps), "--kube-api-qps", "qps", notes);
  noteOverride(app, bool(c.burst), "--kube-api-burst", "burst", notes);
  if (c.enableMetrics == false)
    notes.push_back("enableMetrics false: rayjournal still serves its kuberay_* metric families "
                    "(set --metrics-bind-address=0 to serve no metrics)");
  applyServingConfig(c, f);
  return notes;
}

// Reads --config before logging is set up (the file may choose the log format). Bounded: a
// configuration is a few kilobytes; more than 1 MiB is refused.
std::optional<rayjournal::operator_::OperatorConfig> loadConfigFile(const std::string& path,
                                                                     std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot read the configuration file: " + std::strerror(errno);
    return std::nullopt;
  }
  std::string text(1 << 20, '\0');
  in.read(text.data(), std::streamsize(text.size()));
  text.resize(size_t(in.gcount()));
  if (in.peek() != EOF) {
    error = path + ": the configuration file is larger than 1 MiB";
    return std::nullopt;
  }
  auto parsed = rayjournal::operator_::parseOperatorConfig(text, path);
  if (!parsed.error.empty()) {
    error = parsed.error;
    return std::nullopt;
  }
  return std::move(parsed.config);
}

void logPodDefaults(const std::string& file, const rayjournal::controller::PodDefaults& d) {
  auto count = [](const rayjournal::model::Document& list) {
    return list.isNull() ? size_t(0) : list.get().size();
  };
  spdlog::info("--config {}: every Ray Pod built gets {} head sidecar(s), {} worker sidecar(s), {} "
               "default env var(s) in its Ray container, {} label(s) and {} annotation(s) (env, "
               "labels and annotations only where the Pod does not set them)",
               file, count(d.headSidecars), count(d.workerSidecars), count(d.containerEnvs),
               d.labels.size(), d.annotations.size());
}

// KubeRay's ValidateBatchSchedulerConfig, then rayjournal's own limit: Volcano is built; the
// others are refused (a gang scheduler silently not applied is the deadlock it exists to
// prevent). KubeRay's deprecated --enable-batch-scheduler means Volcano.
bool checkBatchScheduler(Flags& f) {
  if (f.enableBatchScheduler && !f.batchScheduler.empty()) {
    spdlog::error("both feature flags enable-batch-scheduler (deprecated) and batch-scheduler are "
                  "set. Please use batch-scheduler only");
    return false;
  }
  static const std::set<std::string> known = {"volcano", "yunikorn", "scheduler-plugins", "kai-scheduler"};
  if (!f.batchScheduler.empty() && !known.contains(f.batchScheduler)) {
    spdlog::error("--batch-scheduler: scheduler is not supported, name={}", f.batchScheduler);
    return false;
  }
  if (f.enableBatchScheduler) {
    spdlog::warn("Feature flag enable-batch-scheduler is deprecated and will not be supported "
                 "soon. Use batch-scheduler instead. (Volcano's PodGroups are made)");
    f.batchScheduler = "volcano";
  }
  if (!f.batchScheduler.empty() && f.batchScheduler != "volcano" && f.batchScheduler != "yunikorn") {
    spdlog::error("--batch-scheduler {}: rayjournal builds Volcano's and YuniKorn's gangs only, "
                  "not yet {}'s (docs/compatibility.md); refused rather than run gang-less",
                  f.batchScheduler, f.batchScheduler);
    return false;
  }
  if (f.batchScheduler == "yunikorn")
    spdlog::info("--batch-scheduler yunikorn: every Ray Pod gets schedulerName yunikorn, its "
                 "application id and queue, and with ray.io/gang-scheduling-enabled its task groups");
  if (f.batchScheduler == "volcano")
    spdlog::info("--batch-scheduler volcano: every RayJob and standalone RayCluster gets a "
                 "PodGroup ray-<name>-pg before its first Pod, and every Ray Pod schedulerName "
                 "volcano");
  f.embedded.stack.decide.batchScheduler = f.batchScheduler;
  return true;
}

// The decision's settings: flags, KubeRay's environment variables and feature gates.
bool applyDecisionSettings(Flags& f) {
  rayjournal::controller::DecideConfig& decide = f.embedded.stack.decide;
  decide.requeueMs = f.requeueMs;
  decide.rayAnswerReuseMs = f.rayAnswerReuseMs;
  decide.stopConfirmTimeoutMs = f.stopConfirmSeconds * 1000;
  f.embedded.stack.normalEvents = f.events == "all";
  f.embedded.upkeep.keepMs = int64_t(f.retentionHours * 3600 * 1000);
  for (const std::string& line : rayjournal::operator_::applyKubeRayEnvironment(
           decide, [](const char* name) { return std::getenv(name); }))
    spdlog::info("KubeRay environment: {}", line);
  auto gates = rayjournal::controller::parseFeatureGates(f.featureGates);
  if (!gates.error.empty()) {
    spdlog::error("--feature-gates {}: {}", f.featureGates, gates.error);
    return false;
  }
  decide.gates = gates.gates;
  if (f.config) {
    if (f.config->deleteRayJobAfterJobFinishes)
      decide.deleteRayJobAfterJobFinishes = *f.config->deleteRayJobAfterJobFinishes;
    if (!f.config->podDefaults.empty())
      decide.podDefaults =
          std::make_shared<const rayjournal::controller::PodDefaults>(f.config->podDefaults);
  }
  for (const std::string& gate : gates.withoutEffect)
    spdlog::info("feature gate {} has no effect in rayjournal (it belongs to a KubeRay controller "
                 "rayjournal does not have)", gate);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  rayjournal::adapters::installCrashReport();
  rayjournal::adapters::configureAllocator();
  CLI::App app{
      "rayjournal-operator: an event-sourced Kubernetes operator for Ray jobs (KubeRay RayJob "
      "semantics)"};
  Flags f;
  addOperatorFlags(app, f);
  addJournalFlags(app, f);
  addClusterFlags(app, f);
  addLeaderAndLogFlags(app, f);
  addSharedClusterFlags(app, f);
  bindEnvironment(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and exit 0; any usage error is exit 2, as documented.
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::vector<std::string> configNotes;
  if (!f.configFile.empty()) {
    std::string error;
    f.config = loadConfigFile(f.configFile, error);
    if (!f.config) {
      std::cerr << "rayjournal-operator: --config " << error << "\n";
      return 2;
    }
    configNotes = applyConfig(app, *f.config, f);
  }
  setUpLogging(f);
  setUpLiveTable(f, gScreen);
  for (const std::string& note : configNotes) spdlog::warn("--config {}: {}", f.configFile, note);
  if (f.config) logPodDefaults(f.configFile, f.config->podDefaults);
  if (!checkBatchScheduler(f)) return 2;
  spdlog::info("allocator: {}", rayjournal::adapters::allocatorDescription());
  if (!applyDecisionSettings(f)) return 2;
  if (!f.forceEmbedded && (!f.kubeconfig.empty() || std::getenv("KUBERNETES_SERVICE_HOST")))
    return runAgainstKubernetes(f);
  if (f.metricsAddress != "0") f.embedded.metricsAddress = f.metricsAddress;
  f.embedded.ui = historyUiAddress(f);
  return rayjournal::operator_::runEmbedded(f.embedded);
}
