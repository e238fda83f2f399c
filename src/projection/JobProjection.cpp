#include "projection/JobProjection.h"
#include "projection/LastStatus.h"

#include <algorithm>
#include <stdexcept>

#include "events/EventCodec.h"
#include "model/JsonAccess.h"
#include "model/Names.h"
#include "projection/CheckpointCodec.h"

namespace rayjournal::projection {
namespace {

constexpr size_t kKeptResolvedIntents = 8;

std::string keyOf(const wal::Record& r) {
  return r.object.ns + "/" + r.object.name;
}

// The checkpoint's and the tools' JSON of an intent fact (names as the journal writes them).
json intentToJson(const IntentFact& i) {
  json j{{"seq", i.seq},
         {"action", events::actionName(i.action)},
         {"target", i.target},
         {"attempt", i.attempt},
         {"time_ms", i.timeMs},
         {"epoch", i.epoch},
         {"outcome", i.outcome ? events::resultName(*i.outcome) : ""}};
  if (!i.status.empty()) {
    json status = json::object();
    for (const auto& [k, v] : i.status)
      std::visit([&, key = k](const auto& value) { status[key] = value; }, v);
    j["status"] = status;
  }
  return j;
}

IntentFact intentFromJson(const json& j) {
  IntentFact f{j["seq"], events::Action::WriteStatus, j["target"], j["attempt"],
               j["time_ms"], j["epoch"], std::nullopt, {}};
  auto action = events::actionFromName(j["action"].get<std::string>());
  if (!action) throw std::invalid_argument("unknown action " + j["action"].dump());
  f.action = *action;
  const std::string outcome = j["outcome"];
  if (!outcome.empty()) {
    f.outcome = events::resultFromName(outcome);
    if (!f.outcome) throw std::invalid_argument("unknown outcome " + outcome);
  }
  const json& status = model::objectAt(j, "status");
  for (const auto& [k, v] : status.items()) {
    if (v.is_number_integer()) f.status[k] = v.get<int64_t>();
    if (v.is_string()) f.status[k] = v.get<std::string>();
  }
  return f;
}

json stateToJson(const JobState& s) {
  json attempts = json::array();
  for (const auto& a : s.attempts) {
    attempts.push_back({{"attempt", a.attempt},
                        {"incarnation", a.incarnation},
                        {"rayClusterName", a.rayClusterName},
                        {"jobId", a.jobId},
                        {"start_ms", a.startMs}});
  }
  json intents = json::array();
  for (const auto& [seq, i] : s.intents) intents.push_back(intentToJson(i));
  return {{"uid", s.uid},
          {"attempt", s.attempt},
          {"incarnations", s.incarnations},
          {"first_start_ms", s.firstStartMs},
          {"attempt_start_ms", s.attemptStartMs},
          {"attempts", attempts},
          {"intents", intents},
          {"in_doubt", s.inDoubt},
          {"submissions", s.submissions},
          {"stop_requests", s.stopRequests},
          {"last_ray_status", s.lastRayStatus},
          {"last_deployment_status", s.lastDeploymentStatus},
          {"drifts", s.drifts},
          {"replica_failure_reason", s.replicaFailureReason},
          {"replica_failure_message", s.replicaFailureMessage},
          {"last_submit_error", s.lastSubmitError},
          {"retried", s.retried},
          {"next_worker_index", s.nextWorkerIndex},
          {"ignored_fields", s.ignoredFields}};
}

JobState stateFromJson(const json& j) {
  JobState s;
  s.uid = j["uid"];
  s.attempt = j["attempt"];
  s.incarnations = j["incarnations"];
  s.firstStartMs = j["first_start_ms"];
  s.attemptStartMs = j["attempt_start_ms"];
  for (const auto& a : j["attempts"])
    s.attempts.push_back(
        {a["attempt"], a["incarnation"], a["rayClusterName"], a["jobId"], a["start_ms"]});
  for (const auto& i : j["intents"]) {
    IntentFact f = intentFromJson(i);
    s.intents.emplace(f.seq, f);
  }
  s.inDoubt = j["in_doubt"].get<std::set<uint64_t>>();
  s.submissions = j["submissions"].get<std::map<std::string, int64_t>>();
  s.stopRequests = j["stop_requests"].get<std::map<std::string, int>>();
  s.lastRayStatus = j["last_ray_status"];
  s.lastDeploymentStatus = j["last_deployment_status"];
  s.drifts = j["drifts"];
  s.replicaFailureReason = j.value("replica_failure_reason", "");
  s.replicaFailureMessage = j.value("replica_failure_message", "");
  s.lastSubmitError = j.value("last_submit_error", "");
  if (j.contains("retried")) s.retried = j["retried"].get<std::vector<std::pair<int, int64_t>>>();
  if (j.contains("ignored_fields")) s.ignoredFields = j["ignored_fields"].get<std::set<std::string>>();
  if (j.contains("next_worker_index"))
    s.nextWorkerIndex = j["next_worker_index"].get<std::map<std::string, uint64_t>>();
  return s;
}

}  // namespace

void JobProjection::apply(const wal::Record& r) {
  std::lock_guard lock(mu_);
  appliedThrough_ = std::max(appliedThrough_, r.seq);
  std::map<std::string, JobState>* states = nullptr;
  if (r.object.kind == "RayJob")
    states = &jobs_;
  else if (r.object.kind == "RayCluster")
    states = &clusters_;
  else
    return;
  JobState& job = findOrAdd(*states, states == &jobs_ ? encoded_.jobs : encoded_.clusters, keyOf(r));
  startOverOnNewUid(job, r.object.uid);
  switch (r.type) {
    case wal::RecordType::Intent:
      applyIntent(job, r);
      break;
    case wal::RecordType::Outcome:
      applyOutcome(job, r);
      break;
    case wal::RecordType::Observation:
      applyObservation(job, r);
      break;
    default:
      break;
  }
}

void JobProjection::applyIntent(JobState& job, const wal::Record& r) {
  events::IntentBody body = events::decodeIntent(r);
  IntentFact f{r.seq, body.action, std::move(body.target), r.attempt, r.timeMs, r.epoch,
               std::nullopt, std::move(body.status)};
  if (f.action == events::Action::StopRayJob) job.stopRequests[f.target]++;
  if (f.action == events::Action::CreatePod && r.object.kind == "RayCluster")
    noteWorkerName(job, r.object.name, f);
  job.inDoubt.insert(r.seq);
  job.intents[r.seq] = std::move(f);
}

void JobProjection::noteWorkerName(JobState& cluster, const std::string& clusterName,
                                   const IntentFact& f) {
  auto worker = model::workerNameParts(f.target, clusterName);
  if (!worker) return;  // the head
  auto it = cluster.nextWorkerIndex.find(worker->group);
  if (it == cluster.nextWorkerIndex.end()) {
    if (cluster.nextWorkerIndex.size() >= kMaxWorkerGroupsKept) return;  // bounded: reuse then
    it = cluster.nextWorkerIndex.emplace(std::move(worker->group), 0).first;
  }
  it->second = std::max(it->second, worker->index + 1);
}

// A status write of Retrying landed: the attempt's duration, with the failed count before it
// (the write's own `failed` is the count after).
void JobProjection::noteRetried(JobState& job, const IntentFact& f, int64_t atMs) {
  auto failed = f.status.find("failed");
  const auto* after = failed == f.status.end() ? nullptr : std::get_if<int64_t>(&failed->second);
  int before = after && *after > 0 ? int(*after - 1) : int(job.retried.size());
  job.retried.emplace_back(before, std::max<int64_t>(0, atMs - job.attemptStartMs));
  if (job.retried.size() > kMaxRetriedAttempts) job.retried.erase(job.retried.begin());
}

void JobProjection::applyOutcome(JobState& job, const wal::Record& r) {
  events::OutcomeBody body = events::decodeOutcome(r);
  uint64_t seq = body.intentSeq;
  auto it = job.intents.find(seq);
  if (it == job.intents.end()) return;
  IntentFact& f = it->second;
  f.outcome = body.result;
  job.inDoubt.erase(seq);
  // Resolved intents stay in the journal (timeline reads them there); the projection keeps the
  // most recent few, so its size per RayJob stays bounded.
  while (job.intents.size() > kKeptResolvedIntents + job.inDoubt.size()) {
    auto oldest = std::find_if(job.intents.begin(), job.intents.end(),
                               [&](const auto& kv) { return !job.inDoubt.count(kv.first); });
    if (oldest == job.intents.end() || oldest->first == seq) break;
    job.intents.erase(oldest);
  }
  bool ok = events::landed(body.result);
  if (f.action == events::Action::CreatePod || f.action == events::Action::DeletePod)
    notePodOutcome(job, r.object.name, f, body);
  if (ok && f.action == events::Action::SubmitRayJob) job.submissions.emplace(f.target, r.timeMs);
  if (f.action == events::Action::SubmitRayJob && (ok || body.result == events::Result::Error))
    job.lastSubmitError = ok ? "" : body.detail.substr(0, kMaxFailureMessage);
  if (auto status = statusAfterOutcome(f.action, body.result, f.status)) {
    job.lastDeploymentStatus = *status;
    if (job.lastDeploymentStatus == "Retrying") noteRetried(job, f, r.timeMs);
  }
  // Only an intent still in doubt needs the status it meant to write (recovery compares it).
  f.status.clear();
}

void JobProjection::notePodOutcome(JobState& cluster, const std::string& clusterName,
                                   const IntentFact& f, const events::OutcomeBody& body) {
  if (events::landed(body.result)) {
    cluster.replicaFailureReason.clear();
    cluster.replicaFailureMessage.clear();
    return;
  }
  if (body.result != events::Result::Error) return;  // abandoned: it never ran
  const bool head = f.target == model::headPodName(clusterName);
  cluster.replicaFailureReason =
      std::string(f.action == events::Action::CreatePod ? "FailedCreate" : "FailedDelete") +
      (head ? "HeadPod" : "WorkerPod");
  cluster.replicaFailureMessage =
      (cluster.replicaFailureReason + "\n" + body.detail).substr(0, kMaxFailureMessage);
}

void JobProjection::applyObservation(JobState& job, const wal::Record& r) {
  auto observation = events::decodeObservation(r);
  if (!observation) return;  // a kind this build does not know
  if (const auto* started = std::get_if<events::AttemptStarted>(&*observation)) {
    AttemptFact a{started->attempt, started->incarnation, started->rayClusterName, started->jobId,
                  r.timeMs};
    job.attempt = a.attempt;
    job.incarnations = std::max(job.incarnations, a.incarnation);
    // Submissions and stops belong to one cluster incarnation: an explicit spec.jobId is
    // submitted again on the next attempt's new cluster (KubeRay), and Ray there has never seen
    // it, so the last attempt's confirmation must not read as a lost record (W8).
    job.submissions.clear();
    job.stopRequests.clear();
    job.lastSubmitError.clear();
    job.attemptStartMs = r.timeMs;
    if (job.firstStartMs == 0) job.firstStartMs = r.timeMs;
    job.attempts.push_back(std::move(a));
  } else if (const auto* seen = std::get_if<events::SubmissionSeen>(&*observation)) {
    job.submissions.emplace(seen->jobId, r.timeMs);
  } else if (const auto* terminal = std::get_if<events::RayJobTerminal>(&*observation)) {
    job.lastRayStatus = terminal->status;
  } else if (const auto* ignored = std::get_if<events::FieldIgnored>(&*observation)) {
    if (job.ignoredFields.size() < kMaxIgnoredFieldsKept) job.ignoredFields.insert(ignored->path);
  } else if (auto status = statusAfterObservation(*observation)) {
    job.drifts++;
    job.lastDeploymentStatus = *status;
  }
}

std::string JobProjection::checkpoint() const {
  return snapshot().first;
}

std::pair<std::string, uint64_t> JobProjection::snapshot() const {
  std::lock_guard lock(mu_);
  return {encodeCheckpoint(jobs_, clusters_, encoded_, appliedThrough_), appliedThrough_};
}

JobState& JobProjection::take(States& states, EncodedState& encoded) const {
  JobState& state = states.emplace(std::string(encoded.key), decodeState(encoded)).first->second;
  encoded.taken = true;
  --stillEncoded_;
  return state;
}

JobState* JobProjection::find(States& states, std::vector<EncodedState>& encoded,
                              const std::string& key) const {
  if (auto it = states.find(key); it != states.end()) return &it->second;
  auto e = std::lower_bound(encoded.begin(), encoded.end(), key,
                            [](const EncodedState& s, const std::string& k) { return s.key < k; });
  if (e == encoded.end() || e->key != key || e->taken) return nullptr;
  return &take(states, *e);
}

const JobState* JobProjection::read(States& states, std::vector<EncodedState>& encoded,
                                    const std::string& key) const {
  const JobState* state = find(states, encoded, key);
  releaseIfAllDecoded();
  return state;
}

JobState& JobProjection::findOrAdd(States& states, std::vector<EncodedState>& encoded,
                                   const std::string& key) {
  JobState* found = find(states, encoded, key);
  JobState& state = found ? *found : states[key];
  releaseIfAllDecoded();
  return state;
}

void JobProjection::decodeEncoded(bool inDoubtOnly) const {
  for (auto [states, encoded] :
       {std::pair{&jobs_, &encoded_.jobs}, {&clusters_, &encoded_.clusters}})
    for (EncodedState& e : *encoded)
      if (!e.taken && (e.inDoubt || !inDoubtOnly)) take(*states, e);
  releaseIfAllDecoded();
}

void JobProjection::releaseIfAllDecoded() const {
  if (stillEncoded_ == 0 && !encodedBytes_.empty()) dropEncoded();
}

void JobProjection::dropEncoded() const {
  encoded_ = {};
  std::string().swap(encodedBytes_);
  stillEncoded_ = 0;
}

void JobProjection::restore(std::string bytes) {
  EncodedStates encoded;
  uint64_t through = 0;
  // On the heap even when short: moving the string then keeps the buffer the views point into.
  bytes.reserve(32);
  if (splitCheckpoint(bytes, encoded, through)) {
    std::lock_guard lock(mu_);
    jobs_.clear();
    clusters_.clear();
    encodedBytes_ = std::move(bytes);
    encoded_ = std::move(encoded);
    stillEncoded_ = encoded_.jobs.size() + encoded_.clusters.size();
    appliedThrough_ = through;
    releaseIfAllDecoded();
    return;
  }
  if (isBinaryCheckpoint(bytes)) {
    ProjectionStates states;
    decodeCheckpoint(bytes, states, through);
    std::lock_guard lock(mu_);
    jobs_ = std::move(states.jobs);
    clusters_ = std::move(states.clusters);
    dropEncoded();
    appliedThrough_ = through;
    return;
  }
  // Checkpoints written before the binary format: a CBOR document.
  json j = json::from_cbor(bytes, true, false);
  if (j.is_discarded() || !j.is_object() || j.value("version", 0) != 1) {
    throw std::invalid_argument("checkpoint is not a version-1 job projection");
  }
  std::map<std::string, JobState> jobs;
  for (const auto& [key, state] : j["jobs"].items()) jobs.emplace(key, stateFromJson(state));
  std::lock_guard lock(mu_);
  jobs_ = std::move(jobs);
  clusters_.clear();
  dropEncoded();
  appliedThrough_ = j["applied_through"];
}

uint64_t JobProjection::appliedThrough() const {
  std::lock_guard lock(mu_);
  return appliedThrough_;
}

std::optional<JobState> JobProjection::job(const std::string& key) const {
  std::lock_guard lock(mu_);
  const JobState* s = read(jobs_, encoded_.jobs, key);
  if (!s) return std::nullopt;
  return *s;
}

JobFacts JobProjection::facts(const std::string& key, const std::string& currentJobId) const {
  std::lock_guard lock(mu_);
  JobFacts f;
  const JobState* s = read(jobs_, encoded_.jobs, key);
  if (!s) return f;
  f.nextIncarnation = s->incarnations + 1;
  for (const auto& [id, t] : s->submissions) f.submittedIds.insert(id);
  auto stops = s->stopRequests.find(currentJobId);
  f.stopAttempts = stops == s->stopRequests.end() ? 0 : stops->second;
  f.firstStartMs = s->firstStartMs;
  f.lastSubmitError = s->lastSubmitError;
  return f;
}

std::vector<InDoubtIntent> JobProjection::inDoubt() const {
  std::lock_guard lock(mu_);
  decodeEncoded(/*inDoubtOnly=*/true);  // a state not flagged has nothing in doubt
  std::vector<InDoubtIntent> out;
  for (const auto* states : {&jobs_, &clusters_}) {
    const char* kind = states == &jobs_ ? "RayJob" : "RayCluster";
    for (const auto& [key, s] : *states) {
      for (uint64_t seq : s.inDoubt) out.push_back({kind, key, s.uid, s.intents.at(seq)});
    }
  }
  return out;
}

uint32_t JobProjection::attemptOfCluster(const std::string& jobKey,
                                         const std::string& clusterName) const {
  std::lock_guard lock(mu_);
  const JobState* s = read(jobs_, encoded_.jobs, jobKey);
  if (!s) return 0;
  for (const auto& a : s->attempts)
    if (a.rayClusterName == clusterName) return a.attempt;
  return 0;
}

std::pair<std::string, std::string> JobProjection::replicaFailure(const std::string& key,
                                                                  const std::string& uid) const {
  std::lock_guard lock(mu_);
  const JobState* s = read(clusters_, encoded_.clusters, key);
  if (!s || s->uid != uid) return {};
  return {s->replicaFailureReason, s->replicaFailureMessage};
}

std::map<std::string, uint64_t> JobProjection::nextWorkerIndex(const std::string& key,
                                                               const std::string& uid) const {
  std::lock_guard lock(mu_);
  const JobState* s = read(clusters_, encoded_.clusters, key);
  if (!s || s->uid != uid) return {};
  return s->nextWorkerIndex;
}

std::set<std::string> JobProjection::ignoredFields(const std::string& kind, const std::string& key,
                                                   const std::string& uid) const {
  std::lock_guard lock(mu_);
  const JobState* s = kind == "RayCluster" ? read(clusters_, encoded_.clusters, key)
                                           : read(jobs_, encoded_.jobs, key);
  if (!s || s->uid != uid) return {};
  return s->ignoredFields;
}

std::optional<JobState> JobProjection::cluster(const std::string& key) const {
  std::lock_guard lock(mu_);
  const JobState* s = read(clusters_, encoded_.clusters, key);
  if (!s) return std::nullopt;
  return *s;
}

std::vector<std::pair<int, int64_t>> JobProjection::retriedAttempts(const std::string& key) const {
  std::lock_guard lock(mu_);
  const JobState* s = read(jobs_, encoded_.jobs, key);
  return s ? s->retried : std::vector<std::pair<int, int64_t>>{};
}

size_t JobProjection::jobCount() const {
  std::lock_guard lock(mu_);
  size_t encoded = 0;
  for (const EncodedState& e : encoded_.jobs) encoded += !e.taken;
  return jobs_.size() + encoded;
}

json JobProjection::toJson(const std::string& key) const {
  std::lock_guard lock(mu_);
  if (key.empty())
    decodeEncoded(/*inDoubtOnly=*/false);
  else
    read(jobs_, encoded_.jobs, key);
  json out = json::object();
  for (const auto& [k, s] : jobs_) {
    if (key.empty() || k == key) out[k] = stateToJson(s);
  }
  return out;
}

}  // namespace rayjournal::projection
