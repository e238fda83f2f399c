// rayjournal-replay summary: the journal at a glance.
#include "ReplayCommon.h"

#include <map>

#include "adapters/TimeFormat.h"
#include "events/EventCodec.h"
#include "events/JournalBodies.h"
#include "events/RecordJson.h"
#include "projection/LastStatus.h"
#include "controller/raycluster/RayClusterViews.h"

namespace rayjournal::replay {

namespace {

// The RayJobs by last written status and the intents in doubt, from a whole projection.
void addProjectionCounts(json& report, const projection::JobProjection& p) {
  std::map<std::string, int> byStatus;
  const json all = p.toJson();
  for (const auto& [key, st] : all.items()) byStatus[st.value("last_deployment_status", "")]++;
  report["rayjobsByLastWrittenStatus"] = byStatus;
  json doubts = json::array();
  for (const auto& d : p.inDoubt())
    doubts.push_back({{"kind", d.kind}, {"key", d.key},
                      {"action", events::actionName(d.intent.action)},
                      {"target", d.intent.target}, {"seq", d.intent.seq}});
  report["inDoubt"] = std::move(doubts);
}

// What summary needs of the projection, kept while the scan streams: each RayJob's last written
// deployment status and the intents still without an outcome, by the rules JobProjection applies
// (projection/LastStatus.h: a new uid under a name starts its history over). A few dozen bytes per RayJob and per intent
// in flight, so memory follows the RayJobs, not the records (a whole projection keeps every
// RayJob's recent intents and attempts: 600 MB at 50,000 RayJobs).
class SummaryTracker {
 public:
  void apply(const wal::Record& r) {
    if (r.object.kind != "RayJob" && r.object.kind != "RayCluster") return;
    const std::string key = r.object.ns + "/" + r.object.name;
    Object& o = (r.object.kind == "RayJob" ? jobs_ : clusters_)[key];
    if (projection::startOverOnNewUid(o, r.object.uid)) forget(r.object.kind, key);
    if (r.type == wal::RecordType::Intent) return intend(r, key);
    if (r.type == wal::RecordType::Outcome) return land(r, o);
    if (r.type != wal::RecordType::Observation || r.object.kind != "RayJob") return;
    auto observation = events::decodeObservation(r);
    if (auto status = observation ? projection::statusAfterObservation(*observation) : std::nullopt)
      o.lastStatus = *status;
  }
  json byStatus() const {
    std::map<std::string, int> counts;
    for (const auto& [key, o] : jobs_) counts[o.lastStatus]++;
    return counts;
  }
  json inDoubt() const {
    json out = json::array();
    for (const auto& [seq, p] : pending_)
      out.push_back({{"kind", p.kind}, {"key", p.key}, {"action", events::actionName(p.action)},
                     {"target", p.target}, {"seq", seq}});
    std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
      return a["kind"] != b["kind"] ? a["kind"] > b["kind"] : a["key"] < b["key"];
    });
    return out;
  }

 private:
  struct Object {
    std::string uid, lastStatus;
  };
  struct Pending {
    std::string kind, key, target;
    events::Action action;
    events::StatusDigest written;  // a WriteStatus's fields
  };
  void intend(const wal::Record& r, const std::string& key) {
    events::IntentBody body = events::decodeIntent(r);
    pending_[r.seq] = {r.object.kind, key, std::move(body.target), body.action,
                       std::move(body.status)};
  }
  void land(const wal::Record& r, Object& o) {
    events::OutcomeBody body = events::decodeOutcome(r);
    auto it = pending_.find(body.intentSeq);
    if (it == pending_.end()) return;
    if (auto status = projection::statusAfterOutcome(it->second.action, body.result,
                                                     it->second.written);
        status && r.object.kind == "RayJob")
      o.lastStatus = *status;
    pending_.erase(it);
  }
  void forget(const std::string& kind, const std::string& key) {
    std::erase_if(pending_, [&](const auto& p) { return p.second.kind == kind && p.second.key == key; });
  }
  std::map<std::string, Object> jobs_, clusters_;
  std::map<uint64_t, Pending> pending_;
};

// What summary prints, as one document (the text form renders it). Streams the journal once; a
// journal pruned by retention starts from its newest checkpoint's projection instead.
json summaryReport(const std::string& dir, wal::Journal& journal) {
  json report = {{"journal", dir}, {"instance", journal.instanceId()},
                 {"firstSeq", journal.firstSeq()}, {"latestSeq", journal.latestSeq()}};
  std::map<std::string, uint64_t> counts;
  int64_t first = 0, last = 0;
  json restarts = json::array();
  SummaryTracker tracker;
  const bool pruned = journal.firstSeq() > 1;
  Progress progress(journal.latestSeq() - journal.firstSeq() + 1);
  journal.scan(0, [&](const wal::Record& r) {
    progress.tick();
    counts[std::string(wal::recordTypeName(r.type))]++;
    if (!first) first = r.timeMs;
    last = r.timeMs;
    if (!pruned) tracker.apply(r);
    if (r.type == wal::RecordType::ControllerStarted) {
      json body = events::bodyToJson(r);
      restarts.push_back({{"epoch", r.epoch}, {"time", toRfc3339(r.timeMs)},
                          {"replayed", body.value("replayed", 0)},
                          {"inDoubt", body.value("in_doubt", 0)}});
    }
    return true;
  });
  report["from"] = toRfc3339(first);
  report["to"] = toRfc3339(last);
  report["records"] = counts;
  report["restarts"] = std::move(restarts);
  report["lostSeqs"] = journal.lostRanges().empty() ? "" : journal.lostRanges().toString();
  report["missingAcknowledgedSeqs"] =
      journal.missingAcknowledged().empty() ? "" : journal.missingAcknowledged().toString();
  if (pruned) {
    addProjectionCounts(report, *projectionAt(journal, journal.latestSeq()));
  } else {
    report["rayjobsByLastWrittenStatus"] = tracker.byStatus();
    report["inDoubt"] = tracker.inDoubt();
  }
  return report;
}

void printSummary(const json& r, std::ostream& out) {
  out << "journal " << r["journal"].get<std::string>() << " (instance "
      << r["instance"].get<std::string>() << ", format 1)\n";
  out << "records " << r["firstSeq"] << ".." << r["latestSeq"] << " from "
      << r["from"].get<std::string>() << " to " << r["to"].get<std::string>() << "\n";
  if (!r["lostSeqs"].get<std::string>().empty())
    out << "lost seqs (salvage): " << r["lostSeqs"].get<std::string>() << "\n";
  if (!r["missingAcknowledgedSeqs"].get<std::string>().empty())
    out << "MISSING acknowledged seqs: " << r["missingAcknowledgedSeqs"].get<std::string>()
        << " (the journal ends before its high-water mark; rayjournal-replay verify fails)\n";
  for (const auto& [type, n] : r["records"].items()) out << "  " << type << ": " << n << "\n";
  out << "restarts:\n";
  for (const auto& e : r["restarts"])
    out << "  epoch " << e["epoch"] << " at " << e["time"].get<std::string>() << ": replayed "
        << e["replayed"] << " records, " << e["inDoubt"] << " intents in doubt\n";
  out << "RayJobs by last written deployment status:\n";
  for (const auto& [status, n] : r["rayjobsByLastWrittenStatus"].items())
    out << "  " << (status.empty() ? "(none)" : status) << ": " << n << "\n";
  out << "in doubt now: " << r["inDoubt"].size() << "\n";
  for (const auto& d : r["inDoubt"])
    out << "  " << d["kind"].get<std::string>() << " " << d["key"].get<std::string>() << " "
        << d["action"].get<std::string>() << " " << d["target"].get<std::string>() << " (seq "
        << d["seq"] << ")\n";
}

}  // namespace

int summary(const std::string& dir, Output output, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    json report = summaryReport(dir, *journal);
    if (output == Output::Json)
      out << report.dump(2) << "\n";
    else
      printSummary(report, out);
    return 0;
  });
}

}  // namespace rayjournal::replay
