#include "controller/Recovery.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "controller/Children.h"

namespace rayjournal::controller {
namespace {

using projection::InDoubtIntent;
using projection::IntentFact;

// The kind of object an action creates or deletes; the subject's own kind for the rest.
std::string childKind(const std::string& action, const std::string& subjectKind) {
  if (action == "CreateRayCluster" || action == "DeleteRayCluster") return "RayCluster";
  if (action == "CreateSubmitterJob" || action == "DeleteSubmitterJob") return "Job";
  if (action == "CreatePod" || action == "DeletePod") return "Pod";
  if (action == "CreateService" || action == "CreateHeadService" || action == "UpdateHeadService")
    return "Service";
  return subjectKind;
}

std::string resolveStatusWrite(const IntentFact& intent, const json& object) {
  json status = object.value("status", json::object());
  json want = intent.status.is_object() ? intent.status : json::object();
  // Every field as written: found. Otherwise Kubernetes has moved on, or the write never
  // landed; the two cannot be told apart from the status alone, and it does not matter: the
  // next decision starts from what Kubernetes holds.
  for (const auto& [k, v] : want.items()) {
    if (status.value(k, json()) != v) return "superseded";
  }
  return "found";
}

std::string resolveRay(const IntentFact& intent, const json& job, ray::RayJobsClient& ray) {
  std::string dashboard = job.value("status", json::object()).value("dashboardURL", "");
  try {
    auto info = ray.getJob(dashboard, intent.target);
    if (intent.action == "SubmitRayJob") return info ? "found" : "absent";
    return info && ray::isTerminalRayStatus(info->status) ? "found" : "absent";
  } catch (const ray::RayError&) {
    return "superseded";  // Ray cannot answer; the next reconcile asks again before deciding
  }
}

// found: the side effect is visible in the world; absent: it is not; superseded: the world has
// moved on so that the question no longer applies (e.g. the subject is gone).
std::string resolve(const InDoubtIntent& doubt, kube::KubeClient& kube, ray::RayJobsClient& ray) {
  const std::string ns = doubt.key.substr(0, doubt.key.find('/'));
  const std::string name = doubt.key.substr(doubt.key.find('/') + 1);
  const IntentFact& intent = doubt.intent;
  const std::string& a = intent.action;
  const std::string kind = childKind(a, doubt.kind);
  if (a.rfind("Create", 0) == 0) return kube.getLive(kind, ns, intent.target) ? "found" : "absent";
  if (a.rfind("Delete", 0) == 0) return kube.getLive(kind, ns, intent.target) ? "absent" : "found";
  auto subject = kube.getLive(doubt.kind, ns, name);
  if (!subject) return "superseded";
  if (a == "AddFinalizer" || a == "RemoveFinalizer") {
    bool has = false;
    for (const auto& f : (*subject)["metadata"].value("finalizers", json::array()))
      has = has || f == kFinalizer;
    return has == (a == "AddFinalizer") ? "found" : "absent";
  }
  if (a == "WriteStatus") return resolveStatusWrite(intent, *subject);
  if (a == "SubmitRayJob" || a == "StopRayJob") return resolveRay(intent, *subject, ray);
  return "superseded";
}

void count(RecoveryReport& report, const std::string& resolution) {
  if (resolution == "found")
    ++report.found;
  else if (resolution == "absent")
    ++report.absent;
  else
    ++report.superseded;
}

}  // namespace

RecoveryReport rebuild(wal::Journal& journal, projection::JobProjection& projection) {
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
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

void resolveInDoubt(wal::Journal& journal, projection::JobProjection& projection,
                    kube::KubeClient& kube, ray::RayJobsClient& ray, RecoveryReport& report,
                    const std::function<void()>& afterResolve) {
  auto start = std::chrono::steady_clock::now();
  auto doubts = projection.inDoubt();
  report.inDoubt = doubts.size();
  wal::Record started;
  started.type = wal::RecordType::ControllerStarted;
  started.body = {{"epoch", journal.epoch()},
                  {"in_doubt", doubts.size()},
                  {"replayed", report.replayedRecords},
                  {"checkpoint_seq", report.checkpointSeq}};
  journal.append(started, wal::Durability::Sync);
  for (const auto& doubt : doubts) {
    const IntentFact& intent = doubt.intent;
    std::string resolution;
    for (int tries = 0; resolution.empty() && tries < 3; ++tries) {
      try {
        resolution = resolve(doubt, kube, ray);
      } catch (const kube::ApiError& e) {
        spdlog::warn("recovery: {} {} intent {} {} (seq {}): cannot ask Kubernetes: {}",
                     doubt.kind, doubt.key, intent.action, intent.target, intent.seq, e.what());
      }
    }
    if (resolution.empty()) {
      // Still in doubt: the reconcile decides from Kubernetes anyway, and the next restart asks
      // again.
      ++report.unresolved;
      continue;
    }
    count(report, resolution);
    wal::Record outcome;
    outcome.type = wal::RecordType::Outcome;
    outcome.object = {doubt.kind, doubt.key.substr(0, doubt.key.find('/')),
                      doubt.key.substr(doubt.key.find('/') + 1), doubt.uid};
    outcome.attempt = intent.attempt;
    outcome.body = {{"intent_seq", intent.seq},
                    {"action", intent.action},
                    {"target", intent.target},
                    {"resolved_after_restart", resolution}};
    journal.append(outcome, wal::Durability::Lazy);
    spdlog::info("recovery: {} {} intent {} {} (seq {}) resolved {}", doubt.kind, doubt.key,
                 intent.action, intent.target, intent.seq, resolution);
    if (afterResolve) afterResolve();
  }
  journal.sync();
  report.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

RecoveryReport recover(wal::Journal& journal, projection::JobProjection& projection,
                       kube::KubeClient& kube, ray::RayJobsClient& ray,
                       const std::function<void()>& afterResolve) {
  RecoveryReport report = rebuild(journal, projection);
  journal.setAppendListener([&projection](const wal::Record& r) { projection.apply(r); });
  resolveInDoubt(journal, projection, kube, ray, report, afterResolve);
  return report;
}

}  // namespace rayjournal::controller
