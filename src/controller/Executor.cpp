#include "controller/Executor.h"

#include <spdlog/spdlog.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <unistd.h>

#include "adapters/TimeFormat.h"
#include "controller/rayjob/Children.h"
#include "controller/EventNotes.h"
#include "controller/Finalizers.h"
#include "events/EventCodec.h"
#include "model/JsonAccess.h"

namespace rayjournal::controller {
namespace {

// client-go's reportingInstance is "<controller>-<hostname>": in a StatefulSet, the Pod's name.
const std::string& reportingHost() {
  static const std::string host = [] {
    char name[256] = {};
    return gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string("unknown");
  }();
  return host;
}

// A token-auth Secret gets its token here, at execution, from OpenSSL's CSPRNG (KubeRay: 32
// random bytes, base64): the decision stays pure and the token never enters the journal.
void withFreshToken(json& secret) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1)
    throw std::runtime_error("cannot draw a random token for the auth Secret (RAND_bytes failed)");
  unsigned char text[64];
  int n = EVP_EncodeBlock(text, bytes, sizeof(bytes));
  secret["stringData"]["auth_token"] = std::string(reinterpret_cast<char*>(text), size_t(n));
}

// What an intent of the subject acts on, for its Event.
EventTarget targetOf(const Subject& s, const std::string& kind, const std::string& name) {
  bool head = kind == "Pod" && s.kind == "RayCluster" && name == model::headPodName(s.name);
  return {s.kind, kind, s.ns, name, head, s.kind == "RayCluster" ? s.name : ""};
}

// spec.entrypointResources, a JSON object of resource amounts, as KubeRay's ConvertRayJobToReq
// unmarshals it; anything else fails the submission, naming the field.
std::map<std::string, double> entrypointResourcesOf(const std::string& text) {
  std::map<std::string, double> resources;
  if (text.empty()) return resources;
  json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_object())
    throw std::invalid_argument("spec.entrypointResources is not a JSON object: " + text);
  for (const auto& [name, amount] : parsed.items()) {
    if (!amount.is_number())
      throw std::invalid_argument("spec.entrypointResources[\"" + name + "\"] is not a number");
    resources[name] = amount.get<double>();
  }
  return resources;
}

}  // namespace

Subject subjectOf(const RayJob& job) {
  return {"RayJob", job.ns,  job.name, job.uid, uint32_t(job.status.failed + 1),
          "",       job.key(), job.raw};
}

wal::Record Executor::recordFor(const Subject& s, wal::RecordType type, std::string body) const {
  wal::Record r;
  r.type = type;
  r.object = {s.kind, s.ns, s.name, s.uid};
  r.attempt = s.attempt;
  r.timeMs = clock_.nowMs();
  r.body = std::move(body);
  return r;
}

ExecResult Executor::execute(const Subject& s, Plan& plan) {
  return executeAll({{&s, &plan}}).front();
}

std::vector<ExecResult> Executor::executeAll(const std::vector<Decision>& decisions) {
  std::vector<ExecResult> results(decisions.size());
  std::vector<wal::Record> batch;
  std::vector<size_t> intentsBefore;  // index in batch of each decision's first intent
  for (const auto& [s, plan] : decisions) {
    for (const auto& o : plan->observations)
      batch.push_back(recordFor(*s, wal::RecordType::Observation, events::encode(o)));
    intentsBefore.push_back(batch.size());
    for (const auto& i : plan->intents) {
      events::IntentBody body = i.journalBody();
      body.why = plan->why;
      body.rayjob = s->parent;
      batch.push_back(recordFor(*s, wal::RecordType::Intent, events::encode(body)));
    }
  }
  if (batch.empty()) return results;
  // The intents are durable before any side effect: the write-ahead rule.
  uint64_t first = journal_.appendBatch(std::move(batch), wal::Durability::Sync);
  // The outcomes go to the journal together, lazily, once the plans ran: a lost outcome only
  // leaves its intent in doubt for the restart to resolve, so one write serves the batch.
  std::vector<wal::Record> outcomes;
  std::vector<std::pair<const Intent*, uint64_t>> executed;
  for (size_t d = 0; d < decisions.size(); ++d) {
    const Subject& s = *decisions[d].subject;
    Plan& plan = *decisions[d].plan;
    // The object as the server last returned it (finalizer writes move its resourceVersion).
    kube::Snapshot current = s.raw;
    for (size_t n = 0; n < plan.intents.size(); ++n) {
      uint64_t seq = first + intentsBefore[d] + n;
      events::OutcomeBody outcome = outcomeOf(s, plan.intents[n], seq, results[d], current);
      if (outcome.result != events::Result::Abandoned)
        executed.emplace_back(&plan.intents[n], seq);
      outcomes.push_back(recordFor(s, wal::RecordType::Outcome, events::encode(outcome)));
    }
  }
  if (!outcomes.empty()) journal_.appendBatch(std::move(outcomes), wal::Durability::Lazy);
  for (const auto& [intent, seq] : executed)
    if (hook) hook(Stage::OutcomeJournaled, *intent, seq);
  return results;
}

// Executes one intent (unless an earlier one failed or leadership is gone) and says how it ended.
events::OutcomeBody Executor::outcomeOf(const Subject& s, Intent& intent, uint64_t seq,
                                        ExecResult& result, kube::Snapshot& current) {
  events::OutcomeBody outcome{seq, intent.action, intent.target, events::Result::Ok, "", {}};
  auto fail = [&](events::Result how, const std::string& why) {
    outcome.result = how;
    outcome.detail = why;
    // The first failure names the reconcile's error (a status written after it may fail too).
    if (result.ok) result.error = actionName(intent.action) + " " + intent.target + ": " + why;
    result.ok = false;
  };
  if (!result.ok && !intent.runsAfterFailure) {
    outcome.result = events::Result::Abandoned;
    outcome.detail = "an earlier intent of the same decision failed";
    return outcome;
  }
  if (mayAct && !mayAct(s.shardKey.empty() ? s.key() : s.shardKey)) {
    fail(events::Result::Abandoned, "this process is no longer the leader");
    return outcome;
  }
  // The hook is outside the try: a simulated crash must not turn into an outcome.
  if (hook) hook(Stage::IntentDurable, intent, seq);
  try {
    outcome.result = run(s, intent, current);
  } catch (const kube::ApiError& e) {
    fail(events::Result::Error, e.what());
    outcome.code = e.code();
    return outcome;
  } catch (const std::exception& e) {
    // Ray errors, and anything unexpected: an error outcome, never an intent left in doubt.
    fail(events::Result::Error, e.what());
    return outcome;
  }
  ++result.executed;
  if (hook) hook(Stage::Executed, intent, seq);
  return outcome;
}

events::Result Executor::run(const Subject& s, Intent& intent, kube::Snapshot& current) {
  switch (intent.action) {
    case Action::AddFinalizer:
      return changeFinalizer(s, true, current);
    case Action::RemoveFinalizer:
      return changeFinalizer(s, false, current);
    case Action::CreateRayCluster:
      return create(s, "RayCluster", intent);
    case Action::CreateSubmitterJob:
    case Action::CreateRedisCleanupJob:
      return create(s, "Job", intent);
    case Action::CreateHeadService:
    case Action::CreateService:
      return create(s, "Service", intent);
    case Action::CreatePod:
      return create(s, "Pod", intent);
    case Action::CreateSecret:
      withFreshToken(*intent.object);
      return create(s, "Secret", intent);
    case Action::CreateServiceAccount:
      return create(s, "ServiceAccount", intent);
    case Action::CreateRole:
      return create(s, "Role", intent);
    case Action::CreateRoleBinding:
      return create(s, "RoleBinding", intent);
    case Action::CreatePersistentVolumeClaim:
      return create(s, "PersistentVolumeClaim", intent);
    case Action::CreatePodGroup:
      return create(s, "PodGroup", intent);
    case Action::UpdatePodGroup:  // KubeRay posts no Event for its PodGroups
      kube_.update("PodGroup", std::move(*intent.object));
      return events::Result::Ok;
    case Action::DeleteRayCluster:
      return removeChild(s, "RayCluster", intent.target);
    case Action::DeleteSubmitterJob:
      return removeChild(s, "Job", intent.target);
    case Action::DeleteRayJob:
      return removeChild(s, "RayJob", intent.target);
    case Action::DeletePod:
      return removeChild(s, "Pod", intent.target);
    case Action::SuspendWorkerGroups:
      return suspendWorkers(s, intent);
    case Action::UpdateHeadService:
      return updateHeadService(s, intent);
    case Action::SubmitRayJob:
    case Action::StopRayJob:
      return runRay(intent);
    case Action::WriteStatus: {
      json doc = *current;
      doc["status"] = std::move(*intent.object);
      current = kube_.updateStatus(s.kind, std::move(doc));
      return events::Result::Ok;
    }
  }
  return events::Result::Ok;
}

events::Result Executor::runRay(Intent& intent) {
  const json& request = *intent.object;
  const std::string dashboard = request.value("dashboard", "");
  if (intent.action == Action::StopRayJob)
    return ray_.stop(dashboard, intent.target) ? events::Result::Ok : events::Result::AlreadyDone;
  ray::SubmitRequest r;
  r.submissionId = request.value("submissionId", "");
  r.entrypoint = request.value("entrypoint", "");
  r.runtimeEnv = request.value("runtimeEnv", json());
  r.metadata = request.value("metadata", std::map<std::string, std::string>{});
  r.entrypointNumCpus = request.value("entrypointNumCpus", 0.0);
  r.entrypointNumGpus = request.value("entrypointNumGpus", 0.0);
  r.entrypointResources = entrypointResourcesOf(request.value("entrypointResources", ""));
  return ray_.submit(dashboard, r) == ray::SubmitResult::Submitted ? events::Result::Ok : events::Result::AlreadyDone;
}

events::Result Executor::suspendWorkers(const Subject& s, Intent& intent) {
  const EventTarget target = targetOf(s, "RayCluster", intent.target);
  try {
    kube_.update("RayCluster", std::move(*intent.object));
    postEvent(s, workersSuspendedNote(target));
    return events::Result::Ok;
  } catch (const kube::ApiError& e) {
    if (e.notFound()) return events::Result::AlreadyDone;
    postEvent(s, workersSuspendedNote(target, e.what()));
    throw;
  }
}

events::Result Executor::updateHeadService(const Subject& s, Intent& intent) {
  const EventTarget target = targetOf(s, "Service", intent.target);
  try {
    kube_.update("Service", std::move(*intent.object));
    postEvent(s, serviceUpdateNote(target));
    return events::Result::Ok;
  } catch (const kube::ApiError& e) {
    postEvent(s, serviceUpdateNote(target, e.what()));
    throw;
  }
}

events::Result Executor::create(const Subject& s, const std::string& kind, Intent& intent) {
  const EventTarget target = targetOf(s, kind, intent.target);
  // KubeRay posts none for the auth Secret, nor for a PodGroup.
  const bool announced = kind != "Secret" && kind != "PodGroup";
  try {
    kube_.post(kind, std::move(*intent.object));  // the answer only goes to the cache
    if (announced) postEvent(s, createNote(target));
    return events::Result::Ok;
  } catch (const kube::ApiError& e) {
    if (!e.alreadyExists()) {
      if (announced) postEvent(s, createNote(target, e.what()));
      throw;
    }
    // The autoscaler's RBAC is used as found, whoever made it (KubeRay: "already exist, no need
    // to create"); a user may have prepared it. So is an existing GCS store claim: one a Retain
    // deletion left behind keeps Ray's metadata for a cluster of the same name (KubeRay).
    // A PodGroup too ("podGroup already exists, no need to create").
    if (kind == "ServiceAccount" || kind == "Role" || kind == "RoleBinding" ||
        kind == "PersistentVolumeClaim" || kind == "PodGroup")
      return events::Result::Adopted;
    auto existing = kube_.getLive(kind, s.ns, intent.target);
    if (existing && ownedBy(*existing, s.uid)) return events::Result::Adopted;
    std::string message = kind + " " + s.ns + "/" + intent.target +
                          " already exists and is not owned by " + s.kind + " " + s.key() +
                          " (uid " + s.uid + "); refusing to adopt it";
    EventNote refused = createNote(target, "already exists");
    refused.message = message;
    postEvent(s, refused);
    throw kube::ApiError(409, "AlreadyExists", message);
  }
}

events::Result Executor::removeChild(const Subject& s, const std::string& kind,
                                     const std::string& name) {
  const EventTarget target = targetOf(s, kind, name);
  const bool announced = kind != "RayJob";  // KubeRay posts none for DeleteSelf either
  try {
    kube_.remove(kind, s.ns, name, kube::Propagation::Background);
    if (announced) postEvent(s, deleteNote(target));
    return events::Result::Ok;
  } catch (const kube::ApiError& e) {
    if (e.notFound()) return events::Result::AlreadyDone;
    if (announced) postEvent(s, deleteNote(target, e.what()));
    throw;
  }
}

events::Result Executor::changeFinalizer(const Subject& s, bool add, kube::Snapshot& current) {
  const std::string finalizer = finalizerOf(s.kind);
  // Written against the resourceVersion the decision saw: a concurrent change is a 409, and the
  // decision is re-derived from fresh state.
  const json& meta = current->at("metadata");
  json finalizers = meta.value("finalizers", json::array());
  json next = json::array();
  for (const auto& f : finalizers)
    if (f != finalizer) next.push_back(f);
  if (add) next.push_back(finalizer);
  if (next == finalizers) return events::Result::AlreadyDone;
  json doc = *current;
  doc["metadata"]["finalizers"] = next;
  try {
    current = kube_.update(s.kind, std::move(doc));
  } catch (const kube::ApiError& e) {
    if (e.notFound() && !add) return events::Result::AlreadyDone;
    throw;
  }
  return events::Result::Ok;
}

void Executor::postEvent(const Subject& s, const EventNote& note) {
  if (note.type == "Warning")
    spdlog::warn("{} {}: {}: {}", s.kind, s.key(), note.reason, note.message);
  if (!normalEvents_ && note.type != "Warning") return;
  try {
    const int64_t now = clock_.nowMs();
    kube::EventDraft event{
        .name = s.name + "." + std::to_string(now) + "." + std::to_string(eventCounter_++),
        .kind = s.kind,
        .ns = s.ns,
        .objectName = s.name,
        .uid = s.uid,
        .reason = note.reason,
        .note = note.message,
        .type = note.type,
        .action = note.action,
        .reportingController = reportingController(s.kind),
        .reportingInstance = reportingController(s.kind) + "-" + reportingHost(),
        .eventTimeMs = now};
    if (events_)
      events_->post(std::move(event));
    else
      kube_.create("Event", kube::eventObject(event));
  } catch (const std::exception& e) {
    spdlog::warn("could not post event {} for {} {}: {}", note.reason, s.kind, s.key(), e.what());
  }
}

}  // namespace rayjournal::controller
