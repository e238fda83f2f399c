#include "controller/Executor.h"

#include <spdlog/spdlog.h>

#include "adapters/TimeFormat.h"
#include "controller/Children.h"

namespace rayjournal::controller {

wal::Record Executor::recordFor(const RayJob& job, wal::RecordType type, json body) const {
  wal::Record r;
  r.type = type;
  r.object = {"RayJob", job.ns, job.name, job.uid};
  r.attempt = uint32_t(job.status.failed + 1);
  r.timeMs = clock_.nowMs();
  r.body = std::move(body);
  return r;
}

ExecResult Executor::execute(const RayJob& job, Plan& plan) {
  ExecResult result;
  if (plan.intents.empty() && plan.observations.empty()) return result;
  std::vector<wal::Record> batch;
  for (const auto& o : plan.observations)
    batch.push_back(recordFor(job, wal::RecordType::Observation, o));
  for (const auto& i : plan.intents) {
    json body = i.journalBody();
    if (!plan.why.empty()) body["why"] = plan.why;
    batch.push_back(recordFor(job, wal::RecordType::Intent, std::move(body)));
  }
  // The intent is durable before the side effect: the write-ahead rule.
  uint64_t first = journal_.appendBatch(std::move(batch), wal::Durability::Sync);
  uint64_t intentSeq = first + plan.observations.size();
  // The RayJob as the server last returned it (finalizer writes move its resourceVersion).
  std::shared_ptr<const json> current = job.raw;
  for (size_t n = 0; n < plan.intents.size(); ++n, ++intentSeq) {
    Intent& intent = plan.intents[n];
    json outcome{{"intent_seq", intentSeq},
                 {"action", actionName(intent.action)},
                 {"target", intent.target}};
    if (!result.ok) {
      outcome["result"] = "abandoned";
      outcome["detail"] = "an earlier intent of the same decision failed";
    } else if (mayAct && !mayAct(job)) {
      outcome["result"] = "abandoned";
      outcome["detail"] = "this process is no longer the leader";
      result.ok = false;
      result.error = actionName(intent.action) + " " + intent.target + ": not the leader";
    } else {
      try {
        if (hook) hook(Stage::IntentDurable, intent, intentSeq);
        outcome["result"] = run(job, intent, current);
        ++result.executed;
        if (hook) hook(Stage::Executed, intent, intentSeq);
      } catch (const kube::ApiError& e) {
        outcome["result"] = "error";
        outcome["detail"] = e.what();
        outcome["code"] = e.code();
        result.ok = false;
        result.error = actionName(intent.action) + " " + intent.target + ": " + e.what();
      } catch (const ray::RayError& e) {
        outcome["result"] = "error";
        outcome["detail"] = e.what();
        result.ok = false;
        result.error = actionName(intent.action) + " " + intent.target + ": " + e.what();
      }
    }
    bool abandoned = outcome["result"] == "abandoned";
    journal_.append(recordFor(job, wal::RecordType::Outcome, std::move(outcome)),
                    wal::Durability::Lazy);
    if (hook && !abandoned) hook(Stage::OutcomeJournaled, intent, intentSeq);
  }
  return result;
}

std::string Executor::run(const RayJob& job, Intent& intent, std::shared_ptr<const json>& current) {
  switch (intent.action) {
    case Action::AddFinalizer:
      return changeFinalizer(job, true, current);
    case Action::RemoveFinalizer:
      return changeFinalizer(job, false, current);
    case Action::CreateRayCluster:
      return create(job, "RayCluster", intent);
    case Action::CreateSubmitterJob:
      return create(job, "Job", intent);
    case Action::DeleteRayCluster:
      return removeChild(job, "RayCluster", intent.target);
    case Action::DeleteSubmitterJob:
      return removeChild(job, "Job", intent.target);
    case Action::DeleteRayJob:
      return removeChild(job, "RayJob", intent.target);
    case Action::SuspendWorkerGroups:
      try {
        kube_.update("RayCluster", intent.object);
        postEvent(job,
                  {"Normal", "UpdatedRayCluster",
                   "Suspended the worker groups of RayCluster " + job.ns + "/" + intent.target});
        return "ok";
      } catch (const kube::ApiError& e) {
        if (e.notFound()) return "already_done";
        postEvent(job, {"Warning", "FailedToUpdateRayCluster",
                        "Failed to suspend the worker groups of RayCluster " + job.ns + "/" +
                            intent.target + ": " + e.what()});
        throw;
      }
    case Action::CreateHeadService:
      try {
        kube_.create("Service", intent.object);
        postEvent(job,
                  {"Normal", "CreatedService", "Created Service " + job.ns + "/" + intent.target});
        return "ok";
      } catch (const kube::ApiError& e) {
        if (!e.alreadyExists()) {
          postEvent(job,
                    {"Warning", "FailedToCreateService",
                     "Failed to create Service " + job.ns + "/" + intent.target + ": " + e.what()});
          throw;
        }
        return "adopted";
      }
    case Action::UpdateHeadService:
      kube_.update("Service", intent.object);
      postEvent(job,
                {"Normal", "UpdatedService", "Updated Service " + job.ns + "/" + intent.target});
      return "ok";
    case Action::SubmitRayJob: {
      ray::SubmitRequest r;
      r.submissionId = intent.object.value("submissionId", "");
      r.entrypoint = intent.object.value("entrypoint", "");
      r.runtimeEnv = intent.object.value("runtimeEnv", json());
      r.metadata = intent.object.value("metadata", std::map<std::string, std::string>{});
      r.entrypointNumCpus = intent.object.value("entrypointNumCpus", 0.0);
      r.entrypointNumGpus = intent.object.value("entrypointNumGpus", 0.0);
      return ray_.submit(intent.object.value("dashboard", ""), r) == ray::SubmitResult::Submitted
                 ? "ok"
                 : "already_done";
    }
    case Action::StopRayJob:
      return ray_.stop(intent.object.value("dashboard", ""), intent.target) ? "ok" : "already_done";
    case Action::WriteStatus: {
      json doc = *current;
      doc["status"] = std::move(intent.object);
      current = kube_.updateStatus("RayJob", std::move(doc));
      return "ok";
    }
  }
  return "ok";
}

std::string Executor::create(const RayJob& job, const std::string& kind, Intent& intent) {
  try {
    kube_.create(kind, std::move(intent.object));
    postEvent(job, {"Normal", kind == "RayCluster" ? "CreatedRayCluster" : "CreatedRayJobSubmitter",
                    "Created " + kind + " " + job.ns + "/" + intent.target});
    return "ok";
  } catch (const kube::ApiError& e) {
    if (!e.alreadyExists()) {
      postEvent(
          job, {"Warning",
                kind == "RayCluster" ? "FailedToCreateRayCluster" : "FailedToCreateRayJobSubmitter",
                "Failed to create new " + std::string(kind == "Job" ? "Kubernetes Job" : kind) +
                    " " + job.ns + "/" + intent.target + ": " + e.what()});
      throw;
    }
    auto existing = kube_.getLive(kind, job.ns, intent.target);
    if (existing && ownedBy(*existing, job.uid)) return "adopted";
    std::string message = kind + " " + job.ns + "/" + intent.target +
                          " already exists and is not owned by RayJob " + job.key() + " (uid " +
                          job.uid + "); refusing to adopt it";
    postEvent(job,
              {"Warning",
               kind == "RayCluster" ? "FailedToCreateRayCluster" : "FailedToCreateRayJobSubmitter",
               message});
    throw kube::ApiError(409, "AlreadyExists", message);
  }
}

std::string Executor::removeChild(const RayJob& job, const std::string& kind,
                                  const std::string& name) {
  try {
    kube_.remove(kind, job.ns, name, kube::Propagation::Background);
    if (kind == "RayCluster")
      postEvent(job, {"Normal", "DeletedRayCluster", "Deleted RayCluster " + job.ns + "/" + name});
    if (kind == "Job")
      postEvent(job, {"Normal", "DeletedRayJobSubmitter",
                      "Deleted submitter Job " + job.ns + "/" + name});
    return "ok";
  } catch (const kube::ApiError& e) {
    if (e.notFound()) return "already_done";
    throw;
  }
}

std::string Executor::changeFinalizer(const RayJob& job, bool add,
                                      std::shared_ptr<const json>& current) {
  // Written against the resourceVersion the decision saw: a concurrent change is a 409, and the
  // decision is re-derived from fresh state.
  const json& meta = current->at("metadata");
  json finalizers = meta.value("finalizers", json::array());
  json next = json::array();
  for (const auto& f : finalizers)
    if (f != kFinalizer) next.push_back(f);
  if (add) next.push_back(kFinalizer);
  if (next == finalizers) return "already_done";
  json doc = *current;
  doc["metadata"]["finalizers"] = next;
  try {
    current = kube_.update("RayJob", std::move(doc));
  } catch (const kube::ApiError& e) {
    if (e.notFound() && !add) return "already_done";
    throw;
  }
  (void)job;
  return "ok";
}

void Executor::postEvent(const RayJob& job, const EventNote& note) {
  try {
    json event{{"apiVersion", "events.k8s.io/v1"},
               {"kind", "Event"},
               {"metadata",
                {{"name", job.name + "." + std::to_string(clock_.nowMs()) + "." +
                              std::to_string(eventCounter_++)},
                 {"namespace", job.ns}}},
               {"regarding",
                {{"apiVersion", "ray.io/v1"},
                 {"kind", "RayJob"},
                 {"name", job.name},
                 {"namespace", job.ns},
                 {"uid", job.uid}}},
               {"reason", note.reason},
               {"note", note.message},
               {"type", note.type},
               {"action", note.type == "Warning" ? "Validate" : "Reconcile"},
               {"reportingController", "rayjournal.io/rayjob-controller"},
               {"reportingInstance", "rayjournal-operator"},
               {"eventTime", toRfc3339Micro(clock_.nowMs())}};
    kube_.create("Event", std::move(event));
  } catch (const std::exception& e) {
    spdlog::warn("could not post event {} for RayJob {}: {}", note.reason, job.key(), e.what());
  }
  if (note.type == "Warning")
    spdlog::warn("RayJob {}: {}: {}", job.key(), note.reason, note.message);
}

}  // namespace rayjournal::controller
