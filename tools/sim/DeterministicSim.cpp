#include "DeterministicSim.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "adapters/sim/FaultyRayClient.h"
#include "adapters/sim/SimWorld.h"
#include "events/JournalBodies.h"
#include "events/RecordJson.h"
#include "model/JsonAccess.h"
#include "projection/JournalVerifier.h"
#include "runtime/Stack.h"
#include "support/EffectChecker.h"
#include "support/OperatorPort.h"
#include "wal/MemoryStorage.h"
#include "wal/RecordCodec.h"

namespace rayjournal::simtool {
namespace {

using nlohmann::json;

struct SimCrash {};

struct UserAction {
  int64_t atMs;
  std::string kind;  // suspend resume delete setJobId editSpec deleteSubmitter
  std::string job;
};

struct JobPlan {
  std::string name;
  json manifest;
  bool deterministic = true;  // its final state must equal the crash-free run's
};

struct Workload {
  std::vector<JobPlan> jobs;
  std::vector<UserAction> actions;
};

json clusterSpec(std::mt19937_64& rng) {
  json spec{{"headGroupSpec",
             {{"template",
               {{"spec",
                 {{"containers", json::array({{{"name", "ray-head"},
                                               {"image", "rayproject/ray:2.46.0"}}})}}}}}}}};
  if (rng() % 2) {
    spec["workerGroupSpecs"] = json::array(
        {{{"groupName", "small"},
          {"replicas", int(rng() % 3)},
          {"minReplicas", 0},
          {"maxReplicas", 4},
          {"template",
           {{"spec",
             {{"containers",
               json::array({{{"name", "w"}, {"image", "rayproject/ray:2.46.0"}}})}}}}}}});
  }
  return spec;
}

// A share of the RayJobs with a worker group get an autoscaling cluster: head without CPUs,
// the group from its minimum (0 or 1) up to 4 workers of 1 CPU, a job asking for 1-4 CPUs, a 3 s
// idle timeout.
void makeSomeAutoscale(const SimConfig& config, Workload& w) {
  std::mt19937_64 rng(config.seed * 0x2545F4914F6CDD1Dull + 3);
  for (auto& job : w.jobs) {
    const bool draw = std::uniform_real_distribution<double>(0, 1)(rng) < config.autoscalingShare;
    const int cpus = 1 + int(rng() % 4);
    const int minReplicas = int(rng() % 2);
    json& spec = job.manifest["spec"];
    if (!draw || !spec.contains("rayClusterSpec") || !spec["rayClusterSpec"].contains("workerGroupSpecs"))
      continue;
    json& cluster = spec["rayClusterSpec"];
    cluster["enableInTreeAutoscaling"] = true;
    cluster["autoscalerOptions"] = {{"idleTimeoutSeconds", 3}};
    cluster["headGroupSpec"]["rayStartParams"] = {{"num-cpus", "0"}};
    json& group = cluster["workerGroupSpecs"][0];
    group["replicas"] = minReplicas;
    group["minReplicas"] = minReplicas;
    group["rayStartParams"] = {{"num-cpus", "1"}};
    job.manifest["metadata"]["annotations"]["rayjournal.io/sim-demand"] = "cpu=" + std::to_string(cpus);
  }
}

// A share of the RayJobs with a cluster of their own get GCS fault tolerance: half with Redis,
// half on the embedded store (a claim the operator makes before the head Pod can start).
void makeSomeFaultTolerant(const SimConfig& config, Workload& w) {
  std::mt19937_64 rng(config.seed * 0xD1B54A32D192ED03ull + 5);
  for (auto& job : w.jobs) {
    const bool draw = std::uniform_real_distribution<double>(0, 1)(rng) < config.gcsFtShare;
    json& spec = job.manifest["spec"];
    if (!draw || !spec.contains("rayClusterSpec")) continue;
    spec["rayClusterSpec"]["gcsFaultToleranceOptions"] =
        rng() % 2 ? json{{"redisAddress", "redis:6379"}}
                  : json{{"backend", "rocksdb"}, {"storage", {{"size", "1Gi"}}}};
  }
}

Workload makeWorkload(const SimConfig& config) {
  std::mt19937_64 rng(config.seed * 0x9E3779B97F4A7C15ull + 1);
  Workload w;
  static const char* modes[] = {"K8sJobMode", "HTTPMode", "SidecarMode",
                                "K8sJobMode", "HTTPMode", "InteractiveMode"};
  static const char* results[] = {"SUCCEEDED", "FAILED", "STOPPED", "SUCCEEDED"};
  int n = 3 + int(rng() % 6);
  for (int i = 0; i < n; ++i) {
    if (!(config.jobMask & (1u << i))) {
      rng();  // keep the stream aligned for the remaining jobs
      continue;
    }
    std::string name = "j" + std::to_string(i);
    std::string mode = modes[rng() % 6];
    std::string result = results[rng() % 4];
    for (int k = int(rng() % 3); k > 0; --k)
      result = std::string(results[rng() % 4]) + "," + result;
    json spec{{"entrypoint", "python -c 'print(" + std::to_string(i) + ")'"},
              {"submissionMode", mode},
              {"rayClusterSpec", clusterSpec(rng)}};
    bool selector = mode != "SidecarMode" && mode != "InteractiveMode" && rng() % 6 == 0;
    if (selector) {
      spec.erase("rayClusterSpec");
      spec["clusterSelector"] = {{"ray.io/cluster", "shared"}};
    } else if (mode != "InteractiveMode") {
      spec["backoffLimit"] = int(rng() % 3);
    }
    bool shutdown = rng() % 2;
    spec["shutdownAfterJobFinishes"] = shutdown && !selector;
    if (shutdown && !selector && rng() % 3 == 0) spec["ttlSecondsAfterFinished"] = 5;
    if (rng() % 4 == 0) spec["activeDeadlineSeconds"] = 3600;
    JobPlan plan{name,
                 {{"apiVersion", "ray.io/v1"},
                  {"kind", "RayJob"},
                  {"metadata",
                   {{"name", name},
                    {"namespace", "default"},
                    {"annotations",
                     {{"rayjournal.io/sim-duration", std::to_string(500 + rng() % 4000) + "ms"},
                      {"rayjournal.io/sim-result", result}}}}},
                  {"spec", spec}}};
    int64_t at = 1000 + int64_t(rng() % 20000);
    switch (rng() % 8) {
      case 0:
        w.actions.push_back({at, "delete", name});
        break;
      case 1:
        if (!selector && mode != "InteractiveMode") {
          plan.manifest["spec"]["shutdownAfterJobFinishes"] = true;
          w.actions.push_back({at, "suspend", name});
          w.actions.push_back({at + 2000 + int64_t(rng() % 5000), "resume", name});
          plan.deterministic = false;  // racing with completion
        }
        break;
      case 2:
        w.actions.push_back({at, "editSpec", name});
        break;
      default:
        break;
    }
    if (mode == "InteractiveMode") {
      w.actions.push_back({at + 3000, "setJobId", name});
      w.actions.push_back({at + 3500, "submitInteractive", name});
    }
    w.jobs.push_back(std::move(plan));
  }
  makeSomeAutoscale(config, w);
  makeSomeFaultTolerant(config, w);
  std::sort(w.actions.begin(), w.actions.end(),
            [](const auto& a, const auto& b) { return a.atMs < b.atMs; });
  return w;
}

class Run {
 public:
  Run(const SimConfig& config, const Workload& workload, bool chaos)
      : config_(config),
        workload_(workload),
        chaos_(chaos),
        kube_(clock_),
        ray_(kube_, clock_),
        world_(kube_, ray_, clock_),
        faultyRay_(ray_),
        port_(kube_),
        rayPort_(faultyRay_),
        sched_(config.seed * 31 + 7),
        rng_(config.seed * 131 + 17) {
    for (const auto& j : workload.jobs) deterministic_[j.name] = j.deterministic;
    port_.observer = [this](const auto& verb, const auto& kind, const auto& ns, const auto& name) {
      checker_.wrote(verb, kind, ns, name);
    };
    rayPort_.observer = port_.observer;
    watchAutoscaling();
    decide_.gates.gcsFaultToleranceEmbeddedStorage = true;  // the workload's embedded-store clusters
  }
  ~Run() { stack_.reset(); }

  SimResult execute() {
    SimResult result;
    result.seed = config_.seed;
    startController(false);
    json shared{
        {"apiVersion", "ray.io/v1"},
        {"kind", "RayCluster"},
        {"metadata", {{"name", "shared"}, {"namespace", "default"}}},
        {"spec",
         {{"headGroupSpec",
           {{"template",
             {{"spec", {{"containers", json::array({{{"name", "h"}, {"image", "x"}}})}}}}}}}}}};
    kube_.create("RayCluster", shared);
    for (const auto& j : workload_.jobs) kube_.create("RayJob", j.manifest);
    size_t nextAction = 0;
    int64_t start = clock_.nowMs(), restSince = -1;
    while (clock_.nowMs() - start < 20 * 60 * 1000) {
      int64_t now = clock_.nowMs() - start;
      while (nextAction < workload_.actions.size() && workload_.actions[nextAction].atMs <= now)
        pending_.push_back(workload_.actions[nextAction++]);
      std::erase_if(pending_, [this](const UserAction& a) { return userAction(a); });
      world_.advance();
      if (chaos_) injectFaults();
      reconcileSome();
      checkHeadPods();
      clock_.advance(250);
      stack_->wake();
      if (nextAction == workload_.actions.size() && pending_.empty() && allAtRest()) {
        if (restSince < 0) restSince = clock_.nowMs();
        if (clock_.nowMs() - restSince > 10000) break;
      } else {
        restSince = -1;
      }
    }
    kube_.clearFaults();  // the checks below read the world; faults are for the controller
    if (!allAtRest()) violation("not every RayJob came to rest within 20 simulated minutes");
    checkDuplicates();
    checkRedisCleanup();
    for (const auto& v : checker_.violations()) violation(v);
    auto report = projection::verifyJournal(*journal_);
    for (const auto& v : report.violations)
      violation("journal verify: seq " + std::to_string(v.seq) + " " + v.rule + ": " + v.message);
    for (const auto& j : workload_.jobs) {
      auto doc = kube_.get("RayJob", "default", j.name);
      json s = doc ? doc->value("status", json::object()) : json::object();
      result.finalStates[j.name] = doc ? json{{"deployment", s.value("jobDeploymentStatus", "")},
                                              {"jobStatus", s.value("jobStatus", "")},
                                              {"failed", s.value("failed", 0)},
                                              {"succeeded", s.value("succeeded", 0)},
                                              {"reason", s.value("reason", "")}}
                                       : json("deleted");
    }
    if (config_.verbose) {
      journal_->scan(0, [&](const wal::Record& r) {
        result.journal.push_back(events::recordToJson(r));
        return true;
      });
    }
    result.crashes = crashes_;
    result.faults = faults_ + int(faultyRay_.injected());
    result.violations = violations_;
    return result;
  }

  const std::map<std::string, bool>& deterministic() const { return deterministic_; }

 private:
  void violation(const std::string& text) { violations_.push_back(text); }

  bool roll(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  void maybeCrash() {
    if (!chaos_ || crashes_ >= config_.maxCrashes || !roll(config_.crashProbability)) return;
    ++crashes_;
    throw SimCrash{};
  }

  void startController(bool afterCrash) {
    while (true) {
      stack_.reset();
      port_.detach();
      checker_.crashed();
      if (afterCrash && roll(0.5)) {
        // A power loss: unsynced journal writes vanish, except a prefix that reached the disk.
        size_t pending = storage_->unsyncedBatches();
        storage_->dropUnsynced(pending ? rng_() % (pending + 1) : 0);
      }
      journal_.reset();
      storage_->powerOn();
      wal::JournalOptions options;
      options.lazyFlushInterval = std::chrono::milliseconds(0);
      options.nowMs = [this] { return clock_.nowMs(); };
      journal_ = wal::Journal::open(storage_, events::journalOptions(options));
      runtime::StackOptions so;
      so.workers = 0;
      so.clusterWorkers = 0;
      so.decide = decide_;
      so.onJournaled = [this](const wal::Record& r) { checker_.journaled(r); };
      so.afterResolve = [this] { maybeCrash(); };
      stack_ = std::make_unique<runtime::Stack>(*journal_, port_, rayPort_, clock_, so);
      stack_->executor().hook = [this](auto, const auto&, uint64_t) { maybeCrash(); };
      try {
        stack_->start();
        return;
      } catch (const SimCrash&) {
        afterCrash = true;  // a crash during recovery itself
      }
    }
  }

  // The seeded scheduler: a few of the ready keys of either controller, picked at random and in
  // batches of one to three (one journal flush per batch), run through the real runtime
  // (workqueue, handlers, backoff, cache) before the clock moves on.
  void reconcileSome() {
    int budget = 1 + int(sched_() % 24);
    for (int n = 0; n < budget; ++n) {
      try {
        size_t batch = 1 + sched_() % 3;
        if (!stack_->step([this](size_t ready) { return size_t(sched_() % ready); }, batch))
          return;
      } catch (const SimCrash&) {
        startController(true);
        return;
      }
    }
  }

  void injectFaults() {
    if (roll(0.03)) {
      static const char* verbs[] = {"create", "update", "updateStatus", "remove", "get"};
      static const char* kinds[] = {"RayJob", "RayCluster", "Job"};
      static const std::pair<int, const char*> codes[] = {
          {500, "InternalError"}, {429, "TooManyRequests"}, {409, "Conflict"}, {504, "Timeout"}};
      auto [code, reason] = codes[rng_() % 4];
      kube_.injectFault(
          {verbs[rng_() % 5], kinds[rng_() % 3], 1 + int(rng_() % 2), code, reason, roll(0.4)});
      ++faults_;
    }
    if (roll(0.03)) faultyRay_.failNext(1 + int(rng_() % 3));
    if (roll(0.004)) {
      // A Ray head restart without GCS fault tolerance, for an HTTPMode job: outcome may change.
      for (const auto& doc : kube_.list("RayJob", "default")) {
        if (doc["spec"].value("submissionMode", "") != "HTTPMode") continue;
        std::string cluster = doc.value("status", json::object()).value("rayClusterName", "");
        if (cluster.empty() || cluster == "shared") continue;
        ray_.loseAllRecords("default", cluster);
        deterministic_[doc["metadata"]["name"]] = false;
        ++faults_;
        break;
      }
    }
  }

  // Returns false when the action must be tried again (an injected fault hit the user's write,
  // or an interactive user waits for the cluster before submitting).
  bool userAction(const UserAction& a) {
    try {
      auto doc = kube_.get("RayJob", "default", a.job);
      if (!doc) return true;
      json job = *doc;
      if (a.kind == "submitInteractive") {
        json st = job.value("status", json::object());
        if (st.value("dashboardURL", "").empty() || st.value("jobId", "").empty()) return false;
        ray::SubmitRequest request;
        request.submissionId = st["jobId"];
        request.entrypoint = job["spec"].value("entrypoint", "");
        ray_.submit(st["dashboardURL"], request);
        return true;
      }
      if (a.kind == "delete") {
        kube_.remove("RayJob", "default", a.job);
      } else if (a.kind == "suspend" || a.kind == "resume") {
        job["spec"]["suspend"] = a.kind == "suspend";
        kube_.update("RayJob", job);
      } else if (a.kind == "setJobId") {
        job["spec"]["jobId"] = a.job + "-interactive";
        kube_.update("RayJob", job);
      } else if (a.kind == "editSpec") {
        job["spec"]["entrypoint"] =
            "python edited.py";  // immutable after start: no effect on the run
        kube_.update("RayJob", job);
      }
    } catch (const kube::ApiError&) {
      return false;
    } catch (const ray::RayError&) {
      return false;
    }
    return true;
  }

  bool allAtRest() {
    for (const auto& doc : kube_.list("RayJob", "default")) {
      if (!runtime::isAtRest(controller::parseRayJob(doc))) return false;
    }
    return true;
  }

  // Under autoscaling only the autoscaler decides which worker goes: a worker Pod deleted while its
  // RayCluster lives must be one it named in workersToDelete (the simulated autoscaler never
  // enables ENABLE_RANDOM_POD_DELETE, and no simulated Pod fails).
  void watchAutoscaling() {
    kube_.watch("RayCluster", [this](kube::WatchEventType type, const json& rc) {
      ScaledCluster& c = scaled_[model::stringAt(rc["metadata"], "uid")];
      c.autoscaling = model::memberAt(model::objectAt(rc, "spec"), "enableInTreeAutoscaling") == true;
      c.going = type == kube::WatchEventType::Deleted || rc["metadata"].contains("deletionTimestamp");
      for (const auto& g : model::arrayAt(model::objectAt(rc, "spec"), "workerGroupSpecs"))
        for (const auto& n : model::arrayAt(model::objectAt(g, "scaleStrategy"), "workersToDelete"))
          if (n.is_string()) c.named.insert(n.get<std::string>());
    });
    kube_.watch("Pod", [this](kube::WatchEventType type, const json& pod) {
      const json& meta = pod["metadata"];
      if (type != kube::WatchEventType::Deleted ||
          model::stringAt(model::objectAt(meta, "labels"), "ray.io/node-type") != "worker")
        return;
      for (const auto& ref : model::arrayAt(meta, "ownerReferences")) {
        auto c = scaled_.find(model::stringAt(ref, "uid"));
        const std::string name = model::stringAt(meta, "name");
        if (c != scaled_.end() && c->second.autoscaling && !c->second.going && !c->second.named.count(name))
          violation("worker Pod " + name + " of an autoscaling RayCluster was deleted, but the autoscaler never named it");
      }
    });
  }

  void checkHeadPods() {
    std::map<std::string, int> heads;
    for (const auto& pod : kube_.list("Pod", "default", {{"ray.io/node-type", "head"}}))
      heads[pod["metadata"]["labels"].value("ray.io/cluster", "")]++;
    for (const auto& [cluster, n] : heads) {
      if (n > 1) violation("RayCluster " + cluster + " has " + std::to_string(n) + " head Pods");
    }
  }

  // GCS fault tolerance: no RayCluster held Terminating by a leaked finalizer, one cleanup Job per
  // cluster incarnation at most, and no storage namespace left in Redis by a cluster that is gone.
  void checkRedisCleanup() {
    std::set<std::string> live;
    for (const auto& c : kube_.list("RayCluster", "default")) {
      if (c["metadata"].contains("deletionTimestamp"))
        violation("RayCluster " + c["metadata"].value("name", "") + " still Terminating at rest");
      live.insert(c["metadata"].value("uid", ""));
    }
    for (const auto& claim : kube_.list("PersistentVolumeClaim", "default"))
      for (const auto& ref : claim["metadata"].value("ownerReferences", json::array()))
        if (!live.count(ref.value("uid", "")))
          violation("PersistentVolumeClaim " + claim["metadata"].value("name", "") + " outlived its RayCluster");
    for (const auto& storage : ray_.storageNamespaces())
      if (!live.count(storage)) violation("Redis still holds storage namespace " + storage + " of a deleted RayCluster");
    std::map<std::string, int> cleanups;
    for (const auto& c : kube_.createHistory()) {
      if (c["kind"] != "Job" || !c["name"].get<std::string>().ends_with("-redis-cleanup")) continue;
      for (const auto& ref : c["owners"])
        if (ref.value("kind", "") == "RayCluster" && ++cleanups[ref.value("uid", "")] > 1)
          violation("two Redis cleanup Jobs for RayCluster " + ref.value("name", ""));
    }
  }

  void checkDuplicates() {
    std::map<std::string, int> byName, clustersPerJob, jobsPerJob;
    for (const auto& c : kube_.createHistory()) {
      std::string kind = c["kind"], name = c["name"];
      std::string owner;
      for (const auto& ref : c["owners"])
        if (ref.value("kind", "") == "RayJob") owner = ref.value("name", "");
      if (kind == "RayCluster" || kind == "SimRaySubmission") {
        if (++byName[kind + "/" + name] > 1)
          violation(kind + " " + name + " created more than once");
      }
      if (kind == "RayCluster" && !owner.empty()) clustersPerJob[owner]++;
      if (kind == "Pod" || kind == "Service") {
        // No Pod or Service created twice under one name for one cluster incarnation.
        std::string ownerUid;
        for (const auto& ref : c["owners"])
          if (ref.value("kind", "") == "RayCluster") ownerUid = ref.value("uid", "");
        if (++byName[kind + "/" + name + "/" + ownerUid] > 1)
          violation(kind + " " + name + " created more than once for one RayCluster incarnation");
      }
      if (kind == "Job") jobsPerJob[name]++;
    }
    for (const auto& [job, n] : jobsPerJob) {
      int attempts = std::max(1, clustersPerJob[job]);
      if (n > attempts)
        violation("RayJob " + job + ": " + std::to_string(n) + " submitter Jobs for " +
                  std::to_string(attempts) + " attempts");
    }
  }

  struct ScaledCluster {
    bool autoscaling = false;
    bool going = false;  // deleted or being deleted: its Pods go with it
    std::set<std::string> named;  // every name workersToDelete ever held
  };
  std::map<std::string, ScaledCluster> scaled_;  // by RayCluster uid
  const SimConfig& config_;
  const Workload& workload_;
  bool chaos_;
  ManualClock clock_;
  sim::SimKube kube_;
  sim::SimRay ray_;
  sim::SimWorld world_;
  sim::FaultyRayClient faultyRay_;
  std::shared_ptr<wal::MemoryStorage> storage_ = std::make_shared<wal::MemoryStorage>();
  testing::OperatorKube port_;
  testing::OperatorRay rayPort_;
  testing::EffectChecker checker_{storage_};
  std::unique_ptr<wal::Journal> journal_;
  std::unique_ptr<runtime::Stack> stack_;
  controller::DecideConfig decide_;
  std::mt19937_64 sched_;
  std::mt19937_64 rng_;
  int crashes_ = 0;
  int faults_ = 0;
  std::vector<std::string> violations_;
  std::map<std::string, bool> deterministic_;
  std::vector<UserAction> pending_;
};

}  // namespace

SimResult runSeed(const SimConfig& config) {
  Workload workload = makeWorkload(config);
  Run reference(config, workload, false);
  SimResult expected = reference.execute();
  Run chaos(config, workload, true);
  SimResult result = chaos.execute();
  for (const auto& v : expected.violations) result.violations.push_back("(crash-free run) " + v);
  for (const auto& [name, deterministic] : chaos.deterministic()) {
    if (!deterministic || !config.faults) continue;
    if (result.finalStates[name] != expected.finalStates[name]) {
      result.violations.push_back("RayJob " + name + " ended " + result.finalStates[name].dump() +
                                  " but the crash-free run ended " +
                                  expected.finalStates[name].dump());
    }
  }
  return result;
}

nlohmann::json describeWorkload(const SimConfig& config) {
  Workload w = makeWorkload(config);
  json out{{"jobs", json::array()}, {"actions", json::array()}};
  for (const auto& j : w.jobs)
    out["jobs"].push_back({{"name", j.name},
                           {"annotations", j.manifest["metadata"]["annotations"]},
                           {"spec", j.manifest["spec"]},
                           {"deterministic", j.deterministic}});
  for (const auto& a : w.actions)
    out["actions"].push_back({{"at_ms", a.atMs}, {"kind", a.kind}, {"job", a.job}});
  for (auto& j : out["jobs"]) j["spec"].erase("rayClusterSpec");
  return out;
}

SimConfig shrink(const SimConfig& failing) {
  SimConfig best = failing;
  for (int bit = 0; bit < 32; ++bit) {
    SimConfig candidate = best;
    candidate.jobMask &= ~(1u << bit);
    if (candidate.jobMask == best.jobMask) continue;
    if (!runSeed(candidate).violations.empty()) best = candidate;
  }
  while (best.maxCrashes > 0) {
    SimConfig candidate = best;
    candidate.maxCrashes--;
    if (runSeed(candidate).violations.empty()) break;
    best = candidate;
  }
  return best;
}

}  // namespace rayjournal::simtool
