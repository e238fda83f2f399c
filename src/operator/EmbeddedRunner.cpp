#include "operator/EmbeddedRunner.h"

#include <spdlog/spdlog.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "adapters/CountingClients.h"
#include "adapters/TimeFormat.h"
#include "adapters/YamlJson.h"
#include "adapters/sim/SimWorld.h"
#include "model/JsonAccess.h"
#include "operator/OperatorMetrics.h"
#include "operator/RunnerSupport.h"
#include "operator/StartupWatch.h"

namespace rayjournal::operator_ {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::atomic<bool> gStop{false};
void onEmbeddedStopSignal(int) {
  gStop = true;
}

// The YAML files --apply names: the file itself, or a directory's *.yaml / *.yml. Anything that
// cannot be read is an error naming it, never a silent skip.
std::vector<std::string> manifestFiles(const std::string& path) {
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path)) {
      auto ext = e.path().extension();
      if (ext == ".yaml" || ext == ".yml") files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
  } else if (fs::exists(fs::symlink_status(path, ec))) {
    files.push_back(path);
  } else {
    throw std::runtime_error("--apply " + path + ": no such file or directory");
  }
  return files;
}

// A manifest's text, refused when it is not a regular readable file (a FIFO would block the
// start-up, a dangling link or a permission error would be lost) or larger than an API server
// would take in one request.
std::string readManifest(const std::string& file) {
  constexpr uintmax_t kMaxManifestBytes = 3 << 20;  // kube-apiserver's request limit
  std::error_code ec;
  auto status = fs::status(file, ec);
  if (ec || !fs::exists(status))
    throw std::runtime_error("--apply " + file + ": cannot read it (a dangling link?)");
  if (!fs::is_regular_file(status))
    throw std::runtime_error("--apply " + file + ": not a regular file");
  if (fs::file_size(file, ec) > kMaxManifestBytes)
    throw std::runtime_error("--apply " + file + ": larger than 3 MiB, more than an API server "
                             "accepts in one request");
  std::ifstream in(file);
  if (!in) throw std::runtime_error("--apply " + file + ": cannot open it: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Holds <cluster-dir>/LOCK (flock) for the process's lifetime: two embedded operators on one
// cluster directory would each act on the other's objects. Returns false (logged) when taken.
bool lockClusterDir(const std::string& dir) {
  if (dir.empty()) return true;  // an in-memory cluster is nobody else's
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string path = dir + "/LOCK";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    spdlog::error("cluster directory {}: cannot open {}: {}", dir, path, std::strerror(errno));
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char owner[64] = {0};
    ssize_t n = ::pread(fd, owner, sizeof(owner) - 1, 0);
    std::string who = n > 0 ? std::string(owner, size_t(n)) : "";
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    spdlog::error("cluster directory {} is used by another operator{}; give each one its own "
                  "--cluster-dir", dir, who.empty() ? "" : " (" + who + ")");
    ::close(fd);
    return false;
  }
  std::string me = "pid " + std::to_string(getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) < 0)
    spdlog::debug("cluster directory {}: cannot record the owner in {}", dir, path);
  return true;  // fd stays open: the lock lasts until the process exits
}

bool dnsLabel(const std::string& s, size_t max, bool dots) {
  if (s.empty() || s.size() > max) return false;
  auto ok = [&](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.'); };
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(s.front()) && alnum(s.back()) && std::all_of(s.begin(), s.end(), ok);
}

// What a real API server refuses before the object exists (a 4xx for kubectl apply): checked
// here so that the embedded cluster never holds an object a real one would not.
void admit(const json& doc, const std::string& kind, const std::string& file) {
  const json& meta = model::objectAt(doc, "metadata");
  std::string what = file + ": " + kind + " " + model::stringAt(meta, "name");
  std::string apiVersion = doc.value("apiVersion", "");
  if (apiVersion != "ray.io/v1" && apiVersion != "ray.io/v1alpha1")
    throw std::runtime_error(what + ": apiVersion '" + apiVersion +
                             "' is not served (KubeRay v1.7.0 serves ray.io/v1 and ray.io/v1alpha1)");
  std::string ns = model::stringAt(meta, "namespace");
  if (meta.contains("namespace") && !dnsLabel(ns, 63, false))
    throw std::runtime_error(what + ": namespace '" + ns +
                             "' is not a DNS-1123 label (lower-case letters, digits, '-', at most 63)");
  std::string name = model::stringAt(meta, "name");
  if (!name.empty() && !dnsLabel(name, 253, true))
    throw std::runtime_error(what + ": metadata.name is not a DNS-1123 subdomain");
  const json& annotations = model::objectAt(meta, "annotations");
  if (annotations.contains(sim::kSimDurationAnnotation) &&
      !parseDurationMs(model::stringAt(annotations, sim::kSimDurationAnnotation)))
    throw std::runtime_error(what + ": annotation " + sim::kSimDurationAnnotation + " '" +
                             model::stringAt(annotations, sim::kSimDurationAnnotation) +
                             "' is not a duration (500ms, 2s, 1m)");
}

// Creates or updates one RayJob manifest (kubectl apply, roughly: spec, labels, annotations).
void applyDocument(sim::SimKube& kube, json doc, const std::string& file) {
  std::string kind = doc.value("kind", "");
  if (kind == "RayCluster" || kind == "RayJob") admit(doc, kind, file);
  if (kind == "RayCluster") {
    // A cluster for clusterSelector RayJobs (the operator's RayCluster reconciler provisions it).
    if (!doc["metadata"].contains("namespace")) doc["metadata"]["namespace"] = "default";
    if (!kube.get("RayCluster", doc["metadata"]["namespace"], doc["metadata"].value("name", ""))) {
      kube.create("RayCluster", doc);
      spdlog::info("applied {}: RayCluster {} created", file, doc["metadata"].value("name", ""));
    }
    return;
  }
  if (kind != "RayJob") {
    spdlog::warn("{}: skipping {} (only RayJob and RayCluster manifests are applied)", file,
                 kind.empty() ? "<no kind>" : kind);
    return;
  }
  const json& meta = model::objectAt(doc, "metadata");
  if (model::stringAt(meta, "name").empty() && !model::stringAt(meta, "generateName").empty()) {
    // As `kubectl create`: the API server names it, and every apply makes a new RayJob.
    if (!meta.contains("namespace")) doc["metadata"]["namespace"] = "default";
    auto created = kube.create("RayJob", doc);
    spdlog::info("applied {}: RayJob {}/{} created (generateName)", file,
                 model::stringAt(model::objectAt(*created, "metadata"), "namespace"),
                 model::stringAt(model::objectAt(*created, "metadata"), "name"));
    return;
  }
  if (model::stringAt(meta, "name").empty()) {
    throw std::runtime_error(file + ": RayJob without metadata.name or metadata.generateName");
  }
  if (!doc["metadata"].contains("namespace")) doc["metadata"]["namespace"] = "default";
  std::string ns = doc["metadata"]["namespace"], name = doc["metadata"]["name"];
  auto existing = kube.get("RayJob", ns, name);
  if (!existing) {
    kube.create("RayJob", doc);
    spdlog::info("applied {}: RayJob {}/{} created", file, ns, name);
    return;
  }
  json next = *existing;
  next["spec"] = doc.value("spec", json::object());
  for (const char* k : {"labels", "annotations"}) {
    if (doc["metadata"].contains(k)) next["metadata"][k] = doc["metadata"][k];
  }
  if (next != *existing) {
    kube.update("RayJob", next);
    spdlog::info("applied {}: RayJob {}/{} updated", file, ns, name);
  }
}

json summaryOf(const json& doc) {
  json s = doc.value("status", json::object());
  return {
      {"namespace", doc["metadata"].value("namespace", "default")},
      {"name", doc["metadata"].value("name", "")},
      {"jobDeploymentStatus", s.value("jobDeploymentStatus", "")},
      {"jobStatus", s.value("jobStatus", "")},
      {"reason", s.value("reason", "")},
      {"message", s.value("message", "")},
      {"failed", s.value("failed", 0)},
      {"succeeded", s.value("succeeded", 0)},
      {"rayClusterName", s.value("rayClusterName", "")},
      {"jobId", s.value("jobId", "")},
      {"attempt", s.value("failed", 0) + (s.value("jobDeploymentStatus", "") == "Failed" ? 0 : 1)}};
}

// Applies every manifest of --apply; throws naming the file on the first bad one.
void applyManifests(sim::SimKube& kube, const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    for (const auto& file : manifestFiles(path)) {
      std::string text = readManifest(file);
      try {
        for (auto& doc : parseYamlDocuments(text)) applyDocument(kube, doc, file);
      } catch (const std::exception& e) {
        throw std::runtime_error("--apply " + file + ": " + e.what());
      }
    }
  }
}

// Prints a RayJob's line whenever it changes (a table on a terminal, log lines otherwise).
void showProgress(sim::SimKube& kube, bool tty, std::map<std::string, std::string>& shown) {
  for (const auto& doc : kube.list("RayJob", "")) {
    json s = summaryOf(doc);
    std::string line = progressLine(s);
    std::string key = s["namespace"].get<std::string>() + "/" + s["name"].get<std::string>();
    if (shown[key] == line) continue;
    shown[key] = line;
    if (tty)
      std::cout << line << std::endl;
    else
      spdlog::info("progress: {}", line);
  }
}

int terminalWidth() {
  winsize size{};
  return ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 160;
}

// The live table of every RayJob, its footer from the journal, sized to the terminal now (so a
// resize takes effect at the next redraw).
void paintTable(const EmbeddedOptions& options, sim::SimKube& kube, wal::Journal& journal,
                double elapsed, std::set<std::string>& seen) {
  std::vector<LiveRow> rows;
  LiveFooter footer;
  int64_t now = SystemClock().nowMs();
  for (const auto& doc : kube.list("RayJob", "")) {
    rows.push_back(liveRowOf(doc, now));
    seen.insert(rows.back().name);
    footer.byStatus[rows.back().deployment]++;
  }
  footer.records = journal.latestSeq();
  footer.syncs = journal.stats().syncs;
  footer.elapsedSeconds = elapsed;
  options.screen->paint(renderLiveTable(rows, footer, terminalWidth(), options.colour));
}

// Moves the simulated world until a signal, idleness (--exit-when-idle) or the timeout; the
// exit code.
int runWorld(const EmbeddedOptions& options, sim::SimKube& kube, sim::SimWorld& world,
             runtime::Stack& stack, wal::Journal& journal, std::set<std::string>& seen) {
  bool tty = options.progress && isatty(STDOUT_FILENO);
  std::map<std::string, std::string> shown;
  auto start = std::chrono::steady_clock::now();
  auto painted = start - std::chrono::seconds(1);
  while (!gStop) {
    world.advance();
    auto now = std::chrono::steady_clock::now();
    if (options.screen && now - painted >= std::chrono::milliseconds(200)) {
      paintTable(options, kube, journal, std::chrono::duration<double>(now - start).count(), seen);
      painted = now;
    } else if (!options.screen) {
      showProgress(kube, tty, shown);
    }
    if (options.exitWhenIdle && stack.idle()) return 0;
    if (options.timeoutSeconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
            options.timeoutSeconds) {
      spdlog::error("not idle after {}s ({}); stopping", options.timeoutSeconds, stack.busyReason());
      return 4;
    }
    // The simulated kubelet and Job controller act in rounds, as real ones do.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

// At exit: the final table, then what happened and what to try next.
void finishScreen(const EmbeddedOptions& options, sim::SimKube& kube, wal::Journal& journal,
                  double elapsed, std::set<std::string>& seen) {
  std::set<std::string> before = seen;
  paintTable(options, kube, journal, elapsed, seen);
  options.screen->release();
  std::vector<json> summaries;
  std::set<std::string> now;
  for (const auto& doc : kube.list("RayJob", "")) {
    summaries.push_back(summaryOf(doc));
    now.insert(summaries.back()["namespace"].get<std::string>() + "/" +
               summaries.back()["name"].get<std::string>());
  }
  std::vector<std::string> deleted;
  for (const auto& key : before)
    if (!now.count(key)) deleted.push_back(key);
  options.screen->paint(finalNotes(summaries, options.journalDir, options.logFile, deleted));
}

void writeSummary(sim::SimKube& kube, const std::string& path) {
  if (path.empty()) return;
  json out = json::array();
  for (const auto& doc : kube.list("RayJob", "")) out.push_back(summaryOf(doc));
  std::ofstream(path) << out.dump(2) << "\n";
}

}  // namespace

// One RayJob's progress line: name, Ray's status, deployment status, attempt, cluster, reason;
// every column ends in at least two spaces, so a long value never runs into the next.
std::string progressLine(const json& s) {
  auto column = [](const std::string& text, size_t width) {
    return text + std::string(text.size() + 2 > width ? 2 : width - text.size(), ' ');
  };
  std::string line = column(s["namespace"].get<std::string>() + "/" + s["name"].get<std::string>(), 28) +
                     column(s["jobStatus"].get<std::string>(), 12) +
                     column(s["jobDeploymentStatus"].get<std::string>(), 18) + "attempt " +
                     std::to_string(s["attempt"].get<int>()) + "  " + s["rayClusterName"].get<std::string>();
  if (!s["reason"].get<std::string>().empty()) line += "  (" + s["reason"].get<std::string>() + ")";
  return line;
}


int runEmbedded(const EmbeddedOptions& options) {
  std::signal(SIGINT, onEmbeddedStopSignal);
  std::signal(SIGTERM, onEmbeddedStopSignal);
  SystemClock clock;
  int code = 0;
  StartupWatch watch([] { return gStop ? SIGTERM : 0; });
  watch.phase("opening the journal " + options.journalDir);
  std::unique_ptr<wal::Journal> journal =
      openJournalOrLog(options.journalDir, options.salvageJournal, code);
  if (!journal) return code;
  if (!lockClusterDir(options.clusterDir)) return 2;
  sim::SimKube kube(clock, options.clusterDir);
  sim::SimRay ray(kube, clock);
  sim::SimWorld world(kube, ray, clock);
  if (!options.apply.empty()) watch.phase("reading the --apply manifests");
  try {
    applyManifests(kube, options.apply);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 2;
  }
  Metrics metrics;
  runtime::StackOptions stackOptions = options.stack;
  stackOptions.onReconcile = describeOperatorMetrics(metrics);
  CallCounter calls;
  CountingKubeClient countedKube(kube, calls);
  CountingRayClient countedRay(ray, calls);
  runtime::Stack stack(*journal, countedKube, countedRay, clock, stackOptions);
  controller::RecoveryReport recovery;
  std::atomic<bool> recovered{false};
  addOperatorCollectors(metrics, {&stack, journal.get(), &calls, &recovery, {}});
  bool serving = true;
  auto status = startStatusServer(
      options.metricsAddress, metrics,
      [&] { return recovered.load() && !journal->unwritable(); }, serving);
  if (!serving) return 2;
  auto history = startHistoryUi(options.ui, *journal, serving);
  if (!serving) return 2;
  watch.phase("recovering from the journal");
  recovery = stack.start();
  recovered = true;
  watch.running();
  JournalUpkeep upkeep(*journal, upkeepFor(options.upkeep, stack, clock));
  auto began = std::chrono::steady_clock::now();
  std::set<std::string> seen;  // RayJobs the table showed
  code = runWorld(options, kube, world, stack, *journal, seen);
  if (options.screen)
    finishScreen(options, kube, *journal,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(),
                 seen);
  stack.stop();
  stack.maybeCheckpoint(true);
  if (status) status->stop();
  writeSummary(kube, options.summaryJson);
  spdlog::info("stopped after {} RayJob and {} RayCluster reconciles; journal at seq {}",
               stack.reconciles(), stack.clusterReconciles(), journal->latestSeq());
  return code;
}

}  // namespace rayjournal::operator_
