#include "controller/Manager.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "controller/JsonAccess.h"

namespace rayjournal::controller {

Manager::Manager(wal::Journal& journal, kube::KubeClient& kube, ray::RayJobsClient& ray,
                 const Clock& clock, ManagerOptions options)
    : journal_(journal),
      kube_(kube),
      ray_(ray),
      clock_(clock),
      options_(options),
      queue_(clock),
      executor_(journal, kube, ray, clock),
      reconciler_(kube, ray, executor_, projection_, journal, clock, options.decide) {}

Manager::~Manager() {
  stop();
}

void Manager::onOwned(const json& object) {
  for (const auto& ref : arrayAt(object["metadata"], "ownerReferences")) {
    if (ref.value("kind", "") == "RayJob" && ref.value("controller", false)) {
      std::string key =
          object["metadata"].value("namespace", "default") + "/" + ref.value("name", "");
      if (!options_.owns || options_.owns(key)) queue_.add(key);
    }
  }
}

std::map<std::string, JobSummary> Manager::jobSummaries() const {
  std::lock_guard lock(restMu_);
  return summaries_;
}

void Manager::resync() {
  std::vector<std::string> keys;
  {
    std::lock_guard lock(restMu_);
    for (const auto& [key, rest] : atRest_) keys.push_back(key);
  }
  for (const auto& key : keys) queue_.add(key);
}

RecoveryReport Manager::start() {
  RecoveryReport report = recover(journal_, projection_, kube_, ray_);
  spdlog::info(
      "recovered journal {} (epoch {}): checkpoint seq {}, replayed {} records, {} in doubt "
      "({} found, {} absent, {} superseded) in {:.3f}s",
      journal_.describe(), journal_.epoch(), report.checkpointSeq, report.replayedRecords,
      report.inDoubt, report.found, report.absent, report.superseded, report.seconds);
  lastCheckpointSeq_ = journal_.latestSeq();
  lastCheckpointMs_ = clock_.nowMs();
  kube_.watch("RayJob", [this](kube::WatchEventType type, const json& o) {
    std::string key =
        o["metadata"].value("namespace", "default") + "/" + o["metadata"].value("name", "");
    if (options_.owns && !options_.owns(key)) return;
    if (type == kube::WatchEventType::Deleted) {
      std::lock_guard lock(restMu_);
      atRest_.erase(key);
      summaries_.erase(key);
      return;
    }
    {
      std::lock_guard lock(restMu_);
      atRest_.emplace(key, false);
      const json& st = objectAt(o, "status");
      summaries_[key] = {o["metadata"].value("uid", ""), stringAt(st, "jobDeploymentStatus"),
                         stringAt(st, "startTime"), stringAt(st, "endTime"), st.value("failed", 0)};
    }
    queue_.add(key);
  });
  started_ = true;
  kube_.watch("RayCluster", [this](kube::WatchEventType, const json& o) { onOwned(o); });
  kube_.watch("Job", [this](kube::WatchEventType, const json& o) { onOwned(o); });
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { worker(); });
  return report;
}

void Manager::worker() {
  while (auto key = queue_.get()) {
    if (options_.mayReconcile && !options_.mayReconcile(*key)) {
      queue_.done(*key);
      queue_.addAfter(*key, 1000);
      continue;
    }
    ReconcileResult result;
    auto began = std::chrono::steady_clock::now();
    try {
      result = reconciler_.reconcile(*key);
    } catch (const std::exception& e) {
      spdlog::error("RayJob {}: reconcile failed: {}", *key, e.what());
      result.error = true;
    }
    ++reconciles_;
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - began)
                  .count();
    if (options_.onReconcile) options_.onReconcile(double(us) / 1e6, result.error);
    if (options_.recordLatencies) {
      std::lock_guard lock(latencyMu_);
      latenciesUs_.push_back(uint32_t(us));
    }
    {
      std::lock_guard lock(restMu_);
      auto it = atRest_.find(*key);
      if (it != atRest_.end()) it->second = result.atRest && !result.error;
    }
    if (result.error) {
      queue_.addRateLimited(*key);
    } else {
      queue_.forget(*key);
      if (result.requeueAfterMs) queue_.addAfter(*key, *result.requeueAfterMs);
    }
    queue_.done(*key);
    maybeCheckpoint();
  }
}

void Manager::maybeCheckpoint(bool force) {
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

std::vector<uint32_t> Manager::latenciesUs() const {
  std::lock_guard lock(latencyMu_);
  return latenciesUs_;
}

bool Manager::idle() const {
  if (!queue_.idle()) return false;
  std::lock_guard lock(restMu_);
  for (const auto& [key, rest] : atRest_) {
    if (!rest) return false;
  }
  return true;
}

void Manager::stop() {
  if (stopping_.exchange(true)) return;
  queue_.shutDown();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

}  // namespace rayjournal::controller
