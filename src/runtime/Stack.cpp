#include "runtime/Stack.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "adapters/TimeFormat.h"
#include "controller/raycluster/CachedPod.h"
#include "controller/JsonAccess.h"
#include "runtime/Handlers.h"

namespace rayjournal::runtime {

using nlohmann::json;

Stack::Stack(wal::Journal& journal, kube::KubeClient& kube, ray::RayJobsClient& ray,
             const Clock& clock, StackOptions options)
    : journal_(journal),
      ray_(ray),
      clock_(clock),
      options_(std::move(options)),
      // Every cached kind packed: a parsed RayJob or RayCluster is ~15 KB of small nodes, its
      // CBOR ~2.3 KB, for a read of ~20 us (rayjournal-bench cache-size, BENCHMARKS.md).
      cache_(kube, {"RayJob", "RayCluster", "Job", "Pod", "Service"},
             {{"Pod", {controller::podAsCached, true}},
              {"RayJob", {nullptr, true}},
              {"RayCluster", {nullptr, true}},
              {"Job", {nullptr, true}},
              {"Service", {nullptr, true}}}),
      executor_(journal, cache_, ray, clock),
      rayJobReconciler_(cache_, ray, executor_, projection_, journal, clock, options_.decide),
      clusterReconciler_(cache_, executor_, projection_, clock,
                         {options_.decide.clusterDomain,
                          0,
                          options_.decide.gates.rayClusterStatusConditions,
                          {options_.decide.loginShell, options_.decide.injectProbes,
                           options_.decide.injectWaitGcsReady, options_.decide.randomPodDelete,
                           options_.decide.podDefaults, options_.decide.batchScheduler == "volcano",
                           options_.decide.batchScheduler == "yunikorn"},
                          options_.decide.redisCleanup, options_.decide.gates}),
      rayJobs_(rayJobReconciler_, clock,
               {"RayJob", options_.workers, options_.maxBatch, options_.mayReconcile,
                [this](const std::string& key, const Result& r, double seconds) {
                  onRayJobResult(key, r, seconds);
                }}),
      clusters_(clusterReconciler_, clock,
                {"RayCluster", options_.clusterWorkers, options_.maxBatch,
                 [this](const std::string& key) { return mayReconcileCluster(key); },
                 [this](const std::string&, const Result& result, double seconds) {
                   if (options_.onReconcile) options_.onReconcile("raycluster", seconds, result);
                   maybeCheckpoint();
                 }}) {
  executor_.postNormalEvents(options_.normalEvents);
  rayJobReconciler_.useFieldWarnings(&fieldWarnings_);
  clusterReconciler_.useFieldWarnings(&fieldWarnings_);
  if (options_.workers > 0) {
    events_ = std::make_unique<kube::EventRecorder>(cache_, 10000);
    executor_.setEventRecorder(events_.get());
  }
}

Stack::~Stack() {
  stop();
}

controller::RecoveryReport Stack::start() {
  controller::RecoveryReport report = controller::rebuild(journal_, projection_);
  // DESIGN step 4: every record appended from here on is folded into the projection in seq order.
  journal_.setAppendListener([this](const wal::Record& r) {
    projection_.apply(r);
    if (options_.onJournaled) options_.onJournaled(r);
  });
  controller::resolveInDoubt(journal_, projection_, cache_, ray_, report, options_.afterResolve);
  spdlog::info(
      "recovered journal {} (epoch {}): checkpoint seq {}, replayed {} records, {} in doubt "
      "({} found, {} absent, {} superseded) in {:.3f}s",
      journal_.describe(), journal_.epoch(), report.checkpointSeq, report.replayedRecords,
      report.inDoubt, report.found, report.absent, report.superseded, report.seconds);
  lastCheckpointSeq_ = journal_.latestSeq();
  lastCheckpointMs_ = clock_.nowMs();
  cache_.start(options_.cacheSyncTimeout);
  watchRayJobs();
  watchChildren();
  started_ = true;
  rayJobs_.start();
  if (options_.manageRayClusters) clusters_.start();
  return report;
}

void Stack::watchRayJobs() {
  cache_.watch("RayJob", [this](kube::WatchEventType type, const json& o) {
    std::string key = keyOfObject(o);
    if (key.empty() || (options_.owns && !options_.owns(key))) return;
    {
      std::lock_guard lock(restMu_);
      if (type == kube::WatchEventType::Deleted) {
        atRest_.erase(key);
        summaries_.erase(key);
        return;
      }
      atRest_.emplace(key, false);
      const json& st = controller::objectAt(o, "status");
      auto failed = st.find("failed");
      summaries_[key] = {controller::stringAt(controller::objectAt(o, "metadata"), "uid"),
                         controller::stringAt(st, "jobDeploymentStatus"),
                         controller::stringAt(st, "startTime"), controller::stringAt(st, "endTime"),
                         failed != st.end() && failed->is_number_integer() ? failed->get<int>() : 0};
    }
    rayJobs_.enqueue(key);
  });
}

// Children map to their owners: RayClusters and Jobs to the RayJob, Pods and Services to the
// RayCluster (and a RayJob's own head Service to the RayJob, a Redis cleanup Job to its cluster).
void Stack::watchChildren() {
  auto toRayJob = [this](const json& o) {
    std::string owner = keyOfControllerOwner(o, "RayJob");
    if (!owner.empty() && (!options_.owns || options_.owns(owner))) rayJobs_.enqueue(owner);
  };
  auto toCluster = [this](const json& o) {
    if (!options_.manageRayClusters) return;
    std::string owner = keyOfControllerOwner(o, "RayCluster");
    if (!owner.empty()) clusters_.enqueue(owner);
  };
  cache_.watch("RayCluster", [this, toRayJob](kube::WatchEventType type, const json& o) {
    toRayJob(o);
    if (options_.manageRayClusters && clusterChanged(type, o) && ownsCluster(o))
      clusters_.enqueue(keyOfObject(o));
  });
  cache_.watch("Job", [toRayJob, toCluster](kube::WatchEventType, const json& o) {
    toRayJob(o);
    toCluster(o);  // a RayCluster's Redis cleanup Job
  });
  cache_.watch("Pod", [toCluster](kube::WatchEventType, const json& o) { toCluster(o); });
  cache_.watch("Service", [toRayJob, toCluster](kube::WatchEventType, const json& o) {
    toRayJob(o);
    toCluster(o);
  });
}

bool Stack::clusterChanged(kube::WatchEventType type, const json& cluster) {
  const std::string key = keyOfObject(cluster);
  std::lock_guard lock(clusterSeenMu_);
  if (type == kube::WatchEventType::Deleted) {
    clusterSeen_.erase(key);
    return false;
  }
  const json& meta = controller::objectAt(cluster, "metadata");
  std::string seen = controller::memberAt(meta, "generation").dump() + "|" +
                     controller::memberAt(meta, "labels").dump() + "|" +
                     controller::memberAt(meta, "annotations").dump() + "|" +
                     (meta.contains("deletionTimestamp") ? "deleting" : "");
  auto [it, added] = clusterSeen_.try_emplace(key, seen);
  if (added) return true;
  if (it->second == seen) return false;
  it->second = std::move(seen);
  return true;
}

bool Stack::ownsCluster(const json& cluster) const {
  return !options_.owns || options_.owns(shardKeyOfCluster(cluster));
}

bool Stack::mayReconcileCluster(const std::string& key) {
  if (!options_.owns && !options_.mayReconcile) return true;
  auto cluster = cache_.getSnapshot("RayCluster", key.substr(0, key.find('/')),
                                    key.substr(key.find('/') + 1));
  if (!cluster) return true;  // gone: the reconcile finds nothing to do
  if (!ownsCluster(*cluster)) return false;
  return !options_.mayReconcile || options_.mayReconcile(shardKeyOfCluster(*cluster));
}

void Stack::onRayJobResult(const std::string& key, const Result& result, double seconds) {
  if (options_.onReconcile) options_.onReconcile("rayjob", seconds, result);
  if (options_.recordLatencies) {
    std::lock_guard lock(latencyMu_);
    latenciesUs_.push_back(uint32_t(seconds * 1e6));
  }
  {
    std::lock_guard lock(restMu_);
    auto it = atRest_.find(key);
    if (it != atRest_.end()) it->second = result.atRest && !result.error;
  }
  maybeCheckpoint();
}

bool Stack::step(const std::function<size_t(size_t)>& pick, size_t count) {
  size_t jobs = rayJobs_.queue().ready();
  size_t clusters = options_.manageRayClusters ? clusters_.queue().ready() : 0;
  if (jobs + clusters == 0) return false;
  size_t n = pick ? pick(jobs + clusters) % (jobs + clusters) : 0;
  bool first = true;
  // The first key is the n-th ready one overall; the rest of the batch is picked among the keys
  // of the same controller that are still ready.
  auto choose = [&](size_t offset) {
    return [&, offset](size_t ready) {
      if (std::exchange(first, false)) return n - offset;
      return pick ? pick(ready) % ready : 0;
    };
  };
  if (n < jobs) return rayJobs_.runOne(choose(0), count);
  return clusters_.runOne(choose(jobs), count);
}

void Stack::wake() {
  rayJobs_.queue().wake();
  clusters_.queue().wake();
}

void Stack::stop() {
  if (stopping_.exchange(true)) return;
  rayJobs_.stop();
  clusters_.stop();
}

std::map<std::string, JobSummary> Stack::jobSummaries() const {
  std::lock_guard lock(restMu_);
  return summaries_;
}

void Stack::resync() {
  std::vector<std::string> keys;
  {
    std::lock_guard lock(restMu_);
    for (const auto& [key, rest] : atRest_) keys.push_back(key);
  }
  for (const auto& key : keys) rayJobs_.enqueue(key);
  if (!options_.manageRayClusters) return;
  for (const auto& cluster : cache_.list("RayCluster", ""))
    if (ownsCluster(cluster)) clusters_.enqueue(keyOfObject(cluster));
}

void Stack::maybeCheckpoint(bool force) {
  std::unique_lock lock(checkpointMu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  uint64_t latest = journal_.latestSeq();
  bool due = latest - lastCheckpointSeq_ >= options_.checkpointEveryRecords ||
             (clock_.nowMs() - lastCheckpointMs_ >= options_.checkpointEveryMs &&
              latest > lastCheckpointSeq_);
  if (!due && !(force && latest > lastCheckpointSeq_)) return;
  // The projection is fed in seq order by the journal, so its state covers appliedThrough.
  auto [state, covers] = projection_.snapshot();
  try {
    journal_.writeCheckpoint(covers, state);
    lastCheckpointSeq_ = journal_.latestSeq();
    lastCheckpointMs_ = clock_.nowMs();
  } catch (const std::exception& e) {
    spdlog::error("checkpoint failed: {}", e.what());
  }
}

std::vector<uint32_t> Stack::latenciesUs() const {
  std::lock_guard lock(latencyMu_);
  return latenciesUs_;
}

size_t Stack::queueDepth() const {
  return rayJobs_.queue().depth() + clusters_.queue().depth();
}

size_t Stack::rayJobQueueDepth() const { return rayJobs_.queue().depth(); }
size_t Stack::rayClusterQueueDepth() const { return clusters_.queue().depth(); }

std::vector<Stack::ClusterSummary> Stack::clusterSummaries() {
  std::vector<ClusterSummary> out;
  for (const auto& cluster : cache_.list("RayCluster", "")) {
    const auto& meta = cluster["metadata"];
    ClusterSummary s{meta.value("namespace", ""), meta.value("name", ""), meta.value("uid", ""),
                     "None", false, std::nullopt};
    if (meta.contains("labels")) s.ownerKind = meta["labels"].value("ray.io/originated-from-crd", "None");
    for (const auto& c : cluster.value("status", nlohmann::json::object()).value("conditions", nlohmann::json::array())) {
      if (c.value("type", "") != "RayClusterProvisioned" || c.value("status", "") != "True") continue;
      s.provisioned = true;
      auto created = parseRfc3339(meta.value("creationTimestamp", ""));
      auto reached = parseRfc3339(c.value("lastTransitionTime", ""));
      if (created && reached) s.provisionedSeconds = double(*reached - *created) / 1000.0;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string Stack::busyReason() const {
  std::string out;
  {
    std::lock_guard lock(restMu_);
    int shown = 0;
    for (const auto& [key, rest] : atRest_) {
      if (rest) continue;
      out += (shown ? ", " : "RayJobs not at rest: ") + key;
      if (++shown == 5) break;
    }
  }
  if (!rayJobs_.queue().idle())
    out += (out.empty() ? "" : "; ") + std::string("RayJob queue ") +
           std::to_string(rayJobs_.queue().depth()) + " waiting: " +
           rayJobs_.queue().describe();
  if (!clusters_.queue().idle())
    out += (out.empty() ? "" : "; ") + std::string("RayCluster queue ") +
           std::to_string(clusters_.queue().depth()) + " waiting: " +
           clusters_.queue().describe();
  return out.empty() ? "idle" : out;
}

bool Stack::idle() const {
  if (!rayJobs_.queue().idle() || !clusters_.queue().idle()) return false;
  std::lock_guard lock(restMu_);
  for (const auto& [key, rest] : atRest_) {
    if (!rest) return false;
  }
  return true;
}

}  // namespace rayjournal::runtime
