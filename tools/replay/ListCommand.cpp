// rayjournal-replay list: every RayJob run in the journal, deleted ones included, with filters.
#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "ReplayCommon.h"
#include "adapters/TimeFormat.h"
#include "events/EventCodec.h"

namespace rayjournal::replay {

namespace {

// One run: a RayJob by namespace, name and uid (a RayJob deleted and created again under its
// name is a second run). What its records say, as the projection derives it: the last status
// written that landed, its attempts, what is still pending, the last error.
struct Run {
  std::string ns, name, uid;
  uint64_t firstSeq = 0, lastSeq = 0;
  int64_t firstMs = 0, lastMs = 0, deletedMs = 0;
  std::string status, jobStatus, reason, jobId, rayCluster, lastError;
  uint32_t attempts = 0;
  size_t pending = 0;
  bool deleted = false;
};

std::string textOf(const events::StatusDigest& status, const char* field) {
  auto it = status.find(field);
  const auto* text = it == status.end() ? nullptr : std::get_if<std::string>(&it->second);
  return text ? *text : "";
}

// Streams the journal once; memory follows the runs and the intents in flight, not the records.
class RunTracker {
 public:
  void apply(const wal::Record& r) {
    if (r.object.kind != "RayJob") return;
    Run& run = runFor(r);
    run.lastSeq = r.seq;
    run.lastMs = r.timeMs;
    if (r.type == wal::RecordType::Intent) return intend(r);
    if (r.type == wal::RecordType::Outcome) return land(r);
    if (r.type != wal::RecordType::Observation) return;
    auto observation = events::decodeObservation(r);
    if (const auto* a = observation ? std::get_if<events::AttemptStarted>(&*observation) : nullptr)
      run.attempts = std::max(run.attempts, a->attempt);
  }

  std::vector<Run> runs() {
    for (const auto& [seq, p] : pending_) runs_[p.run].pending++;
    pending_.clear();
    return std::move(runs_);
  }

 private:
  struct Pending {
    size_t run;
    events::Action action;
    events::StatusDigest status;
  };

  Run& runFor(const wal::Record& r) {
    const std::string key = r.object.ns + "/" + r.object.name;
    auto it = current_.find(key);
    bool fresh = it == current_.end() ||
                 (!r.object.uid.empty() && !runs_[it->second].uid.empty() &&
                  runs_[it->second].uid != r.object.uid);
    if (fresh) {
      Run run;
      run.ns = r.object.ns;
      run.name = r.object.name;
      run.uid = r.object.uid;
      run.firstSeq = r.seq;
      run.firstMs = r.timeMs;
      runs_.push_back(std::move(run));
      current_[key] = runs_.size() - 1;
      return runs_.back();
    }
    Run& run = runs_[it->second];
    if (run.uid.empty()) run.uid = r.object.uid;
    return run;
  }

  void intend(const wal::Record& r) {
    events::IntentBody body = events::decodeIntent(r);
    pending_[r.seq] = {current_[r.object.ns + "/" + r.object.name], body.action,
                       std::move(body.status)};
  }

  void land(const wal::Record& r) {
    events::OutcomeBody body = events::decodeOutcome(r);
    auto it = pending_.find(body.intentSeq);
    if (it == pending_.end()) return;
    Run& run = runs_[it->second.run];
    if (body.result == events::Result::Error)
      run.lastError = events::actionName(body.action) + " " + body.target + ": " + body.detail;
    if (events::landed(body.result)) landed(run, it->second, r.timeMs);
    pending_.erase(it);
  }

  static void landed(Run& run, const Pending& p, int64_t timeMs) {
    if (p.action == events::Action::RemoveFinalizer) {
      run.deleted = true;
      run.deletedMs = timeMs;
    }
    if (p.action != events::Action::WriteStatus) return;
    run.status = textOf(p.status, "jobDeploymentStatus");
    run.jobStatus = textOf(p.status, "jobStatus");
    run.reason = textOf(p.status, "reason");
    if (std::string id = textOf(p.status, "jobId"); !id.empty()) run.jobId = id;
    if (std::string c = textOf(p.status, "rayClusterName"); !c.empty()) run.rayCluster = c;
  }

  std::vector<Run> runs_;
  std::map<std::string, size_t> current_;  // ns/name -> its newest run
  std::map<uint64_t, Pending> pending_;
};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// --status and --reason take a comma-separated list, matched without regard to case; "none"
// matches a run that has no status (or reason) yet.
bool matchesAny(const std::string& value, const std::string& list) {
  if (list.empty()) return true;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');)
    if (lower(item) == lower(value) || (lower(item) == "none" && value.empty())) return true;
  return false;
}

bool wanted(const Run& run, const ListFilter& f) {
  if (!f.ns.empty() && run.ns != f.ns) return false;
  if (f.deletedOnly && !run.deleted) return false;
  if (!matchesAny(run.status, f.status) || !matchesAny(run.reason, f.reason)) return false;
  if (f.since && f.since->seq && run.lastSeq < *f.since->seq) return false;
  if (f.since && f.since->timeMs && run.lastMs < *f.since->timeMs) return false;
  return true;
}

json runJson(const Run& r) {
  return {{"namespace", r.ns},       {"name", r.name},
          {"uid", r.uid},            {"jobDeploymentStatus", r.status},
          {"jobStatus", r.jobStatus}, {"reason", r.reason},
          {"jobId", r.jobId},        {"rayClusterName", r.rayCluster},
          {"attempts", r.attempts},  {"pendingIntents", r.pending},
          {"lastError", r.lastError}, {"deleted", r.deleted},
          {"deletedAt", r.deleted ? toRfc3339(r.deletedMs) : ""},
          {"firstSeq", r.firstSeq},  {"lastSeq", r.lastSeq},
          {"firstRecord", toRfc3339(r.firstMs)}, {"lastRecord", toRfc3339(r.lastMs)}};
}

std::string orNone(const std::string& s) { return s.empty() ? "-" : s; }

void printTable(const std::vector<Run>& runs, uint64_t firstSeq, std::ostream& out) {
  char line[512];
  const char* format = "%-12s %-32s %-12s %-10s %-24s %8s %7s %-20s %s\n";
  std::snprintf(line, sizeof(line), format, "NAMESPACE", "NAME", "STATUS", "JOB", "REASON",
                "ATTEMPTS", "PENDING", "LAST RECORD", "DELETED");
  out << line;
  for (const Run& r : runs) {
    std::snprintf(line, sizeof(line), format, r.ns.c_str(), r.name.c_str(),
                  orNone(r.status).c_str(), orNone(r.jobStatus).c_str(),
                  orNone(r.reason).c_str(), std::to_string(r.attempts).c_str(),
                  std::to_string(r.pending).c_str(), toRfc3339(r.lastMs).c_str(),
                  r.deleted ? toRfc3339(r.deletedMs).c_str() : "-");
    out << line;
  }
  if (runs.empty()) out << "no RayJob matches\n";
  if (firstSeq > 1)
    out << "records before seq " << firstSeq << " were pruned (retention): runs that ended "
        << "before them are not listed\n";
}

}  // namespace

int list(const std::string& dir, const ListFilter& filter, Output output, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    RunTracker tracker;
    Progress progress(journal->latestSeq() - journal->firstSeq() + 1);
    journal->scan(0, [&](const wal::Record& r) {
      progress.tick();
      tracker.apply(r);
      return true;
    });
    std::vector<Run> runs = tracker.runs();
    std::erase_if(runs, [&](const Run& r) { return !wanted(r, filter); });
    std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
      return std::tie(a.ns, a.name, a.firstSeq) < std::tie(b.ns, b.name, b.firstSeq);
    });
    if (output == Output::Json) {
      json rows = json::array();
      for (const Run& r : runs) rows.push_back(runJson(r));
      out << json{{"journal", dir}, {"historyFromSeq", journal->firstSeq()}, {"runs", rows}}.dump(2)
          << "\n";
    } else {
      printTable(runs, journal->firstSeq(), out);
    }
    return 0;
  });
}

}  // namespace rayjournal::replay
