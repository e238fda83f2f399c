#include "controller/Recovery.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "controller/Finalizers.h"
#include "controller/rayjob/Children.h"
#include "controller/JsonAccess.h"
#include "events/EventCodec.h"

namespace rayjournal::controller {
namespace {

using projection::InDoubtIntent;
using projection::IntentFact;

using events::Action;
using events::Result;

// The kind of object an action creates or deletes; the subject's own kind for the rest.
std::string childKind(Action action, const std::string& subjectKind) {
  switch (action) {
    case Action::CreateRayCluster:
    case Action::DeleteRayCluster:
      return "RayCluster";
    case Action::CreateSubmitterJob:
    case Action::DeleteSubmitterJob:
    case Action::CreateRedisCleanupJob:
      return "Job";
    case Action::CreatePod:
    case Action::DeletePod:
      return "Pod";
    case Action::CreateService:
    case Action::CreateHeadService:
    case Action::UpdateHeadService:
      return "Service";
    case Action::CreateSecret:
      return "Secret";
    case Action::CreateServiceAccount:
      return "ServiceAccount";
    case Action::CreateRole:
      return "Role";
    case Action::CreateRoleBinding:
      return "RoleBinding";
    case Action::CreatePersistentVolumeClaim:
      return "PersistentVolumeClaim";
    case Action::CreatePodGroup:
    case Action::UpdatePodGroup:
      return "PodGroup";
    default:
      return subjectKind;
  }
}

bool creates(Action a) {
  return a == Action::CreateRayCluster || a == Action::CreateSubmitterJob ||
         a == Action::CreateHeadService || a == Action::CreateService || a == Action::CreatePod ||
         a == Action::CreateSecret || a == Action::CreateServiceAccount || a == Action::CreateRole ||
         a == Action::CreateRoleBinding || a == Action::CreateRedisCleanupJob ||
         a == Action::CreatePersistentVolumeClaim || a == Action::CreatePodGroup;
}

bool deletes(Action a) {
  return a == Action::DeleteRayCluster || a == Action::DeleteSubmitterJob ||
         a == Action::DeleteRayJob || a == Action::DeletePod;
}

bool sameValue(const json& live, const events::StatusValue& want) {
  if (const auto* n = std::get_if<int64_t>(&want))
    return live.is_number_integer() && live.get<int64_t>() == *n;
  return live.is_string() && live.get<std::string>() == std::get<std::string>(want);
}

Result resolveStatusWrite(const IntentFact& intent, const json& object) {
  const json& status = objectAt(object, "status");
  // Every field as written: found. Otherwise Kubernetes has moved on, or the write never
  // landed; the two cannot be told apart from the status alone, and it does not matter: the
  // next decision starts from what Kubernetes holds.
  for (const auto& [k, v] : intent.status)
    if (!sameValue(memberAt(status, k.c_str()), v)) return Result::Superseded;
  return Result::Found;
}

Result resolveRay(const IntentFact& intent, const json& job, ray::RayJobsClient& ray) {
  const std::string& dashboard = stringAt(objectAt(job, "status"), "dashboardURL");
  try {
    auto info = ray.getJob(dashboard, intent.target);
    if (intent.action == Action::SubmitRayJob) return info ? Result::Found : Result::Absent;
    return info && ray::isTerminalRayStatus(info->status) ? Result::Found : Result::Absent;
  } catch (const ray::RayError&) {
    return Result::Superseded;  // Ray cannot answer; the next reconcile asks again
  }
}

// Found: the side effect is visible in the world; Absent: it is not; Superseded: the world has
// moved on so that the question no longer applies (e.g. the subject is gone).
Result resolve(const InDoubtIntent& doubt, kube::KubeClient& kube, ray::RayJobsClient& ray) {
  const std::string ns = doubt.key.substr(0, doubt.key.find('/'));
  const std::string name = doubt.key.substr(doubt.key.find('/') + 1);
  const IntentFact& intent = doubt.intent;
  const Action a = intent.action;
  const std::string kind = childKind(a, doubt.kind);
  if (creates(a)) return kube.getLive(kind, ns, intent.target) ? Result::Found : Result::Absent;
  if (deletes(a)) return kube.getLive(kind, ns, intent.target) ? Result::Absent : Result::Found;
  auto subject = kube.getLive(doubt.kind, ns, name);
  if (!subject) return Result::Superseded;
  if (a == Action::AddFinalizer || a == Action::RemoveFinalizer) {
    bool has = false;
    for (const auto& f : arrayAt(objectAt(*subject, "metadata"), "finalizers"))
      has = has || f == finalizerOf(doubt.kind);
    return has == (a == Action::AddFinalizer) ? Result::Found : Result::Absent;
  }
  if (a == Action::WriteStatus) return resolveStatusWrite(intent, *subject);
  if (a == Action::SubmitRayJob || a == Action::StopRayJob)
    return resolveRay(intent, *subject, ray);
  return Result::Superseded;
}

void count(RecoveryReport& report, Result resolution) {
  if (resolution == Result::Found)
    ++report.found;
  else if (resolution == Result::Absent)
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
    projection.restore(std::move(cp->state));
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
  started.body = events::encode(
      events::ControllerStarted{journal.epoch(), doubts.size(), report.replayedRecords,
                                report.checkpointSeq});
  journal.append(started, wal::Durability::Sync);
  for (const auto& doubt : doubts) {
    const IntentFact& intent = doubt.intent;
    std::optional<Result> resolution;
    for (int tries = 0; !resolution && tries < 3; ++tries) {
      try {
        resolution = resolve(doubt, kube, ray);
      } catch (const kube::ApiError& e) {
        spdlog::warn("recovery: {} {} intent {} {} (seq {}): cannot ask Kubernetes: {}",
                     doubt.kind, doubt.key, actionName(intent.action), intent.target, intent.seq,
                     e.what());
      }
    }
    if (!resolution) {
      // Still in doubt: the reconcile decides from Kubernetes anyway, and the next restart asks
      // again.
      ++report.unresolved;
      continue;
    }
    count(report, *resolution);
    wal::Record outcome;
    outcome.type = wal::RecordType::Outcome;
    outcome.object = {doubt.kind, doubt.key.substr(0, doubt.key.find('/')),
                      doubt.key.substr(doubt.key.find('/') + 1), doubt.uid};
    outcome.attempt = intent.attempt;
    outcome.body =
        events::encode(events::OutcomeBody{intent.seq, intent.action, intent.target, *resolution,
                                           "", std::nullopt});
    journal.append(outcome, wal::Durability::Lazy);
    spdlog::info("recovery: {} {} intent {} {} (seq {}) resolved {}", doubt.kind, doubt.key,
                 actionName(intent.action), intent.target, intent.seq, resultName(*resolution));
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
