#include "projection/RunIndex.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "events/EventCodec.h"
#include "projection/LastStatus.h"

namespace rayjournal::projection {
namespace {

std::string textOf(const events::StatusDigest& status, const char* field) {
  auto it = status.find(field);
  const auto* text = it == status.end() ? nullptr : std::get_if<std::string>(&it->second);
  return text ? *text : "";
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool matchesAny(const std::string& value, const std::string& list) {
  if (list.empty()) return true;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');)
    if (lower(item) == lower(value) || (lower(item) == "none" && value.empty())) return true;
  return false;
}

// "2026-12-05T07:20:06Z" without the adapters layer (projection sits below it).
std::string rfc3339(int64_t ms) {
  std::time_t seconds = ms / 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace

bool RunFilter::matches(const Run& run) const {
  if (!ns.empty() && run.ns != ns) return false;
  if (!name.empty() && run.name != name) return false;
  if (pendingOrFailed && run.pending == 0 && run.lastError.empty()) return false;
  if (deletedOnly && !run.deleted) return false;
  if (!matchesAny(run.status, status) || !matchesAny(run.reason, reason)) return false;
  if (sinceSeq && run.lastSeq < *sinceSeq) return false;
  if (sinceMs && run.lastMs < *sinceMs) return false;
  return true;
}

void RunIndex::apply(const wal::Record& r) {
  if (r.seq <= through_) return;
  through_ = r.seq;
  if (r.object.kind != "RayJob") return;
  Run& run = runFor(r);
  run.lastSeq = r.seq;
  run.lastMs = r.timeMs;
  if (r.type == wal::RecordType::Intent) return intend(r, size_t(&run - runs_.data()));
  if (r.type == wal::RecordType::Outcome) return land(r);
  if (r.type != wal::RecordType::Observation) return;
  auto observation = events::decodeObservation(r);
  if (!observation) return;
  if (const auto* a = std::get_if<events::AttemptStarted>(&*observation))
    run.attempts = std::max(run.attempts, a->attempt);
  if (auto status = statusAfterObservation(*observation)) run.status = *status;
}

Run& RunIndex::runFor(const wal::Record& r) {
  const std::string key = r.object.ns + "/" + r.object.name;
  auto it = current_.find(key);
  const bool fresh = it == current_.end() ||
                     (!r.object.uid.empty() && !runs_[it->second].uid.empty() &&
                      runs_[it->second].uid != r.object.uid);
  if (!fresh) {
    Run& run = runs_[it->second];
    if (run.uid.empty()) run.uid = r.object.uid;
    return run;
  }
  Run run;
  run.ns = r.object.ns;
  run.name = r.object.name;
  run.uid = r.object.uid;
  run.firstSeq = r.seq;
  run.firstMs = r.timeMs;
  ordered_[{run.ns, run.name, run.firstSeq}] = runs_.size();
  runs_.push_back(std::move(run));
  current_[key] = runs_.size() - 1;
  return runs_.back();
}

void RunIndex::intend(const wal::Record& r, size_t run) {
  events::IntentBody body = events::decodeIntent(r);
  pending_[r.seq] = {run, body.action, std::move(body.status)};
  runs_[run].pending++;
}

void RunIndex::land(const wal::Record& r) {
  events::OutcomeBody body = events::decodeOutcome(r);
  auto it = pending_.find(body.intentSeq);
  if (it == pending_.end()) return;
  Run& run = runs_[it->second.run];
  run.pending--;
  if (body.result == events::Result::Error)
    run.lastError = events::actionName(body.action) + " " + body.target + ": " + body.detail;
  if (events::landed(body.result)) landed(run, it->second, r.timeMs);
  pending_.erase(it);
}

void RunIndex::landed(Run& run, const Pending& p, int64_t timeMs) {
  if (p.action == events::Action::RemoveFinalizer) {
    run.deleted = true;
    run.deletedMs = timeMs;
  }
  auto status = statusAfterOutcome(p.action, events::Result::Ok, p.status);
  if (!status) return;
  run.status = *status;
  run.jobStatus = textOf(p.status, "jobStatus");
  run.reason = textOf(p.status, "reason");
  if (std::string id = textOf(p.status, "jobId"); !id.empty()) run.jobId = id;
  if (std::string c = textOf(p.status, "rayClusterName"); !c.empty()) run.rayCluster = c;
}

std::vector<Run> RunIndex::runs(const RunFilter& filter) const {
  std::vector<Run> out;
  forEach(filter, [&](const Run& run) { out.push_back(run); });
  return out;
}

void RunIndex::forEach(const RunFilter& filter,
                       const std::function<void(const Run&)>& visit) const {
  for (const auto& [key, at] : ordered_)
    if (filter.matches(runs_[at])) visit(runs_[at]);
}

const Run* RunIndex::newest(const std::string& ns, const std::string& name) const {
  auto it = current_.find(ns + "/" + name);
  return it == current_.end() ? nullptr : &runs_[it->second];
}

nlohmann::json runToJson(const Run& r) {
  return {{"namespace", r.ns},
          {"name", r.name},
          {"uid", r.uid},
          {"jobDeploymentStatus", r.status},
          {"jobStatus", r.jobStatus},
          {"reason", r.reason},
          {"jobId", r.jobId},
          {"rayClusterName", r.rayCluster},
          {"attempts", r.attempts},
          {"pendingIntents", r.pending},
          {"lastError", r.lastError},
          {"deleted", r.deleted},
          {"deletedAt", r.deleted ? rfc3339(r.deletedMs) : ""},
          {"firstSeq", r.firstSeq},
          {"lastSeq", r.lastSeq},
          {"firstRecord", rfc3339(r.firstMs)},
          {"lastRecord", rfc3339(r.lastMs)}};
}

}  // namespace rayjournal::projection
