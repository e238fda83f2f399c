#include "controller/Recovery.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "controller/Children.h"

namespace rayjournal::controller {
namespace {

using projection::IntentFact;

std::string childKind(const std::string& action) {
  if (action == "CreateRayCluster" || action == "DeleteRayCluster") return "RayCluster";
  if (action == "CreateSubmitterJob" || action == "DeleteSubmitterJob") return "Job";
  return "RayJob";
}

// found: the side effect is visible in the world; absent: it is not; superseded: the world has
// moved on so that the question no longer applies (e.g. the RayJob is gone).
std::string resolve(const std::string& key, const IntentFact& intent, kube::KubeClient& kube,
                    ray::RayJobsClient& ray) {
  std::string ns = key.substr(0, key.find('/'));
  std::string name = key.substr(key.find('/') + 1);
  auto job = kube.getLive("RayJob", ns, name);
  const std::string& a = intent.action;
  if (a == "CreateRayCluster" || a == "CreateSubmitterJob")
    return kube.getLive(childKind(a), ns, intent.target) ? "found" : "absent";
  if (a == "DeleteRayCluster" || a == "DeleteSubmitterJob" || a == "DeleteRayJob") {
    return kube.getLive(childKind(a), ns, intent.target) ? "absent" : "found";
  }
  if (!job) return "superseded";
  json status = (*job).value("status", json::object());
  if (a == "AddFinalizer" || a == "RemoveFinalizer") {
    bool has = false;
    for (const auto& f : (*job)["metadata"].value("finalizers", json::array()))
      has = has || f == kFinalizer;
    return has == (a == "AddFinalizer") ? "found" : "absent";
  }
  if (a == "WriteStatus") {
    json want = intent.status.is_object() ? intent.status : json::object();
    // Every field as written: found. Otherwise Kubernetes has moved on, or the write never
    // landed; the two cannot be told apart from the status alone, and it does not matter: the
    // next decision starts from what Kubernetes holds.
    for (const auto& [k, v] : want.items()) {
      if (status.value(k, json()) != v) return "superseded";
    }
    return "found";
  }
  if (a == "SubmitRayJob" || a == "StopRayJob") {
    std::string dashboard = status.value("dashboardURL", "");
    try {
      auto info = ray.getJob(dashboard, intent.target);
      if (a == "SubmitRayJob") return info ? "found" : "absent";
      return info && ray::isTerminalRayStatus(info->status) ? "found" : "absent";
    } catch (const ray::RayError&) {
      return "superseded";  // Ray cannot answer; the next reconcile asks again before deciding
    }
  }
  return "superseded";
}

}  // namespace

RecoveryReport recover(wal::Journal& journal, projection::JobProjection& projection,
                       kube::KubeClient& kube, ray::RayJobsClient& ray,
                       const std::function<void()>& afterResolve) {
  auto start = std::chrono::steady_clock::now();
  RecoveryReport report;
  uint64_t from = journal.firstSeq();
  if (auto cp = journal.latestCheckpoint()) {
    projection.restore(cp->state);
    report.checkpointSeq = cp->seq;
    from = cp->coversThrough + 1;
  }
  journal.scan(from, [&](const wal::Record& r) {
    if (r.type != wal::RecordType::Checkpoint) projection.apply(r);
    ++report.replayedRecords;
    return true;
  });
  journal.setAppendListener([&projection](const wal::Record& r) { projection.apply(r); });
  auto doubts = projection.inDoubt();
  report.inDoubt = doubts.size();
  wal::Record started;
  started.type = wal::RecordType::ControllerStarted;
  started.body = {{"epoch", journal.epoch()},
                  {"in_doubt", doubts.size()},
                  {"replayed", report.replayedRecords},
                  {"checkpoint_seq", report.checkpointSeq}};
  journal.append(started, wal::Durability::Sync);
  for (const auto& [key, intent] : doubts) {
    std::string resolution;
    for (int tries = 0; resolution.empty() && tries < 3; ++tries) {
      try {
        resolution = resolve(key, intent, kube, ray);
      } catch (const kube::ApiError& e) {
        spdlog::warn("recovery: {} intent {} {} (seq {}): cannot ask Kubernetes: {}", key,
                     intent.action, intent.target, intent.seq, e.what());
      }
    }
    if (resolution.empty()) {
      // Still in doubt: the reconcile decides from Kubernetes anyway, and the next restart asks
      // again.
      ++report.unresolved;
      continue;
    }
    if (resolution == "found")
      ++report.found;
    else if (resolution == "absent")
      ++report.absent;
    else
      ++report.superseded;
    wal::Record outcome;
    outcome.type = wal::RecordType::Outcome;
    outcome.object = {"RayJob", key.substr(0, key.find('/')), key.substr(key.find('/') + 1),
                      projection.job(key)->uid};
    outcome.attempt = intent.attempt;
    outcome.body = {{"intent_seq", intent.seq},
                    {"action", intent.action},
                    {"target", intent.target},
                    {"resolved_after_restart", resolution}};
    journal.append(outcome, wal::Durability::Lazy);
    spdlog::info("recovery: {} intent {} {} (seq {}) resolved {}", key, intent.action,
                 intent.target, intent.seq, resolution);
    if (afterResolve) afterResolve();
  }
  journal.sync();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace rayjournal::controller
